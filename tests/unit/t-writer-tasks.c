/*
 * t-writer-tasks.c - the writer's window on a target whose writes are
 * tasks (Meilisearch), without a socket: two flushes open at once, the
 * second sending its tasks only once the first has sent all of its own
 * (so the server's queue holds them in cut order and batches them), both
 * then asked about side by side and reported in cut order; a flush whose
 * task was canceled builds its retry without the documents a later flush
 * writes (no versions: the later write is the newer one, and a write sent
 * again lands after it); a flush that could not send all its tasks holds
 * the next one back, and so does one that met a refusal, until it is
 * written.
 */
#include <malloc.h>
#include <string.h>

#include "p2o.h"
#include "tap.h"
#include "writer-test.h"

static struct writer_stats stats;
static struct sink sink;
static const struct target_module *meili;

static void
idx(struct batch *b, int id, unsigned v)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
	    "\"id\":\"%d\",\"v\":%u,\"doc\":{\"n\":%u}}", id, v, v);
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

static int
cut(struct window *w, struct batch *b)
{
	int n = batch_cut(b, CUT_IDLE);

	if (n <= 0 || !window_may_open(w, b, n))
		return 0;
	window_open(w, b, n);
	return 1;
}

static struct http_call last;

/* the next request due at now: its slot, or -1 */
static int
next(struct window *w, long long now)
{
	struct sbuf *resp;
	int slot;

	if (!window_next(w, now, 1, &slot, &last, &resp))
		return -1;
	return slot;
}

static enum step_result
reply(struct window *w, int slot, long status, const char *body,
    long long now)
{
	sbuf_reset(&w->fl[slot].resp);
	sbuf_adds(&w->fl[slot].resp, body);
	return window_answer(w, slot, NULL, status, now);
}

/* the positions reported now, in order */
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
test_two_open(void)
{
	struct window w;
	struct batch b;
	int a, c, s;

	window_init(&w, 2, &sink);
	batch_init(&b, meili, 100, 1 << 20);
	idx(&b, 1, 100);
	idx(&b, 2, 100);
	commit(&b, 150);
	ok(cut(&w, &b), "the first flush opens");
	idx(&b, 3, 200);
	idx(&b, 1, 200);
	commit(&b, 250);
	ok(cut(&w, &b), "and the second beside it");
	idx(&b, 4, 300);
	commit(&b, 350);
	ok(!cut(&w, &b), "not a third");

	a = next(&w, 1000);
	is_str(last.method, "POST", "the first flush sends its task");
	is_int(next(&w, 1000), -1, "the second waits: the first has not "
	    "sent all of its tasks");
	is_int(reply(&w, a, 202, "{\"taskUid\":1}", 1000), STEP_NEXT,
	    "the first's task enqueued, all of its own");
	c = next(&w, 1000);
	ok(c >= 0 && c != a && strcmp(last.method, "POST") == 0,
	    "now the second sends its task, behind the first's");
	ok(strstr(last.body, "\"pg2osync_id\":\"1\"") &&
	    strstr(last.body, "\"n\":200"), "with its own write of document "
	    "1");
	is_int(reply(&w, c, 202, "{\"taskUid\":2}", 1000), STEP_NEXT,
	    "enqueued");
	is_int(next(&w, 1000), -1, "nothing more now: both wait a little "
	    "before asking");
	s = next(&w, 1010);
	is_str(last.path, "/tasks?uids=1&limit=1", "the first asks about its "
	    "task");
	is_int(reply(&w, s, 200, "{\"results\":[{\"uid\":1,\"status\":"
	    "\"processing\"}]}", 1010), STEP_NEXT, "still processing");
	s = next(&w, 1010);
	is_str(last.path, "/tasks?uids=2&limit=1", "the second asks about its "
	    "own meanwhile");
	is_int(reply(&w, s, 200, "{\"results\":[{\"uid\":2,\"status\":"
	    "\"succeeded\"}]}", 1010), STEP_DONE, "it succeeded");
	is_str(reported(&w), "", "nothing reported before the first");
	s = next(&w, 1030);
	is_int(reply(&w, s, 200, "{\"results\":[{\"uid\":1,\"status\":"
	    "\"succeeded\"}]}", 1030), STEP_DONE, "then the first succeeded");
	is_str(reported(&w), "150,250", "both reported, in cut order");
	ok(cut(&w, &b), "the third opens");
	window_release(&w);
	batch_release(&b);
}

/* up to WINDOW_TASK_DEPTH small flushes, but the bytes of two batches */
static void
test_depth(void)
{
	struct window w;
	struct batch b;
	int i, n = 0;

	is_int(window_depth(meili, 1), WINDOW_TASK_DEPTH, "a target whose "
	    "writes are tasks keeps %d flushes open", WINDOW_TASK_DEPTH);
	is_int(window_depth(tmod(), 3), 3, "another, write_concurrency");
	window_init(&w, window_depth(meili, 1), &sink);
	batch_init(&b, meili, 100, 1 << 20);
	for (i = 0; i < 2 * WINDOW_TASK_DEPTH; i++) {
		idx(&b, 100 + i, 900 + i);
		commit(&b, 1000 + i);
		n += cut(&w, &b);
	}
	is_int(n, WINDOW_TASK_DEPTH, "small flushes: %d open", n);
	window_release(&w);
	batch_release(&b);
	window_init(&w, window_depth(meili, 1), &sink);
	batch_init(&b, meili, 100, 4096);
	for (i = n = 0; i < 20; i++) {
		char big[3000], buf[3200];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
		    "\"id\":\"%d\",\"v\":%d,\"doc\":{\"s\":\"%s\"}}", 200 + i,
		    2000 + i, big);
		add(&b, buf);
		commit(&b, 3000 + i);
		n += cut(&w, &b);
	}
	is_int(n, 2, "flushes near the byte limit: two open (%d)", n);
	window_release(&w);
	batch_release(&b);
}

/* the heap in use, from the allocator's own count */
static size_t
heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * Narrow rows, a batch of 1,000 at a time, into a window as deep as a
 * target of tasks gets: every flush opened sends its task, and the heap
 * they take together stays within the window's bytes (two batches), the
 * batch being read (one) and the sink's verdicts for a batch, whatever the
 * depth. An
 * op and its plan outweigh a narrow row's document: counted in documents
 * alone, the window grew with WINDOW_TASK_DEPTH (13 MB here at 32).
 */
static void
test_narrow_memory(void)
{
	const size_t limit = 1 << 20,
	    bound = 3 * limit + 1000 * sizeof(struct item_result);
	struct window w;
	struct batch b;
	size_t before, used;
	int i, k, s, n = 0;

	before = heap_used();
	window_init(&w, window_depth(meili, 1), &sink);
	batch_init(&b, meili, 1000, limit);
	for (k = 0; k < 2 * WINDOW_TASK_DEPTH; k++) {
		for (i = 0; i < 999; i++)
			idx(&b, k * 1000 + i, 10 + k);
		commit(&b, 100 + k);
		if (!cut(&w, &b))
			break;
		n++;
		while ((s = next(&w, 1000)) >= 0)
			reply(&w, s, 202, "{\"taskUid\":1}", 1000);
	}
	used = heap_used() - before;
#ifdef __SANITIZE_ADDRESS__
	ok(1, "# skip the allocator's count is ASan's (%zu of %zu bytes)",
	    used, bound);
#else
	ok(used <= bound, "%d flushes of narrow rows sent: %zu KB in use, "
	    "at most the bytes of three batches and a batch's verdicts "
	    "(%zu KB) at depth %d", n, used >> 10, bound >> 10,
	    WINDOW_TASK_DEPTH);
#endif
	ok(n >= 2, "and more than one flush opened (%d)", n);
	window_release(&w);
	batch_release(&b);
}

static void
test_retry_behind(void)
{
	struct window w;
	struct batch b;
	int a, c, s;

	window_init(&w, 2, &sink);
	batch_init(&b, meili, 100, 1 << 20);
	idx(&b, 5, 300);
	idx(&b, 6, 300);
	commit(&b, 350);
	cut(&w, &b);
	idx(&b, 6, 400);
	commit(&b, 450);
	cut(&w, &b);
	a = next(&w, 1000);
	reply(&w, a, 202, "{\"taskUid\":3}", 1000);
	c = next(&w, 1000);
	reply(&w, c, 202, "{\"taskUid\":4}", 1000);
	s = next(&w, 1010);
	ok(s == a, "the first asks about its task");
	is_int(reply(&w, a, 200, "{\"results\":[{\"uid\":3,\"status\":"
	    "\"canceled\"}]}", 1010), STEP_WAIT, "canceled: its documents "
	    "are owed, after a back-off");
	s = next(&w, window_retry_at(&w));
	ok(s == a && strcmp(last.method, "POST") == 0, "the first sends "
	    "again");
	ok(strstr(last.body, "\"pg2osync_id\":\"5\"") &&
	    !strstr(last.body, "\"pg2osync_id\":\"6\""), "without document 6, "
	    "which the second flush writes newer: %s", last.body);
	reply(&w, a, 202, "{\"taskUid\":5}", 2000);
	s = next(&w, 2010);
	reply(&w, s, 200, s == a ? "{\"results\":[{\"uid\":5,\"status\":"
	    "\"succeeded\"}]}" : "{\"results\":[{\"uid\":4,\"status\":"
	    "\"succeeded\"}]}", 2010);
	s = next(&w, 2010);
	reply(&w, s, 200, s == a ? "{\"results\":[{\"uid\":5,\"status\":"
	    "\"succeeded\"}]}" : "{\"results\":[{\"uid\":4,\"status\":"
	    "\"succeeded\"}]}", 2010);
	is_str(reported(&w), "350,450", "both written and reported");
	window_release(&w);
	batch_release(&b);
}

static void
test_held_back(void)
{
	struct window w;
	struct batch b;
	int a, c;

	window_init(&w, 2, &sink);
	batch_init(&b, meili, 100, 1 << 20);
	idx(&b, 7, 500);
	commit(&b, 550);
	cut(&w, &b);
	idx(&b, 8, 600);
	commit(&b, 650);
	cut(&w, &b);
	a = next(&w, 1000);
	is_int(reply(&w, a, 503, "{\"message\":\"busy\",\"code\":\"x\"}",
	    1000), STEP_WAIT, "the first flush's task could not be sent");
	is_int(next(&w, 1000), -1, "the second is held back: its task would "
	    "land before the first's");
	is_int(next(&w, window_retry_at(&w)), a, "the first sends again");
	reply(&w, a, 202, "{\"taskUid\":6}", 3000);
	c = next(&w, 3000);
	ok(c >= 0 && c != a && strcmp(last.method, "POST") == 0,
	    "then the second sends its own");
	window_release(&w);
	batch_release(&b);
}

static void
test_refused(void)
{
	struct window w;
	struct batch b;
	int a, s;

	window_init(&w, 2, &sink);
	batch_init(&b, meili, 100, 1 << 20);
	idx(&b, 9, 700);
	commit(&b, 750);
	cut(&w, &b);
	a = next(&w, 1000);
	reply(&w, a, 202, "{\"taskUid\":7}", 1000);
	next(&w, 1010);
	is_int(reply(&w, a, 200, "{\"results\":[{\"uid\":7,\"status\":"
	    "\"failed\",\"error\":{\"code\":\"invalid_document_id\","
	    "\"message\":\"Document identifier `\\\"9\\\"` is invalid.\"}}]}",
	    1010), STEP_WAIT, "its task failed on its document: halted");
	idx(&b, 10, 800);
	commit(&b, 850);
	ok(cut(&w, &b), "a later flush opens");
	is_int(next(&w, 1010), -1, "but sends nothing behind the refusal");
	s = next(&w, window_retry_at(&w));
	ok(s == a && strcmp(last.method, "POST") == 0, "the refused flush "
	    "sends again");
	reply(&w, a, 202, "{\"taskUid\":8}", 5000);
	is_int(next(&w, 5000), -1, "all of its tasks sent, the later flush "
	    "still waits: it met a refusal");
	next(&w, 5010);
	is_int(reply(&w, a, 200, "{\"results\":[{\"uid\":8,\"status\":"
	    "\"succeeded\"}]}", 5010), STEP_DONE, "accepted at last");
	s = next(&w, 5010);
	ok(s >= 0 && s != a && strcmp(last.method, "POST") == 0, "then the "
	    "later flush sends");
	window_release(&w);
	batch_release(&b);
}

int
main(void)
{
	struct p2o_err err;

	meili = target_module_find("meilisearch");
	if (meili == NULL || sink_init(&sink, meili, "http://test", &stats,
	    NULL, &err) == -1)
		BAIL_OUT("no meilisearch sink");
	test_depth();
	test_narrow_memory();
	test_held_back();
	test_refused();
	test_retry_behind();
	test_two_open();
	sink_release(&sink);
	return done_testing();
}
