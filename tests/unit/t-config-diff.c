/*
 * t-config-diff.c - config_diff between two files: every key of a sync
 * section's table has a rule; each key changed alone is found, with its
 * line in the new file and its remedy; what changes no document (a
 * default written out, a projection reordered, a filter respaced, a
 * section renamed, a mapping file moved) is no change; a removed section
 * matters only when the new file still writes its index; and the refusal
 * line, with the remedy each target and section can run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_diff.h"
#include "config_sections.h"
#include "p2o.h"
#include "tap.h"

static char dir[64], was_path[128], now_path[128];

#define HEAD	"source:\n  url: postgres://sync@db:5432/app\n" \
		"target:\n  url: http://127.0.0.1:9200\n"
/* line 5 is "sync:", line 6 "  items:", line 7 its table */
#define ITEMS	"sync:\n  items:\n    table: public.items\n"

static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) == EOF) {
		perror(path);
		exit(2);
	}
}

static void
load(const char *path, const char *text, struct config *cfg)
{
	struct p2o_err e;

	write_file(path, text);
	if (config_load_with(path, CONFIG_SECRETS_ALL, cfg, &e) == -1) {
		printf("Bail out! %s\n", e.msg);
		exit(1);
	}
}

/* the changes from was to now; the refusal line into say */
static int
diff(const char *was, const char *now, struct config_diff *d,
    struct sbuf *say)
{
	struct config a, b;
	int n;

	load(was_path, was, &a);
	load(now_path, now, &b);
	n = config_diff(&a, &b, d);
	sbuf_reset(say);
	config_diff_say(d, &b, say);
	config_release(&a);
	config_release(&b);
	return n;
}

/* exactly one change: key (NULL: a removal) of section at line, with
 * remedy */
static void
one(const char *what, const char *was, const char *now, const char *section,
    const char *key, int line, enum config_remedy remedy)
{
	struct config_diff d;
	struct sbuf say = SBUF_INIT;
	int n = diff(was, now, &d, &say);

	if (!ok(n == 1 && strcmp(d.v[0].section, section) == 0 &&
	    (key ? d.v[0].key && strcmp(d.v[0].key, key) == 0 :
	    d.v[0].key == NULL) && d.v[0].line == line &&
	    d.v[0].remedy == remedy, "%s: %s.%s at line %d, remedy %d", what,
	    section, key ? key : "(removed)", line, (int)remedy)) {
		printf("#   %d changes: %s\n", n, say.buf ? say.buf : "");
		if (n > 0)
			printf("#   first: %s.%s line %d remedy %d\n",
			    d.v[0].section, d.v[0].key ? d.v[0].key : "-",
			    d.v[0].line, (int)d.v[0].remedy);
	}
	config_diff_release(&d);
	sbuf_release(&say);
}

static void
none(const char *what, const char *was, const char *now)
{
	struct config_diff d;
	struct sbuf say = SBUF_INIT;
	int n = diff(was, now, &d, &say);

	if (!ok(n == 0, "%s: no change", what))
		printf("#   %s\n", say.buf ? say.buf : "");
	config_diff_release(&d);
	sbuf_release(&say);
}

/* the refusal line must be exactly want (%s: the new file's path) */
static void
says(const char *what, const char *was, const char *now, const char *want)
{
	struct config_diff d;
	struct sbuf say = SBUF_INIT;
	char exp[4096];

	diff(was, now, &d, &say);
	snprintf(exp, sizeof(exp), want, now_path, now_path, now_path,
	    now_path);
	is_str(say.buf ? say.buf : "", exp, "%s", what);
	config_diff_release(&d);
	sbuf_release(&say);
}

static void
every_key_has_a_rule(void)
{
	const struct cs_node *k;
	int n = 0, missing = 0;

	for (k = config_sync_section.keys; k->name; k++, n++)
		if (!config_diff_knows(k->name)) {
			printf("#   no rule for sync.<name>.%s\n", k->name);
			missing++;
		}
	ok(missing == 0 && n >= 18, "each of the %d keys of a section has a "
	    "rule", n);
	ok(!config_diff_knows("nope"), "an unknown key has none");
}

/* each key changed on its own: the base, and the file with the key
 * changed on line 8 (right after the table) */
static void
each_key(void)
{
	static const struct {
		const char *key, *was, *now;
		enum config_remedy remedy;
	} c[] = {
		{ "index", "", "    index: other\n", CR_REPAIR },
		{ "columns", "    columns: [a, b]\n", "    columns: [a, c]\n",
		    CR_RESNAPSHOT },
		{ "exclude_columns", "    exclude_columns: [a]\n",
		    "    exclude_columns: [b]\n", CR_RESNAPSHOT },
		{ "id", "", "    id: \"i-{id}\"\n", CR_REPAIR },
		{ "primary_key", "", "    primary_key: [code]\n", CR_REPAIR },
		{ "append_only", "", "    append_only: true\n", CR_REPAIR },
		{ "routing", "", "    routing: tenant\n", CR_REINDEX },
		{ "pipeline", "", "    pipeline: p\n", CR_RESNAPSHOT },
		{ "transform", "    transform: {email: hash}\n",
		    "    transform: {email: {redact: x}}\n", CR_RESNAPSHOT },
		{ "fields", "    fields: {a: b}\n", "    fields: {a: c}\n",
		    CR_RESNAPSHOT },
		{ "constants", "    constants: {k: v}\n",
		    "    constants: {k: w}\n", CR_RESNAPSHOT },
		{ "constants", "    constants: {k: 5}\n",
		    "    constants: {k: \"5\"}\n", CR_RESNAPSHOT },
		{ "transform", "    transform: {e: {pseudonym: {key_env: K}}}\n",
		    "    transform: {e: {pseudonym: {key_env: K2}}}\n",
		    CR_RESNAPSHOT },
		{ "transform", "    transform: {c: {lookup: {map: {a: 1}}}}\n",
		    "    transform: {c: {lookup: {map: {a: 1}, default: 0}}}\n",
		    CR_RESNAPSHOT },
		{ "where", "", "    where: \"grp <> 2\"\n", CR_REPAIR },
		{ "fan_out", "", "    fan_out: {column: tags, id: \"{id}-{tag}\"}"
		    "\n", CR_REPAIR },
		{ "fan_out", "    fan_out: {column: tags, id: \"{id}-{tag}\"}\n",
		    "    fan_out: {column: tags, by: \",\", id: \"{id}-{tag}\"}\n",
		    CR_REPAIR },
		{ "children", "", "    children:\n      - table: lines\n"
		    "        field: lines\n        foreign_key: item_id\n",
		    CR_RESNAPSHOT },
		{ "aggregates", "", "    aggregates:\n      - field: n\n"
		    "        table: lines\n        foreign_key: item_id\n"
		    "        op: count\n", CR_RESNAPSHOT },
	};
	char was[1024], now[1024];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(was, sizeof(was), HEAD ITEMS "%s", c[i].was);
		snprintf(now, sizeof(now), HEAD ITEMS "%s", c[i].now);
		one(c[i].key, was, now, "items", c[i].key, 8, c[i].remedy);
	}
	one("table", HEAD ITEMS, HEAD "sync:\n  items:\n    table: goods\n"
	    "    index: items\n", "items", "table", 7, CR_REPAIR);
	/* a key the new file drops: the section's line */
	one("a key removed", HEAD ITEMS "    where: \"a = 1\"\n", HEAD ITEMS,
	    "items", "where", 6, CR_REPAIR);
}

static void
mapping_and_join(void)
{
	char was[2048], now[2048], m1[160], m2[160];

	snprintf(m1, sizeof(m1), "%s/m1.json", dir);
	snprintf(m2, sizeof(m2), "%s/m2.json", dir);
	write_file(m1, "{\"properties\": {\"a\": {\"type\": \"keyword\"}}}");
	write_file(m2, "{\"properties\": {\"a\": {\"type\": \"keyword\"}}}");
	snprintf(was, sizeof(was), HEAD ITEMS "    mapping_file: %s\n", m1);
	snprintf(now, sizeof(now), HEAD ITEMS "    mapping_file: %s\n", m2);
	none("the same mapping in another file", was, now);
	write_file(m2, "{\"properties\": {\"a\": {\"type\": \"text\"}}}");
	one("mapping_file", was, now, "items", "mapping_file", 8,
	    CR_REINDEX);

#define QA	HEAD "sync:\n  q:\n    table: q\n    index: qa\n" \
		"    id: \"q{id}\"\n    join: {field: j, name: question}\n" \
		"  a:\n    table: a\n    index: qa\n    id: \"a{id}\"\n"
	snprintf(was, sizeof(was), QA "    join: {field: j, name: answer, "
	    "parent: q, column: q_id}\n");
	snprintf(now, sizeof(now), QA "    join: {field: j, name: reply, "
	    "parent: q, column: q_id}\n");
	{
		struct config_diff d;
		struct sbuf say = SBUF_INIT;
		int n = diff(was, now, &d, &say);

		/* the parent's relations change with the child's name */
		ok(n == 2 && strcmp(d.v[0].section, "q") == 0 &&
		    strcmp(d.v[0].key, "join") == 0 &&
		    strcmp(d.v[1].section, "a") == 0 &&
		    strcmp(d.v[1].key, "join") == 0,
		    "a join child renamed: the child's join and its parent's "
		    "(%d changes)", n);
		ok(strstr(say.buf, "delete index 'qa' (reindex cannot rebuild "
		    "a templated, fan-out or shared index)") != NULL &&
		    strstr(say.buf, "--table q', and the same for 'a' | ") !=
		    NULL && strstr(say.buf, "sync.a.join changed: the join's "
		    "relations are in the index's mapping and route the "
		    "children; the rebuild of index 'qa' above takes it") !=
		    NULL, "a shared index is rebuilt once, every section "
		    "writing it named: %s", say.buf);
		config_diff_release(&d);
		sbuf_release(&say);
	}
	snprintf(now, sizeof(now), HEAD "sync:\n  question:\n    table: q\n"
	    "    index: qa\n    id: \"q{id}\"\n    join: {field: j, name: "
	    "question}\n  a:\n    table: a\n    index: qa\n    id: \"a{id}\"\n"
	    "    join: {field: j, name: answer, parent: question, column: "
	    "q_id}\n");
	none("a join's parent renamed, the child naming it", was, now);
}

static void
no_change(void)
{
	none("the same file", HEAD ITEMS, HEAD ITEMS);
	none("defaults written out", HEAD ITEMS, HEAD "sync:\n  items:\n"
	    "    table: items\n    index: items\n    append_only: false\n");
	none("a projection reordered", HEAD ITEMS "    columns: [a, b, c]\n",
	    HEAD ITEMS "    columns: [c, a, b]\n");
	none("a filter respaced and in other letters", HEAD ITEMS
	    "    where: \"a = 1 and b IN ('x', 'y')\"\n", HEAD ITEMS
	    "    where: \"a=1  AND b in ('x','y')\"\n");
	none("transforms in another order", HEAD ITEMS
	    "    transform: {email: hash, n: number}\n", HEAD ITEMS
	    "    transform: {n: number, email: hash}\n");
	none("a section renamed", HEAD ITEMS "    index: items\n", HEAD
	    "sync:\n  goods:\n    table: public.items\n    index: items\n");
	none("engine and log changed", HEAD ITEMS, HEAD ITEMS
	    "engine:\n  batch_size: 10\nlog:\n  level: debug\n");
	none("a section added", HEAD ITEMS, HEAD ITEMS
	    "  more:\n    table: more\n");
	none("a section removed, its index no longer written", HEAD ITEMS
	    "  more:\n    table: more\n", HEAD ITEMS);
}

static void
removed(void)
{
	/* line 5: sync */
	one("a section removed, its index still written by another",
	    HEAD "sync:\n  a:\n    table: a\n    index: people\n"
	    "    id: \"a{id}\"\n  b:\n    table: b\n    index: people\n"
	    "    id: \"b{id}\"\n",
	    HEAD "sync:\n  b:\n    table: b\n    index: people\n"
	    "    id: \"b{id}\"\n", "a", NULL, 5, CR_REPAIR);
	says("... and its refusal", HEAD "sync:\n  a:\n    table: a\n"
	    "    index: people\n    id: \"a{id}\"\n  b:\n    table: b\n"
	    "    index: people\n    id: \"b{id}\"\n",
	    HEAD "sync:\n  b:\n    table: b\n    index: people\n"
	    "    id: \"b{id}\"\n",
	    "%s:5: sync.a removed: its documents stay in index 'people', "
	    "which sync.b still writes; to take it, restart pg2osync-supervise "
	    "on this file, then run 'pg2osync verify -c %s --table b "
	    "--repair', which writes what the new file renders and deletes "
	    "the documents no row renders");
}

static void
refusals(void)
{
	says("an id", HEAD ITEMS, HEAD ITEMS "    id: \"i-{id}\"\n",
	    "%s:8: sync.items.id changed: the documents already written keep "
	    "their old ids and would stay beside the ones the new ids name; "
	    "to take it, restart pg2osync-supervise on this file, then run "
	    "'pg2osync verify -c %s --table items --repair', which writes "
	    "what the new file renders and deletes the documents no row "
	    "renders");
	/* columns alone: resnapshot; with where: the stronger repair */
	says("two keys of a section: one clause, the stronger remedy",
	    HEAD ITEMS "    columns: [a]\n",
	    HEAD ITEMS "    columns: [a, b]\n    where: \"a > 1\"\n",
	    "%s:8: sync.items.columns changed: the documents already written "
	    "keep the old columns (also sync.items.where changed at line 9); "
	    "to take it, restart pg2osync-supervise on this file, then run "
	    "'pg2osync verify -c %s --table items --repair', which writes "
	    "what the new file renders and deletes the documents no row "
	    "renders");
	says("two sections: two clauses", HEAD ITEMS "  more:\n"
	    "    table: more\n", HEAD ITEMS "    pipeline: p\n  more:\n"
	    "    table: more\n    routing: r\n",
	    "%s:8: sync.items.pipeline changed: the documents already written "
	    "went through the old ingest pipeline; to take it, restart "
	    "pg2osync-supervise on this file, then run 'pg2osync resnapshot "
	    "-c %s --table items', which writes every row again | %s:11: "
	    "sync.more.routing changed: the documents already written stay "
	    "on the shards the old routing chose, where a read routed by the "
	    "new one does not look; to take it, stop pg2osync-supervise, run "
	    "'pg2osync reindex -c %s --table more --alias NAME', which builds "
	    "a fresh index that readers find under NAME (the section's index "
	    "from then on), and start it again");
	says("an index moved", HEAD ITEMS, HEAD ITEMS "    index: items_v2\n",
	    "%s:8: sync.items.index changed: the documents already written "
	    "stay in index 'items' and 'items_v2' starts without them "
	    "(delete 'items' once nothing reads it); to take it, restart "
	    "pg2osync-supervise on this file, then run 'pg2osync verify -c "
	    "%s --table items --repair', which writes what the new file "
	    "renders and deletes the documents no row renders");
	one("a templated index's routing: rebuilt",
	    HEAD ITEMS "    index: \"ev-{t}\"\n",
	    HEAD ITEMS "    index: \"ev-{t}\"\n    routing: t\n",
	    "items", "routing", 9, CR_REINDEX);
	says("... by deleting what its template claims",
	    HEAD ITEMS "    index: \"ev-{t}\"\n",
	    HEAD ITEMS "    index: \"ev-{t}\"\n    routing: t\n",
	    "%s:9: sync.items.routing changed: the documents already written "
	    "stay on the shards the old routing chose, where a read routed by "
	    "the new one does not look; to take it, stop pg2osync-supervise, "
	    "delete the indices 'ev-*' (reindex cannot rebuild a templated, "
	    "fan-out or shared index), start it on this file and run "
	    "'pg2osync resnapshot -c %s --table items'");
}

static void
meilisearch(void)
{
	char head[512], was[1024], now[1024];

	snprintf(head, sizeof(head), "source:\n  url: postgres://sync@db/app\n"
	    "target:\n  url: http://127.0.0.1:7700\n  flavor: meilisearch\n"
	    "  state_dir: %s\n", dir);
	snprintf(was, sizeof(was), "%s" ITEMS, head);
	snprintf(now, sizeof(now), "%s" ITEMS "    where: \"a = 1\"\n", head);
	/* Meilisearch reads its documents back (documents/fetch): verify's
	 * repair serves it as it serves the engines with versions */
	says("a filter on Meilisearch: verify --repair, which reads it back",
	    was, now, "%s:10: sync.items.where changed: the documents of rows "
	    "the new filter leaves out would stay, and the rows it lets in "
	    "would be missing until each changes; to take it, restart "
	    "pg2osync-supervise on this file, then run 'pg2osync verify -c %s "
	    "--table items --repair', which writes what the new file renders "
	    "and deletes the documents no row renders");
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/t-config-diff.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(was_path, sizeof(was_path), "%s/was.yaml", dir);
	snprintf(now_path, sizeof(now_path), "%s/now.yaml", dir);

	every_key_has_a_rule();
	each_key();
	mapping_and_join();
	no_change();
	removed();
	refusals();
	meilisearch();

	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
