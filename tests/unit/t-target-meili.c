/*
 * t-target-meili.c - the Meilisearch target without a server: what config
 * load refuses for it (each option it cannot honour, named; a state
 * directory required, and refused for a target with state documents), its
 * probe, the write procedure (a body reduced to each document's last
 * state, one task per index and kind, all sent before any is asked about,
 * then asked about together with a back-off until each has ended; only a
 * task that succeeded writes; a failed task refuses the document its
 * error names, or all of its documents; a task canceled or gone is sent
 * again), a document with a member of the primary key's name refused, and
 * the state files (written whole, never replacing a higher version, keys
 * kept inside the directory).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "p2o.h"
#include "tap.h"
#include "target.h"

static char dir[] = "/tmp/t-target-meili.XXXXXX";
static char path[96], statedir[96];

static void
write_file(const char *p, const char *s)
{
	FILE *fp = fopen(p, "w");

	if (fp == NULL || fputs(s, fp) == EOF || fclose(fp) == EOF)
		BAIL_OUT("cannot write a test file");
}

/* a configuration: head, then extra target keys, then engine and sync
 * lines; 0 or -1 with the message in err */
static int
load(const char *target_extra, const char *rest, struct config *cfg,
    char *err, size_t errlen)
{
	struct p2o_err e;
	char text[2048];

	snprintf(text, sizeof(text),
	    "source:\n"
	    "  url: postgres://u@127.0.0.1/db\n"
	    "target:\n"
	    "  url: http://127.0.0.1:7700\n"
	    "%s"
	    "sync:\n"
	    "  items:\n"
	    "    table: items\n"
	    "%s", target_extra, rest);
	write_file(path, text);
	if (config_load_with(path, CONFIG_SECRETS_ALL, cfg, &e) == -1) {
		snprintf(err, errlen, "%.400s", e.msg);
		return -1;
	}
	return 0;
}

static void
refused(const char *extra, const char *rest, const char *want,
    const char *name)
{
	struct config cfg;
	char err[512] = "";

	ok(load(extra, rest, &cfg, err, sizeof(err)) == -1 &&
	    strstr(err, want) != NULL, "%s is refused at load (%s)", name, err);
}

static void
test_config(void)
{
	struct config cfg;
	char meili[256], err[512] = "", mapping[128], rest[256];

	snprintf(meili, sizeof(meili), "  flavor: meilisearch\n"
	    "  state_dir: %s\n", statedir);
	ok(load(meili, "", &cfg, err, sizeof(err)) == 0, "flavor meilisearch "
	    "with a state_dir loads (%s)", err);
	if (err[0] == '\0') {
		is_str(cfg.target_module->name, "meilisearch", "and picks the "
		    "module");
		ok(!target_can(cfg.target_module, TCAP_EXTERNAL_VERSIONS) &&
		    !target_can(cfg.target_module, TCAP_CONCURRENT_WRITES) &&
		    !target_can(cfg.target_module, TCAP_STATE_DOCS) &&
		    target_can(cfg.target_module, TCAP_ASYNC_TASKS),
		    "which declares tasks, and no versions, concurrent "
		    "writes or state documents");
		config_release(&cfg);
	}
	refused("  flavor: meilisearch\n", "", "set 'target.state_dir'",
	    "meilisearch without a state_dir");
	snprintf(err, sizeof(err), "  state_dir: %s\n", statedir);
	refused(err, "", "'target.state_dir' is for a target that keeps no "
	    "state documents", "a state_dir for opensearch");
	refused(meili, "engine:\n  write_concurrency: 2\n",
	    "'engine.write_concurrency' needs concurrent writes, which target "
	    "'meilisearch' does not offer", "write_concurrency 2");
	refused(meili, "    routing: tenant\n", "'sync.items.routing' needs "
	    "routing", "routing");
	refused(meili, "    pipeline: embed\n", "'sync.items.pipeline' needs "
	    "ingest pipelines", "pipeline");
	refused(meili, "    join: {field: rel, name: item}\n",
	    "'sync.items.join' needs join", "join");
	snprintf(mapping, sizeof(mapping), "%s/m.json", dir);
	write_file(mapping, "{\"mappings\":{\"properties\":{}}}");
	snprintf(rest, sizeof(rest), "    mapping_file: %s\n", mapping);
	refused(meili, rest, "'sync.items.mapping_file' needs mappings",
	    "mapping_file");
	unlink(mapping);
	refused(meili, "    index: \"has space\"\n", "a Meilisearch index uid",
	    "an index uid with a space");
}

static void
test_probe(const struct target_ops *ops)
{
	struct sbuf r = SBUF_INIT;
	char node[64], why[256];

	sbuf_adds(&r, "{\"commitSha\":\"x\",\"pkgVersion\":\"1.11.3\"}");
	ok(ops->probe_answer(200, &r, node, sizeof(node), why, sizeof(why)) ==
	    TA_OK, "a 1.x node is taken");
	is_str(node, "meilisearch 1.11.3", "and named");
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"pkgVersion\":\"2.0.0\"}");
	ok(ops->probe_answer(200, &r, node, sizeof(node), why, sizeof(why)) ==
	    TA_REFUSED && strstr(why, "supported: 1.x"), "a 2.x node is "
	    "refused (%s)", why);
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"error\":\"no handler found for uri [/version]\"}");
	ok(ops->probe_answer(400, &r, node, sizeof(node), why, sizeof(why)) ==
	    TA_RETRY, "an error answer is retried");
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"name\":\"n\",\"version\":{\"number\":\"2.19.0\"}}");
	ok(ops->probe_answer(200, &r, node, sizeof(node), why, sizeof(why)) ==
	    TA_REFUSED && strstr(why, "not a Meilisearch"), "another engine "
	    "is refused (%s)", why);
	sbuf_release(&r);
}

static struct jspan
js(const char *s)
{
	struct jspan j = { s, strlen(s) };

	return j;
}

static void
add(struct sbuf *a, const struct target_ops *ops, const char *index,
    const char *id, const char *doc)
{
	struct target_write w;
	struct target_entry e;
	struct p2o_err err;

	memset(&w, 0, sizeof(w));
	w.del = doc == NULL;
	w.index = js(index);
	w.id = js(id);
	if (doc)
		w.doc = js(doc);
	w.version = 5;
	if (ops->encode(a, &w, &e, &err) == -1)
		BAIL_OUT("encode");
}

/* one answer to the procedure's last request */
static enum target_answer
answer(const struct target_ops *ops, struct target_proc *p, long status,
    const char *body, const struct sbuf *a, int n,
    struct item_result *items)
{
	struct sbuf r = SBUF_INIT;
	enum target_answer ta;
	char why[256];

	sbuf_adds(&r, body);
	ta = ops->write_answer(p, status, &r, a->buf, a->len, n, items, why,
	    sizeof(why));
	sbuf_release(&r);
	return ta;
}

/* the state of task uid as GET /tasks lists it */
static void
task_json(struct sbuf *out, int uid, const char *status, const char *error)
{
	if (out->buf[out->len - 1] != '[')
		sbuf_addc(out, ',');
	sbuf_addf(out, "{\"uid\":%d,\"status\":\"%s\"%s%s}", uid, status,
	    error ? ",\"error\":" : "", error ? error : "");
}

/* one poll's answer: "uid status" pairs, a failed one's error after a
 * third word */
static enum target_answer
poll(const struct target_ops *ops, struct target_proc *p,
    const struct sbuf *a, int n, struct item_result *items, int ntask,
    const int *uid, const char *const *status, const char *const *error)
{
	struct sbuf r = SBUF_INIT;
	enum target_answer ta;
	char why[256];
	int i;

	sbuf_adds(&r, "{\"results\":[");
	for (i = 0; i < ntask; i++)
		task_json(&r, uid[i], status[i], error ? error[i] : NULL);
	sbuf_adds(&r, "],\"total\":1}");
	ta = ops->write_answer(p, 200, &r, a->buf, a->len, n, items, why,
	    sizeof(why));
	sbuf_release(&r);
	return ta;
}

static void
test_writes(const struct target_ops *ops)
{
	struct sbuf a = SBUF_INIT;
	struct target_proc p;
	struct http_call c;
	struct item_result items[7];
	long waits[8];
	int i, ok_all;

	/* ix/1 twice (the second wins), ix/4 added then deleted, and an
	 * entry of another index */
	add(&a, ops, "\"ix\"", "\"1\"", "{\"x\":1}");
	add(&a, ops, "\"ix\"", "\"2\"", "{}");
	add(&a, ops, "\"ix\"", "\"3\"", NULL);
	add(&a, ops, "\"ix\"", "\"1\"", "{\"x\":2}");
	add(&a, ops, "\"ix\"", "\"4\"", "{\"y\":1}");
	add(&a, ops, "\"ix\"", "\"4\"", NULL);
	add(&a, ops, "\"jx\"", "\"5\"", "{\"z\":[1]}");
	target_proc_init(&p);
	memset(items, 0, sizeof(items));
	/* untouched until the last answer: not a verdict the module gives */
	for (i = 0; i < 7; i++)
		items[i].verdict = ITEM_RETRY;

	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.method, "POST", "the adds of an index are one POST");
	is_str(c.path, "/indexes/ix/documents?primaryKey=pg2osync_id",
	    "to the index's documents, naming the primary key");
	is_str(c.body, "[{\"pg2osync_id\":\"2\"},{\"pg2osync_id\":\"1\","
	    "\"x\":2}]", "each document once, in its last state, our id as "
	    "its primary key");
	ok(answer(ops, &p, 202, "{\"taskUid\":7,\"status\":\"enqueued\"}", &a,
	    7, items) == TA_NEXT && p.poll_ms == 0, "enqueued: the next task "
	    "goes at once, without waiting for this one");
	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.path, "/indexes/ix/documents/delete-batch", "its deletes are "
	    "one delete-batch");
	is_str(c.body, "[\"3\",\"4\"]", "of the ids whose last entry is a "
	    "delete");
	ok(answer(ops, &p, 202, "{\"taskUid\":8}", &a, 7, items) == TA_NEXT &&
	    p.poll_ms == 0, "enqueued too");
	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.path, "/indexes/jx/documents?primaryKey=pg2osync_id",
	    "another index: a task of its own");
	i = answer(ops, &p, 202, "{\"taskUid\":9}", &a, 7, items) == TA_NEXT;
	waits[0] = p.poll_ms;
	ok(i && waits[0] > 0, "the last task sent: the first question waits a "
	    "little (%ld ms)", waits[0]);
	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.method, "GET", "then one question");
	is_str(c.path, "/tasks?uids=7,8,9&limit=3", "about every task at once");
	{
		const int u[] = { 9, 8, 7 };
		const char *const st[] = { "succeeded", "enqueued",
		    "processing" };

		ok(poll(ops, &p, &a, 7, items, 3, u, st, NULL) == TA_NEXT,
		    "one succeeded, two still running: go on");
	}
	ok(items[6].verdict == ITEM_RETRY, "the verdicts wait for the last "
	    "task: the caller may lend each answer the same array");
	waits[1] = p.poll_ms;
	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.path, "/tasks?uids=7,8&limit=2", "the next question is "
	    "about those still open");
	for (i = 2; i < 8; i++) {
		const int u[] = { 7, 8 };
		const char *const st[] = { "processing", "enqueued" };

		poll(ops, &p, &a, 7, items, 2, u, st, NULL);
		waits[i] = p.poll_ms;
	}
	ok(waits[0] == 10 && waits[1] == 20 && waits[2] == 40 &&
	    waits[4] == 160 && waits[5] == 200 && waits[7] == 200,
	    "asked again after a back-off doubling from 10 to 200 ms "
	    "(%ld %ld %ld .. %ld %ld)", waits[0], waits[1], waits[2],
	    waits[5], waits[7]);
	{
		const int u[] = { 8, 7 };
		const char *const st[] = { "succeeded", "succeeded" };

		ok(poll(ops, &p, &a, 7, items, 2, u, st, NULL) == TA_OK,
		    "every task succeeded: done");
	}
	for (ok_all = 1, i = 0; i < 7; i++)
		ok_all &= items[i].verdict == ITEM_OK;
	ok(ok_all, "every entry is written, those a later one replaced too");
	ok(items[4].del == 0 && items[5].del == 1 && items[2].del == 1,
	    "each counted as what it was (an add, a delete)");

	/* a failed task: the document its error names is refused */
	sbuf_reset(&a);
	add(&a, ops, "\"ix\"", "\"a\"", "{}");
	add(&a, ops, "\"ix\"", "\"a b\"", "{}");
	add(&a, ops, "\"ix\"", "\"c\"", NULL);
	target_proc_reset(&p);
	memset(items, 0, sizeof(items));
	ops->write_call(&p, a.buf, a.len, &c);
	answer(ops, &p, 202, "{\"taskUid\":10}", &a, 3, items);
	ops->write_call(&p, a.buf, a.len, &c);
	answer(ops, &p, 202, "{\"taskUid\":11}", &a, 3, items);
	ops->write_call(&p, a.buf, a.len, &c);
	{
		const int u[] = { 10, 11 };
		const char *const st[] = { "failed", "succeeded" };
		const char *const er[] = { "{\"message\":\"Document identifier "
		    "`\\\"a b\\\"` is invalid. A document identifier can be "
		    "of type integer or string.\",\"code\":"
		    "\"invalid_document_id\"}", NULL };

		ok(poll(ops, &p, &a, 3, items, 2, u, st, er) == TA_OK,
		    "a failed task ends, as a task");
	}
	ok(items[1].verdict == ITEM_REJECT, "the document its error names "
	    "is refused");
	is_str(items[1].type, "invalid_document_id", "with the task's code");
	ok(strstr(items[1].reason, "Document identifier `\"a b\"` is "
	    "invalid.") != NULL && strstr(items[1].reason, "(task 10)"),
	    "its message and the task (%s)", items[1].reason);
	ok(items[0].verdict == ITEM_RETRY, "the other document of the task is "
	    "not written, to retry (%s)", items[0].reason);
	ok(items[2].verdict == ITEM_OK, "the other task's delete is written");

	/* naming no document of its task: all of them are refused */
	target_proc_reset(&p);
	memset(items, 0, sizeof(items));
	ops->write_call(&p, a.buf, a.len, &c);
	answer(ops, &p, 202, "{\"taskUid\":12}", &a, 3, items);
	ops->write_call(&p, a.buf, a.len, &c);
	answer(ops, &p, 202, "{\"taskUid\":13}", &a, 3, items);
	ops->write_call(&p, a.buf, a.len, &c);
	{
		const int u[] = { 12, 13 };
		const char *const st[] = { "failed", "failed" };
		const char *const er[] = { "{\"message\":\"Index already has "
		    "a primary key: `other`.\",\"code\":"
		    "\"index_primary_key_already_exists\"}",
		    "{\"message\":\"Index `ix` not found.\",\"code\":"
		    "\"index_not_found\"}" };

		ok(poll(ops, &p, &a, 3, items, 2, u, st, er) == TA_OK,
		    "both tasks failed: done");
	}
	ok(items[0].verdict == ITEM_REJECT && items[1].verdict ==
	    ITEM_REJECT && strcmp(items[0].type,
	    "index_primary_key_already_exists") == 0, "a failure naming no "
	    "document refuses every document of its task");
	ok(items[2].verdict == ITEM_NOTFOUND, "a delete in an index that is "
	    "not there deleted nothing, as it asked");

	/* canceled, or gone from the queue: its documents are owed, for
	 * the caller to send again (after what it sent since) */
	target_proc_reset(&p);
	memset(items, 0, sizeof(items));
	ops->write_call(&p, a.buf, a.len, &c);
	answer(ops, &p, 202, "{\"taskUid\":14}", &a, 3, items);
	ok(!p.sent_all, "one task of two enqueued: not all sent");
	ops->write_call(&p, a.buf, a.len, &c);
	answer(ops, &p, 202, "{\"taskUid\":15}", &a, 3, items);
	ok(p.sent_all, "both enqueued: all sent, what follows only asks");
	ops->write_call(&p, a.buf, a.len, &c);
	{
		const int u[] = { 14 };
		const char *const st[] = { "canceled" };

		ok(poll(ops, &p, &a, 3, items, 1, u, st, NULL) == TA_OK,
		    "a task canceled, another gone from the queue: both ended");
	}
	ok(items[0].verdict == ITEM_RETRY && items[1].verdict == ITEM_RETRY &&
	    strstr(items[0].reason, "task 14 was canceled") != NULL,
	    "the canceled one's documents are to retry (%s)", items[0].reason);
	ok(items[2].verdict == ITEM_RETRY && strstr(items[2].reason,
	    "task 15 is no longer in the task queue") != NULL, "and the gone "
	    "one's (%s)", items[2].reason);

	target_proc_reset(&p);
	ops->write_call(&p, a.buf, a.len, &c);
	ok(answer(ops, &p, 503, "{}", &a, 3, items) == TA_RETRY,
	    "a failing node: retried");
	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.path, "/indexes/ix/documents?primaryKey=pg2osync_id",
	    "the same task is sent again");
	ok(answer(ops, &p, 401, "{\"code\":\"invalid_api_key\"}", &a, 3,
	    items) == TA_AUTH, "refused credentials are permanent");

	target_proc_reset(&p);
	sbuf_reset(&a);
	sbuf_adds(&a, "{\"not\":\"ours\"}\n");
	ops->write_call(&p, a.buf, a.len, &c);
	ok(answer(ops, &p, 200, "{}", &a, 1, items) == TA_REFUSED,
	    "a body the module did not encode is refused");
	target_proc_release(&p);
	sbuf_release(&a);
}

/* a truncate's clear: one task deleting every document, asked about
 * with a back-off until it ended */
static void
test_clear(const struct target_ops *ops)
{
	struct target_proc p;
	struct http_call c;
	struct sbuf r = SBUF_INIT;
	char why[256];
	long waits[8];
	int i;

	target_proc_init(&p);
	p.kind = PROC_CLEAR;
	p.index = "ix";
	ops->proc_call(&p, &c);
	ok(strcmp(c.method, "DELETE") == 0 &&
	    strcmp(c.path, "/indexes/ix/documents") == 0, "a clear deletes "
	    "every document of the index");
	sbuf_adds(&r, "{\"taskUid\":40}");
	ok(ops->proc_answer(&p, 202, &r, why, sizeof(why)) == TA_NEXT,
	    "its task enqueued");
	for (i = 0; i < 7; i++) {
		ops->proc_call(&p, &c);
		sbuf_reset(&r);
		sbuf_adds(&r, "{\"uid\":40,\"status\":\"processing\"}");
		ops->proc_answer(&p, 200, &r, why, sizeof(why));
		waits[i] = p.poll_ms;
	}
	is_str(c.path, "/tasks/40", "then asked about");
	ok(waits[0] == 10 && waits[1] == 20 && waits[4] == 160 &&
	    waits[5] == 200 && waits[6] == 200, "with a back-off doubling "
	    "from 10 to 200 ms (%ld %ld .. %ld %ld)", waits[0], waits[1],
	    waits[5], waits[6]);
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"uid\":40,\"status\":\"succeeded\"}");
	ok(ops->proc_answer(&p, 200, &r, why, sizeof(why)) == TA_OK,
	    "done when it succeeded");
	target_proc_release(&p);
	sbuf_release(&r);
}

/* a document with a member of our primary key's name is refused */
static void
test_encode(const struct target_ops *ops)
{
	struct sbuf a = SBUF_INIT;
	struct target_write w;
	struct target_entry e;
	struct p2o_err err;

	memset(&w, 0, sizeof(w));
	w.index = js("\"ix\"");
	w.id = js("\"7\"");
	w.doc = js("{\"a\":1,\"pg2osync_id\":\"x\"}");
	ok(ops->encode(&a, &w, &e, &err) == -1 && err.code == P2O_EXIT_DATA &&
	    strstr(err.msg, "document 'ix/7' has a member 'pg2osync_id'"),
	    "a document with a member named as the primary key is refused "
	    "(%s)", err.msg);
	w.doc = js("{\"a\":{\"pg2osync_id\":1}}");
	ok(ops->encode(&a, &w, &e, &err) == 0, "one inside a member is its "
	    "own");
	sbuf_release(&a);
}

static void
test_state(const struct target_module *m)
{
	struct target_conn c;
	struct sbuf doc = SBUF_INIT;
	struct p2o_err err;
	struct stat sb;
	char f[256];
	int found, conflict, created;

	memset(&c, 0, sizeof(c));
	c.mod = m;
	c.state_dir = statedir;
	ok(m->ops->state_get(&c, "postgres:s", &doc, &found, &err) == 0 &&
	    !found, "no state yet: none");
	ok(m->ops->state_prepare(&c, &created, &err) == 0, "the directory "
	    "is made ready");
	ok(m->ops->state_put(&c, "postgres:s/load/a", "{\"pos\":10}", 10, 10,
	    &conflict, &err) == 0 && !conflict, "a put");
	snprintf(f, sizeof(f), "%s/postgres%%3As%%2Fload%%2Fa", statedir);
	ok(stat(f, &sb) == 0, "kept in one file inside the directory");
	snprintf(f, sizeof(f), "%s/postgres%%3As%%2Fload%%2Fa.tmp", statedir);
	ok(stat(f, &sb) == -1, "no temporary file left");
	ok(m->ops->state_get(&c, "postgres:s/load/a", &doc, &found, &err) ==
	    0 && found, "read back");
	is_str(doc.buf, "{\"pos\":10}", "as written");
	ok(m->ops->state_put(&c, "postgres:s/load/a", "{\"pos\":9}", 9, 9,
	    &conflict, &err) == 0 && conflict, "a lower version conflicts");
	m->ops->state_get(&c, "postgres:s/load/a", &doc, &found, &err);
	is_str(doc.buf, "{\"pos\":10}", "and replaces nothing");
	ok(m->ops->state_put(&c, "../x", "{}", 2, 0, &conflict, &err) == 0,
	    "a key with a path in it");
	snprintf(f, sizeof(f), "%s/%%2E.%%2Fx", statedir);
	ok(stat(f, &sb) == 0, "stays inside the directory");
	unlink(f);
	snprintf(f, sizeof(f), "%s/postgres%%3As%%2Fload%%2Fa", statedir);
	write_file(f, "{\"version\":1,\"doc\":");
	ok(m->ops->state_get(&c, "postgres:s/load/a", &doc, &found, &err) ==
	    -1 && err.code == P2O_EXIT_CHECKPOINT, "a file not ours is "
	    "refused, not taken as none (%s)", err.msg);
	unlink(f);
	sbuf_release(&doc);
}

int
main(void)
{
	const struct target_module *m = target_module_find("meilisearch");

	if (mkdtemp(dir) == NULL)
		BAIL_OUT("mkdtemp");
	snprintf(path, sizeof(path), "%s/c.yaml", dir);
	snprintf(statedir, sizeof(statedir), "%s/state", dir);
	if (m == NULL)
		BAIL_OUT("no meilisearch module");
	test_config();
	test_probe(m->ops);
	test_writes(m->ops);
	test_encode(m->ops);
	test_clear(m->ops);
	test_state(m);
	rmdir(statedir);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
