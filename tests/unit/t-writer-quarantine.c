/*
 * t-writer-quarantine.c - engine.on_permanent_rejection: quarantine without
 * a socket: a refused document is recorded (the record request, with the
 * operation, index, id, version, position covering it and the target's
 * words) before its flush completes, so the position is reported only
 * after the store took it; a store that fails holds it back; past
 * max_rejects the flush halts and resends; the OpenSearch module's count
 * of the store and its record answers.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "writer-test.h"
#include "xio.h"

static struct writer_stats stats;
static struct sink sink;

static void
idx(struct batch *b, int id, unsigned v, const char *bval)
{
	char buf[200];

	snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
	    "\"id\":\"%d\",\"v\":%u,\"pipeline\":\"p\","
	    "\"doc\":{\"id\":%d,\"b\":\"%s\"}}", id, v, id, bval);
	add(b, buf);
}

static void
commit(struct batch *b, unsigned pos)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "{\"k\":\"commit\",\"pos\":%u,"
	    "\"text\":\"0/%X\",\"ts\":%u}", pos, pos, pos);
	add(b, buf);
}

/* the next request: its slot, or -1, and the call */
static int
next(struct window *w, struct http_call *call)
{
	struct sbuf *resp;
	int slot;

	if (!window_next(w, 1000000, 1, &slot, call, &resp))
		return -1;
	return slot;
}

/* answer slot's request with status and body */
static enum step_result
answer(struct window *w, int slot, long status, const char *body)
{
	struct flush *fl = &w->fl[slot];

	sbuf_reset(&fl->resp);
	sbuf_adds(&fl->resp, body);
	return window_answer(w, slot, NULL, status, 1000);
}

/* a bulk answer: item i refused (400) when bad[i] is 'x', else 201 */
static enum step_result
answer_items(struct window *w, int slot, const char *bad)
{
	struct sbuf r = SBUF_INIT;
	enum step_result st;
	size_t i;

	sbuf_adds(&r, "{\"errors\":true,\"items\":[");
	for (i = 0; bad[i]; i++)
		sbuf_addf(&r, "%s{\"index\":{\"status\":%s}}", i ? "," : "",
		    bad[i] == 'x' ? "400,\"error\":{\"type\":"
		    "\"mapper_parsing_exception\",\"reason\":\"failed to parse "
		    "field [b]\"}" : "201");
	sbuf_adds(&r, "]}");
	st = answer(w, slot, 200, r.buf);
	sbuf_release(&r);
	return st;
}

static const char *
reported(struct window *w)
{
	static char buf[128];
	struct msg_pos d;
	struct jspan mark;
	size_t n = 0;

	buf[0] = '\0';
	while (window_head(w) != NULL && window_report(w, &d, &mark)) {
		if (d.present)
			n += snprintf(buf + n, sizeof(buf) - n, "%s%llu",
			    n ? "," : "", (unsigned long long)d.pos);
		window_retire(w);
	}
	return buf;
}

static void
test_record_then_report(void)
{
	struct window w;
	struct batch b;
	struct http_call call;
	int slot;

	sink.rejects_held = 0;
	batch_init(&b, tmod(), 100, 1 << 20);
	window_init(&w, 1, &sink);
	idx(&b, 1, 100, "7");
	idx(&b, 2, 100, "not a number");
	commit(&b, 100);
	window_open(&w, &b, batch_cut(&b, CUT_IDLE));
	slot = next(&w, &call);
	ok(slot >= 0 && strstr(call.path, "_bulk") != NULL, "the bulk goes");
	is_int(answer_items(&w, slot, "ox"), STEP_NEXT,
	    "a refusal under quarantine: the flush goes on");
	is_str(reported(&w), "", "nothing reported before the record");
	slot = next(&w, &call);
	ok(slot >= 0 && strstr(call.path, "/_bulk?refresh=true") != NULL,
	    "next: the record request");
	ok(call.body && strstr(call.body, "\".pg2osync_rejects\"") &&
	    strstr(call.body, "\"stream\":\"postgres:t\"") &&
	    strstr(call.body, "\"op\":\"index\",\"index\":\"t\",\"id\":\"2\","
	    "\"pipeline\":\"p\",\"version\":100,") &&
	    strstr(call.body, "\"position\":\"0/64\"") &&
	    strstr(call.body, "\"reason\":\"mapper_parsing_exception: failed "
	    "to parse field [b]\"") &&
	    strstr(call.body, "\"doc\":{\"id\":2,\"b\":\"not a number\"}") &&
	    strstr(call.body, "\"id\":\"1\"") == NULL,
	    "the record: operation, index, id, pipeline, version, position, "
	    "reason and the document, of the refused one only");
	is_int(answer(&w, slot, 503, "{\"error\":{\"type\":\"x\",\"reason\":"
	    "\"busy\"}}"), STEP_WAIT, "a store that fails: backing off");
	is_str(reported(&w), "", "... and still nothing reported");
	slot = next(&w, &call);
	ok(slot >= 0 && strstr(call.path, "refresh=true") != NULL,
	    "the record is asked again");
	is_int(answer(&w, slot, 200, "{\"errors\":false,\"items\":[{\"index\":"
	    "{\"status\":201}}]}"), STEP_DONE, "recorded: the flush is done");
	is_str(reported(&w), "100", "its position is reported now");
	is_int(kcount_total(&stats.rejected), 1, "one quarantined");
	is_int(stats.docs_indexed, 1, "one indexed");
	batch_release(&b);
	window_release(&w);
}

static void
test_limit(void)
{
	struct window w;
	struct batch b;
	struct http_call call;
	int slot;

	/* one record held already, max 2: one more fits */
	sink.rejects_held = 1;
	batch_init(&b, tmod(), 100, 1 << 20);
	window_init(&w, 1, &sink);
	idx(&b, 3, 200, "bad");
	idx(&b, 4, 200, "bad");
	commit(&b, 200);
	window_open(&w, &b, batch_cut(&b, CUT_IDLE));
	slot = next(&w, &call);
	is_int(answer_items(&w, slot, "xx"), STEP_NEXT, "two refused");
	slot = next(&w, &call);
	ok(call.body && strstr(call.body, "\"id\":\"3\"") &&
	    !strstr(call.body, "\"id\":\"4\""), "only the first fits under "
	    "max_rejects");
	is_int(answer(&w, slot, 200, "{\"errors\":false,\"items\":[{\"index\":"
	    "{\"status\":201}}]}"), STEP_NEXT, "recorded: the other goes again");
	slot = next(&w, &call);
	ok(slot >= 0 && strstr(call.path, "refresh") == NULL &&
	    strstr(call.body, "\"_id\":\"4\"") &&
	    !strstr(call.body, "\"_id\":\"3\""), "the bulk resends the other "
	    "only");
	is_int(answer_items(&w, slot, "x"), STEP_WAIT, "refused again, no "
	    "room: halting");
	ok(strstr(sink.err.msg, "engine.max_rejects (2) reached") != NULL,
	    "why names the limit: %s", sink.err.msg);
	is_str(reported(&w), "", "nothing reported past it");
	batch_release(&b);
	window_release(&w);
}

static void
test_module(void)
{
	const struct target_rejects_ops *q = tmod()->rejects;
	struct sbuf resp = SBUF_INIT, body = SBUF_INIT;
	struct http_call call;
	uint64_t n = 7;
	char why[256];

	q->count_call("mysql:5", &body, &call);
	ok(strcmp(call.path, "/.pg2osync_rejects/_count") == 0 &&
	    strstr(call.body, "{\"term\":{\"stream\":\"mysql:5\"}}"),
	    "the count asks for the stream's records");
	sbuf_adds(&resp, "{\"error\":{\"type\":\"index_not_found_exception\","
	    "\"reason\":\"no such index\"},\"status\":404}");
	is_int(q->count_answer(404, &resp, &n, why, sizeof(why)), TA_OK,
	    "no store yet: nothing held");
	is_int((int)n, 0, "... 0");
	sbuf_reset(&resp);
	sbuf_adds(&resp, "{\"count\":3,\"_shards\":{}}");
	is_int(q->count_answer(200, &resp, &n, why, sizeof(why)), TA_OK,
	    "a count");
	is_int((int)n, 3, "... 3");
	is_int(q->count_answer(503, &resp, &n, why, sizeof(why)), TA_RETRY,
	    "a busy node: retried");
	sbuf_reset(&resp);
	sbuf_adds(&resp, "{\"errors\":true,\"items\":[{\"index\":{\"status\":"
	    "201}},{\"index\":{\"status\":403,\"error\":{\"type\":"
	    "\"cluster_block_exception\",\"reason\":\"blocked\"}}}]}");
	is_int(q->answer(200, &resp, 2, why, sizeof(why)), TA_RETRY,
	    "a record a blocked store did not take: retried (a block is "
	    "lifted, not fixed by the writer)");
	ok(strstr(why, "cluster_block_exception") != NULL, "why: %s", why);
	sbuf_reset(&resp);
	sbuf_adds(&resp, "{\"errors\":true,\"items\":[{\"index\":{\"status\":"
	    "400,\"error\":{\"type\":\"mapper_parsing_exception\","
	    "\"reason\":\"bad\"}}}]}");
	is_int(q->answer(200, &resp, 1, why, sizeof(why)), TA_REFUSED,
	    "a record the store refused is not stored");
	sbuf_release(&resp);
	sbuf_release(&body);
}

static void
test_keys(void)
{
	const struct target_rejects_ops *q = tmod()->rejects;
	struct target_reject r;
	struct sbuf b1 = SBUF_INIT, b2 = SBUF_INIT;
	struct http_call call;
	char k1[40], k2[40];

	memset(&r, 0, sizeof(r));
	r.index.p = "\"t\"";
	r.index.n = 3;
	r.id.p = "\"1\"";
	r.id.n = 3;
	r.doc.p = "{}";
	r.doc.n = 2;
	r.version = 5;
	r.stream = "postgres:a";
	q->call(&r, 1, &b1, &call);
	q->call(&r, 1, &b2, &call);
	ok(strcmp(b1.buf, b2.buf) == 0, "the same refusal is the same "
	    "record (a replay after a crash replaces it)");
	sscanf(b1.buf, "{\"index\":{\"_index\":\".pg2osync_rejects\","
	    "\"_id\":\"%16s", k1);
	r.version = 6;
	q->call(&r, 1, &b2, &call);
	sscanf(b2.buf, "{\"index\":{\"_index\":\".pg2osync_rejects\","
	    "\"_id\":\"%16s", k2);
	ok(strlen(k1) == 16 && strcmp(k1, k2) != 0, "a newer refusal of the "
	    "document is a record of its own");
	r.version = 5;
	r.stream = "postgres:b";
	q->call(&r, 1, &b2, &call);
	sscanf(b2.buf, "{\"index\":{\"_index\":\".pg2osync_rejects\","
	    "\"_id\":\"%16s", k2);
	ok(strcmp(k1, k2) != 0, "another stream's is another record");
	sbuf_release(&b1);
	sbuf_release(&b2);
}

int
main(void)
{
	struct p2o_err err;

	if (sink_init(&sink, tmod(), "http://test", &stats, NULL, &err) == -1)
		BAIL_OUT(err.msg);
	/* as a configuration with on_permanent_rejection: quarantine and
	 * max_rejects: 2 would set it, past the start-up count */
	sink.quarantine = 1;
	sink.max_rejects = 2;
	sink.stream = xstrdup("postgres:t");
	sink.q_step = Q_READY;
	test_record_then_report();
	test_limit();
	test_module();
	test_keys();
	sink_release(&sink);
	kcount_release(&stats.rejected);
	return done_testing();
}
