/*
 * t-target-write.c - the one blocking write of documents the operator's
 * commands use (lib/target.c, target_batch), stepped without a socket
 * through the real modules: OpenSearch's bulk request (items the target
 * asks for again sent again, alone; a failed request sent again whole;
 * a write a later one of the same document settled not sent again;
 * TARGET_WRITE_CHUNK writes a request; credentials and refusals), and
 * Meilisearch's write procedure (each run a task polled to its end
 * before anything counts as written; a failed task refuses its run and
 * the writes after it are sent afresh; a failed poll asked again where
 * the procedure stands). Then the backoff's bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2o.h"
#include "tap.h"
#include "target.h"

static struct target_write w[1300];
static struct item_result items[1300];
static char ids[1300][16];

static struct jspan
js(const char *s)
{
	struct jspan j = { s, strlen(s) };

	return j;
}

/* write i: an index of {"n":i} (del: a delete) into idx, id "<i>" or
 * the id given */
static void
set_write(int i, const char *idx, const char *id, int del)
{
	memset(&w[i], 0, sizeof(w[i]));
	if (id == NULL) {
		snprintf(ids[i], sizeof(ids[i]), "\"%d\"", i);
		id = ids[i];
	}
	w[i].del = del;
	w[i].index = js(idx);
	w[i].id = js(id);
	w[i].doc = del ? js("") : js("{\"a\":1}");
	w[i].version = 100 + (unsigned)i;
}

/* the answer status, body to the batch's request */
static enum target_answer
answer(struct target_batch *b, long status, const char *body, char *why,
    size_t whylen)
{
	struct sbuf r = SBUF_INIT;
	enum target_answer a;

	sbuf_adds(&r, body);
	a = target_batch_answer(b, status, &r, why, whylen);
	sbuf_release(&r);
	return a;
}

/* a bulk answer: one item per letter of codes - 'o' 201, 'r' 429, 'x' a
 * mapping refusal, 'c' 409, 'd' a delete's 200, 'n' a delete's 404 */
static enum target_answer
bulk(struct target_batch *b, const char *codes, char *why, size_t whylen)
{
	struct sbuf r = SBUF_INIT;
	enum target_answer a;
	size_t i;

	sbuf_adds(&r, "{\"errors\":true,\"items\":[");
	for (i = 0; codes[i]; i++) {
		if (i)
			sbuf_addc(&r, ',');
		switch (codes[i]) {
		case 'o':
			sbuf_adds(&r, "{\"index\":{\"status\":201}}");
			break;
		case 'd':
			sbuf_adds(&r, "{\"delete\":{\"status\":200}}");
			break;
		case 'n':
			sbuf_adds(&r, "{\"delete\":{\"status\":404}}");
			break;
		case 'c':
			sbuf_adds(&r, "{\"index\":{\"status\":409,\"error\":"
			    "{\"type\":\"version_conflict_engine_exception\","
			    "\"reason\":\"newer\"}}}");
			break;
		case 'r':
			sbuf_adds(&r, "{\"index\":{\"status\":429,\"error\":"
			    "{\"type\":\"es_rejected_execution_exception\","
			    "\"reason\":\"queue full\"}}}");
			break;
		default:
			sbuf_adds(&r, "{\"index\":{\"status\":400,\"error\":"
			    "{\"type\":\"mapper_parsing_exception\","
			    "\"reason\":\"failed to parse field [a]\"}}}");
			break;
		}
	}
	sbuf_adds(&r, "]}");
	a = answer(b, 200, r.buf, why, whylen);
	sbuf_release(&r);
	return a;
}

/* how many entries a request body holds: its lines that name an id */
static int
entries(const struct http_call *c)
{
	const char *p = c->body, *end = c->body + c->len;
	int n = 0;

	for (; p && p < end; p++)
		if (end - p > 6 && memcmp(p, "\"_id\":", 6) == 0)
			n++;
	return n;
}

static int
has(const struct http_call *c, const char *s)
{
	return c->body && c->len && memmem(c->body, c->len, s, strlen(s));
}

static void
test_bulk(const struct target_module *os)
{
	struct target_batch b;
	struct http_call c;
	struct p2o_err e;
	enum target_answer a;
	char why[512];
	int i, n, r;

	/* one 429 among three: only it is sent again */
	set_write(0, "\"t\"", NULL, 0);
	set_write(1, "\"t\"", NULL, 0);
	set_write(2, "\"t\"", NULL, 1);
	target_batch_init(&b, os, w, 3, items);
	r = target_batch_next(&b, &c, &e);
	ok(r == 1 && strcmp(c.method, "POST") == 0 && strstr(c.path,
	    "_bulk") && entries(&c) == 3, "a bulk request of the three "
	    "writes (%s %s)", c.method, c.path);
	a = bulk(&b, "ord", why, sizeof(why));
	ok(a == TA_RETRY && b.item_retry && strstr(why, "1 of 3 writes not "
	    "accepted yet (HTTP 429)"), "an item answered 429 asks for a "
	    "retry (%s)", why);
	ok(target_batch_next(&b, &c, &e) == 1 && entries(&c) == 1 &&
	    has(&c, "\"_id\":\"1\""), "the next request carries that write "
	    "alone");
	ok(bulk(&b, "o", why, sizeof(why)) == TA_OK && !b.item_retry,
	    "and it is taken");
	ok(target_batch_next(&b, &c, &e) == 0, "then nothing is left");
	ok(items[0].verdict == ITEM_OK && items[1].verdict == ITEM_OK &&
	    items[2].verdict == ITEM_OK && items[2].del, "every write has "
	    "its verdict, the delete's marked");
	target_batch_release(&b);

	/* a failed request is sent again whole; credentials, refusals */
	target_batch_init(&b, os, w, 3, items);
	target_batch_next(&b, &c, &e);
	ok(answer(&b, 503, "{\"error\":{\"type\":\"unavailable\"}}", why,
	    sizeof(why)) == TA_RETRY && !b.item_retry, "a 503 is the "
	    "request's to retry, not its items'");
	ok(target_batch_next(&b, &c, &e) == 1 && entries(&c) == 3,
	    "and the same three are sent again");
	ok(answer(&b, 401, "{}", why, sizeof(why)) == TA_AUTH,
	    "401: our credentials");
	target_batch_next(&b, &c, &e);
	a = answer(&b, 400, "{\"error\":{\"type\":\"parse_exception\","
	    "\"reason\":\"bad\"}}", why, sizeof(why));
	ok(a == TA_REFUSED && strstr(why, "parse_exception"), "400: the "
	    "request is refused (%s)", why);
	target_batch_next(&b, &c, &e);
	ok(bulk(&b, "xcn", why, sizeof(why)) == TA_OK &&
	    target_batch_next(&b, &c, &e) == 0, "a refusal, a newer version "
	    "held and a delete of a missing document are final");
	ok(items[0].verdict == ITEM_REJECT && strcmp(items[0].type,
	    "mapper_parsing_exception") == 0 && items[1].verdict ==
	    ITEM_CONFLICT && items[2].verdict == ITEM_NOTFOUND,
	    "each with the target's words");
	target_batch_release(&b);

	/* the retries run out: the write keeps its ITEM_RETRY, the rest
	 * goes on */
	target_batch_init(&b, os, w, 2, items);
	target_batch_next(&b, &c, &e);
	ok(bulk(&b, "ro", why, sizeof(why)) == TA_RETRY, "a 429 again");
	target_batch_give_up(&b);
	ok(target_batch_next(&b, &c, &e) == 0 && items[0].verdict ==
	    ITEM_RETRY && strcmp(items[0].type,
	    "es_rejected_execution_exception") == 0 && items[1].verdict ==
	    ITEM_OK, "given up: it keeps its verdict and its reason");
	target_batch_release(&b);

	/* two writes of one document: the later one taken settles the
	 * earlier, which is not sent again */
	set_write(0, "\"t\"", "\"same\"", 0);
	set_write(1, "\"t\"", "\"same\"", 0);
	set_write(2, "\"u\"", "\"same\"", 0);
	target_batch_init(&b, os, w, 3, items);
	target_batch_next(&b, &c, &e);
	a = bulk(&b, "ror", why, sizeof(why));
	ok(a == TA_RETRY && strstr(why, "1 of 3"), "the earlier write "
	    "answered 429, the later taken: only the third (another index) "
	    "is retried (%s)", why);
	ok(items[0].verdict == ITEM_CONFLICT && strcmp(items[0].type,
	    "superseded") == 0, "the earlier write is superseded");
	ok(target_batch_next(&b, &c, &e) == 1 && entries(&c) == 1 &&
	    has(&c, "\"_index\":\"u\""), "the next request is the other "
	    "index's write alone");
	target_batch_release(&b);

	/* chunks of TARGET_WRITE_CHUNK */
	for (i = 0; i < 1201; i++)
		set_write(i, "\"t\"", NULL, 1);
	target_batch_init(&b, os, w, 1201, items);
	n = 0;
	while (target_batch_next(&b, &c, &e) == 1) {
		char codes[TARGET_WRITE_CHUNK + 1];
		int k = entries(&c);

		if (n < 3)
			diag("request %d: %d entries", n + 1, k);
		memset(codes, 'd', (size_t)k);
		codes[k] = '\0';
		bulk(&b, codes, why, sizeof(why));
		if (++n > 5)
			break;
	}
	ok(n == 3, "1201 writes are three requests of at most %d (%d)",
	    TARGET_WRITE_CHUNK, n);
	ok(items[0].verdict == ITEM_OK && items[1200].verdict == ITEM_OK &&
	    items[1200].del, "and each has its verdict");
	target_batch_release(&b);
}

static void
test_tasks(const struct target_module *ms)
{
	struct target_batch b;
	struct http_call c;
	struct p2o_err e;
	enum target_answer a;
	char why[512];
	int r;

	/* two additions, then a delete: one add task and one delete task,
	 * both enqueued before either is asked about */
	set_write(0, "\"a\"", "\"1\"", 0);
	set_write(1, "\"a\"", "\"2\"", 0);
	set_write(2, "\"a\"", "\"3\"", 1);
	target_batch_init(&b, ms, w, 3, items);
	r = target_batch_next(&b, &c, &e);
	ok(r == 1 && strcmp(c.method, "POST") == 0 && strstr(c.path,
	    "/indexes/a/documents?primaryKey="), "the adds' task: %s %s",
	    c.method, c.path);
	a = answer(&b, 202, "{\"taskUid\":7,\"status\":\"enqueued\"}", why,
	    sizeof(why));
	ok(a == TA_NEXT && b.wait_ms == 0, "enqueued: the next task goes at "
	    "once (%ld ms)", b.wait_ms);
	r = target_batch_next(&b, &c, &e);
	ok(r == 1 && strstr(c.path, "/indexes/a/documents/delete-batch"),
	    "the delete's task: %s", c.path);
	a = answer(&b, 202, "{\"taskUid\":8}", why, sizeof(why));
	ok(a == TA_NEXT && b.wait_ms > 0, "both sent: the question waits the "
	    "procedure's poll (%ld ms)", b.wait_ms);
	ok(target_batch_next(&b, &c, &e) == 1 && strcmp(c.method, "GET") ==
	    0 && strstr(c.path, "/tasks?uids=7,8"), "both tasks are asked "
	    "about at once: %s", c.path);
	ok(answer(&b, 200, "{\"results\":[{\"uid\":7,\"status\":"
	    "\"processing\"},{\"uid\":8,\"status\":\"enqueued\"}]}", why,
	    sizeof(why)) == TA_NEXT, "processing: go on");
	ok(items[0].verdict == ITEM_OK && items[0].status == 0,
	    "nothing counts as written yet");
	target_batch_next(&b, &c, &e);
	ok(answer(&b, 503, "{}", why, sizeof(why)) == TA_RETRY &&
	    !b.item_retry, "a poll that failed is the request's to retry");
	ok(target_batch_next(&b, &c, &e) == 1 && strstr(c.path,
	    "/tasks?uids=7,8"), "asked again where the procedure stands: the "
	    "same question");
	ok(answer(&b, 200, "{\"results\":[{\"uid\":7,\"status\":"
	    "\"succeeded\"},{\"uid\":8,\"status\":\"succeeded\"}]}", why,
	    sizeof(why)) == TA_OK, "both tasks succeeded: the writes are read");
	ok(target_batch_next(&b, &c, &e) == 0 && items[0].verdict == ITEM_OK &&
	    items[1].verdict == ITEM_OK && items[2].verdict == ITEM_OK &&
	    items[2].del, "then nothing is left, every write written");
	target_batch_release(&b);

	/* a failed task refuses the document its error names; the other
	 * document of its task is owed, sent afresh */
	target_batch_init(&b, ms, w, 3, items);
	target_batch_next(&b, &c, &e);
	answer(&b, 202, "{\"taskUid\":9}", why, sizeof(why));
	target_batch_next(&b, &c, &e);
	answer(&b, 202, "{\"taskUid\":10}", why, sizeof(why));
	target_batch_next(&b, &c, &e);
	a = answer(&b, 200, "{\"results\":[{\"uid\":9,\"status\":\"failed\","
	    "\"error\":{\"code\":\"invalid_document_id\",\"message\":"
	    "\"Document identifier `\\\"2\\\"` is invalid.\"}},{\"uid\":10,"
	    "\"status\":\"succeeded\"}]}", why, sizeof(why));
	ok(a == TA_RETRY && b.item_retry && strstr(why, "1 of 3"), "a failed "
	    "task: the other document of its task is owed (%s)", why);
	ok(items[1].verdict == ITEM_REJECT && strcmp(items[1].type,
	    "invalid_document_id") == 0, "the document the error names is "
	    "refused with the task's code");
	ok(items[2].verdict == ITEM_OK, "the other task's delete is written");
	ok(target_batch_next(&b, &c, &e) == 1 && strstr(c.path,
	    "/indexes/a/documents?primaryKey=") && has(&c, "\"1\"") &&
	    !has(&c, "\"2\""), "a fresh procedure sends the owed add alone");
	answer(&b, 202, "{\"taskUid\":11}", why, sizeof(why));
	target_batch_next(&b, &c, &e);
	ok(answer(&b, 200, "{\"results\":[{\"uid\":11,\"status\":"
	    "\"succeeded\"}]}", why, sizeof(why)) == TA_OK &&
	    target_batch_next(&b, &c, &e) == 0 && items[0].verdict == ITEM_OK,
	    "and it is written");
	target_batch_release(&b);

	/* what the module cannot encode stops the write */
	w[0].routing = js("\"r\"");
	target_batch_init(&b, ms, w, 1, items);
	p2o_err_clear(&e);
	r = target_batch_next(&b, &c, &e);
	ok(r == -1 && strstr(e.msg, "routing"), "a write the module cannot "
	    "take: -1 (%s)", e.msg);
	target_batch_release(&b);
	w[0].routing.p = NULL;
	w[0].routing.n = 0;
}

static void
test_backoff(void)
{
	long long cur = 0, d, lo = 1000000, hi = 0;
	int i;

	d = target_backoff(&cur, 200);
	ok(cur == 200 && d >= 100 && d <= 200, "the first wait is in the "
	    "upper half of the first backoff (%lld)", d);
	d = target_backoff(&cur, 200);
	ok(cur == 400 && d >= 200 && d <= 400, "the second doubles (%lld)",
	    d);
	for (i = 0; i < 20; i++)
		target_backoff(&cur, 200);
	for (i = 0; i < 50; i++) {
		d = target_backoff(&cur, 200);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ok(cur == 30000 && hi <= 30000 && lo >= 15000, "it doubles up to "
	    "30 s and stays there, waits of 15 to 30 s (%lld..%lld)", lo, hi);
	cur = 0;
	target_backoff(&cur, 0);
	ok(cur == 100, "without a first wait: 100 ms");
}

int
main(void)
{
	const struct target_module *os = target_module_find("opensearch");
	const struct target_module *ms = target_module_find("meilisearch");

	if (os == NULL || ms == NULL)
		BAIL_OUT("no opensearch or meilisearch module");
	test_bulk(os);
	test_tasks(ms);
	test_backoff();
	return done_testing();
}
