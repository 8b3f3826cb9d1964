/*
 * t-target-caps.c - a target's capabilities against what a configuration
 * asks of it: every key that needs one is refused, naming the key, its
 * line and the reason, by a target that lacks it, and taken by one that
 * has it; a configuration that asks for nothing passes a target that can
 * do nothing. The programs' own checks: the writer refuses a target whose
 * writes are tasks it cannot wait for, ckpt one without a place for the
 * checkpoint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../ckpt/ckpt.h"
#include "p2o.h"
#include "tap.h"
#include "writer-test.h"

static char dir[] = "/tmp/t-target-caps.XXXXXX";
static char path[64], mapping[96];

static const char text[] =
    "source:\n"
    "  url: postgres://u@127.0.0.1/db\n"
    "target:\n"
    "  url: http://127.0.0.1:9200\n"
    "engine:\n"						/* 5 */
    "  write_concurrency: 2\n"
    "sync:\n"
    "  items:\n"
    "    table: items\n"
    "    routing: tenant\n"					/* 10 */
    "    pipeline: embed\n"
    "    mapping_file: m.json\n"
    "  questions:\n"
    "    table: questions\n"
    "    index: qa\n"					/* 15 */
    "    id: \"q{id}\"\n"
    "    join: {field: rel, name: question}\n"
    "  answers:\n"
    "    table: answers\n"
    "    index: qa\n"					/* 20 */
    "    id: \"a{id}\"\n"
    "    join: {field: rel, name: answer, parent: questions, column: qid}\n";

static const char plain[] =
    "source:\n"
    "  url: postgres://u@127.0.0.1/db\n"
    "target:\n"
    "  url: http://127.0.0.1:9200\n"
    "sync:\n"
    "  items:\n"
    "    table: items\n";

static void
write_file(const char *p, const char *s)
{
	FILE *fp = fopen(p, "w");

	if (fp == NULL || fputs(s, fp) == EOF || fclose(fp) == EOF)
		BAIL_OUT("cannot write a test file");
}

static int
load(const char *s, struct config *cfg)
{
	struct p2o_err e;

	write_file(path, s);
	if (config_load_with(path, CONFIG_SECRETS_ALL, cfg, &e) == -1) {
		printf("# %s\n", e.msg);
		return -1;
	}
	return 0;
}

static void
lacking(const struct config *cfg, unsigned cap, int line, const char *key,
    const char *why)
{
	struct target_module m = { "lacking", "nowhere", TCAP_ALL & ~cap,
	    NULL };
	char err[512], want[512];

	snprintf(want, sizeof(want), "%s:%d: '%s' needs %s, which target "
	    "'lacking' does not offer: %s", path, line, key,
	    target_cap_name(cap), why);
	ok(config_check_target(cfg, &m, err, sizeof(err)) == -1,
	    "without %s: refused", target_cap_name(cap));
	is_str(err, want, "without %s: the key, its line and why",
	    target_cap_name(cap));
}

static void
test_config(void)
{
	struct target_module all = { "all", "nowhere", TCAP_ALL, NULL };
	struct target_module none = { "none", "nowhere", 0, NULL };
	struct config cfg;
	char err[512];

	if (load(text, &cfg) == -1)
		BAIL_OUT("the configuration does not load on opensearch");
	ok(cfg.target_module == target_module_find(NULL),
	    "the default target serves it");
	ok(config_check_target(&cfg, cfg.target_module, err, sizeof(err)) == 0,
	    "opensearch offers all it needs");
	ok(config_check_target(&cfg, &all, err, sizeof(err)) == 0,
	    "so does a target that can do everything");
	lacking(&cfg, TCAP_ROUTING, 10, "sync.items.routing",
	    "its documents would land on shards no routed query reads");
	lacking(&cfg, TCAP_PIPELINES, 11, "sync.items.pipeline",
	    "its documents would be written without the fields the pipeline "
	    "computes");
	lacking(&cfg, TCAP_MAPPINGS, 12, "sync.items.mapping_file",
	    "its index cannot be created with the mapping");
	lacking(&cfg, TCAP_JOIN, 17, "sync.questions.join",
	    "its parent and child documents need one index with a join field");
	lacking(&cfg, TCAP_CONCURRENT_WRITES, 6, "engine.write_concurrency",
	    "set it to 1");
	lacking(&cfg, TCAP_EXTERNAL_VERSIONS, 6, "engine.write_concurrency",
	    "requests open at once may land in either order, and only a "
	    "target that keeps the higher version orders them");
	/* what nothing in a configuration asks for */
	ok(config_check_target(&cfg, &(struct target_module){ "x", "nowhere",
	    TCAP_ALL & ~(TCAP_STATE_DOCS | TCAP_ALIASES | TCAP_INDEX_SWAP),
	    NULL }, err, sizeof(err)) == 0, "state documents, aliases and "
	    "index swaps are not configuration");
	config_release(&cfg);

	if (load(plain, &cfg) == -1)
		BAIL_OUT("the plain configuration does not load");
	ok(config_check_target(&cfg, &none, err, sizeof(err)) == 0,
	    "a plain section asks nothing of its target");
	is_int(cfg.ntarget_needs, 0, "and needs nothing");
	config_release(&cfg);
}

static void
test_programs(void)
{
	struct target_module tasks = *target_module_find(NULL);
	struct target_module stateless = *target_module_find(NULL);
	struct writer_stats st;
	struct ckpt_store ck;
	struct sink s;
	struct p2o_err err;
	struct config cfg;

	memset(&st, 0, sizeof(st));
	tasks.caps |= TCAP_ASYNC_TASKS;
	ok(sink_init(&s, &tasks, "t", &st, NULL, &err) == -1 &&
	    err.code == P2O_EXIT_CONFIG && strstr(err.msg, "tasks"),
	    "the writer refuses writes it cannot wait for (%s)", err.msg);
	ok(sink_init(&s, target_module_find(NULL), "t", &st, NULL, &err) == 0,
	    "and takes opensearch");
	sink_release(&s);

	if (load(plain, &cfg) == -1)
		BAIL_OUT("the plain configuration does not load");
	stateless.caps &= ~TCAP_STATE_DOCS;
	cfg.target_module = &stateless;
	ok(ckpt_store_init(&ck, &cfg) == -1 &&
	    ck.err.code == P2O_EXIT_CONFIG &&
	    strstr(ck.err.msg, "no place for the checkpoint"),
	    "ckpt refuses a target without state documents (%s)", ck.err.msg);
	cfg.target_module = target_module_find(NULL);
	ok(ckpt_store_init(&ck, &cfg) == 0, "and takes opensearch");
	ckpt_store_release(&ck);
	config_release(&cfg);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		BAIL_OUT("mkdtemp");
	snprintf(path, sizeof(path), "%s/c.yaml", dir);
	snprintf(mapping, sizeof(mapping), "%s/m.json", dir);
	write_file(mapping, "{\"mappings\":{\"properties\":{}}}");
	test_config();
	test_programs();
	unlink(path);
	unlink(mapping);
	rmdir(dir);
	return done_testing();
}
