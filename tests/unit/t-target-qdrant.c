/*
 * t-target-qdrant.c - the Qdrant target without a server: UUIDv5 point
 * ids against RFC 9562's example and Python's documented one, what config
 * load refuses for it (write_concurrency above 1, a state_dir, a mapping
 * file that names no vectors, each at its file:line), its probe and
 * creation answers, and the write procedure's request bodies (each
 * document once in its last state, a point's id, vectors and payload, one
 * batch request per collection with wait=true; a request refused as a
 * whole sent again one entry a request, the refusal landing on the
 * document that earned it; a 5xx asked again as it was; a delete in a
 * missing collection found nothing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "p2o.h"
#include "tap.h"
#include "target.h"
#include "target/qdrant.h"

static char dir[] = "/tmp/t-target-qdrant.XXXXXX";
static char path[96];

static void
write_file(const char *p, const char *s)
{
	FILE *fp = fopen(p, "w");

	if (fp == NULL || fputs(s, fp) == EOF || fclose(fp) == EOF)
		BAIL_OUT("cannot write a test file");
}

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
	    "  url: http://127.0.0.1:6333\n"
	    "  flavor: qdrant\n"
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

/* refused at load with want in the message, at path:line */
static void
refused(const char *extra, const char *rest, int line, const char *want,
    const char *name)
{
	struct config cfg;
	char err[512] = "", at[128];

	snprintf(at, sizeof(at), "%s:%d: ", path, line);
	ok(load(extra, rest, &cfg, err, sizeof(err)) == -1 &&
	    strstr(err, want) != NULL && strncmp(err, at, strlen(at)) == 0,
	    "%s is refused at line %d (%s)", name, line, err);
}

static void
test_uuid(void)
{
	/* RFC 9562 A.4 (DNS namespace, "www.example.com"), and the Python
	 * documentation's uuid5(NAMESPACE_DNS, 'python.org') */
	static const unsigned char dns[16] = { 0x6b, 0xa7, 0xb8, 0x10, 0x9d,
	    0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30,
	    0xc8 };
	char u[37];

	qd_uuid5(dns, "www.example.com", 15, u);
	is_str(u, "2ed6657d-e927-568b-95e1-2665a8aea6a2", "RFC 9562's UUIDv5 "
	    "example");
	qd_uuid5(dns, "python.org", 10, u);
	is_str(u, "886313e1-3b8a-5372-9b90-0c9aee199e5d", "Python's uuid5 "
	    "example");
	/* our namespace is itself the UUIDv5 of "pg2osync:qdrant:id" in the
	 * URL namespace (6ba7b811-...) */
	{
		unsigned char url[16];

		memcpy(url, dns, 16);
		url[3] = 0x11;
		qd_uuid5(url, "pg2osync:qdrant:id", 18, u);
		is_str(u, "0f68c911-f42e-53f4-bb91-44ce008130fe", "the point "
		    "namespace is what the header says it is made of");
	}
	qd_point_id("42", 2, u);
	is_str(u, "ba668fcd-c92c-501b-9e47-fbd39db7dcdf", "document id 42's "
	    "point id");
}

static void
test_config(void)
{
	struct config cfg;
	char err[512] = "", mapping[128], rest[256];

	ok(load("", "", &cfg, err, sizeof(err)) == 0, "flavor qdrant loads "
	    "(%s)", err);
	if (err[0] == '\0') {
		is_str(cfg.target_module->name, "qdrant", "and picks the "
		    "module");
		ok(!target_can(cfg.target_module, TCAP_EXTERNAL_VERSIONS) &&
		    !target_can(cfg.target_module, TCAP_CONCURRENT_WRITES) &&
		    !target_can(cfg.target_module, TCAP_ASYNC_TASKS) &&
		    target_can(cfg.target_module, TCAP_STATE_DOCS |
		    TCAP_MAPPINGS) && cfg.target_module->rejects == NULL,
		    "which declares state documents and mappings, and no "
		    "versions, concurrent writes, tasks or rejects store");
		config_release(&cfg);
	}
	refused("", "engine:\n  write_concurrency: 2\n", 10,
	    "'engine.write_concurrency' needs concurrent writes, which target "
	    "'qdrant' does not offer", "write_concurrency 2");
	refused("  state_dir: /tmp\n", "", 6, "'target.state_dir' is for a "
	    "target that keeps no state documents; target 'qdrant' keeps "
	    "them in collection 'pg2osync_state'", "a state_dir");
	refused("", "engine:\n  on_permanent_rejection: quarantine\n", 10,
	    "needs a store for refused documents, which target 'qdrant' does "
	    "not offer", "quarantine");
	refused("", "    routing: tenant\n", 9, "'sync.items.routing' needs "
	    "routing", "routing");
	refused("", "    index: \"has space\"\n", 9, "a Qdrant collection name",
	    "a collection name with a space");
	refused("", "    index: pg2osync_state\n", 9, "the collection our "
	    "checkpoint is kept in", "the state collection's name");
	snprintf(mapping, sizeof(mapping), "%s/m.json", dir);
	snprintf(rest, sizeof(rest), "    mapping_file: %s\n", mapping);
	write_file(mapping, "{\"vectors\":{\"size\":3,\"distance\":\"Cosine\"}}");
	refused("", rest, 9, "must name its vectors", "a single unnamed "
	    "vector");
	write_file(mapping, "{\"vectors\":{\"emb\":{\"size\":3,\"distance\":"
	    "\"Near\"}}}");
	refused("", rest, 9, "distance must be Cosine", "an unknown distance");
	write_file(mapping, "{\"vectors\":{\"emb\":{\"size\":0,\"distance\":"
	    "\"Dot\"}}}");
	refused("", rest, 9, "positive integer 'size'", "a size of 0");
	write_file(mapping, "{\"vectors\":{\"emb\":{\"size\":3,\"distance\":"
	    "\"Cosine\"}},\"on_disk_payload\":true}");
	ok(load("", rest, &cfg, err, sizeof(err)) == 0, "named vectors load "
	    "(%s)", err);
	if (err[0] == '\0') {
		ok(cfg.syncs[0].more->index_body != NULL &&
		    strstr(cfg.syncs[0].more->index_body, "\"emb\"") &&
		    strstr(cfg.syncs[0].more->index_body, "on_disk_payload"),
		    "and the file is the collection's creation body");
		config_release(&cfg);
	}
	unlink(mapping);
}

static void
test_probe(const struct target_ops *ops)
{
	struct sbuf r = SBUF_INIT, cpath = SBUF_INIT;
	struct http_call c;
	char node[64], why[256];

	sbuf_adds(&r, "{\"title\":\"qdrant - vector search engine\","
	    "\"version\":\"1.12.4\",\"commit\":\"x\"}");
	ok(ops->probe_answer(200, &r, node, sizeof(node), why, sizeof(why)) ==
	    TA_OK, "a 1.x node is taken");
	is_str(node, "qdrant 1.12.4", "and named");
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"title\":\"qdrant - vector search engine\","
	    "\"version\":\"2.0.0\"}");
	ok(ops->probe_answer(200, &r, node, sizeof(node), why, sizeof(why)) ==
	    TA_REFUSED && strstr(why, "supported: 1.x"), "a 2.x node is "
	    "refused (%s)", why);
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"name\":\"n\",\"version\":{\"number\":\"2.19.0\"}}");
	ok(ops->probe_answer(200, &r, node, sizeof(node), why, sizeof(why)) ==
	    TA_REFUSED && strstr(why, "not a Qdrant"), "another engine is "
	    "refused (%s)", why);

	/* pg2osync init asks each module in turn: OpenSearch's question is
	 * the same GET /, and must not take a Qdrant node's answer for its
	 * own (the others ask paths a Qdrant node answers 404) */
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"title\":\"qdrant - vector search engine\","
	    "\"version\":\"1.12.4\",\"commit\":\"x\"}");
	ok(target_module_find("opensearch")->ops->probe_answer(200, &r, node,
	    sizeof(node), why, sizeof(why)) == TA_REFUSED, "OpenSearch's probe "
	    "refuses a Qdrant node (%s)", why);

	ops->create_call("items", NULL, &cpath, &c);
	ok(strcmp(c.method, "PUT") == 0 && strcmp(c.path, "/collections/items")
	    == 0 && strcmp(c.body, "{\"vectors\":{}}") == 0, "a collection "
	    "without a mapping file is created payload only (%s %s %s)",
	    c.method, c.path, c.body);
	sbuf_reset(&r);
	sbuf_adds(&r, "{\"status\":{\"error\":\"Wrong input: Collection "
	    "`items` already exists!\"},\"time\":0.1}");
	ok(ops->create_answer(409, &r, why, sizeof(why)) == TA_EXISTS &&
	    ops->create_answer(400, &r, why, sizeof(why)) == TA_EXISTS,
	    "one already there is found there (409, or 400 naming it)");
	ok(ops->create_answer(503, &r, why, sizeof(why)) == TA_RETRY &&
	    strcmp(why, "Wrong input: Collection `items` already exists!") == 0,
	    "a 5xx is retried, its error's text read (%s)", why);
	sbuf_release(&r);
	sbuf_release(&cpath);
}

static struct jspan
js(const char *s)
{
	struct jspan j = { s, strlen(s) };

	return j;
}

static int
add(struct sbuf *a, const struct target_ops *ops, const char *index,
    const char *id, const char *doc, struct p2o_err *err)
{
	struct target_write w;
	struct target_entry e;

	memset(&w, 0, sizeof(w));
	w.del = doc == NULL;
	w.index = js(index);
	w.id = js(id);
	if (doc)
		w.doc = js(doc);
	return ops->encode(a, &w, &e, err);
}

static enum target_answer
answer(const struct target_ops *ops, struct target_proc *p, long status,
    const char *body, const struct sbuf *a, int n, struct item_result *items)
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

#define OK_BODY "{\"result\":{\"operation_id\":1,\"status\":\"completed\"}," \
	"\"status\":\"ok\",\"time\":0.001}"

static void
test_writes(const struct target_ops *ops)
{
	struct sbuf a = SBUF_INIT;
	struct target_proc p;
	struct http_call c;
	struct item_result items[6];
	struct p2o_err err;
	char u1[37], u2[37], u3[37], u4[37], want[1024];
	int i;

	ok(add(&a, ops, "\"ix\"", "\"1\"", "{\"pg2osync_id\":3}", &err) == -1 &&
	    strstr(err.msg, "has a member 'pg2osync_id'"), "a document with a "
	    "member named as our id's is refused (%s)", err.msg);
	ok(add(&a, ops, "\"ix\"", "\"1\"", "{\"_vectors\":[1,2]}", &err) ==
	    -1 && strstr(err.msg, "not an object of named vectors"), "so is "
	    "one whose _vectors is not an object (%s)", err.msg);
	sbuf_reset(&a);
	/* ix/1 twice (the second wins), ix/3 deleted, ix/4 added then
	 * deleted, and a document of another collection */
	add(&a, ops, "\"ix\"", "\"1\"", "{\"x\":1}", &err);
	add(&a, ops, "\"ix\"", "\"3\"", NULL, &err);
	add(&a, ops, "\"ix\"", "\"1\"", "{\"x\":2,\"_vectors\":{\"emb\":"
	    "[0.5,1]}}", &err);
	add(&a, ops, "\"ix\"", "\"4\"", "{\"y\":1}", &err);
	add(&a, ops, "\"ix\"", "\"4\"", NULL, &err);
	add(&a, ops, "\"jx\"", "\"2\"", "{\"z\":[1],\"_vectors\":null}",
	    &err);
	qd_point_id("1", 1, u1);
	qd_point_id("2", 1, u2);
	qd_point_id("3", 1, u3);
	qd_point_id("4", 1, u4);
	target_proc_init(&p);
	memset(items, 0, sizeof(items));

	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.method, "POST", "a collection's writes are one POST");
	is_str(c.path, "/collections/ix/points/batch?wait=true", "to its "
	    "batch of operations, answered once applied");
	snprintf(want, sizeof(want), "{\"operations\":[{\"upsert\":{\"points\":"
	    "[{\"id\":\"%s\",\"vector\":{\"emb\":[0.5,1]},\"payload\":"
	    "{\"pg2osync_id\":\"1\",\"x\":2}}]}},{\"delete\":{\"points\":"
	    "[\"%s\",\"%s\"]}}]}", u1, u3, u4);
	is_str(c.body, want, "each document once in its last state: the "
	    "point id a UUIDv5, _vectors the vectors, the rest and our id "
	    "the payload; the deletes by point id");
	ok(answer(ops, &p, 503, "{\"status\":{\"error\":\"Service "
	    "Unavailable\"}}", &a, 6, items) == TA_RETRY, "a 503 is retried");
	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.body, want, "as it was");
	ok(answer(ops, &p, 200, OK_BODY, &a, 6, items) == TA_NEXT, "answered: "
	    "the next collection");
	ops->write_call(&p, a.buf, a.len, &c);
	is_str(c.path, "/collections/jx/points/batch?wait=true", "jx's own "
	    "request");
	snprintf(want, sizeof(want), "{\"operations\":[{\"upsert\":{\"points\":"
	    "[{\"id\":\"%s\",\"vector\":{},\"payload\":{\"pg2osync_id\":\"2\","
	    "\"z\":[1]}}]}}]}", u2);
	is_str(c.body, want, "a document whose _vectors is null: no vectors");
	ok(answer(ops, &p, 200, OK_BODY, &a, 6, items) == TA_OK, "the last "
	    "one ends the procedure");
	ok(items[0].verdict == ITEM_OK && items[1].verdict == ITEM_OK &&
	    items[3].verdict == ITEM_OK && items[4].verdict == ITEM_OK &&
	    items[5].verdict == ITEM_OK && items[1].del && items[3].del == 0,
	    "every entry written, a replaced one with its successor's verdict");

	/* a refusal as a whole: each entry alone */
	target_proc_reset(&p);
	sbuf_reset(&a);
	add(&a, ops, "\"ix\"", "\"1\"", "{\"_vectors\":{\"emb\":[1]}}", &err);
	add(&a, ops, "\"ix\"", "\"2\"", "{\"_vectors\":{\"emb\":[1,2,3]}}",
	    &err);
	add(&a, ops, "\"ix\"", "\"3\"", NULL, &err);
	memset(items, 0, sizeof(items));
	ops->write_call(&p, a.buf, a.len, &c);
	ok(answer(ops, &p, 400, "{\"status\":{\"error\":\"Wrong input: Vector "
	    "dimension error: expected dim: 3, got 1\"},\"time\":0}", &a, 3,
	    items) == TA_NEXT, "a 400 for three entries: each sent alone");
	ops->write_call(&p, a.buf, a.len, &c);
	snprintf(want, sizeof(want), "{\"operations\":[{\"upsert\":{\"points\":"
	    "[{\"id\":\"%s\",\"vector\":{\"emb\":[1]},\"payload\":"
	    "{\"pg2osync_id\":\"1\"}}]}}]}", u1);
	is_str(c.body, want, "the first alone");
	/* the verdicts come with the last answer only (the caller may lend
	 * each answer the same array): before it they are untouched */
	for (i = 0; i < 3; i++)
		items[i].verdict = ITEM_RETRY;
	ok(answer(ops, &p, 400, "{\"status\":{\"error\":\"Wrong input: Vector "
	    "dimension error: expected dim: 3, got 1\"},\"time\":0}", &a, 3,
	    items) == TA_NEXT && items[0].verdict == ITEM_RETRY,
	    "refused alone: no verdict yet");
	ops->write_call(&p, a.buf, a.len, &c);
	ok(strstr(c.body, u2) && !strstr(c.body, u1) && !strstr(c.body, u3),
	    "then the second alone");
	ok(answer(ops, &p, 200, OK_BODY, &a, 3, items) == TA_NEXT &&
	    items[1].verdict == ITEM_RETRY, "written, no verdict yet");
	ops->write_call(&p, a.buf, a.len, &c);
	snprintf(want, sizeof(want), "{\"operations\":[{\"delete\":"
	    "{\"points\":[\"%s\"]}}]}", u3);
	is_str(c.body, want, "then the delete alone");
	ok(answer(ops, &p, 404, "{\"status\":{\"error\":\"Not found: "
	    "Collection `ix` doesn't exist!\"},\"time\":0}", &a, 3, items) ==
	    TA_OK && items[2].verdict == ITEM_NOTFOUND, "a delete where there "
	    "is no collection found nothing, and the procedure ends");
	ok(items[0].verdict == ITEM_REJECT && strstr(items[0].reason,
	    "expected dim: 3"), "the one refused alone: its refusal, with "
	    "Qdrant's words (%s)", items[0].reason);
	ok(items[1].verdict == ITEM_OK, "the second written");
	target_proc_release(&p);
	sbuf_release(&a);
}

static void
test_clear(const struct target_ops *ops)
{
	struct target_proc p;
	struct http_call c;
	struct sbuf r = SBUF_INIT;
	char why[256];

	target_proc_init(&p);
	p.kind = PROC_CLEAR;
	p.index = "ix";
	ops->proc_call(&p, &c);
	ok(strcmp(c.path, "/collections/ix/points/delete?wait=true") == 0 &&
	    strcmp(c.body, "{\"filter\":{}}") == 0, "a clear deletes every "
	    "point by an empty filter, waited for (%s)", c.body);
	sbuf_adds(&r, OK_BODY);
	ok(ops->proc_answer(&p, 200, &r, why, sizeof(why)) == TA_OK, "done");
	p.field = js("\"_table\"");
	p.value = js("\"public.a\"");
	ops->proc_call(&p, &c);
	is_str(c.body, "{\"filter\":{\"must\":[{\"key\":\"_table\",\"match\":"
	    "{\"value\":\"public.a\"}}]}}", "a clear by a field matches its "
	    "value");
	ok(ops->proc_answer(&p, 404, &r, why, sizeof(why)) == TA_OK && p.gone,
	    "no collection: nothing to clear");
	p.index = "ix-*";
	ok(ops->proc_answer(&p, 200, &r, why, sizeof(why)) == TA_REFUSED,
	    "a glob is refused (%s)", why);
	sbuf_release(&r);
	target_proc_release(&p);
}

int
main(void)
{
	const struct target_module *m = target_module_find("qdrant");

	if (mkdtemp(dir) == NULL)
		BAIL_OUT("mkdtemp");
	snprintf(path, sizeof(path), "%s/p.yaml", dir);
	if (m == NULL)
		BAIL_OUT("no qdrant module");
	test_uuid();
	test_config();
	test_probe(m->ops);
	test_writes(m->ops);
	test_clear(m->ops);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
