/*
 * t-writer-order.c - several bulk requests open at once, without a socket:
 * which flushes may be reported after which sequences of answers (in cut
 * order, nothing behind a failed or retried one), the barriers (a clear
 * waits for everything before it and holds back everything after it; a
 * split transaction goes one piece at a time), TOAST completion from a
 * flush still open, the per-table count of documents written without
 * their unchanged fields, and fills from a late copy.
 */
#include <stdlib.h>
#include <string.h>

#include "p2o.h"
#include "tap.h"
#include "writer-test.h"

static struct writer_stats stats;
static struct sink sink;

static void
idx(struct batch *b, int id, unsigned v)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
	    "\"id\":\"%d\",\"v\":%u,\"doc\":{\"id\":%d,\"v\":%u}}", id, v, id,
	    v);
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

/* cut what the batch holds at its last boundary into the window */
static int
cut(struct window *w, struct batch *b, enum cut_reason why)
{
	int n = batch_cut(b, why);

	if (n <= 0 || !window_may_open(w, b, n))
		return 0;
	window_open(w, b, n);
	return 1;
}

/* the next request: its slot, or -1; *path gets its path */
static int
next(struct window *w, long long now, const char **path)
{
	struct http_call call;
	struct sbuf *resp;
	int slot;

	if (!window_next(w, now, 1, &slot, &call, &resp))
		return -1;
	if (path)
		*path = call.path;
	return slot;
}

/* every request due now, in the order asked; returns how many */
static int
next_all(struct window *w, long long now, int *slots)
{
	int n = 0, s;

	while ((s = next(w, now, NULL)) >= 0)
		slots[n++] = s;
	return n;
}

/* answer slot's bulk request: every item with status (or 503 for the
 * whole request when status is 503) */
static enum step_result
answer_bulk(struct window *w, int slot, int status, int first_status)
{
	struct flush *fl = &w->fl[slot];
	const struct op *op;
	int i;

	sbuf_reset(&fl->resp);
	if (status == 503) {
		sbuf_adds(&fl->resp, "{\"error\":{\"type\":\"unavailable\","
		    "\"reason\":\"test\"},\"status\":503}");
		return window_answer(w, slot, NULL, 503, 1000);
	}
	sbuf_adds(&fl->resp, "{\"errors\":false,\"items\":[");
	for (i = 0; i < fl->nsent; i++) {
		op = &fl->b.ops[fl->arr.sent[i]];
		sbuf_addf(&fl->resp, "%s{\"%s\":{\"status\":%d%s}}",
		    i ? "," : "", op->kind == OP_DELETE ? "delete" : "index",
		    i == 0 ? first_status : status,
		    (i == 0 ? first_status : status) == 400 ?
		    ",\"error\":{\"type\":\"mapper_parsing_exception\","
		    "\"reason\":\"test\"}" : "");
	}
	sbuf_adds(&fl->resp, "]}");
	return window_answer(w, slot, NULL, 200, 1000);
}

static enum step_result
answer_ok(struct window *w, int slot)
{
	return answer_bulk(w, slot, 201, 201);
}

/* the positions reported now, in order, as "100,200" */
static const char *
reported(struct window *w)
{
	static char buf[256];
	const struct flush *fl;
	struct msg_pos d;
	struct jspan mark;
	size_t n = 0;

	buf[0] = '\0';
	while ((fl = window_head(w)) != NULL) {
		if (!window_report(w, &d, &mark))
			break;
		if (d.present)
			n += snprintf(buf + n, sizeof(buf) - n, "%s%llu",
			    n ? "," : "", (unsigned long long)d.pos);
		if (mark.p)
			n += snprintf(buf + n, sizeof(buf) - n, "%smark",
			    n ? "," : "");
		window_retire(w);
	}
	return buf;
}

static void
test_order(void)
{
	struct order o;
	uint64_t seq;
	int perm[4], used, i, j, k, bad, reported_n;
	int order_of[24][4], np = 0;

	order_init(&o, 3);
	ok(order_empty(&o), "empty at first");
	is_int(order_open(&o), 0, "first is 0");
	is_int(order_open(&o), 1, "then 1");
	is_int(order_open(&o), 2, "then 2");
	ok(order_full(&o), "three open: full");
	order_finish(&o, 1);
	ok(!order_pop(&o, &seq), "1 written, 0 not: nothing to report");
	ok(order_pending(&o, 0) && !order_pending(&o, 1),
	    "0 pending, 1 written");
	order_finish(&o, 0);
	ok(order_pop(&o, &seq) && seq == 0, "0 written: 0 reported");
	ok(order_pop(&o, &seq) && seq == 1, "then 1");
	ok(!order_pop(&o, &seq), "2 still open");
	ok(!order_full(&o), "room again");
	is_int(order_open(&o), 3, "the ring goes on: 3");
	order_finish(&o, 3);
	ok(!order_pop(&o, &seq), "3 written, 2 not: nothing");
	order_finish(&o, 2);
	ok(order_pop(&o, &seq) && seq == 2 && order_pop(&o, &seq) &&
	    seq == 3 && order_empty(&o), "2 then 3, and empty");
	order_finish(&o, 7);
	ok(order_empty(&o), "finishing an unknown number changes nothing");
	order_release(&o);

	/* every order four flushes can be written in: each is reported
	 * only after all before it, and all are, in order */
	for (i = 0; i < 256; i++) {
		used = 0;
		for (j = 0; j < 4; j++) {
			perm[j] = (i >> (2 * j)) & 3;
			if (used & (1 << perm[j]))
				break;
			used |= 1 << perm[j];
		}
		if (j < 4)
			continue;
		memcpy(order_of[np++], perm, sizeof(perm));
	}
	is_int(np, 24, "24 orders of four");
	bad = 0;
	for (i = 0; i < np; i++) {
		order_init(&o, 4);
		for (j = 0; j < 4; j++)
			order_open(&o);
		reported_n = 0;
		for (j = 0; j < 4; j++) {
			order_finish(&o, order_of[i][j]);
			while (order_pop(&o, &seq)) {
				/* in cut order, and only what was written */
				if ((int)seq != reported_n)
					bad++;
				for (k = 0; k <= j; k++)
					if (order_of[i][k] == (int)seq)
						break;
				if (k > j)
					bad++;
				reported_n++;
			}
			/* the oldest not reported is never written */
			if (!order_empty(&o) && !order_pending(&o, o.head))
				bad++;
		}
		if (reported_n != 4)
			bad++;
		order_release(&o);
	}
	is_int(bad, 0, "in every order: reported in cut order, each once");
}

static void
test_in_order(void)
{
	/* two flushes' worth of bytes, not three */
	const size_t limit = 2 * sizeof(struct op) + 120;
	struct window w;
	struct batch b;
	int s[8], n;

	window_init(&w, 4, &sink);
	batch_init(&b, tmod(), 100, 1 << 20);
	idx(&b, 1, 100);
	idx(&b, 2, 100);
	commit(&b, 150);
	ok(cut(&w, &b, CUT_IDLE), "first transaction cut");
	idx(&b, 3, 200);
	commit(&b, 250);
	ok(cut(&w, &b, CUT_IDLE), "second");
	idx(&b, 4, 300);
	commit(&b, 350);
	ok(cut(&w, &b, CUT_IDLE), "third");
	n = next_all(&w, 1000, s);
	is_int(n, 3, "three requests open at once");
	ok(s[0] == 0 && s[1] == 1 && s[2] == 2, "on slots 0, 1, 2");
	is_int(next(&w, 1000, NULL), -1, "nothing else to send");

	answer_ok(&w, 2);
	is_str(reported(&w), "", "the third written first: nothing reported");
	answer_ok(&w, 0);
	is_str(reported(&w), "150", "the first written: its position");
	is_int(answer_bulk(&w, 1, 503, 503), STEP_WAIT,
	    "the second fails: backoff");
	is_str(reported(&w), "", "nothing behind a failed request");
	ok(window_backing_off(&w), "backing off");
	ok(window_retry_at(&w) > 1000, "until later");
	is_int(next(&w, 1001, NULL), -1, "not retried before its time");
	is_int(next(&w, window_retry_at(&w), NULL), 1, "retried on time");
	is_int(window_inflight(&w), 1, "one request in flight");
	answer_ok(&w, 1);
	is_str(reported(&w), "250,350",
	    "the retry succeeds: the second, then the third");
	ok(window_empty(&w), "window empty");
	is_int(b.nops, 0, "batch empty");

	/* a refused document halts: retried, nothing behind it reported */
	idx(&b, 5, 400);
	idx(&b, 6, 400);
	commit(&b, 450);
	cut(&w, &b, CUT_IDLE);
	idx(&b, 7, 500);
	commit(&b, 550);
	cut(&w, &b, CUT_IDLE);
	n = next_all(&w, 2000, s);
	is_int(n, 2, "two open");
	is_int(answer_bulk(&w, s[0], 201, 400), STEP_WAIT,
	    "a document refused: backoff");
	is_int(window_unwritten(&w), 2, "the refused one and the second "
	    "flush's are unwritten");
	answer_ok(&w, s[1]);
	is_str(reported(&w), "", "the later flush is written, not reported");
	is_int(window_unwritten(&w), 1, "only the refused one is unwritten");
	is_int(next(&w, window_retry_at(&w), NULL), s[0],
	    "the refused flush is retried");
	is_int(w.fl[s[0]].nsent, 1, "with only the refused document");
	ok(strstr(w.fl[s[0]].body.buf, "\"_id\":\"5\"") &&
	    !strstr(w.fl[s[0]].body.buf, "\"_id\":\"6\""),
	    "the retry body holds the refused document alone");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "450,550", "accepted at last: both reported");

	/* a document written twice in one flush: when the later write is
	 * accepted, the earlier one is not sent again, which would put back
	 * the older state under the same version */
	idx(&b, 20, 560);
	add(&b, "{\"k\":\"delete\",\"index\":\"t\",\"id\":\"20\",\"v\":560}");
	commit(&b, 570);
	cut(&w, &b, CUT_IDLE);
	n = next_all(&w, 2000, s);
	is_int(answer_bulk(&w, s[0], 200, 429), STEP_DONE,
	    "the index refused for now, the delete after it accepted: done");
	is_str(reported(&w), "570", "and reported");
	idx(&b, 21, 580);
	add(&b, "{\"k\":\"delete\",\"index\":\"t\",\"id\":\"21\",\"v\":580}");
	commit(&b, 590);
	cut(&w, &b, CUT_IDLE);
	n = next_all(&w, 2000, s);
	sbuf_reset(&w.fl[s[0]].resp);
	sbuf_adds(&w.fl[s[0]].resp, "{\"items\":[{\"index\":{\"status\":201}},"
	    "{\"delete\":{\"status\":429}}]}");
	is_int(window_answer(&w, s[0], NULL, 200, 2000), STEP_WAIT,
	    "the later write refused for now: retried");
	is_int(next(&w, window_retry_at(&w), NULL), s[0], "resent");
	ok(w.fl[s[0]].nsent == 1 && strstr(w.fl[s[0]].body.buf,
	    "{\"delete\":") == w.fl[s[0]].body.buf, "the delete alone");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "590", "then reported");

	/* a full window takes nothing more */
	window_release(&w);
	window_init(&w, 2, &sink);
	idx(&b, 8, 600);
	commit(&b, 650);
	cut(&w, &b, CUT_IDLE);
	idx(&b, 9, 700);
	commit(&b, 750);
	cut(&w, &b, CUT_IDLE);
	ok(window_full(&w), "two of two open: full");
	idx(&b, 10, 800);
	commit(&b, 850);
	ok(!cut(&w, &b, CUT_IDLE), "a third cut waits for a request to end");
	next_all(&w, 3000, s);
	answer_ok(&w, 1);
	is_str(reported(&w), "", "the later one written: nothing reported");
	ok(!window_full(&w), "but its request is free again");
	ok(cut(&w, &b, CUT_IDLE), "so the third is cut behind the first");
	is_int(next(&w, 3000, NULL), 2, "into the slot its number picks");
	idx(&b, 11, 900);
	commit(&b, 950);
	ok(!cut(&w, &b, CUT_IDLE), "two unwritten: a fourth waits");
	answer_ok(&w, 2);
	ok(cut(&w, &b, CUT_IDLE), "written ahead too: the fourth is cut");
	is_int(next(&w, 3000, NULL), 3, "into the last slot");
	answer_ok(&w, 3);
	idx(&b, 12, 1000);
	commit(&b, 1050);
	ok(window_full(&w), "every slot taken behind a first not written");
	ok(!cut(&w, &b, CUT_IDLE), "nothing runs further ahead of it");
	is_str(reported(&w), "", "and nothing past it is reported");
	answer_ok(&w, 0);
	is_str(reported(&w), "650,750,850,950", "all reported in order");
	ok(cut(&w, &b, CUT_IDLE), "now the fifth is cut");
	is_int(next(&w, 3000, NULL), 0, "into the first slot again");
	answer_ok(&w, 0);
	is_str(reported(&w), "1050", "and reported");
	ok(w.fl[1].b.arena.cap == 0 && w.fl[2].b.arena.cap == 0,
	    "a retired slot keeps no body");
	batch_release(&b);
	window_release(&w);

	/* the bytes: written flushes waiting for an earlier one count
	 * toward open_max batches of batch_max_bytes, their documents and
	 * their ops (two each here) */
	window_init(&w, 2, &sink);
	batch_init(&b, tmod(), 100, limit);
	idx(&b, 20, 1100);
	commit(&b, 1150);
	ok(cut(&w, &b, CUT_IDLE), "a first flush");
	idx(&b, 21, 1200);
	commit(&b, 1250);
	ok(cut(&w, &b, CUT_IDLE), "a second");
	next_all(&w, 4000, s);
	answer_ok(&w, 1);
	idx(&b, 22, 1300);
	commit(&b, 1350);
	ok(!window_full(&w) && !cut(&w, &b, CUT_IDLE),
	    "a request free, but two batches' bytes held: it waits");
	answer_ok(&w, 0);
	is_str(reported(&w), "1150,1250", "the two reported");
	ok(cut(&w, &b, CUT_IDLE), "then it is cut");
	idx(&b, 23, 1400);
	idx(&b, 24, 1400);
	idx(&b, 25, 1400);
	commit(&b, 1450);
	next_all(&w, 4000, s);
	answer_ok(&w, 2);
	reported(&w);
	ok(b.arena.len + b.nops * sizeof(struct op) > limit &&
	    cut(&w, &b, CUT_IDLE), "a batch over the limit alone in an empty "
	    "window is cut");
	next_all(&w, 4000, s);
	answer_ok(&w, 3);
	is_str(reported(&w), "1450", "and written");
	batch_release(&b);
	window_release(&w);
}

static void
test_barriers(void)
{
	struct window w;
	struct batch b;
	const char *path;
	int s[8], n;

	window_init(&w, 4, &sink);
	batch_init(&b, tmod(), 2, 1 << 20);

	/* a clear waits for every flush before it, and holds back every
	 * flush after it until it is done */
	idx(&b, 1, 100);
	commit(&b, 150);
	cut(&w, &b, CUT_IDLE);
	add(&b, "{\"k\":\"clear\",\"index\":\"t\",\"v\":200}");
	ok(!cut(&w, &b, CUT_NONE), "a clear waits for the flush before it");
	n = next_all(&w, 1000, s);
	is_int(n, 1, "only the first flush sends");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "150", "reported");
	ok(cut(&w, &b, CUT_NONE), "the clear goes once it is written");
	commit(&b, 250);
	idx(&b, 2, 300);
	commit(&b, 350);
	ok(!cut(&w, &b, CUT_IDLE), "nothing is cut behind an open clear");
	is_int(next(&w, 1000, &path), 1, "the clear's first request");
	is_str(path, "/t/_refresh", "refresh, so the delete sees every write");
	sbuf_reset(&w.fl[1].resp);
	sbuf_adds(&w.fl[1].resp, "{\"_shards\":{}}");
	is_int(window_answer(&w, 1, NULL, 200, 1000), STEP_NEXT, "refreshed");
	is_int(next(&w, 1000, &path), 1, "then");
	ok(strncmp(path, "/t/_search?scroll=", 18) == 0,
	    "a search for its documents");
	sbuf_reset(&w.fl[1].resp);
	sbuf_adds(&w.fl[1].resp, "{\"_scroll_id\":\"S\",\"hits\":{\"hits\":["
	    "{\"_index\":\"t\",\"_id\":\"1\"},{\"_index\":\"t\",\"_id\":"
	    "\"9\"}]}}");
	is_int(window_answer(&w, 1, NULL, 200, 1000), STEP_NEXT, "two found");
	is_int(next(&w, 1000, &path), 1, "then");
	ok(strncmp(path, "/_bulk", 6) == 0, "deleted at the truncate's "
	    "version");
	sbuf_reset(&w.fl[1].resp);
	sbuf_adds(&w.fl[1].resp, "{\"errors\":true,\"items\":["
	    "{\"delete\":{\"status\":200}},{\"delete\":{\"status\":409}}]}");
	is_int(window_answer(&w, 1, NULL, 200, 1000), STEP_NEXT,
	    "one deleted, one newer kept");
	ok(stats.version_conflicts == 1, "the newer one counted as a "
	    "conflict");
	is_int(next(&w, 1000, &path), 1, "then");
	is_str(path, "/_search/scroll", "the next page");
	sbuf_reset(&w.fl[1].resp);
	sbuf_adds(&w.fl[1].resp, "{\"hits\":{\"hits\":[]}}");
	is_int(window_answer(&w, 1, NULL, 200, 1000), STEP_NEXT, "none");
	is_int(next(&w, 1000, &path), 1, "then");
	sbuf_reset(&w.fl[1].resp);
	is_int(window_answer(&w, 1, NULL, 200, 1000), STEP_DONE,
	    "the scroll released: cleared");
	is_int(stats.clears, 1, "a clear counted");
	is_str(reported(&w), "", "a clear carries no position");
	ok(cut(&w, &b, CUT_IDLE), "behind it, the rest may go");
	n = next_all(&w, 1000, s);
	is_int(n, 1, "the commit alone is no request; the index op is");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "350",
	    "after the clear: the flush's last position");

	/* a transaction split over flushes: its rows share a version, so a
	 * piece writing a document an open piece writes waits for it */
	idx(&b, 3, 400);
	idx(&b, 4, 400);
	ok(cut(&w, &b, CUT_NONE), "two docs of an open transaction: split");
	idx(&b, 3, 400);
	commit(&b, 450);
	ok(!cut(&w, &b, CUT_IDLE),
	    "the rest writes document 3 again: it waits for the piece");
	n = next_all(&w, 1000, s);
	answer_ok(&w, s[0]);
	is_str(reported(&w), "", "a split piece reports nothing");
	ok(cut(&w, &b, CUT_IDLE), "the piece is written: the rest goes");
	n = next_all(&w, 1000, s);
	answer_ok(&w, s[0]);
	is_str(reported(&w), "450", "its commit is reported");

	/* pieces writing other documents go at once */
	idx(&b, 10, 460);
	idx(&b, 11, 460);
	ok(cut(&w, &b, CUT_NONE), "split again");
	idx(&b, 12, 460);
	commit(&b, 470);
	ok(cut(&w, &b, CUT_IDLE), "the rest writes other documents: "
	    "it goes at once");
	/* another version of an open document may go too: the version
	 * orders them */
	idx(&b, 10, 480);
	commit(&b, 490);
	ok(cut(&w, &b, CUT_IDLE), "document 10 again, later version: at once");
	n = next_all(&w, 1000, s);
	is_int(n, 3, "three open");
	answer_ok(&w, s[2]);
	answer_ok(&w, s[1]);
	answer_ok(&w, s[0]);
	is_str(reported(&w), "470,490", "reported in order");

	/* a mark and a bare pos are reported only once every flush before
	 * them is written */
	idx(&b, 5, 500);
	commit(&b, 550);
	cut(&w, &b, CUT_IDLE);
	add(&b, "{\"k\":\"mark\",\"table\":\"public.t\",\"wave\":1,"
	    "\"id\":\"public.t#1\"}");
	ok(cut(&w, &b, CUT_NONE), "a mark is cut at once");
	add(&b, "{\"k\":\"pos\",\"pos\":600,\"text\":\"0/258\"}");
	ok(cut(&w, &b, CUT_IDLE), "and a bare pos");
	n = next_all(&w, 1000, s);
	is_int(n, 1, "only the data sends a request");
	is_str(reported(&w), "", "mark and pos wait for the flush before");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "550,mark,600", "then all three, in order");
	add(&b, "{\"k\":\"pos\",\"pos\":600,\"text\":\"0/258\"}");
	cut(&w, &b, CUT_IDLE);
	next_all(&w, 1000, s);
	is_str(reported(&w), "", "a keepalive repeating it: not again");

	batch_release(&b);
	window_release(&w);
}

static void
toast_op(struct batch *b, int id, unsigned v, const char *rel)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
	    "\"id\":\"%d\",\"v\":%u,\"toast\":[\"body\"],\"rel\":\"%s\","
	    "\"doc\":{\"id\":%d,\"v\":%u}}", id, v, rel, id, v);
	add(b, buf);
}

static void
test_toast(void)
{
	struct window w;
	struct batch b;
	const char *path;
	int s[8], n, a;

	window_init(&w, 4, &sink);
	batch_init(&b, tmod(), 100, 1 << 20);

	/* the source document is written by a flush still open: completed
	 * from that write, not from the stale stored copy */
	add(&b, "{\"k\":\"index\",\"index\":\"t\",\"id\":\"1\",\"v\":100,"
	    "\"doc\":{\"id\":1,\"body\":\"fresh\"}}");
	commit(&b, 150);
	cut(&w, &b, CUT_IDLE);
	toast_op(&b, 1, 200, "public.t");
	commit(&b, 250);
	cut(&w, &b, CUT_IDLE);
	n = next_all(&w, 1000, s);
	is_int(n, 2, "no _mget: both flushes send their bulk at once");
	ok(strstr(w.fl[1].body.buf, "{\"id\":1,\"v\":200,\"body\":\"fresh\"}")
	    != NULL, "completed from the earlier open flush's document");
	is_int(stats.toast_completions, 1, "one completion");
	answer_ok(&w, 1);
	answer_ok(&w, 0);
	is_str(reported(&w), "150,250", "both reported");

	/* the earlier write itself waits for its _mget: the later flush
	 * waits for that completion, then copies from it */
	toast_op(&b, 2, 300, "public.t");
	commit(&b, 350);
	cut(&w, &b, CUT_IDLE);
	toast_op(&b, 2, 400, "public.t");
	commit(&b, 450);
	cut(&w, &b, CUT_IDLE);
	a = next(&w, 1000, &path);
	is_int(a, 2, "the first flush asks (slot 2: the third cut)");
	is_str(path, "/_mget", "for the stored document");
	is_str(w.fl[a].body.buf,
	    "{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\"}]}", "mget body");
	is_int(next(&w, 1000, NULL), -1,
	    "the second waits for that completion, asks nothing");
	sbuf_reset(&w.fl[a].resp);
	sbuf_adds(&w.fl[a].resp, "{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\","
	    "\"found\":true,\"_source\":{\"id\":2,\"body\":\"stored\"}}]}");
	is_int(window_answer(&w, a, NULL, 200, 1000), STEP_NEXT, "read");
	n = next_all(&w, 1000, s);
	is_int(n, 2, "now both bulks go");
	ok(strstr(w.fl[s[1]].body.buf,
	    "{\"id\":2,\"v\":400,\"body\":\"stored\"}") != NULL,
	    "the second completed from the first's completion");
	answer_ok(&w, s[0]);
	answer_ok(&w, s[1]);
	is_str(reported(&w), "350,450", "reported");

	/* nothing stored: written without the fields, counted per table */
	toast_op(&b, 3, 500, "public.t");
	toast_op(&b, 4, 500, "public.u");
	toast_op(&b, 5, 500, "public.u");
	commit(&b, 550);
	cut(&w, &b, CUT_IDLE);
	a = next(&w, 1000, NULL);
	sbuf_reset(&w.fl[a].resp);
	sbuf_adds(&w.fl[a].resp, "{\"docs\":[{\"found\":false},"
	    "{\"found\":false},{\"_index\":\"t\",\"error\":{\"type\":"
	    "\"index_not_found_exception\",\"reason\":\"x\"}}]}");
	is_int(window_answer(&w, a, NULL, 200, 1000), STEP_NEXT,
	    "nothing found");
	is_int(kcount_get(&stats.toast_missing, "public.t"), 1,
	    "one missing in public.t");
	is_int(kcount_get(&stats.toast_missing, "public.u"), 2,
	    "two in public.u");
	is_int(kcount_total(&stats.toast_missing), 3, "three in all");
	is_int(next(&w, 1000, NULL), a, "the bulk goes");
	ok(strstr(w.fl[a].body.buf, "{\"id\":4,\"v\":500}\n") != NULL,
	    "written without the field");
	answer_ok(&w, a);
	is_str(reported(&w), "550", "and reported");

	/* a failed _mget is retried; nothing completed twice */
	toast_op(&b, 6, 600, "public.t");
	commit(&b, 650);
	cut(&w, &b, CUT_IDLE);
	a = next(&w, 1000, NULL);
	sbuf_reset(&w.fl[a].resp);
	is_int(window_answer(&w, a, NULL, 503, 1000), STEP_WAIT,
	    "the _mget fails: backoff");
	is_int(next(&w, window_retry_at(&w), &path), a, "asked again");
	is_str(path, "/_mget", "the same read");
	sbuf_reset(&w.fl[a].resp);
	sbuf_adds(&w.fl[a].resp, "{\"docs\":[{\"found\":false}]}");
	window_answer(&w, a, NULL, 200, 1000);
	is_int(kcount_get(&stats.toast_missing, "public.t"), 2,
	    "counted once");
	batch_release(&b);
	window_release(&w);
}

static void
fill_op(struct batch *b, int id, unsigned v, const char *body)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "{\"k\":\"fill\",\"index\":\"t\","
	    "\"id\":\"%d\",\"v\":%u,\"toast\":[\"body\"],\"rel\":"
	    "\"public.t\",\"doc\":{\"id\":%d,\"v\":1,\"body\":\"%s\"}}",
	    id, v, id, body);
	add(b, buf);
}

/*
 * A fill (framing.md §5) completes the head's last write from the late
 * copy it carries, where the head lacks a field, and writes it at the
 * head's version; with nothing to fill or no head, it writes nothing.
 */
static void
test_fill(void)
{
	struct window w;
	struct batch b;
	struct flush *fl;
	uint64_t before;
	int a;

	window_init(&w, 4, &sink);
	batch_init(&b, tmod(), 100, 1 << 20);

	/* the update found nothing stored; the fill completes it from the
	 * update's own op in the flush, not from the copy's other fields */
	toast_op(&b, 7, 700, "public.t");
	fill_op(&b, 7, 700, "late");
	commit(&b, 750);
	cut(&w, &b, CUT_IDLE);
	a = next(&w, 1000, NULL);
	fl = &w.fl[a];
	sbuf_reset(&fl->resp);
	sbuf_adds(&fl->resp, "{\"docs\":[{\"found\":false}]}");
	before = stats.toast_completions;
	is_int(window_answer(&w, a, NULL, 200, 1000), STEP_NEXT,
	    "the update's stored copy is read: none");
	is_int(next(&w, 1000, NULL), a, "the bulk goes");
	is_int(fl->nsent, 2, "the update and the fill");
	ok(strstr(fl->body.buf, "{\"id\":7,\"v\":700}\n") != NULL,
	    "the update without the field");
	ok(strstr(fl->body.buf, "\"version\":700") != NULL &&
	    strstr(fl->body.buf, "{\"id\":7,\"v\":700,\"body\":\"late\"}\n")
	    != NULL, "the fill: the update's document with the copy's field, "
	    "at the update's version");
	is_int(stats.toast_completions - before, 1, "one fill counted");
	answer_ok(&w, a);
	is_str(reported(&w), "750", "reported");

	/* the head has the field (its update was completed): nothing
	 * written, and a later update completes from the head as it was */
	add(&b, "{\"k\":\"index\",\"index\":\"t\",\"id\":\"8\",\"v\":800,"
	    "\"doc\":{\"id\":8,\"body\":\"new\"}}");
	fill_op(&b, 8, 800, "old");
	toast_op(&b, 8, 900, "public.t");
	commit(&b, 950);
	cut(&w, &b, CUT_IDLE);
	a = next(&w, 1000, NULL);
	fl = &w.fl[a];
	is_int(fl->nsent, 2, "no read, and the fill is not sent");
	ok(strstr(fl->body.buf, "old") == NULL, "the copy's value is not");
	ok(strstr(fl->body.buf, "{\"id\":8,\"v\":900,\"body\":\"new\"}")
	    != NULL, "the later update completed from the head");
	answer_ok(&w, a);
	is_str(reported(&w), "950", "reported");

	/* the stored head lacks the field: filled; a head that is gone is
	 * not filled */
	fill_op(&b, 10, 1000, "late");
	fill_op(&b, 11, 1000, "late");
	commit(&b, 1050);
	cut(&w, &b, CUT_IDLE);
	a = next(&w, 1000, NULL);
	fl = &w.fl[a];
	is_str(fl->body.buf, "{\"docs\":[{\"_index\":\"t\",\"_id\":\"10\"},"
	    "{\"_index\":\"t\",\"_id\":\"11\"}]}", "both heads are read");
	sbuf_reset(&fl->resp);
	sbuf_adds(&fl->resp, "{\"docs\":[{\"_index\":\"t\",\"_id\":\"10\","
	    "\"found\":true,\"_source\":{\"id\":10,\"v\":3}},"
	    "{\"found\":false}]}");
	window_answer(&w, a, NULL, 200, 1000);
	is_int(next(&w, 1000, NULL), a, "the bulk goes");
	is_int(fl->nsent, 1, "one fill sent");
	ok(strstr(fl->body.buf, "{\"id\":10,\"v\":3,\"body\":\"late\"}\n")
	    != NULL, "the stored head with the copy's field");
	answer_ok(&w, a);
	is_str(reported(&w), "1050", "reported");
	batch_release(&b);
	window_release(&w);
}

/*
 * A document moved to another routing is deleted under the old one first
 * (both may lead to one shard). When that delete must be retried and the
 * write behind it was taken, the write goes again behind the delete:
 * alone, the delete could remove it.
 */
static void
test_reroute(void)
{
	struct window w;
	struct batch b;
	struct flush *fl;
	int a;

	window_init(&w, 2, &sink);
	batch_init(&b, tmod(), 100, 1 << 20);
	add(&b, "{\"k\":\"delete\",\"index\":\"t\",\"id\":\"1\",\"v\":10,"
	    "\"routing\":\"a\"}");
	add(&b, "{\"k\":\"index\",\"index\":\"t\",\"id\":\"1\",\"v\":10,"
	    "\"routing\":\"b\",\"doc\":{\"id\":1}}");
	commit(&b, 20);
	cut(&w, &b, CUT_IDLE);
	a = next(&w, 1000, NULL);
	fl = &w.fl[a];
	is_int(fl->nsent, 2, "the delete and the write go together");
	is_int(answer_bulk(&w, a, 201, 503), STEP_WAIT,
	    "the delete must be retried");
	ok(next(&w, window_retry_at(&w), NULL) == a && fl->nsent == 2 &&
	    fl->arr.sent[0] == 0 && fl->arr.sent[1] == 1,
	    "the retry sends the delete and then the write again");
	is_int(answer_ok(&w, a), STEP_DONE, "both taken: written");
	is_str(reported(&w), "20", "and reported");
	batch_release(&b);
	window_release(&w);
}

/* answer slot's open request with status and body */
static enum step_result
answer_with(struct window *w, int slot, long status, const char *body)
{
	sbuf_reset(&w->fl[slot].resp);
	sbuf_adds(&w->fl[slot].resp, body);
	return window_answer(w, slot, NULL, status, 1000);
}

/* a join cascade is a barrier like a clear: it waits for the flushes
 * before it, holds back the ones after it, and counts the children it
 * deletes; a page not all deleted is asked again, not skipped */
static void
test_cascade(void)
{
	struct window w;
	struct batch b;
	const char *path;
	uint64_t deleted = stats.docs_deleted, batches = stats.batches;
	int s[8], n, slot;

	window_init(&w, 4, &sink);
	batch_init(&b, tmod(), 2, 1 << 20);
	idx(&b, 1, 100);
	commit(&b, 150);
	cut(&w, &b, CUT_IDLE);
	add(&b, "{\"k\":\"cascade\",\"index\":\"qa\",\"id\":\"q1\","
	    "\"v\":200,\"children\":[\"answer\"]}");
	ok(!cut(&w, &b, CUT_NONE), "a cascade waits for the flush before it");
	n = next_all(&w, 1000, s);
	is_int(n, 1, "only the flush before it sends");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "150", "the flush before it reported");
	ok(cut(&w, &b, CUT_NONE), "then the cascade goes");
	commit(&b, 250);
	idx(&b, 2, 300);
	commit(&b, 350);
	ok(!cut(&w, &b, CUT_IDLE), "nothing is cut behind an open cascade");
	slot = next(&w, 1000, &path);
	is_str(path, "/qa/_refresh", "a refresh, so the search sees every "
	    "write");
	is_int(answer_with(&w, slot, 200, "{}"), STEP_NEXT, "refreshed");
	next(&w, 1000, &path);
	ok(strncmp(path, "/qa/_search?", 12) == 0, "the search");
	is_int(answer_with(&w, slot, 200, "{\"_scroll_id\":\"S\",\"hits\":"
	    "{\"hits\":[{\"_index\":\"qa\",\"_id\":\"a1\"},"
	    "{\"_index\":\"qa\",\"_id\":\"a2\"}]}}"), STEP_NEXT,
	    "two children");
	next(&w, 1000, &path);
	ok(strncmp(path, "/_bulk", 6) == 0, "their deletes");
	is_int(answer_with(&w, slot, 200, "{\"errors\":true,\"items\":["
	    "{\"delete\":{\"status\":200}},{\"delete\":{\"status\":429}}]}"),
	    STEP_WAIT, "one not deleted: backing off");
	ok(next(&w, 1000, NULL) == -1, "not asked again before the backoff");
	slot = next(&w, 1000000, &path);
	ok(slot >= 0 && strncmp(path, "/_bulk", 6) == 0,
	    "after it, the same page again");
	is_int(answer_with(&w, slot, 200, "{\"errors\":false,\"items\":["
	    "{\"delete\":{\"status\":200}},{\"delete\":{\"status\":404}}]}"),
	    STEP_NEXT, "the page deleted");
	ok(stats.docs_deleted - deleted == 3 && stats.batches - batches == 3,
	    "each answered delete and page counted");
	next(&w, 1000000, &path);
	is_str(path, "/_search/scroll", "the next page");
	is_int(answer_with(&w, slot, 200, "{\"_scroll_id\":\"S\",\"hits\":"
	    "{\"hits\":[]}}"), STEP_NEXT, "no more children");
	next(&w, 1000000, &path);
	is_int(answer_with(&w, slot, 200, "{}"), STEP_DONE,
	    "the scroll released: done");
	is_int(stats.cascades, 1, "a cascade counted");
	is_str(reported(&w), "", "a cascade carries no position");
	ok(cut(&w, &b, CUT_IDLE), "behind it, the rest may go");
	n = next_all(&w, 1000000, s);
	is_int(n, 1, "its index op");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "350", "after the cascade: its position");
	batch_release(&b);
	window_release(&w);
}

/* engine.retry_max / retry_max_elapsed_ms end the retries of one request
 * (the writer then exits 75, naming the limit); nothing behind the failing
 * flush is ever reported; a refusal holds the halted gauge up until the
 * target takes the document */
static void
test_retry_limits(void)
{
	struct window w;
	struct batch b;
	long long t;
	int slot, i;

	window_init(&w, 2, &sink);
	batch_init(&b, tmod(), 1, 1 << 20);
	sink.retry_max = 3;
	idx(&b, 1, 100);
	commit(&b, 150);
	cut(&w, &b, CUT_IDLE);
	idx(&b, 2, 200);
	commit(&b, 250);
	cut(&w, &b, CUT_IDLE);
	/* the second flush is written, the first keeps failing */
	is_int(next_all(&w, 1000, (int[4]){ 0 }), 2, "both flushes send");
	answer_ok(&w, 1);
	is_int(answer_bulk(&w, 0, 503, 503), STEP_WAIT, "1st failure: retried");
	is_str(reported(&w), "", "nothing reported behind the failing flush");
	for (t = 100000, i = 2; i <= 3; i++, t += 100000) {
		slot = next(&w, t, NULL);
		sbuf_reset(&w.fl[slot].resp);
		sbuf_adds(&w.fl[slot].resp, "{\"error\":{\"type\":\"x\","
		    "\"reason\":\"y\"},\"status\":503}");
		if (i < 3)
			is_int(window_answer(&w, slot, NULL, 503, t), STEP_WAIT,
			    "2nd failure: retried");
		else
			is_int(window_answer(&w, slot, NULL, 503, t), STEP_END,
			    "3rd failure of the same request: retry_max 3 ends "
			    "the writer");
	}
	is_int(sink.err.code, P2O_EXIT_TEMPFAIL, "with 75");
	ok(strstr(sink.err.msg, "after 3 attempts") &&
	    strstr(sink.err.msg, "engine.retry_max is 3") &&
	    strstr(sink.err.msg, "HTTP 503"), "the message names the limit "
	    "and the failure: %s", sink.err.msg);
	is_str(reported(&w), "", "and nothing past the failed flush was "
	    "reported");
	window_release(&w);

	/* the elapsed limit, and a success resetting the count */
	window_init(&w, 1, &sink);
	sink.retry_max = 0;
	sink.retry_max_elapsed_ms = 5000;
	idx(&b, 3, 300);
	commit(&b, 350);
	cut(&w, &b, CUT_IDLE);
	slot = next(&w, 1000, NULL);
	is_int(answer_bulk(&w, slot, 503, 503), STEP_WAIT, "failing at 1 s");
	slot = next(&w, 10000, NULL);
	sbuf_reset(&w.fl[slot].resp);
	is_int(window_answer(&w, slot, NULL, 503, 5999), STEP_WAIT,
	    "still within 5 s of the first failure: retried");
	slot = next(&w, 20000, NULL);
	is_int(window_answer(&w, slot, NULL, 503, 6000), STEP_END,
	    "5 s after the first failure: ended");
	ok(strstr(sink.err.msg, "engine.retry_max_elapsed_ms is 5000") != NULL,
	    "naming the elapsed limit: %s", sink.err.msg);
	window_release(&w);
	sink.retry_max_elapsed_ms = 0;

	/* a refused document: halted while it is retried, not after */
	window_init(&w, 1, &sink);
	idx(&b, 4, 400);
	commit(&b, 450);
	cut(&w, &b, CUT_IDLE);
	slot = next(&w, 30000, NULL);
	is_int(answer_bulk(&w, slot, 400, 400), STEP_WAIT, "a refusal waits");
	is_int(stats.halted, 1, "the writer is halted");
	ok(stats.doc_refusals >= 1, "the refusal is counted");
	slot = next(&w, 100000, NULL);
	is_int(answer_ok(&w, slot), STEP_DONE, "accepted at last");
	is_int(stats.halted, 0, "no longer halted");
	is_str(reported(&w), "450", "and its position reported");
	batch_release(&b);
	window_release(&w);
}

/*
 * A retired flush's arena, arrays and answer buffer wait in a spare for the next flush,
 * at most WINDOW_SPARES of them, and the next cut's input fills that
 * arena; what a reused arena sends is the new cut's entries only; the
 * spares go once the input is idle.
 */
static void
test_spares(void)
{
	struct window w;
	struct batch b;
	struct http_call call;
	struct sbuf *resp;
	char want[64];
	int round, slot, most = 0, reused = 1, fresh = 1, answers = 1;

	window_init(&w, 4, &sink);
	batch_init(&b, tmod(), 100, 1 << 20);
	for (round = 0; round < 12; round++) {
		idx(&b, 1000 + round, 10 + round);
		idx(&b, 2000 + round, 10 + round);
		commit(&b, 100 + round);
		if (!cut(&w, &b, CUT_IDLE))
			break;
		/* a spare was there: b now fills the retired arena, and the
		 * flush took its own arrays from the spare too */
		if (round > 0 && b.arena.cap == 0)
			reused = 0;
		if (!window_next(&w, 1000, 1, &slot, &call, &resp))
			break;
		/* the answer goes into the buffer a retired flush's went into */
		if (round > 0 && resp->cap == 0)
			answers = 0;
		snprintf(want, sizeof(want), "\"_id\":\"%d\"", 1000 + round);
		if (call.body == NULL || strstr(call.body, want) == NULL ||
		    (round > 0 && strstr(call.body, "\"_id\":\"1000\"") != NULL))
			fresh = 0;
		answer_ok(&w, slot);
		reported(&w);
		if (w.nspare > most)
			most = w.nspare;
	}
	is_int(round, 12, "twelve flushes cut, sent and retired");
	ok(reused, "each cut after the first fills a retired flush's arena");
	ok(fresh, "a reused arena sends the new cut's entries only");
	ok(answers, "each flush after the first reads its answer into a "
	    "retired flush's buffer");
	ok(most >= 1 && most <= WINDOW_SPARES, "spares kept: %d, at most %d",
	    most, WINDOW_SPARES);
	window_trim(&w);
	is_int(w.nspare, 0, "an idle input frees the spares");
	batch_release(&b);
	window_release(&w);
}

/*
 * A delete and an earlier write of its document: the node forgets a
 * delete's version after index.gc_deletes or when a copy is promoted, so
 * an older write landing after the delete would bring the document back.
 * The delete waits until the earlier write is taken; two writes of
 * different versions may still be open at once, and a retry leaves out a
 * write a later flush has had taken.
 */
static void
test_later_writes(void)
{
	struct window w;
	struct batch b;
	int s[8], n, slot;

	window_init(&w, 4, &sink);
	batch_init(&b, tmod(), 100, 1 << 20);
	idx(&b, 1, 100);
	idx(&b, 2, 100);
	commit(&b, 150);
	ok(cut(&w, &b, CUT_IDLE), "a flush writing documents 1 and 2");
	add(&b, "{\"k\":\"delete\",\"index\":\"t\",\"id\":\"1\",\"v\":200}");
	commit(&b, 250);
	ok(!cut(&w, &b, CUT_IDLE), "a newer delete of document 1 waits");
	n = next_all(&w, 1000, s);
	is_int(n, 1, "the first is sent alone");
	is_int(answer_bulk(&w, s[0], 503, 503), STEP_WAIT,
	    "it fails (its node lost)");
	ok(!cut(&w, &b, CUT_IDLE), "the delete still waits");
	slot = next(&w, window_retry_at(&w), NULL);
	is_int(slot, s[0], "the first is retried");
	answer_ok(&w, s[0]);
	ok(cut(&w, &b, CUT_IDLE), "taken: the delete goes");
	n = next_all(&w, 2000, s);
	is_int(n, 1, "the delete sent");
	answer_ok(&w, s[0]);
	is_str(reported(&w), "150,250", "both reported");

	/* a delete of another document, or a write of the same one with
	 * another version, does not wait */
	idx(&b, 3, 300);
	commit(&b, 350);
	cut(&w, &b, CUT_IDLE);
	add(&b, "{\"k\":\"delete\",\"index\":\"t\",\"id\":\"4\",\"v\":400}");
	idx(&b, 3, 400);
	commit(&b, 450);
	ok(cut(&w, &b, CUT_IDLE), "an update and a delete of another "
	    "document open beside the first write");
	n = next_all(&w, 3000, s);
	is_int(n, 2, "both sent");
	answer_bulk(&w, s[0], 503, 503);
	answer_ok(&w, s[1]);
	is_int(next(&w, window_retry_at(&w), NULL), -1,
	    "the newer update taken: the older has nothing left to send");
	is_str(reported(&w), "350,450", "both reported");
	ok(window_empty(&w), "window empty");

	/* the newer one failed too: the older goes first, then the newer */
	idx(&b, 5, 500);
	commit(&b, 550);
	cut(&w, &b, CUT_IDLE);
	idx(&b, 5, 600);
	commit(&b, 650);
	cut(&w, &b, CUT_IDLE);
	n = next_all(&w, 4000, s);
	answer_bulk(&w, s[0], 503, 503);
	answer_bulk(&w, s[1], 503, 503);
	slot = next(&w, 100000, NULL);
	is_int(slot, s[0], "both failed: the older is retried first");
	is_int(w.fl[s[0]].nsent, 1, "with its write");
	answer_ok(&w, s[0]);
	slot = next(&w, 100000, NULL);
	is_int(slot, s[1], "then the newer");
	answer_ok(&w, s[1]);
	is_str(reported(&w), "550,650", "both reported");
	batch_release(&b);
	window_release(&w);
}

int
main(void)
{
	struct p2o_err err;

	if (sink_init(&sink, tmod(), "http://test", &stats, NULL, &err) == -1)
		BAIL_OUT(err.msg);
	test_reroute();
	test_order();
	test_in_order();
	test_barriers();
	test_cascade();
	test_toast();
	test_retry_limits();
	test_fill();
	test_spares();
	test_later_writes();
	sink_release(&sink);
	kcount_release(&stats.toast_missing);
	return done_testing();
}
