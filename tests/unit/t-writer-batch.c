/*
 * t-writer-batch.c - the writer's bulk body (byte-exact, documents copied
 * as they arrived) and its batching rules: a flush ends at a commit/pos
 * boundary unless the open transaction alone exceeds the limits, barriers
 * end a flush, and the durable position is the last boundary flushed.
 */
#include <stdlib.h>
#include <string.h>

#include "p2o.h"
#include "tap.h"
#include "writer-test.h"

static int
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static char *
body_of(struct batch *b, int n)
{
	struct sbuf body = SBUF_INIT;
	int *sent = calloc(n ? n : 1, sizeof(*sent));
	char *s;

	bulk_body(b, n, &body, sent);
	s = strdup(body.buf ? body.buf : "");
	sbuf_release(&body);
	free(sent);
	return s;
}

static void
test_body(void)
{
	struct batch b;
	char *s;

	batch_init(&b, tmod(), 1000, 1 << 20);
	ok(add(&b, "{\"k\":\"index\",\"index\":\"items\",\"id\":\"7\","
	    "\"v\":22817392,\"doc\":{\"id\":7,\"title\":\"lamp\"}}") == 0,
	    "plain index op accepted");
	ok(add(&b, "{\"k\":\"index\",\"index\":\"items\",\"id\":\"8\","
	    "\"v\":22817392,\"routing\":\"tenant-1\",\"pipeline\":\"embed\","
	    "\"doc\":{\"t\":\"caf\\u00e9 \\ud83d\\ude00\",\"n\":1.50,"
	    "\"x\":[1, 2 ,{\"y\":null}]}}") == 0,
	    "index with routing, pipeline and escapes accepted");
	ok(add(&b, "{\"k\":\"delete\",\"index\":\"items\",\"id\":\"6\","
	    "\"v\":22817393}") == 0, "delete accepted");
	ok(add(&b, "{\"k\":\"delete\",\"index\":\"items\",\"id\":\"a\\\"b\","
	    "\"v\":5,\"routing\":\"r\",\"pipeline\":\"ignored\"}") == 0,
	    "delete with routing and a quoted id accepted");
	ok(add(&b, "{\"k\":\"commit\",\"pos\":22817480,\"text\":\"0/15C2A48\","
	    "\"ts\":1764489600123456,\"n\":4}") == 0, "commit accepted");
	is_int(b.ndocs, 4, "four documents buffered");
	s = body_of(&b, b.nops);
	is_str(s,
	    "{\"index\":{\"_index\":\"items\",\"_id\":\"7\",\"version\":22817392,"
	    "\"version_type\":\"external_gte\"}}\n"
	    "{\"id\":7,\"title\":\"lamp\"}\n"
	    "{\"index\":{\"_index\":\"items\",\"_id\":\"8\",\"version\":22817392,"
	    "\"version_type\":\"external_gte\",\"routing\":\"tenant-1\","
	    "\"pipeline\":\"embed\"}}\n"
	    "{\"t\":\"caf\\u00e9 \\ud83d\\ude00\",\"n\":1.50,"
	    "\"x\":[1, 2 ,{\"y\":null}]}\n"
	    "{\"delete\":{\"_index\":\"items\",\"_id\":\"6\",\"version\":22817393,"
	    "\"version_type\":\"external_gte\"}}\n"
	    "{\"delete\":{\"_index\":\"items\",\"_id\":\"a\\\"b\",\"version\":5,"
	    "\"version_type\":\"external_gte\",\"routing\":\"r\"}}\n",
	    "bulk body is byte-exact, documents verbatim");
	ok(strcmp(s, b.arena.buf) == 0, "first attempt body is the arena");
	free(s);

	/* a retry carries only what is not written yet */
	b.ops[0].written = 1;
	b.ops[2].written = 1;
	s = body_of(&b, b.nops);
	ok(starts(s, "{\"index\":{\"_index\":\"items\",\"_id\":\"8\"")
	    && strstr(s, "\"_id\":\"6\"") == NULL &&
	    strstr(s, "\"_id\":\"a\\\"b\"") != NULL,
	    "retry body holds only unwritten entries, in order");
	free(s);
	ok(batch_boundary(&b, b.nops)->pos == 22817480 &&
	    strcmp(batch_boundary(&b, b.nops)->text, "0/15C2A48") == 0 &&
	    batch_boundary(&b, b.nops)->ts == 1764489600123456LL,
	    "boundary carries pos, lsn and ts");
	batch_release(&b);
}

static void
test_malformed(void)
{
	static const char *bad[] = {
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\",\"v\":1}",
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\",\"v\":1,\"doc\":[1]}",
		"{\"k\":\"index\",\"id\":\"1\",\"v\":1,\"doc\":{}}",
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"\",\"v\":1,\"doc\":{}}",
		"{\"k\":\"index\",\"index\":\"i\",\"id\":7,\"v\":1,\"doc\":{}}",
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\",\"v\":-1,\"doc\":{}}",
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\",\"v\":1.5,\"doc\":{}}",
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\","
		    "\"v\":9223372036854775808,\"doc\":{}}",
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\",\"v\":1,"
		    "\"toast\":[\"a\",2],\"doc\":{}}",
		"{\"k\":\"delete\",\"index\":\"i\",\"id\":\"1\"}",
		"{\"k\":\"commit\",\"text\":\"0/1\"}",
		"{\"k\":\"commit\",\"pos\":-5}",
		"{\"k\":\"clear\"}",
		"{\"k\":\"mark\",\"table\":\"t\"}",
		"{\"k\":\"update\",\"index\":\"i\",\"id\":\"1\",\"v\":1}",
		"{\"k\":\"row\",\"op\":\"i\"}",
	};
	struct batch b;
	struct frame f;
	struct p2o_err err;
	size_t i;

	batch_init(&b, tmod(), 10, 1000);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = mkframe(bad[i]);
		p2o_err_clear(&err);
		ok(batch_add(&b, &f, &err) == -1 && err.msg[0] &&
		    err.code == P2O_EXIT_DATA, "refused: %s (%s)", bad[i],
		    err.msg);
	}
	is_int(b.nops, 0, "nothing buffered from malformed ops");
	is_int((int)b.arena.len, 0, "arena untouched");
	ok(add(&b, "{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\","
	    "\"v\":9223372036854775807,\"doc\":{}}") == 0,
	    "largest signed 64-bit version accepted");
	batch_release(&b);
}

static const char *
idx(int id)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
	    "\"id\":\"%d\",\"v\":10,\"doc\":{\"a\":%d}}", id, id);
	return buf;
}

static const char *
commit(unsigned pos)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "{\"k\":\"commit\",\"pos\":%u,"
	    "\"text\":\"0/%X\",\"ts\":5}", pos, pos);
	return buf;
}

static void
test_cut(void)
{
	struct batch b;
	int i, n;

	/* limits: 4 docs */
	batch_init(&b, tmod(), 4, 1 << 20);
	is_int(batch_cut(&b, CUT_IDLE), 0, "empty batch: nothing to cut");
	add(&b, idx(1));
	add(&b, idx(2));
	is_int(batch_cut(&b, CUT_IDLE), 0,
	    "idle inside a transaction: keep buffering");
	is_int(batch_cut(&b, CUT_NONE), 0, "flowing: keep buffering");
	add(&b, commit(100));
	is_int(batch_cut(&b, CUT_NONE), 0,
	    "a commit under the limits while input flows: keep buffering");
	is_int(batch_cut(&b, CUT_IDLE), 3, "idle: flush through the commit");
	add(&b, idx(3));
	is_int(batch_cut(&b, CUT_IDLE), 3,
	    "idle: the open transaction stays behind");
	add(&b, idx(4));
	ok(batch_full(&b), "four docs: full");
	is_int(batch_cut(&b, CUT_NONE), 3,
	    "full: cut at the last commit, not inside the transaction");
	ok(batch_boundary(&b, 3)->pos == 100, "durable position is 100");
	batch_consume(&b, 3);
	is_int(b.nops, 2, "open transaction kept");
	is_int(b.ndocs, 2, "two docs kept");
	is_int(b.last_boundary, -1, "no boundary left");
	ok(starts(b.arena.buf, "{\"index\":{\"_index\":\"t\",\"_id\":\"3\""),
	    "arena compacted to the open transaction");
	ok(jstr_eq(batch_span(&b, b.ops[1].id), "4"),
	    "spans follow the compaction");
	ok(batch_boundary(&b, b.nops) == NULL, "nothing durable in it");

	/* the transaction grows past the limits: split */
	add(&b, idx(5));
	is_int(batch_cut(&b, CUT_NONE), 0, "three docs of one txn: wait");
	add(&b, idx(6));
	is_int(batch_cut(&b, CUT_NONE), 4,
	    "a transaction alone over the limit is split");
	ok(batch_boundary(&b, 4) == NULL, "a split piece reports nothing");
	batch_consume(&b, 4);
	add(&b, idx(7));
	add(&b, commit(200));
	is_int(batch_cut(&b, CUT_IDLE), 2,
	    "the last piece carries the commit");
	ok(batch_boundary(&b, 2)->pos == 200, "and its position");
	batch_consume(&b, 2);

	/* a keepalive at a commit's position keeps the commit's time */
	add(&b, commit(250));
	add(&b, "{\"k\":\"pos\",\"pos\":250,\"text\":\"0/FA\"}");
	is_int(batch_cut(&b, CUT_IDLE), 2, "commit and pos flush together");
	ok(batch_boundary(&b, 2)->kind == OP_COMMIT &&
	    batch_boundary(&b, 2)->ts == 5, "same position: the commit's ts");
	batch_consume(&b, 2);

	/* a bare pos with nothing before it is a flush of its own */
	add(&b, "{\"k\":\"pos\",\"pos\":300,\"text\":\"0/12C\"}");
	is_int(batch_cut(&b, CUT_IDLE), 1, "bare pos flushes when idle");
	ok(batch_boundary(&b, 1)->pos == 300 &&
	    batch_boundary(&b, 1)->ts == 0, "pos has no commit time");
	batch_consume(&b, 1);

	/* barriers */
	add(&b, idx(8));
	add(&b, commit(400));
	add(&b, idx(9));
	add(&b, "{\"k\":\"clear\",\"index\":\"t\",\"v\":9}");
	is_int(batch_cut(&b, CUT_NONE), 4,
	    "clear: flush everything before it and the clear itself");
	is_int(b.ops[3].kind, OP_CLEAR, "clear is the flush's last op");
	ok(batch_boundary(&b, 4)->pos == 400,
	    "durable stays at the commit before the clear");
	batch_consume(&b, 4);
	add(&b, commit(500));
	add(&b, "{\"k\":\"mark\",\"table\":\"public.t\",\"wave\":1,"
	    "\"id\":\"public.t#1\"}");
	is_int(batch_cut(&b, CUT_NONE), 2, "mark ends a flush");
	is_str(b.ops[1].text, "{\"k\":\"mark\",\"table\":\"public.t\",\"wave\":1,"
	    "\"id\":\"public.t#1\"}", "the mark kept as raw JSON, for marked");
	batch_consume(&b, 2);
	is_int(b.nops, 0, "empty again");
	is_int((int)b.arena.len, 0, "arena empty");

	/* EOF sends the open transaction too */
	add(&b, idx(10));
	is_int(batch_cut(&b, CUT_IDLE), 0, "idle: open txn waits");
	is_int(batch_cut(&b, CUT_EOF), 1, "eof: open txn goes out");
	batch_release(&b);

	/* byte limit */
	batch_init(&b, tmod(), 1000, 200);
	for (i = 0; i < 2; i++)
		add(&b, idx(i));
	add(&b, commit(600));
	ok(!batch_full(&b), "under 200 bytes");
	add(&b, idx(3));
	ok(batch_full(&b), "over 200 bytes: full");
	n = batch_cut(&b, CUT_NONE);
	is_int(n, 3, "byte limit cuts at the commit");
	batch_consume(&b, n);
	ok(!batch_full(&b), "the rest is under the limit");
	batch_release(&b);
}

static void
test_move(void)
{
	struct batch b, to;
	struct msg_pos d;
	struct jspan mark;
	char *s;

	batch_init(&b, tmod(), 1000, 1 << 20);
	batch_init(&to, tmod(), 1, 1);
	add(&b, idx(1));
	add(&b, idx(2));
	add(&b, commit(100));
	add(&b, idx(3));
	add(&b, "{\"k\":\"delete\",\"index\":\"t\",\"id\":\"4\",\"v\":11}");
	batch_move(&b, 3, &to);
	is_int(to.nops, 3, "three ops moved");
	is_int(to.ndocs, 2, "two of them documents");
	is_int(to.last_boundary, 2, "the commit is the moved batch's boundary");
	is_int(to.limit_docs, 1000, "the limits come along");
	s = body_of(&to, to.nops);
	ok(starts(s, "{\"index\":{\"_index\":\"t\",\"_id\":\"1\"") &&
	    strstr(s, "\"_id\":\"2\"") && !strstr(s, "\"_id\":\"3\""),
	    "the moved body: documents 1 and 2");
	ok(strcmp(s, to.arena.buf) == 0, "and its arena is exactly that");
	free(s);
	ok(batch_report(&to, &d, &mark) == 1 && d.pos == 100 &&
	    strcmp(d.text, "0/64") == 0 && d.ts == 5 && mark.p == NULL,
	    "it reports position 100");
	is_int(b.nops, 2, "two ops stay");
	is_int(b.ndocs, 2, "both documents");
	is_int(b.last_boundary, -1, "no boundary left");
	s = body_of(&b, b.nops);
	ok(starts(s, "{\"index\":{\"_index\":\"t\",\"_id\":\"3\"") &&
	    strstr(s, "{\"delete\":{\"_index\":\"t\",\"_id\":\"4\"") &&
	    strcmp(s, b.arena.buf) == 0, "the rest: 3 and 4, from offset 0");
	free(s);
	ok(jstr_eq(batch_span(&b, b.ops[1].id), "4"), "spans rebased");
	ok(batch_report(&b, &d, &mark) == 0, "the rest reports nothing");
	batch_release(&to);
	batch_move(&b, b.nops, &to);
	is_int(b.nops, 0, "all moved");
	is_int((int)b.arena.len, 0, "nothing left in the arena");
	is_int(to.ndocs, 2, "both in the other");
	add(&b, "{\"k\":\"mark\",\"table\":\"t\",\"id\":\"t#1\"}");
	ok(batch_report(&b, &d, &mark) == 0 && mark.p &&
	    strncmp(mark.p, "{\"k\":\"mark\"", 11) == 0,
	    "a mark last: reported as it arrived");
	batch_release(&b);
	batch_release(&to);
}

int
main(void)
{
	test_body();
	test_move();
	test_malformed();
	test_cut();
	return done_testing();
}
