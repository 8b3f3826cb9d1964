/*
 * t-config.c - config_load_with: values and defaults of a full file, every error
 * message with its exact file:line and key, *_env resolution, the
 * inline-secret warnings (captured from stderr, and checked for leaks),
 * config_find_rel. Then the schema walker itself, through a table declared
 * here, for the nested kinds no real key uses yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "config_schema.h"
#include "p2o.h"
#include "sbuf.h"
#include "where.h"
#include "log.h"
#include "memtrim.h"
#include "source.h"
#include "tap.h"

static char dir[64];
static char path[128];

static void
write_file(const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) == EOF) {
		perror(path);
		exit(2);
	}
}

/* a load with every secret, the error as text */
static int
load_path(const char *file, struct config *cfg, char *err, size_t errlen)
{
	struct p2o_err e;

	if (config_load_with(file, CONFIG_SECRETS_ALL, cfg, &e) == 0)
		return 0;
	/* a message longer than err is a test's mistake: cut it */
	if (errlen > 0) {
		size_t n = strnlen(e.msg, errlen - 1);

		memcpy(err, e.msg, n);
		err[n] = '\0';
	}
	return -1;
}

/* load text; 0 or -1 as load_path */
static int
load(const char *text, struct config *cfg, char *err, size_t errlen)
{
	write_file(text);
	return load_path(path, cfg, err, errlen);
}

/* the load must fail with exactly "path:line: msg" */
static void
expect_err(const char *what, const char *text, int line, const char *msg)
{
	struct config cfg;
	char err[512], want[512];
	int rc;

	rc = load(text, &cfg, err, sizeof(err));
	if (line > 0)
		snprintf(want, sizeof(want), "%s:%d: %s", path, line, msg);
	else
		snprintf(want, sizeof(want), "%s: %s", path, msg);
	if (rc == 0) {
		ok(0, "%s: refused", what);
		config_release(&cfg);
		return;
	}
	is_str(err, want, "%s", what);
	config_release(&cfg);	/* harmless after a failed load */
}

#define SRC	"source:\n  url: postgres://sync@db:5432/app\n"
#define TGT	"target:\n  url: http://127.0.0.1:9200\n"
#define SYNC	"sync:\n  items:\n    table: public.items\n"
/* lines: source 1, url 2, target 3, url 4, sync 5, items 6, table 7 */
#define MIN	SRC TGT SYNC

static void
test_full(void)
{
	const char *text =
	    "# every key\n"
	    "source:\n"
	    "  url_env: P2O_T_SOURCE_URL\n"
	    "  slot_name: my_slot_1\n"
	    "  publication: my_pub\n"
	    "  sslmode: verify-full\n"
	    "  sslrootcert: /etc/ca.pem\n"
	    "  sslcert: /etc/client.pem\n"
	    "  sslkey: /etc/client.key\n"
	    "  load_workers: 16\n"
	    "  reconnect_max: 0\n"
	    "target:\n"
	    "  url: https://search.example:9200/prefix//\n"
	    "  username: admin\n"
	    "  password_env: P2O_T_TARGET_PW\n"
	    "sync:\n"
	    "  items:\n"
	    "    table: shop.items\n"
	    "    index: items-v2\n"
	    "    columns: [id, title, price]\n"
	    "  users:\n"
	    "    table: users\n"
	    "    exclude_columns:\n"
	    "      - secret\n"
	    "      - token\n"
	    "engine:\n"
	    "  batch_size: 250\n"
	    "  batch_max_bytes: 512KiB\n"
	    "  write_concurrency: 64\n"
	    "  checkpoint_interval_ms: 10\n"
	    "  on_permanent_rejection: quarantine\n"
	    "  max_rejects: 7\n"
	    "metrics:\n"
	    "  bind: '[::1]:9187'\n";
	struct config cfg;
	char err[512];
	const struct sync_section *s;

	setenv("P2O_T_SOURCE_URL", "postgresql://sync:pw@db/app", 1);
	setenv("P2O_T_TARGET_PW", "tpw", 1);
	if (!ok(load(text, &cfg, err, sizeof(err)) == 0, "full config loads"))
		printf("# %s\n", err);
	is_str(cfg.path, path, "path kept");
	is_str(cfg.source->kind, "postgres", "postgresql:// is postgres");
	is_str(cfg.source_url, "postgresql://sync:pw@db/app",
	    "url resolved from url_env");
	is_str(cfg.source_url_env, "P2O_T_SOURCE_URL", "url_env name kept");
	is_str(cfg.slot_name, "my_slot_1", "slot_name");
	is_str(cfg.publication, "my_pub", "publication");
	is_str(cfg.sslmode, "verify-full", "sslmode");
	is_str(cfg.sslrootcert, "/etc/ca.pem", "sslrootcert");
	is_str(cfg.sslcert, "/etc/client.pem", "sslcert");
	is_str(cfg.sslkey, "/etc/client.key", "sslkey");
	is_int(cfg.reconnect_max, 0, "reconnect_max 0 allowed");
	is_int(cfg.load_workers, 16, "load_workers");
	is_str(cfg.target_url, "https://search.example:9200/prefix",
	    "target url trailing slashes stripped");
	is_str(cfg.target_username, "admin", "username");
	is_str(cfg.target_password, "tpw", "password from password_env");
	is_str(cfg.target_password_env, "P2O_T_TARGET_PW",
	    "password_env name kept");
	is_int(cfg.nsyncs, 2, "two sync sections");
	s = &cfg.syncs[0];
	is_str(s->name, "items", "section name");
	is_str(s->schema, "shop", "schema");
	is_str(s->table, "items", "table");
	is_str(s->rel, "shop.items", "rel");
	is_str(s->index, "items-v2", "index");
	is_int(s->more->ncolumns, 3, "three columns");
	is_str(s->more->columns[2], "price", "columns in order");
	ok(s->more->exclude_columns == NULL, "no exclude_columns");
	is_int(s->line, 17, "section line");
	s = &cfg.syncs[1];
	is_str(s->schema, "public", "unqualified table is in public");
	is_str(s->rel, "public.users", "rel of unqualified table");
	is_str(s->index, "users", "index defaults to the table name");
	ok(s->more->columns == NULL && s->more->ncolumns == 0,
	    "no columns: all");
	is_int(s->more->nexclude_columns, 2, "exclude_columns block list");
	is_str(s->more->exclude_columns[1], "token",
	    "exclude_columns in order");
	is_int(cfg.batch_size, 250, "batch_size");
	is_int(cfg.batch_max_bytes, 512 * 1024, "batch_max_bytes 512KiB");
	is_int(cfg.write_concurrency, 64, "write_concurrency");
	ok(cfg.server_id == 0, "no server_id for a postgresql source");
	is_int(cfg.checkpoint_interval_ms, 10, "checkpoint_interval_ms");
	ok(config_quarantine(&cfg), "on_permanent_rejection: quarantine");
	is_int(cfg.max_rejects, 7, "max_rejects");
	is_str(cfg.metrics_bind, "[::1]:9187", "metrics bind");

	s = config_find_rel(&cfg, "public.users");
	ok(s && strcmp(s->name, "users") == 0, "find_rel public.users");
	s = config_find_rel(&cfg, "shop.items");
	ok(s && strcmp(s->name, "items") == 0, "find_rel shop.items");
	ok(config_find_rel(&cfg, "users") == NULL,
	    "find_rel wants schema.table");
	ok(config_find_rel(&cfg, "public.items") == NULL,
	    "find_rel: other schema is not a match");
	config_release(&cfg);
	ok(cfg.syncs == NULL && cfg.source_url == NULL, "release zeroes");
	unsetenv("P2O_T_SOURCE_URL");
	unsetenv("P2O_T_TARGET_PW");
}

static void
test_defaults(void)
{
	struct config cfg;
	char err[512];

	if (!ok(load(MIN, &cfg, err, sizeof(err)) == 0, "minimal loads"))
		printf("# %s\n", err);
	is_str(cfg.slot_name, "pg2osync", "default slot_name");
	is_str(cfg.publication, "pg2osync", "default publication");
	ok(cfg.sslmode == NULL, "default sslmode: libpq's");
	is_int(cfg.reconnect_max, 10, "default reconnect_max");
	is_int(cfg.load_workers, 1, "default load_workers");
	ok(cfg.target_username == NULL && cfg.target_password == NULL,
	    "no target credentials");
	is_int(cfg.batch_size, 1000, "default batch_size");
	is_int(cfg.batch_max_bytes, 4 * 1024 * 1024,
	    "default batch_max_bytes: half the bodies' budget at one request");
	is_int(cfg.checkpoint_interval_ms, 1000, "default checkpoint");
	is_int(cfg.write_concurrency, 1, "default write_concurrency");
	ok(!config_quarantine(&cfg), "default on_permanent_rejection: halt");
	is_int(cfg.max_rejects, 100, "default max_rejects");
	ok(cfg.metrics_bind == NULL, "no metrics section: no endpoint");
	is_str(cfg.syncs[0].index, "items", "default index");
	is_int(cfg.syncs[0].line, 6, "section line");
	ok(config_find_rel(&cfg, "public.items") == &cfg.syncs[0],
	    "find_rel on minimal");
	config_release(&cfg);

	if (!ok(load("source:\n  url: mysql://u@h/db\n"
	    "  server_id: 4294967295\n" TGT
	    "sync:\n  t:\n    table: appdb.users\n", &cfg, err,
	    sizeof(err)) == 0, "mysql config loads"))
		printf("# %s\n", err);
	is_str(cfg.source->kind, "mysql", "mysql:// is mysql");
	ok(cfg.server_id == 4294967295UL, "server_id up to 2^32-1");
	ok(cfg.slot_name == NULL && cfg.publication == NULL,
	    "a mysql source has no slot or publication");
	ok(cfg.nsyncs == 1 && strcmp(cfg.syncs[0].rel, "appdb.users") == 0,
	    "mysql rel database.table");
	config_release(&cfg);

	ok(load("source:\n  url: mariadb://u@h/db\n  server_id: 1\n" TGT
	    "sync:\n  t:\n    table: appdb.users\n", &cfg, err,
	    sizeof(err)) == 0 && strcmp(cfg.source->kind, "mysql") == 0 &&
	    cfg.server_id == 1, "mariadb:// is mysql");
	config_release(&cfg);

	ok(load("source:\n  url: host=db dbname=app user=sync\n" TGT SYNC,
	    &cfg, err, sizeof(err)) == 0 &&
	    strcmp(cfg.source->kind, "postgres") == 0, "conninfo is postgres");
	config_release(&cfg);

	ok(load(MIN "engine:\n  write_concurrency: 4\n", &cfg, err,
	    sizeof(err)) == 0 && cfg.batch_max_bytes == (8 << 20) / 5,
	    "four requests open: five bodies share the budget");
	config_release(&cfg);
	ok(load(MIN "engine:\n  write_concurrency: 4\n  batch_max_bytes: 5MiB\n",
	    &cfg, err, sizeof(err)) == 0 && cfg.batch_max_bytes == 5 << 20,
	    "a batch_max_bytes set is kept whatever the concurrency");
	config_release(&cfg);
	ok(load(MIN "engine:\n  batch_max_bytes: \"5MB\"\n", &cfg, err,
	    sizeof(err)) == 0 && cfg.batch_max_bytes == 5000000,
	    "\"5MB\" is 5000000 bytes");
	config_release(&cfg);
	ok(load(MIN "engine:\n  batch_max_bytes: 1048576\n", &cfg, err,
	    sizeof(err)) == 0 && cfg.batch_max_bytes == 1048576,
	    "integer batch_max_bytes");
	config_release(&cfg);
	ok(load(MIN "engine:\n  batch_max_bytes: 2 mib\n", &cfg, err,
	    sizeof(err)) == 0 && cfg.batch_max_bytes == 2 << 20,
	    "\"2 mib\": space and any case");
	config_release(&cfg);
	ok(load(MIN "engine:\n  batch_size: \"42\"\n", &cfg, err,
	    sizeof(err)) == 0 && cfg.batch_size == 42,
	    "quoted digits are an integer");
	config_release(&cfg);
}

/* a mapping file beside the configuration */
static void
write_beside(const char *name, const char *text)
{
	char p[256];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if ((fp = fopen(p, "w")) == NULL || fputs(text, fp) == EOF ||
	    fclose(fp) == EOF) {
		perror(p);
		exit(2);
	}
}

/* every shaping key of a sync section, read */
static void
test_shaping(void)
{
	const char *text =
	    SRC TGT
	    "sync:\n"						/* 5 */
	    "  products:\n"
	    "    table: shop.products\n"
	    "    index: \"products-{tenant}\"\n"
	    "    id: \"{tenant}-{id}\"\n"
	    "    routing: tenant\n"					/* 10 */
	    "    pipeline: embed\n"
	    "    primary_key: [tenant, id]\n"
	    "    where: \"price > 0 AND status IN ('on', 'new')\"\n"
	    "    mapping_file: products.json\n"
	    "    transform:\n"					/* 15 */
	    "      email: hash\n"
	    "      secret: redact\n"
	    "      note: {redact: \"(hidden)\"}\n"
	    "      tags_csv: {split: \",\"}\n"
	    "      born: {date: \"DD/MM/YYYY\"}\n"			/* 20 */
	    "      price: number\n"
	    "      doc: json\n"
	    "    fields:\n"
	    "      email: email_sha\n"
	    "    constants:\n"					/* 25 */
	    "      origin: \"{schema}.{table}\"\n"
	    "      kind: product\n"
	    "    fan_out: {column: tags, id: \"{id}-{tag}\", element: tag}\n"
	    "  audit:\n"
	    "    table: audit\n"					/* 30 */
	    "    append_only: true\n"
	    "  questions:\n"
	    "    table: qa.questions\n"
	    "    index: qa\n"
	    "    id: \"q{id}\"\n"					/* 35 */
	    "    join: {field: rel, name: question}\n"
	    "  answers:\n"
	    "    table: qa.answers\n"
	    "    index: qa\n"
	    "    id: \"a{id}\"\n"					/* 40 */
	    "    join: {field: rel, name: answer, parent: questions, "
	    "column: qid}\n";
	struct config cfg;
	const struct sync_section *s;
	char err[512];

	write_beside("products.json",
	    "{\"properties\": {\"email_sha\": {\"type\": \"keyword\"}}}\n");
	if (!ok(load(text, &cfg, err, sizeof(err)) == 0,
	    "every shaping key loads"))
		printf("# %s\n", err);
	s = &cfg.syncs[0];
	ok(s->index_templated && strcmp(s->index_glob, "products-*") == 0,
	    "a templated index and its glob");
	ok(s->id_t.ncolumns == 2 && strcmp(s->more->routing, "tenant") == 0 &&
	    strcmp(s->more->pipeline, "embed") == 0 &&
	    s->more->nprimary_key == 2,
	    "id, routing, pipeline, primary_key");
	ok(s->more->where_expr != NULL &&
	    where_ncolumns(s->more->where_expr) == 2,
	    "the filter, parsed");
	is_str(s->more->index_body,
	    "{\"mappings\":{\"properties\": {\"email_sha\": "
	    "{\"type\": \"keyword\"}}}}", "a bare mapping, wrapped");
	is_int(s->more->ntransforms, 7, "seven transforms");
	ok(s->more->transforms[0].kind == XF_HASH &&
	    s->more->transforms[0].param == NULL,
	    "hash");
	is_str(s->more->transforms[1].param, "[redacted]", "redact's default");
	is_str(s->more->transforms[2].param, "(hidden)", "redact's parameter");
	ok(s->more->transforms[3].kind == XF_SPLIT &&
	    *s->more->transforms[3].param == ',',
	    "split");
	ok(s->more->transforms[4].kind == XF_DATE &&
	    s->more->transforms[6].kind == XF_JSON,
	    "date, json");
	is_str(s->more->constants[0].json, "\"shop.products\"",
	    "a constant's placeholders, rendered");
	is_str(s->more->constants[1].json, "\"product\"", "a plain constant");
	ok(s->has_fan_out && strcmp(s->more->fan_out.element, "tag") == 0 &&
	    s->more->fan_out.id_t.ncolumns == 2, "fan_out");
	ok(cfg.syncs[1].append_only && cfg.syncs[1].id == NULL,
	    "append_only");
	s = &cfg.syncs[2];
	ok(s->has_join && s->more->join.nchildren == 1 &&
	    strcmp(s->more->join.children[0], "answer") == 0 && s->shared,
	    "a join parent knows its children");
	is_str(s->more->index_body, "{\"mappings\":{\"properties\":{\"rel\":"
	    "{\"type\":\"join\",\"relations\":{\"question\":[\"answer\"]}}}}}",
	    "and the join's mapping is generated");
	is_str(config_index_body(&cfg, "qa"), s->more->index_body,
	    "the body the writer and ckpt create the index with");
	is_str(config_index_body(&cfg, "products-acme"),
	    cfg.syncs[0].more->index_body, "a templated index's body");
	ok(config_index_body(&cfg, "audit") == NULL, "none: the defaults");
	ok(config_find_index(&cfg, "products-zeta") == &cfg.syncs[0] &&
	    config_find_index(&cfg, "other") == NULL, "config_find_index");
	ok(cfg.syncs[3].more->join.parent_sec == 2, "a child finds its parent");
	config_release(&cfg);
}

#define ITEMS	SRC TGT "sync:\n  items:\n    table: items\n"
/* lines: sync 5, items 6, table 7: a key appended is on line 8 */

static const struct {
	const char *what, *text;
	int line;
	const char *msg;
} shaping_errors[] = {
	{ "an id without a placeholder", ITEMS "    id: fixed\n", 8,
	    "'sync.items.id' must name at least one column as {column}: "
	    "without one every row is the same document" },
	{ "an open placeholder", ITEMS "    id: \"{a\"\n", 8,
	    "'sync.items.id' has a '{' without its '}'" },
	{ "an index template with no literal", ITEMS "    index: \"{t}\"\n", 8,
	    "'sync.items.index' must hold literal text besides its "
	    "placeholders: a truncate clears every index the template can "
	    "render" },
	{ "an index template in capitals", ITEMS "    index: \"Ev-{t}\"\n", 8,
	    "'sync.items.index' must be lowercase" },
	{ "append_only with primary_key",
	    ITEMS "    append_only: true\n    primary_key: [id]\n", 9,
	    "'sync.items.primary_key' cannot be combined with "
	    "'sync.items.append_only'" },
	{ "append_only with id",
	    ITEMS "    id: \"x{id}\"\n    append_only: true\n", 9,
	    "'sync.items.append_only' cannot be combined with 'sync.items.id'" },
	{ "append_only with fan_out", ITEMS "    append_only: true\n"
	    "    fan_out: {column: t, id: \"{t}\"}\n", 9,
	    "'sync.items.fan_out' cannot be combined with "
	    "'sync.items.append_only'" },
	{ "an unknown transform", ITEMS "    transform:\n      email: sha\n", 9,
	    "'sync.items.transform.email' must be one of hash, redact, json, "
	    "split, number, date, or a mapping of one operation to its "
	    "parameter (pseudonym and lookup take a mapping of their own)" },
	{ "pseudonym in the short form", ITEMS "    transform:\n"
	    "      email: pseudonym\n", 9,
	    "'sync.items.transform.email' must be one of hash, redact, json, "
	    "split, number, date, or a mapping of one operation to its "
	    "parameter (pseudonym and lookup take a mapping of their own)" },
	{ "a pseudonym without its key", ITEMS "    transform:\n"
	    "      email: {pseudonym: {scope: people}}\n", 9,
	    "missing required key "
	    "'sync.items.transform.email.pseudonym.key_env'" },
	{ "a pseudonym key_env that is no variable name", ITEMS
	    "    transform:\n      email: {pseudonym: {key_env: 1KEY}}\n", 9,
	    "'sync.items.transform.email.pseudonym.key_env' must be the name "
	    "of an environment variable ([A-Za-z_][A-Za-z0-9_]*)" },
	{ "a pseudonym and a hash at once", ITEMS "    transform:\n"
	    "      email: {pseudonym: {key_env: K}, redact: x}\n", 9,
	    "'sync.items.transform.email' must name exactly one operation, "
	    "not several (no chaining)" },
	{ "a lookup without its map", ITEMS "    transform:\n"
	    "      code: {lookup: {default: other}}\n", 9,
	    "missing required key 'sync.items.transform.code.lookup.map'" },
	{ "a lookup's map that is a list", ITEMS "    transform:\n"
	    "      code: {lookup: {map: [a, b]}}\n", 9,
	    "'sync.items.transform.code.lookup.map' must be a mapping of "
	    "values (as text) to labels" },
	{ "a lookup's label YAML reads as a boolean", ITEMS "    transform:\n"
	    "      code:\n        lookup:\n          map:\n"
	    "            a: yes\n", 12,
	    "'sync.items.transform.code.lookup.map.a' is a word YAML reads as "
	    "a boolean: write true or false for one, or quote it for a "
	    "string" },
	{ "a lookup's default YAML numbers differently", ITEMS
	    "    transform:\n      code:\n        lookup:\n"
	    "          map: {a: x}\n          default: 0x1F\n", 12,
	    "'sync.items.transform.code.lookup.default' is a number YAML "
	    "readers disagree on: write it as JSON writes a number (12, -1.5, "
	    "2e3), or quote it for a string" },
	{ "a constant YAML reads as a boolean", ITEMS "    constants:\n"
	    "      active: on\n", 9, "'sync.items.constants.active' is a word "
	    "YAML reads as a boolean: write true or false for one, or quote "
	    "it for a string" },
	{ "a constant with a leading zero", ITEMS "    constants:\n"
	    "      code: 012\n", 9, "'sync.items.constants.code' is a number "
	    "YAML readers disagree on: write it as JSON writes a number (12, "
	    "-1.5, 2e3), or quote it for a string" },
	{ "a constant that is a time of day", ITEMS "    constants:\n"
	    "      opens: 10:30\n", 9, "'sync.items.constants.opens' is a "
	    "number YAML readers disagree on: write it as JSON writes a "
	    "number (12, -1.5, 2e3), or quote it for a string" },
	{ "two operations", ITEMS "    transform:\n"
	    "      email: {redact: x, split: \",\"}\n", 9,
	    "'sync.items.transform.email' must name exactly one operation, "
	    "not several (no chaining)" },
	{ "a parameter to hash", ITEMS "    transform:\n"
	    "      email: {hash: x}\n", 9,
	    "'sync.items.transform.email.hash' takes no parameter: write the "
	    "operation alone, as 'column: op'" },
	{ "an empty separator", ITEMS "    transform:\n"
	    "      tags: {split: \"\"}\n", 9,
	    "'sync.items.transform.tags.split' must be a non-empty string" },
	{ "a date pattern without a year", ITEMS "    transform:\n"
	    "      born: {date: \"DD/MM\"}\n", 9,
	    "'sync.items.transform.born.date' must hold YYYY, MM and DD" },
	{ "a date pattern with a stray letter", ITEMS "    transform:\n"
	    "      born: {date: \"DD/MM/YYYY at hh\"}\n", 9,
	    "'sync.items.transform.born.date' must be made of YYYY, MM, DD, "
	    "hh, mm, ss and separators (found 'a'), or of strptime-style "
	    "directives such as %Y" },
	{ "a strptime pattern with a directive it does not read", ITEMS
	    "    transform:\n      born: {date: \"%d/%m/%Y %Z\"}\n", 9,
	    "'sync.items.transform.born.date' has '%Z', which the date "
	    "transform does not read (it reads %Y %y %m %b %B %h %d %e %H %I "
	    "%p %M %S %f %z %a %A %F %T %R %D %%)" },
	{ "a strptime pattern without the day", ITEMS "    transform:\n"
	    "      born: {date: \"%m/%Y\"}\n", 9,
	    "'sync.items.transform.born.date' must read the year, the month "
	    "and the day" },
	{ "a strptime pattern reading the month twice", ITEMS
	    "    transform:\n      born: {date: \"%F %b\"}\n", 9,
	    "'sync.items.transform.born.date' reads the month twice" },
	{ "%I without %p", ITEMS "    transform:\n"
	    "      born: {date: \"%F %I:%M\"}\n", 9,
	    "'sync.items.transform.born.date' must read %I and %p together (a "
	    "12-hour clock needs its AM or PM)" },
	{ "a lone % at the end", ITEMS "    transform:\n"
	    "      born: {date: \"%F %\"}\n", 9,
	    "'sync.items.transform.born.date' ends with a lone '%' (write %% "
	    "for a percent sign)" },
	{ "a transform of a column the documents drop",
	    ITEMS "    columns: [id]\n    transform:\n      email: hash\n", 10,
	    "'sync.items.transform.email': column 'email' is not in the "
	    "documents (columns or exclude_columns drops it)" },
	{ "two renames onto one name", ITEMS "    fields:\n      a: x\n"
	    "      b: x\n", 10, "'sync.items.fields.b' renames 'b' onto 'x', "
	    "which 'sync.items.fields.a' already renames 'a' onto" },
	{ "a rename onto a kept column", ITEMS "    columns: [a, b]\n"
	    "    fields:\n      a: b\n", 10, "'sync.items.fields.a' renames "
	    "'a' onto 'b', a column the documents keep" },
	{ "a rename of an excluded column", ITEMS
	    "    exclude_columns: [a]\n    fields:\n      a: b\n", 10,
	    "'sync.items.fields.a': column 'a' is not in the documents "
	    "(columns or exclude_columns drops it)" },
	{ "a constant with another placeholder", ITEMS "    constants:\n"
	    "      o: \"{schema}-{nope}\"\n", 9, "'sync.items.constants.o' "
	    "names '{nope}': a constant takes only {schema} and {table}" },
	{ "a constant named as a kept column", ITEMS
	    "    columns: [id, kind]\n    constants:\n      kind: x\n", 10,
	    "'sync.items.constants.kind' has the name of column 'kind', which "
	    "the documents keep" },
	{ "a constant named as a rename", ITEMS "    fields:\n      a: b\n"
	    "    constants:\n      b: x\n", 11, "'sync.items.constants.b' has "
	    "the name 'fields' renames 'a' onto" },
	{ "a filter outside the subset", ITEMS "    where: \"a LIKE 'x'\"\n", 8,
	    "'sync.items.where' is not supported: 'LIKE' where a comparison "
	    "belongs at byte 3; 'where' takes comparisons (= <> != < <= > >=) "
	    "between column names and string, number or boolean (TRUE, FALSE) "
	    "literals, AND, OR, NOT, IN (...), IS [NOT] NULL and parentheses" },
	{ "a filter with a function", ITEMS "    where: \"lower(a) = 'x'\"\n",
	    8, "'sync.items.where' is not supported: a function call "
	    "'lower(...)' at byte 1; 'where' takes comparisons (= <> != < <= "
	    "> >=) between column names and string, number or boolean (TRUE, "
	    "FALSE) literals, AND, OR, NOT, IN (...), IS [NOT] NULL and "
	    "parentheses" },
	{ "fan_out without id", ITEMS "    fan_out: {column: tags}\n", 8,
	    "missing required key 'sync.items.fan_out.id'" },
	{ "a transform of the fan_out column", ITEMS
	    "    fan_out: {column: tags, id: \"{tag}\"}\n    transform:\n"
	    "      tags: {split: \",\"}\n", 10, "'sync.items.transform.tags': "
	    "column 'tags' is the fan_out column, which fan_out reads raw and "
	    "no document carries" },
	{ "a join parent with fan_out", ITEMS "    join: {field: j, name: a}\n"
	    "    fan_out: {column: t, id: \"{t}\"}\n", 9,
	    "'sync.items.fan_out' cannot be combined with a join parent "
	    "('sync.items.join' names no 'parent'): its children name one "
	    "document per row" },
	{ "parent {element} without fan_out", ITEMS "    id: \"k{id}\"\n"
	    "    join:\n      field: j\n      name: k\n"
	    "      parent: \"{element}\"\n", 12,
	    "'sync.items.join.parent: {element}' needs 'fan_out': only a "
	    "fan-out element can name its document's parent" },
	{ "parent {element} and a column (ambiguous)", ITEMS
	    "    id: \"k{id}\"\n    fan_out: {column: ps, id: \"{id}-{p}\", "
	    "element: p}\n    join:\n      field: j\n      name: k\n"
	    "      parent: \"{element}\"\n      column: pid\n", 14,
	    "'sync.items.join.column' cannot be combined with 'parent: "
	    "{element}': the element names each document's parent, and a "
	    "column would name another" },
	{ "parent {element} in an index without a parent", ITEMS
	    "    id: \"k{id}\"\n    fan_out: {column: ps, id: \"{id}-{p}\", "
	    "element: p}\n    join: {field: j, name: k, parent: "
	    "\"{element}\"}\n", 10, "'sync.items.join.parent' is '{element}', "
	    "and index 'items' has no join parent section for the elements to "
	    "name" },
	{ "a join key pseudonymised on one side only", ITEMS
	    "    index: qa\n    id: \"p{id}\"\n    join: {field: j, name: p}\n"
	    "  kids:\n    table: kids\n    index: qa\n    id: \"k{id}\"\n"
	    "    join: {field: j, name: k, parent: items, column: pid}\n"
	    "    transform:\n      pid: {pseudonym: {key_env: K, scope: p}}\n",
	    17, "'sync.kids.join': the join key columns 'pid' and 'id' (of "
	    "'items') are pseudonymised apart: both must be pseudonyms with "
	    "the same 'key_env' and the same explicit 'scope', or their "
	    "documents hold different tokens for one key" },
	{ "a join key pseudonymised under default scopes", ITEMS
	    "    index: qa\n    id: \"p{id}\"\n    join: {field: j, name: p}\n"
	    "    transform:\n      id: {pseudonym: {key_env: K}}\n"
	    "  kids:\n    table: kids\n    index: qa\n    id: \"k{id}\"\n"
	    "    join: {field: j, name: k, parent: items, column: pid}\n"
	    "    transform:\n      pid: {pseudonym: {key_env: K}}\n",
	    19, "'sync.kids.join': the join key columns 'pid' and 'id' (of "
	    "'items') are pseudonymised apart: both must be pseudonyms with "
	    "the same 'key_env' and the same explicit 'scope', or their "
	    "documents hold different tokens for one key" },
	{ "require_alias with a templated index", SRC
	    "target:\n  url: http://127.0.0.1:9200\n  require_alias: true\n"
	    "sync:\n  items:\n    table: items\n    index: \"items-{t}\"\n", 9,
	    "'sync.items.index' is a template, and 'target.require_alias' "
	    "writes only through aliases: an index rendered from a row has no "
	    "alias to write through" },
	{ "require_alias on a target without aliases", SRC
	    "target:\n  url: http://127.0.0.1:7700\n  flavor: meilisearch\n"
	    "  state_dir: /tmp\n  require_alias: true\n"
	    "sync:\n  items:\n    table: items\n", 7,
	    "'target.require_alias' needs aliases, which target 'meilisearch' "
	    "does not offer: it has no aliases for the writes to name" },
	{ "join with routing", ITEMS "    routing: r\n"
	    "    join: {field: j, name: a}\n", 9,
	    "'sync.items.join' cannot be combined with 'sync.items.routing'" },
	{ "a child without its column", ITEMS
	    "    join: {field: j, name: a, parent: p}\n", 8,
	    "'sync.items.join' names a parent and so needs 'column', the "
	    "column holding the parent's key (or 'parent: {element}' with "
	    "fan_out, each element naming its own)" },
	{ "a join in a templated index", ITEMS "    index: \"x-{t}\"\n"
	    "    join: {field: j, name: a}\n", 9, "'sync.items.join' needs one "
	    "index: the parent and its children share it, and "
	    "'sync.items.index' is a template" },
	{ "two sections, one index, different mappings", ITEMS
	    "    id: \"i{id}\"\n    mapping_file: m1.json\n"
	    "  other:\n    table: other\n    index: items\n"
	    "    id: \"o{id}\"\n    mapping_file: m2.json\n", 14,
	    "sync sections 'items' and 'other' both write index 'items' with "
	    "different mapping files" },
	{ "a join index shared with a plain section", ITEMS
	    "    id: \"i{id}\"\n    join: {field: j, name: item}\n"
	    "  other:\n    table: other\n    index: items\n"
	    "    id: \"o{id}\"\n", 12, "sync sections 'items' and 'other' both "
	    "write index 'items', which holds a join: every section writing "
	    "it must be part of the join" },
	{ "a template claiming another's index", ITEMS
	    "  logs:\n    table: logs\n    index: \"item{x}\"\n", 10,
	    "sync section 'logs' writes index 'item{x}', which section "
	    "'items' can write too ('items'): a templated index is its "
	    "section's alone" },
	{ "two templates that overlap", ITEMS "    index: \"a-{x}-z\"\n"
	    "  logs:\n    table: logs\n    index: \"a-{y}\"\n", 11,
	    "sync section 'logs' writes index 'a-{y}', which section 'items' "
	    "can write too ('a-{x}-z'): a templated index is its section's "
	    "alone" },
	{ "a parent that is not one", ITEMS "    index: qa\n    id: \"i{id}\"\n"
	    "    join: {field: j, name: a, parent: nobody, column: p}\n", 10,
	    "'sync.items.join.parent' names 'nobody', which is not a sync "
	    "section with a join and no parent of its own" },
	{ "a parent without children", ITEMS "    id: \"i{id}\"\n"
	    "    join: {field: j, name: a}\n", 9,
	    "'sync.items.join' is a parent no section names as its 'parent'" },
	{ "a parent id of two columns", ITEMS "    id: \"{a}-{b}\"\n"
	    "    join: {field: j, name: p}\n"
	    "  kids:\n    table: kids\n    index: items\n    id: \"k{id}\"\n"
	    "    join: {field: j, name: k, parent: items, column: pid}\n", 8,
	    "'sync.items.id' must name exactly one column, the parent's key: "
	    "a join child computes its parent's id from one column" },
	{ "a child in another index", ITEMS "    index: qa\n    id: \"p{id}\"\n"
	    "    join: {field: j, name: p}\n"
	    "  kids:\n    table: kids\n    index: other\n    id: \"k{id}\"\n"
	    "    join: {field: j, name: k, parent: items, column: pid}\n", 15,
	    "'sync.kids.join': a child writes its parent's index ('qa') with "
	    "its join field ('j')" },
	{ "a relation name twice", ITEMS "    id: \"p{id}\"\n"
	    "    join: {field: j, name: p}\n"
	    "  kids:\n    table: kids\n    index: items\n    id: \"k{id}\"\n"
	    "    join: {field: j, name: p, parent: items, column: pid}\n", 14,
	    "'sync.kids.join.name' repeats relation 'p' of section 'items'" },
	{ "a publication too long for its append twin",
	    "source:\n  url: postgres://sync@db:5432/app\n"
	    "  publication: abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefg\n"
	    TGT "sync:\n  items:\n    table: items\n    append_only: true\n", 3,
	    "'source.publication' must be at most 56 bytes long when a section "
	    "is append_only: its keyless tables go in publication "
	    "'<publication>_append'" },
};

/* issue 37's mapping keys: typed constants, lookup, pseudonym and its
 * key, split by a string, fan_out.by, a join parent named by a fan-out
 * element, target.require_alias */
static void
test_mapping(void)
{
	const char *text =
	    SRC
	    "target:\n  url: http://127.0.0.1:9200\n  require_alias: true\n"
	    "sync:\n"						/* 6 */
	    "  people:\n"
	    "    table: people\n"
	    "    transform:\n"
	    "      email: {pseudonym: {key_env: P2O_T_PSEUDO}}\n"	/* 10 */
	    "      phone: {pseudonym: {key_env: P2O_T_PSEUDO, scope: phone}}\n"
	    "      tags: {split: \" | \"}\n"
	    "      status:\n"
	    "        lookup:\n"
	    "          map: {\"2\": closed, \"1\": active, \"9\": 9, x: true}\n"
	    "          default: unknown\n"
	    "      land: {lookup: {map: {GB: \"United Kingdom\"}}}\n"
	    "    constants:\n"
	    "      n: 5\n"
	    "      f: -1.5e3\n"					/* 20 */
	    "      b: false\n"
	    "      s: \"5\"\n"
	    "      t: 'true'\n"
	    "      d: 2024-01-01\n"
	    "      o: \"{schema}.{table}\"\n"
	    "  orders:\n"
	    "    table: orders\n"
	    "    index: qa\n"
	    "    id: \"o{id}\"\n"
	    "    join: {field: j, name: order}\n"			/* 30 */
	    "  lines:\n"
	    "    table: lines\n"
	    "    index: qa\n"
	    "    id: \"l{id}\"\n"
	    "    fan_out: {column: order_ids, by: \",\", id: \"{id}-{oid}\", "
	    "element: oid}\n"
	    "    join: {field: j, name: line, parent: \"{element}\"}\n";
	static const char key[] =
	    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	    "202122232425262728292a2b2c2d2e2f303132333435363738393A3B3C3D3E3F";
	struct config cfg;
	const struct sync_section *s;
	const struct sync_transform *t;
	struct p2o_err e;
	char err[512], want[512];
	int i, bytes_ok;

	unsetenv("P2O_T_PSEUDO");
	if (!ok(load(text, &cfg, err, sizeof(err)) == 0,
	    "the mapping keys load (no transform secret asked for)"))
		printf("# %s\n", err);
	s = &cfg.syncs[0];
	ok(cfg.target_require_alias == 1, "target.require_alias");
	t = config_transform_of(s, "email");
	ok(t && t->kind == XF_PSEUDONYM && t->pseudonym.key == NULL &&
	    strcmp(t->pseudonym.key_env, "P2O_T_PSEUDO") == 0,
	    "a pseudonym, its key not resolved for a program that does not "
	    "shape");
	is_str(t ? t->pseudonym.ad : NULL, "public.people.email",
	    "its scope by default: schema.table.column");
	t = config_transform_of(s, "phone");
	is_str(t ? t->pseudonym.ad : NULL, "phone", "an explicit scope");
	t = config_transform_of(s, "tags");
	is_str(t ? t->param : NULL, " | ", "split by a string");
	t = config_transform_of(s, "status");
	ok(t && t->kind == XF_LOOKUP && t->lookup.nmap == 4, "a lookup");
	if (t && t->lookup.nmap == 4) {
		is_str(t->lookup.map[0].name, "1", "its map sorted by text");
		is_str(t->lookup.map[0].json, "\"active\"", "a label");
		is_str(t->lookup.map[2].json, "9", "an unquoted number label");
		is_str(t->lookup.map[3].json, "true", "a boolean label");
		is_str(t->lookup.def_json, "\"unknown\"", "its default");
	}
	t = config_transform_of(s, "land");
	ok(t && t->lookup.def_json == NULL, "no default: a miss keeps the "
	    "value");
	is_str(s->more->constants[0].json, "5", "an unquoted number constant");
	is_str(s->more->constants[1].json, "-1.5e3", "as written");
	is_str(s->more->constants[2].json, "false", "a boolean constant");
	is_str(s->more->constants[3].json, "\"5\"",
	    "a quoted number is a string");
	is_str(s->more->constants[4].json, "\"true\"",
	    "so is a quoted boolean");
	is_str(s->more->constants[5].json, "\"2024-01-01\"",
	    "a date is a string");
	is_str(s->more->constants[6].json, "\"public.people\"",
	    "a template still "
	    "renders");
	s = &cfg.syncs[2];
	ok(s->has_fan_out && strcmp(s->more->fan_out.by, ",") == 0,
	    "fan_out.by");
	ok(s->more->join.by_element && s->more->join.parent_sec == 1 &&
	    cfg.syncs[1].more->join.nchildren == 1,
	    "a join child whose elements "
	    "name their parents finds the index's parent section");
	config_release(&cfg);

	/* the key: asked for, it must be set and 128 hex digits, and no
	 * message quotes it */
	snprintf(want, sizeof(want), "%s:10: 'sync.people.transform.email."
	    "pseudonym.key_env' names 'P2O_T_PSEUDO', which is not set", path);
	ok(config_load_with(path, CONFIG_SECRET_TRANSFORM, &cfg, &e) == -1 &&
	    e.code == P2O_EXIT_CONFIG && strcmp(e.msg, want) == 0,
	    "the shaper's secret asked for, the variable unset: refused "
	    "naming it: %s", e.msg);
	setenv("P2O_T_PSEUDO", "00112233445566778899aabbccddeeff", 1);
	snprintf(want, sizeof(want), "%s:10: 'sync.people.transform.email."
	    "pseudonym.key_env' names 'P2O_T_PSEUDO', which must hold 128 "
	    "hexadecimal digits (a 64-byte AES-256-SIV key)", path);
	ok(config_load_with(path, CONFIG_SECRET_TRANSFORM, &cfg, &e) == -1 &&
	    strcmp(e.msg, want) == 0 && strstr(e.msg, "0011223344") == NULL,
	    "a key too short: refused, the value not quoted: %s", e.msg);
	setenv("P2O_T_PSEUDO", key, 1);
	((char *)getenv("P2O_T_PSEUDO"))[5] = 'g';
	ok(config_load_with(path, CONFIG_SECRET_TRANSFORM, &cfg, &e) == -1 &&
	    strcmp(e.msg, want) == 0 && strstr(e.msg, "0001020") == NULL,
	    "a key that is not hex: refused the same way");
	setenv("P2O_T_PSEUDO", key, 1);
	ok(config_load_with(path, CONFIG_SECRET_TRANSFORM, &cfg, &e) == 0,
	    "a key of 128 hex digits, either case: loaded (%s)", e.msg);
	t = config_transform_of(&cfg.syncs[0], "email");
	bytes_ok = t && t->pseudonym.key != NULL;
	for (i = 0; bytes_ok && i < 64; i++)
		bytes_ok = t->pseudonym.key[i] == i;
	ok(bytes_ok, "and decoded to its 64 bytes");
	config_release(&cfg);
	unsetenv("P2O_T_PSEUDO");
}

static void
test_shaping_errors(void)
{
	char want[512];
	size_t i;

	write_beside("m1.json", "{\"properties\": {}}");
	write_beside("m2.json", "{\"properties\": {\"a\": {}}}");
	for (i = 0; i < sizeof(shaping_errors) / sizeof(shaping_errors[0]);
	    i++)
		expect_err(shaping_errors[i].what, shaping_errors[i].text,
		    shaping_errors[i].line, shaping_errors[i].msg);

	/* the mapping file: it must be there, parse, be one kind of body,
	 * and speak of the names the documents carry */
	snprintf(want, sizeof(want), "'sync.items.mapping_file' '%s/nope.json'"
	    ": No such file or directory", dir);
	expect_err("a missing mapping file", ITEMS
	    "    mapping_file: nope.json\n", 8, want);
	write_beside("bad.json", "{\"properties\": ");
	snprintf(want, sizeof(want), "'sync.items.mapping_file' '%s/bad.json' "
	    "is not JSON: unexpected end of input at byte 15", dir);
	expect_err("a mapping file that is not JSON", ITEMS
	    "    mapping_file: bad.json\n", 8, want);
	write_beside("mixed.json", "{\"mappings\": {}, \"properties\": {}}");
	snprintf(want, sizeof(want), "'sync.items.mapping_file' "
	    "'%s/mixed.json' must be an index creation body (mappings, "
	    "settings, aliases) or a bare mapping, not both", dir);
	expect_err("a mapping file of two kinds", ITEMS
	    "    mapping_file: mixed.json\n", 8, want);
	write_beside("renamed.json", "{\"mappings\": {\"properties\": "
	    "{\"email\": {\"type\": \"keyword\"}}}}");
	snprintf(want, sizeof(want), "'sync.items.mapping_file' "
	    "'%s/renamed.json' maps field 'email', which 'fields' renames to "
	    "'mail': the mapping must use the names the documents carry", dir);
	expect_err("a mapping of a field renamed away", ITEMS
	    "    fields:\n      email: mail\n    mapping_file: renamed.json\n",
	    10, want);
	snprintf(want, sizeof(want), "'sync.items.mapping_file' '%s/m1.json' "
	    "must map the join field 'j' as type join (or leave mapping_file "
	    "out: the join mapping is then generated)", dir);
	expect_err("a join mapping without the join field", ITEMS
	    "    id: \"i{id}\"\n    join: {field: j, name: p}\n"
	    "    mapping_file: m1.json\n", 10, want);
}

static void
test_errors(void)
{
	char nofile[256];

	expect_err("unknown key", SRC "  foo: 1\n" TGT SYNC, 3,
	    "unknown key 'source.foo'");
	expect_err("unknown section", MIN "sources:\n  url: x\n", 8,
	    "unknown key 'sources'");
	expect_err("unknown sync key", MIN "    tabel: x\n", 8,
	    "unknown key 'sync.items.tabel'");
	expect_err("batch_size abc", MIN "engine:\n  batch_size: abc\n", 9,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("batch_size 0", MIN "engine:\n  batch_size: 0\n", 9,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("batch_size negative", MIN "engine:\n\n  batch_size: -5\n",
	    10, "'engine.batch_size' must be an integer >= 1");
	expect_err("batch_size mapping",
	    MIN "engine:\n  batch_size:\n    a: 1\n", 10,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("batch_size overflow",
	    MIN "engine:\n  batch_size: 99999999999999999999\n", 9,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("batch_size above int",
	    MIN "engine:\n  batch_size: 2147483648\n", 9,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("batch_size float", MIN "engine:\n  batch_size: 1e3\n", 9,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("batch_size null", MIN "engine:\n  batch_size:\n", 9,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("checkpoint range",
	    MIN "engine:\n  checkpoint_interval_ms: 5\n", 9,
	    "'engine.checkpoint_interval_ms' must be an integer between 10 "
	    "and 86400000");
	expect_err("write_concurrency 0",
	    MIN "engine:\n  write_concurrency: 0\n", 9,
	    "'engine.write_concurrency' must be an integer between 1 and 64");
	expect_err("on_permanent_rejection unknown",
	    MIN "engine:\n  on_permanent_rejection: skip\n", 9,
	    "'engine.on_permanent_rejection' must be one of halt, quarantine");
	expect_err("max_rejects 0", MIN "engine:\n  max_rejects: 0\n", 9,
	    "'engine.max_rejects' must be an integer >= 1");
	expect_err("write_concurrency 65",
	    MIN "engine:\n  write_concurrency: 65\n", 9,
	    "'engine.write_concurrency' must be an integer between 1 and 64");
	expect_err("load_workers 17", SRC "  load_workers: 17\n" TGT SYNC, 3,
	    "'source.load_workers' must be an integer between 1 and 16");
	expect_err("reconnect_max negative", SRC "  reconnect_max: -1\n" TGT
	    SYNC, 3, "'source.reconnect_max' must be an integer >= 0");
	expect_err("bad size unit",
	    MIN "engine:\n  batch_max_bytes: 5XB\n", 9,
	    "'engine.batch_max_bytes' must be a byte count between 1 and "
	    "1073741824, as an integer or a string such as \"5MiB\"");
	expect_err("size too big",
	    MIN "engine:\n  batch_max_bytes: 2GiB\n", 9,
	    "'engine.batch_max_bytes' must be a byte count between 1 and "
	    "1073741824, as an integer or a string such as \"5MiB\"");
	expect_err("missing target.url",
	    SRC "target:\n  username: admin\n" SYNC, 3,
	    "missing required key 'target.url' (or "
	    "'target.url_env', or 'target.urls')");
	expect_err("missing target", SRC SYNC, 1,
	    "missing required key 'target'");
	expect_err("missing sync", SRC TGT, 1, "missing required key 'sync'");
	expect_err("missing source", TGT SYNC, 1,
	    "missing required key 'source'");
	expect_err("empty sync", SRC TGT "\nsync: {}\n", 6,
	    "'sync' must hold at least one section");
	expect_err("missing sync table", SRC TGT "sync:\n  items:\n"
	    "    index: items\n", 6, "missing required key 'sync.items.table'");
	expect_err("missing source url", "source:\n  slot_name: s\n" TGT SYNC,
	    1, "missing required key 'source.url' (or 'source.url_env')");
	expect_err("duplicate key", SRC "  url: postgres://x@y/z\n" TGT SYNC,
	    3, "duplicate key 'source.url'");
	expect_err("duplicate section",
	    MIN "engine:\n  batch_size: 1\nengine:\n  batch_size: 2\n", 10,
	    "duplicate key 'engine'");
	expect_err("duplicate sync section",
	    MIN "  items:\n    table: public.other\n", 8,
	    "duplicate key 'sync.items'");
	expect_err("yaml syntax", SRC TGT "sync:\n  items:\n    table: "
	    "\"items\n    index: x\n", 8,
	    "found unexpected end of stream (while scanning a quoted scalar "
	    "that started on line 7)");
	expect_err("yaml flow syntax", SRC TGT "sync:\n  items: [a\n", 6,
	    "did not find expected ',' or ']'");
	expect_err("syntax before content", "source:\n  url: 5\n  bad: [\n",
	    3, "did not find expected node content");
	expect_err("yaml bad indentation",
	    "source:\n  url: x\n url_env: y\n", 3,
	    "did not find expected key (while parsing a block mapping that "
	    "started on line 1)");
	expect_err("empty file", "", 1, "the configuration is empty");
	expect_err("comments only", "# nothing\n\n", 1,
	    "the configuration is empty");
	expect_err("not a mapping", "- a\n- b\n", 1, "the configuration must "
	    "be a mapping of sections (source, target, sync, ...)");
	expect_err("section not a mapping", "source: postgres://x\n" TGT SYNC,
	    1, "'source' must be a mapping");
	expect_err("url and url_env", SRC "  url_env: X\n" TGT SYNC, 3,
	    "'source.url' and 'source.url_env' cannot both be set");
	unsetenv("P2O_T_UNSET");
	expect_err("url_env unset", "source:\n  url_env: P2O_T_UNSET\n" TGT
	    SYNC, 2, "'source.url_env' names 'P2O_T_UNSET', which is not set");
	setenv("P2O_T_EMPTY", "", 1);
	expect_err("url_env empty", "source:\n  url_env: P2O_T_EMPTY\n" TGT
	    SYNC, 2, "'source.url_env' names 'P2O_T_EMPTY', which is empty");
	expect_err("url_env bad name", "source:\n  url_env: 9LIVES\n" TGT SYNC,
	    2, "'source.url_env' must be the name of an environment variable "
	    "([A-Za-z_][A-Za-z0-9_]*)");
	expect_err("bad source scheme",
	    "source:\n  url: http://u:pw@db/x\n" TGT SYNC, 2,
	    "'source.url' must be a postgres://, postgresql://, mysql:// or "
	    "mariadb:// url, or a key=value conninfo string");
	setenv("P2O_T_BADURL", "https://u:envsecret@db/x", 1);
	expect_err("bad scheme from env",
	    "source:\n  url_env: P2O_T_BADURL\n" TGT SYNC, 2,
	    "'source.url_env': the value of 'P2O_T_BADURL' must be a "
	    "postgres://, postgresql://, mysql:// or mariadb:// url, or a "
	    "key=value conninfo string");
	expect_err("bad slot name", SRC "  slot_name: Bad-Slot\n" TGT SYNC, 3,
	    "'source.slot_name' must be 1 to 63 characters from a-z, 0-9 "
	    "and _");
	expect_err("slot name too long", SRC "  slot_name: "
	    "a234567890123456789012345678901234567890123456789012345678901234"
	    "\n" TGT SYNC, 3, "'source.slot_name' must be 1 to 63 characters "
	    "from a-z, 0-9 and _");
	expect_err("bad sslmode", SRC "  sslmode: always\n" TGT SYNC, 3,
	    "'source.sslmode' must be one of disable, allow, prefer, require, "
	    "verify-ca, verify-full");
	expect_err("sslcert without sslkey", SRC "  sslcert: /c.pem\n" TGT
	    SYNC, 3, "'source.sslcert' and 'source.sslkey' must be set "
	    "together");
	expect_err("columns and exclude_columns", MIN "    columns: [a]\n"
	    "    exclude_columns: [b]\n", 9, "'sync.items.exclude_columns' "
	    "cannot be combined with 'sync.items.columns'");
	expect_err("empty columns", MIN "    columns: []\n", 8,
	    "'sync.items.columns' must be a non-empty list of strings");
	expect_err("columns scalar", MIN "    columns: id\n", 8,
	    "'sync.items.columns' must be a non-empty list of strings");
	expect_err("column twice", MIN "    columns:\n      - id\n      - id\n",
	    10, "'sync.items.columns' lists 'id' twice");
	expect_err("same table twice", MIN "  again:\n    table: items\n", 8,
	    "sync sections 'items' and 'again' both sync table "
	    "'public.items'");
	expect_err("same index twice", MIN "  other:\n    table: other\n"
	    "    index: items\n", 10, "sync sections 'items' and 'other' both "
	    "write index 'items': sections may share an index only when each "
	    "declares 'id'");
	expect_err("bad table", SRC TGT "sync:\n  x:\n    table: a.b.c\n", 7,
	    "'sync.x.table' must be 'schema.table' or 'table'");
	expect_err("index uppercase", MIN "    index: Items\n", 8,
	    "'sync.items.index' must be lowercase");
	expect_err("index leading _", MIN "    index: _items\n", 8,
	    "'sync.items.index' must not start with '_'");
	expect_err("index with *", MIN "    index: \"it*ms\"\n", 8,
	    "'sync.items.index' must not contain '*'");
	expect_err("default index invalid", SRC TGT
	    "sync:\n  items:\n    table: public.Items\n", 6,
	    "'sync.items.index' is not set and the table name 'Items' is not "
	    "a valid index name: it must be lowercase");
	expect_err("mysql unqualified table", "source:\n  url: mysql://u@h/d\n"
	    "  server_id: 5\n" TGT SYNC "  users:\n    table: users\n", 9,
	    "'sync.users.table' must be 'database.table' for a mysql source");
	expect_err("server_id missing", "source:\n  url: mysql://u@h/d\n"
	    TGT "sync:\n  t:\n    table: d.t\n", 1,
	    "missing required key 'source.server_id' for a mysql source");
	expect_err("server_id 0", "source:\n  url: mysql://u@h/d\n"
	    "  server_id: 0\n" TGT "sync:\n  t:\n    table: d.t\n", 3,
	    "'source.server_id' must be an integer between 1 and 4294967295");
	expect_err("server_id 2^32", "source:\n  url: mysql://u@h/d\n"
	    "  server_id: 4294967296\n" TGT "sync:\n  t:\n    table: d.t\n",
	    3, "'source.server_id' must be an integer between 1 and "
	    "4294967295");
	expect_err("server_id negative", "source:\n  url: mysql://u@h/d\n"
	    "  server_id: -1\n" TGT "sync:\n  t:\n    table: d.t\n", 3,
	    "'source.server_id' must be an integer between 1 and 4294967295");
	expect_err("server_id text", "source:\n  url: mysql://u@h/d\n"
	    "  server_id: one\n" TGT "sync:\n  t:\n    table: d.t\n", 3,
	    "'source.server_id' must be an integer between 1 and 4294967295");
	expect_err("server_id for postgresql", SRC "  server_id: 7\n" TGT SYNC,
	    3, "'source.server_id' applies only to a mysql source");
	setenv("P2O_T_MYURL", "mariadb://u@h/d", 1);
	expect_err("slot_name for mysql", "source:\n  url_env: P2O_T_MYURL\n"
	    "  server_id: 9\n  slot_name: s\n" TGT
	    "sync:\n  t:\n    table: d.t\n", 4,
	    "'source.slot_name' applies only to a postgresql source");
	expect_err("publication for mysql", "source:\n  url_env: P2O_T_MYURL\n"
	    "  publication: p\n  server_id: 9\n  slot_name: s\n" TGT
	    "sync:\n  t:\n    table: d.t\n", 3,
	    "'source.publication' applies only to a postgresql source");
	expect_err("slot_failover for mysql", "source:\n  url_env: P2O_T_MYURL\n"
	    "  server_id: 9\n  slot_failover: true\n" TGT
	    "sync:\n  t:\n    table: d.t\n", 4,
	    "'source.slot_failover' applies only to a postgresql source");
	expect_err("slot_failover not a bool", SRC "  slot_failover: yes\n"
	    TGT SYNC, 3, "'source.slot_failover' must be true or false");
	expect_err("load_workers for mysql", "source:\n  url_env: P2O_T_MYURL\n"
	    "  server_id: 9\n  load_workers: 2\n" TGT
	    "sync:\n  t:\n    table: d.t\n", 4,
	    "'source.load_workers' above 1 applies only to a postgresql "
	    "source (a mysql table is read in key order, one chunk after "
	    "another)");
	unsetenv("P2O_T_MYURL");
	expect_err("target scheme", SRC "target:\n  url: ftp://h\n" SYNC, 4,
	    "'target.url' must start with http:// or https://");
	expect_err("target no host", SRC "target:\n  url: http:///x\n" SYNC, 4,
	    "'target.url' must name a host");
	expect_err("target credentials",
	    SRC "target:\n  url: http://a:tsecret@h:9200\n" SYNC, 4,
	    "'target.url' must not hold credentials; use 'target.username' "
	    "and 'target.password_env'");
	expect_err("target serverless", SRC "target:\n  url: "
	    "https://abc.us-east-1.aoss.amazonaws.com\n" SYNC, 4,
	    "'target.url' names Amazon OpenSearch Serverless, which is not "
	    "supported");
	expect_err("password_env unset", SRC TGT "  username: u\n"
	    "  password_env: P2O_T_UNSET\n" SYNC, 6,
	    "'target.password_env' names 'P2O_T_UNSET', which is not set");
	expect_err("password and password_env", SRC TGT "  username: u\n"
	    "  password: x\n  password_env: Y\n" SYNC, 7,
	    "'target.password' and 'target.password_env' cannot both be set");
	expect_err("password without username", SRC TGT "  password: x\n" SYNC,
	    5, "'target.password' needs 'target.username'");
	expect_err("metrics without bind", MIN "metrics: {}\n", 8,
	    "missing required key 'metrics.bind'");
	expect_err("metrics bad bind", MIN "metrics:\n  bind: localhost\n", 9,
	    "'metrics.bind' must be host:port with a port from 1 to 65535 "
	    "(e.g. 127.0.0.1:9187 or [::1]:9187)");
	expect_err("metrics port 0", MIN "metrics:\n  bind: 'h:0'\n", 9,
	    "'metrics.bind' must be host:port with a port from 1 to 65535 "
	    "(e.g. 127.0.0.1:9187 or [::1]:9187)");
	expect_err("alias", "source:\n  url: &u postgres://a@b/c\n" TGT SYNC,
	    2, "anchors and aliases are not supported");
	expect_err("alias use", MIN "engine:\n  batch_size: *x\n", 9,
	    "anchors and aliases are not supported");
	expect_err("tag", MIN "engine:\n  batch_size: !!int 5\n", 9,
	    "tags are not supported");
	expect_err("two documents", MIN "---\nsource: {}\n", 8,
	    "only one yaml document is allowed");
	expect_err("NUL byte", SRC TGT "  username: \"a\\0b\"\n" SYNC, 5,
	    "'target.username' must not contain a NUL byte");
	expect_err("empty string", SRC "  publication: ''\n" TGT SYNC, 3,
	    "'source.publication' must be a non-empty string");
	expect_err("non-scalar key", SRC "  ? [a]\n  : b\n" TGT SYNC, 3,
	    "keys in 'source' must be strings");
	expect_err("bad utf-8", MIN "# \xff\xfe\n", 8,
	    "invalid leading UTF-8 octet");

	snprintf(nofile, sizeof(nofile), "%s/nope.yaml", dir);
	{
		struct config cfg;
		char err[512], want[512];

		snprintf(want, sizeof(want),
		    "%s: No such file or directory", nofile);
		ok(load_path(nofile, &cfg, err, sizeof(err)) == -1,
		    "missing file refused");
		is_str(err, want, "missing file message");
		ok(load_path(dir, &cfg, err, sizeof(err)) == -1,
		    "directory refused");
	}
	unsetenv("P2O_T_EMPTY");
	unsetenv("P2O_T_BADURL");
}

/* run a load with stderr captured; returns what was written there */
static int
load_captured(const char *text, struct config *cfg, char *err,
    size_t errlen, char *out, size_t outlen)
{
	int fds[2], saved, rc;
	ssize_t n;
	size_t len = 0;

	fflush(stderr);
	if (pipe(fds) == -1 || (saved = dup(2)) == -1 ||
	    dup2(fds[1], 2) == -1) {
		perror("pipe");
		exit(2);
	}
	close(fds[1]);
	rc = load(text, cfg, err, errlen);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	/* the write end is closed now, so read runs to EOF */
	while (len + 1 < outlen &&
	    (n = read(fds[0], out + len, outlen - len - 1)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	return rc;
}

static void
test_warnings(void)
{
	struct config cfg;
	char err[512], out[4096], want[256];

	ok(load_captured("source:\n  url: postgres://sync:s3cr3tpw@db/app\n"
	    "target:\n  url: http://h:9200\n  username: admin\n"
	    "  password: hunter2x\n" SYNC, &cfg, err, sizeof(err), out,
	    sizeof(out)) == 0, "inline secrets load");
	snprintf(want, sizeof(want), "%s:2: 'source.url' holds an inline "
	    "password", path);
	ok(strstr(out, want) != NULL, "source url warning names file:line");
	ok(strstr(out, "'source.url_env'") != NULL, "suggests url_env");
	snprintf(want, sizeof(want), "%s:6: 'target.password' is inline",
	    path);
	ok(strstr(out, want) != NULL, "target password warning");
	ok(strstr(out, "s3cr3tpw") == NULL, "source password not printed");
	ok(strstr(out, "hunter2x") == NULL, "target password not printed");
	ok(strstr(out, "warn") != NULL, "through log_warnx");
	is_str(cfg.target_password, "hunter2x", "inline password still works");
	config_release(&cfg);

	ok(load_captured("source:\n  url: postgres://db/app?sslmode=require"
	    "&password=qpw99\n" TGT SYNC, &cfg, err, sizeof(err), out,
	    sizeof(out)) == 0 && strstr(out, "inline password") &&
	    !strstr(out, "qpw99"), "query password warns, not printed");
	config_release(&cfg);

	ok(load_captured("source:\n  url: host=db password = 'kpw77'\n" TGT
	    SYNC, &cfg, err, sizeof(err), out, sizeof(out)) == 0 &&
	    strstr(out, "inline password") && !strstr(out, "kpw77"),
	    "conninfo password warns, not printed");
	config_release(&cfg);

	setenv("P2O_T_URL", "postgres://sync:envpw@db/app", 1);
	ok(load_captured("source:\n  url_env: P2O_T_URL\n" TGT SYNC, &cfg, err,
	    sizeof(err), out, sizeof(out)) == 0 && out[0] == '\0',
	    "password from the environment: no warning");
	config_release(&cfg);
	unsetenv("P2O_T_URL");

	ok(load_captured(MIN, &cfg, err, sizeof(err), out, sizeof(out)) == 0 &&
	    out[0] == '\0', "no secret: no warning");
	config_release(&cfg);

	/* a failed load warns about nothing, and its error holds no secret */
	ok(load_captured("source:\n  url: postgres://u:zzpw@db/app\n" SYNC,
	    &cfg, err, sizeof(err), out, sizeof(out)) == -1 &&
	    out[0] == '\0' && !strstr(err, "zzpw"),
	    "failed load: no warning, no password in error");
	ok(load_captured("source:\n  url: ftp://u:zzpw@db/app\n" TGT SYNC,
	    &cfg, err, sizeof(err), out, sizeof(out)) == -1 &&
	    !strstr(err, "zzpw"), "bad url error does not quote the url");
	setenv("P2O_T_BADURL", "https://u:envsecret@db/x", 1);
	ok(load_captured("source:\n  url_env: P2O_T_BADURL\n" TGT SYNC,
	    &cfg, err, sizeof(err), out, sizeof(out)) == -1 &&
	    !strstr(err, "envsecret") && !strstr(out, "envsecret"),
	    "bad env url error does not quote the value");
	unsetenv("P2O_T_BADURL");
}

/* the path and line rules, through the real sections */
static void
test_paths(void)
{
	struct config cfg;
	char err[512];

	expect_err("dotted section name", SRC TGT "sync:\n  \"a.b\":\n"
	    "    table: t\n    tabel: x\n", 8,
	    "unknown key 'sync[\"a.b\"].tabel'");
	expect_err("quote in a section name", SRC TGT "sync:\n  'x\"y':\n"
	    "    table: t\n    index: X\n", 8,
	    "'sync[\"x\\\"y\"].index' must be lowercase");
	/* "sync.a.columns" must not be mistaken for a's columns */
	ok(load(SRC TGT "sync:\n  a.columns:\n    table: t1\n"
	    "  a:\n    table: t2\n    exclude_columns: [x]\n", &cfg, err,
	    sizeof(err)) == 0, "a section named like another's key: %s",
	    err);
	config_release(&cfg);
	expect_err("mysql table, dotted section", "source:\n"
	    "  url: mysql://u@h/d\n  server_id: 5\n" TGT
	    "sync:\n  d.t:\n    table: t\n", 7,
	    "'sync[\"d.t\"].table' must be 'database.table' for a mysql "
	    "source");
	/* a value's own problem comes before any rule between keys, even
	 * when the rule's line is earlier */
	unsetenv("P2O_T_UNSET");
	expect_err("values before rules", "source:\n  url_env: P2O_T_UNSET\n"
	    TGT SYNC "engine:\n  batch_size: 0\n", 9,
	    "'engine.batch_size' must be an integer >= 1");
	expect_err("rules in file order", SRC TGT "  password: x\n"
	    "sync:\n  items:\n    table: items\n    columns: [a]\n"
	    "    exclude_columns: [b]\n", 5,
	    "'target.password' needs 'target.username'");
	expect_err("list element in a message", MIN "    columns: [a, [b]]\n",
	    8, "'sync.items.columns[1]' must be a non-empty string");
	expect_err("null list element", MIN "    columns:\n      - a\n"
	    "      -\n", 10, "'sync.items.columns[1]' must be a non-empty "
	    "string");
	expect_err("null top-level key", MIN "~: 1\n", 8,
	    "keys must be strings");
	expect_err("empty sync section name", SRC TGT "sync:\n  '':\n"
	    "    table: t\n", 6, "keys in 'sync' must be non-empty strings");
	expect_err("sync section not a mapping", SRC TGT "sync:\n  items: t\n",
	    6, "'sync.items' must be a mapping");
	expect_err("sync a list", SRC TGT "sync:\n  - table: t\n", 6,
	    "'sync' must be a mapping of sections, one per table");
}

/*
 * A table of every nested kind, compiled only into this test:
 *
 *   items:                      map of name -> struct item
 *     a:
 *       tags: [x, y]            list of strings, distinct, checked
 *       fields: {email: mail}   map of name -> checked string
 *       children:               list of struct child
 *         - table: t            required, checked
 *           weight: 2           int 1..9, default 1
 *       opts:                   struct in the item, with defaults
 *         on: true              boolean, default true
 *         id: 7                 unsigned long 1..4294967295
 *         mode: fast            enum, default safe
 *         cap: 2KiB             byte size, default 1KiB
 */
struct t_field {
	char	*name;
	char	*value;
	int	 line;
};

struct t_child {
	char	*table;
	int	 weight;
	int	 line;
};

struct t_opts {
	int	 on;
	unsigned long id;
	char	*mode;
	size_t	 cap;
};

struct t_item {
	char	*name;
	int	 line;
	char	**tags;
	int	 ntags;
	struct t_field *fields;
	int	 nfields;
	struct t_child *children;
	int	 nchildren;
	struct t_opts opts;
};

struct t_doc {
	struct t_item *items;
	int	 nitems;
	int	 finished;	/* how many times the root's rule ran */
};

static int
t_lower(const char *s, char *why, size_t len)
{
	if (s[strspn(s, "abcdefghijklmnopqrstuvwxyz")] != '\0') {
		snprintf(why, len, "must be lowercase letters");
		return -1;
	}
	return 0;
}

#define FLD(f)	offsetof(struct t_field, f)
#define CHL(f)	offsetof(struct t_child, f)
#define OPT(f)	offsetof(struct t_opts, f)
#define ITM(f)	offsetof(struct t_item, f)

static const char *const t_modes[] = { "fast", "safe", NULL };

static const struct cs_node t_tag = { NULL, CS_STR, .check = t_lower };
static const struct cs_node t_value = { NULL, CS_STR, FLD(value),
	.check = t_lower };

static const struct cs_node t_child_keys[] = {
	{ "table", CS_STR, CHL(table), .required = 1, .check = t_lower },
	{ "weight", CS_INT, CHL(weight), .def = "1", .min = 1, .max = 9 },
	{ NULL }
};
static const struct cs_node t_child = { NULL, CS_STRUCT,
	.keys = t_child_keys };

static const struct cs_node t_opts_keys[] = {
	{ "on", CS_BOOL, OPT(on), .def = "true" },
	{ "id", CS_ULONG, OPT(id), .min = 1, .max = 4294967295LL },
	{ "mode", CS_ENUM, OPT(mode), .def = "safe", .choices = t_modes },
	{ "cap", CS_SIZE, OPT(cap), .def = "1KiB", .min = 1, .max = 1 << 20 },
	{ NULL }
};

/* two children may not name one table: the message points at the
 * second one's table key, found by its path */
static int
t_item_finish(struct cs_walk *w, void *base, const char *at, int line)
{
	const struct t_item *it = base;
	int i, j;

	for (i = 0; i < it->nchildren; i++)
		for (j = 0; j < i; j++)
			if (strcmp(it->children[i].table,
			    it->children[j].table) == 0)
				return cs_err(w, cs_line(w,
				    "%s.children[%d].table", at, i),
				    "'%s.children[%d].table' repeats "
				    "'%s.children[%d].table'", at, i, at, j);
	return 0;
}

static const struct cs_node t_item_keys[] = {
	{ "tags", CS_LIST, ITM(tags), .elem = &t_tag,
	    .elem_size = sizeof(char *), .count_off = ITM(ntags),
	    .distinct = 1 },
	{ "fields", CS_MAP, ITM(fields), .elem = &t_value,
	    .elem_size = sizeof(struct t_field), .count_off = ITM(nfields),
	    .name_off = FLD(name), .has_line = 1, .line_off = FLD(line) },
	{ "children", CS_LIST, ITM(children), .elem = &t_child,
	    .elem_size = sizeof(struct t_child), .count_off = ITM(nchildren),
	    .has_line = 1, .line_off = CHL(line) },
	{ "opts", CS_STRUCT, ITM(opts), .keys = t_opts_keys },
	{ NULL }
};
static const struct cs_node t_item = { NULL, CS_STRUCT,
	.keys = t_item_keys, .finish = t_item_finish };

static int
t_doc_finish(struct cs_walk *w, void *base, const char *at, int line)
{
	((struct t_doc *)base)->finished++;
	return 0;
}

static const struct cs_node t_doc_keys[] = {
	{ "items", CS_MAP, offsetof(struct t_doc, items), .required = 1,
	    .elem = &t_item, .elem_size = sizeof(struct t_item),
	    .count_off = offsetof(struct t_doc, nitems),
	    .name_off = ITM(name), .has_line = 1, .line_off = ITM(line) },
	{ NULL }
};
static const struct cs_node t_doc = { NULL, CS_STRUCT, .keys = t_doc_keys,
	.finish = t_doc_finish };

static int
t_load(const char *text, struct t_doc *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	return cs_load(&t_doc, d, "t.yaml", text, strlen(text), err, errlen);
}

static void
t_expect(const char *what, const char *text, int line, const char *msg)
{
	struct t_doc d;
	char err[512], want[512];

	snprintf(want, sizeof(want), "t.yaml:%d: %s", line, msg);
	if (t_load(text, &d, err, sizeof(err)) == 0)
		ok(0, "%s: refused", what);
	else
		is_str(err, want, "%s", what);
	cs_release(&t_doc, &d);
	ok(d.items == NULL && d.nitems == 0, "%s: released", what);
}

static void
test_schema_valid(void)
{
	const char *text =
	    "items:\n"					/* 1 */
	    "  a:\n"
	    "    tags: [x, y]\n"
	    "    fields:\n"
	    "      email: mail\n"				/* 5 */
	    "      'a.b': c\n"
	    "    children:\n"
	    "      - table: t\n"
	    "        weight: 9\n"
	    "      -\n"					/* 10 */
	    "        table: u\n"
	    "    opts:\n"
	    "      on: false\n"
	    "      id: 4294967295\n"
	    "      mode: fast\n"				/* 15 */
	    "      cap: 2KiB\n"
	    "  b: {children: [{table: v}]}\n";
	struct t_doc d;
	struct t_item *a, *b;
	char err[512];

	if (!ok(t_load(text, &d, err, sizeof(err)) == 0, "nested kinds load"))
		printf("# %s\n", err);
	is_int(d.nitems, 2, "map of structs: two items");
	is_int(d.finished, 1, "the root's rule ran once");
	a = &d.items[0];
	b = &d.items[1];
	is_str(a->name, "a", "map element name");
	is_int(a->line, 2, "map element line");
	is_int(a->ntags, 2, "list of strings");
	is_str(a->tags[1], "y", "list order");
	is_int(a->nfields, 2, "map of strings");
	is_str(a->fields[0].name, "email", "map of strings: name");
	is_str(a->fields[0].value, "mail", "map of strings: value");
	is_int(a->fields[1].line, 6, "map of strings: line");
	is_str(a->fields[1].name, "a.b", "a dotted name is kept as written");
	is_int(a->nchildren, 2, "list of structs");
	is_str(a->children[1].table, "u", "list of structs: value");
	is_int(a->children[0].weight, 9, "list of structs: int");
	is_int(a->children[1].weight, 1, "list element default");
	/* where the element's content starts, not its "-" */
	is_int(a->children[1].line, 11, "list element line");
	is_int(a->opts.on, 0, "boolean false");
	ok(a->opts.id == 4294967295UL, "unsigned 32-bit maximum");
	is_str(a->opts.mode, "fast", "enum");
	is_int(a->opts.cap, 2048, "byte size");
	is_str(b->name, "b", "flow-style item");
	is_int(b->nchildren, 1, "flow-style list of structs");
	is_int(b->opts.on, 1, "absent struct: boolean default");
	is_str(b->opts.mode, "safe", "absent struct: enum default");
	is_int(b->opts.cap, 1024, "absent struct: size default");
	ok(b->tags == NULL && b->fields == NULL, "absent list and map: NULL");
	cs_release(&t_doc, &d);
	ok(d.items == NULL && d.nitems == 0, "release zeroes");

	ok(t_load("items:\n  a:\n    opts: {on: \"true\"}\n", &d, err,
	    sizeof(err)) == 0 && d.items[0].opts.on == 1,
	    "quoted true is true");
	cs_release(&t_doc, &d);
}

/* what, document, line, message */
static const struct t_case {
	const char	*what;
	const char	*text;
	int		 line;
	const char	*msg;
} t_cases[] = {
	/* map of name -> struct */
	{ "items scalar", "items: x\n", 1, "'items' must be a mapping" },
	{ "items list", "items:\n  - a\n", 2, "'items' must be a mapping" },
	{ "items empty", "items: {}\n", 1,
	    "'items' must hold at least one entry" },
	{ "item scalar", "items:\n  a: x\n", 2,
	    "'items.a' must be a mapping" },
	{ "item list", "items:\n  a:\n    - x\n", 3,
	    "'items.a' must be a mapping" },
	{ "unknown key in an item", "items:\n  a:\n    tagz: [x]\n", 3,
	    "unknown key 'items.a.tagz'" },
	{ "duplicate item", "items:\n  a: {}\n  b: {}\n  a: {}\n", 4,
	    "duplicate key 'items.a'" },
	{ "duplicate key in an item",
	    "items:\n  a:\n    tags: [x]\n    tags: [y]\n", 4,
	    "duplicate key 'items.a.tags'" },
	{ "item key not a string", "items:\n  [a]: {}\n", 2,
	    "keys in 'items' must be non-empty strings" },
	{ "items missing", "other: 1\n", 1, "unknown key 'other'" },
	{ "items required", "{}\n", 1, "missing required key 'items'" },

	/* list of strings */
	{ "tags scalar", "items:\n  a:\n    tags: x\n", 3,
	    "'items.a.tags' must be a non-empty list of strings" },
	{ "tags mapping", "items:\n  a:\n    tags: {x: 1}\n", 3,
	    "'items.a.tags' must be a non-empty list of strings" },
	{ "tags empty", "items:\n  a:\n    tags: []\n", 3,
	    "'items.a.tags' must be a non-empty list of strings" },
	{ "tag a mapping", "items:\n  a:\n    tags:\n      - x\n"
	    "      - {y: 1}\n", 5, "'items.a.tags[1]' must be a non-empty "
	    "string" },
	{ "tag twice", "items:\n  a:\n    tags:\n      - x\n"
	    "      - y\n      - x\n", 6, "'items.a.tags' lists 'x' twice" },
	{ "tag refused by its check", "items:\n  a:\n"
	    "    tags: [x, Y]\n", 3,
	    "'items.a.tags[1]' must be lowercase letters" },

	/* map of name -> string */
	{ "fields scalar", "items:\n  a:\n    fields: x\n", 3,
	    "'items.a.fields' must be a mapping" },
	{ "fields list", "items:\n  a:\n    fields: [x]\n", 3,
	    "'items.a.fields' must be a mapping" },
	{ "fields empty", "items:\n  a:\n    fields: {}\n", 3,
	    "'items.a.fields' must hold at least one entry" },
	{ "field value a mapping", "items:\n  a:\n    fields:\n"
	    "      email:\n        x: y\n", 5,
	    "'items.a.fields.email' must be a non-empty string" },
	{ "field value a list", "items:\n  a:\n    fields:\n"
	    "      email: [x]\n", 4,
	    "'items.a.fields.email' must be a non-empty string" },
	{ "field value null", "items:\n  a:\n    fields:\n"
	    "      email:\n", 4,
	    "'items.a.fields.email' must be a non-empty string" },
	{ "duplicate field", "items:\n  a:\n    fields:\n"
	    "      email: x\n      name: y\n      email: z\n", 6,
	    "duplicate key 'items.a.fields.email'" },
	{ "field refused by its check", "items:\n  a:\n    fields:\n"
	    "      email: Mail\n", 4,
	    "'items.a.fields.email' must be lowercase letters" },
	{ "dotted field refused", "items:\n  a:\n    fields:\n"
	    "      a.b: C\n", 4,
	    "'items.a.fields[\"a.b\"]' must be lowercase letters" },
	{ "field with a NUL", "items:\n  a:\n    fields:\n"
	    "      x: \"a\\0b\"\n", 4,
	    "'items.a.fields.x' must not contain a NUL byte" },

	/* list of structs */
	{ "children scalar", "items:\n  a:\n    children: x\n", 3,
	    "'items.a.children' must be a non-empty list of mappings" },
	{ "children a mapping", "items:\n  a:\n    children:\n"
	    "      table: t\n", 4,
	    "'items.a.children' must be a non-empty list of mappings" },
	{ "child scalar", "items:\n  a:\n    children:\n"
	    "      - table: t\n      - t\n", 5,
	    "'items.a.children[1]' must be a mapping" },
	{ "unknown key in a child", "items:\n  a:\n    children:\n"
	    "      - table: t\n      - table: u\n        tabel: v\n", 6,
	    "unknown key 'items.a.children[1].tabel'" },
	{ "missing required key in a child", "items:\n  a:\n"
	    "    children:\n      - table: t\n      - weight: 2\n", 5,
	    "missing required key 'items.a.children[1].table'" },
	{ "missing key in a block child", "items:\n  a:\n"
	    "    children:\n      -\n        weight: 2\n", 5,
	    "missing required key 'items.a.children[0].table'" },
	{ "duplicate key in a child", "items:\n  a:\n"
	    "    children:\n      - table: t\n        table: u\n", 5,
	    "duplicate key 'items.a.children[0].table'" },
	{ "child refused by its check", "items:\n  a:\n"
	    "    children:\n      - table: T\n", 4,
	    "'items.a.children[0].table' must be lowercase letters" },
	{ "child int out of range", "items:\n  a:\n"
	    "    children:\n      - table: t\n        weight: 10\n", 5,
	    "'items.a.children[0].weight' must be an integer between 1 and "
	    "9" },
	{ "finish rule points at the key", "items:\n  a:\n"
	    "    children:\n      - table: t\n      - table: u\n"
	    "      - weight: 2\n        table: t\n", 7,
	    "'items.a.children[2].table' repeats 'items.a.children[0].table'" },

	/* struct in a struct, and its scalars */
	{ "opts scalar", "items:\n  a:\n    opts: x\n", 3,
	    "'items.a.opts' must be a mapping" },
	{ "opts list", "items:\n  a:\n    opts: [x]\n", 3,
	    "'items.a.opts' must be a mapping" },
	{ "unknown key in opts", "items:\n  a:\n    opts:\n"
	    "      of: true\n", 4, "unknown key 'items.a.opts.of'" },
	{ "boolean yes", "items:\n  a:\n    opts: {on: yes}\n", 3,
	    "'items.a.opts.on' must be true or false" },
	{ "boolean True", "items:\n  a:\n    opts: {on: True}\n", 3,
	    "'items.a.opts.on' must be true or false" },
	{ "boolean 1", "items:\n  a:\n    opts: {on: 1}\n", 3,
	    "'items.a.opts.on' must be true or false" },
	{ "boolean a list", "items:\n  a:\n    opts:\n      on:\n"
	    "        - true\n", 5, "'items.a.opts.on' must be true or false" },
	{ "unsigned 0", "items:\n  a:\n    opts: {id: 0}\n", 3,
	    "'items.a.opts.id' must be an integer between 1 and 4294967295" },
	{ "unsigned 2^32", "items:\n  a:\n    opts: {id: 4294967296}\n",
	    3, "'items.a.opts.id' must be an integer between 1 and "
	    "4294967295" },
	{ "enum", "items:\n  a:\n    opts: {mode: slow}\n", 3,
	    "'items.a.opts.mode' must be one of fast, safe" },
	{ "size", "items:\n  a:\n    opts: {cap: 2MiB}\n", 3,
	    "'items.a.opts.cap' must be a byte count between 1 and 1048576, "
	    "as an integer or a string such as \"5MiB\"" },

	/* the top */
	{ "top scalar", "x\n", 1, "the configuration must be a mapping" },
	{ "top empty", "\n", 1, "the configuration is empty" },
	{ "syntax first", "items:\n  a: {tagz: 1}\n  b: [\n", 3,
	    "did not find expected node content" },
	{ "alias before content", "items:\n  a: {tagz: 1}\n"
	    "  b: *x\n", 3, "anchors and aliases are not supported" },
};

static void
test_schema_errors(void)
{
	size_t i;

	for (i = 0; i < sizeof(t_cases) / sizeof(t_cases[0]); i++)
		t_expect(t_cases[i].what, t_cases[i].text, t_cases[i].line,
		    t_cases[i].msg);
}

static void
test_mem(void)
{
	struct config cfg;
	char err[512];
	const char text[] = MIN;

	ok(config_load_mem("mem.yaml", text, sizeof(text) - 1, &cfg, err,
	    sizeof(err)) == 0 && cfg.nsyncs == 1, "config_load_mem");
	config_release(&cfg);
	ok(config_load_mem("mem.yaml", text, 20, &cfg, err, sizeof(err)) == -1,
	    "config_load_mem honours len");
	ok(strncmp(err, "mem.yaml:", 9) == 0, "name used in messages: %s",
	    err);
}

/*
 * Each program resolves only the secrets it uses: a file whose url_env and
 * password_env name variables that are not set loads for a program that
 * asks for neither, and the kind of source comes from the keys then.
 */
static void
test_secrets(void)
{
	static const char env_pg[] = "source:\n  url_env: P2O_T_NOSRC\n"
	    "target:\n  url: http://127.0.0.1:9200\n  username: u\n"
	    "  password_env: P2O_T_NOPW\nsync:\n  items:\n    table: items\n";
	static const char env_my[] = "source:\n  url_env: P2O_T_NOSRC\n"
	    "  server_id: 7\ntarget:\n  url: http://127.0.0.1:9200\n"
	    "sync:\n  items:\n    table: shop.items\n";
	struct config cfg;
	struct p2o_err e;
	char want[512];

	unsetenv("P2O_T_NOSRC");
	unsetenv("P2O_T_NOPW");
	write_file(env_pg);
	ok(config_load_with(path, CONFIG_SECRETS_NONE, &cfg, &e) == 0 &&
	    cfg.source_url == NULL && cfg.target_password == NULL &&
	    cfg.secrets == CONFIG_SECRETS_NONE, "no secret asked for: the "
	    "file loads without the variables set (%s)", e.msg);
	ok(strcmp(cfg.source->kind, "postgres") == 0 && cfg.nsyncs == 1 &&
	    strcmp(cfg.syncs[0].rel, "public.items") == 0 &&
	    strcmp(cfg.slot_name, "pg2osync") == 0,
	    "without the url, no server_id: a postgresql source (tables in "
	    "'public', the default slot)");
	ok(strcmp(cfg.source_url_env, "P2O_T_NOSRC") == 0 &&
	    strcmp(cfg.target_password_env, "P2O_T_NOPW") == 0,
	    "the variables' names are kept, for messages");
	config_release(&cfg);

	snprintf(want, sizeof(want), "%s:2: 'source.url_env' names "
	    "'P2O_T_NOSRC', which is not set", path);
	ok(config_load_with(path, CONFIG_SECRET_SOURCE, &cfg, &e) == -1 &&
	    e.code == P2O_EXIT_CONFIG && strcmp(e.msg, want) == 0,
	    "the source's secret asked for: refused, exit code 78: %s", e.msg);
	snprintf(want, sizeof(want), "%s:6: 'target.password_env' names "
	    "'P2O_T_NOPW', which is not set", path);
	ok(config_load_with(path, CONFIG_SECRET_TARGET, &cfg, &e) == -1 &&
	    strcmp(e.msg, want) == 0, "the target's: refused for its own "
	    "variable, the source's not needed: %s", e.msg);

	setenv("P2O_T_NOPW", "hunter2x", 1);
	ok(config_load_with(path, CONFIG_SECRET_TARGET, &cfg, &e) == 0 &&
	    cfg.target_password && strcmp(cfg.target_password, "hunter2x") == 0
	    && cfg.source_url == NULL, "the target's secret alone: the "
	    "writer's and ckpt's view");
	config_release(&cfg);
	setenv("P2O_T_NOSRC", "postgres://u:pw@db/app", 1);
	ok(config_load_with(path, CONFIG_SECRET_SOURCE, &cfg, &e) == 0 &&
	    cfg.source_url && cfg.target_password == NULL &&
	    strcmp(cfg.source->kind, "postgres") == 0, "the source's alone: the "
	    "captures' and the loader's view");
	config_release(&cfg);
	ok(config_load_with(path, CONFIG_SECRETS_ALL, &cfg, &e) == 0 &&
	    cfg.source_url && cfg.target_password &&
	    cfg.secrets == CONFIG_SECRETS_ALL, "both: the supervisor's check");
	config_release(&cfg);
	unsetenv("P2O_T_NOPW");
	ok(load(env_pg, &cfg, want, sizeof(want)) == -1 &&
	    strstr(want, "'P2O_T_NOPW', which is not set"),
	    "every secret asked for: each one needed");

	write_file(env_my);
	unsetenv("P2O_T_NOSRC");
	ok(config_load_with(path, CONFIG_SECRETS_NONE, &cfg, &e) == 0 &&
	    strcmp(cfg.source->kind, "mysql") == 0 && cfg.server_id == 7 &&
	    cfg.slot_name == NULL, "without the url, server_id names a mysql "
	    "source: %s", e.msg);
	config_release(&cfg);
	write_file("source:\n  url_env: P2O_T_NOSRC\n  server_id: 7\n"
	    "  slot_name: s\n" TGT SYNC);
	snprintf(want, sizeof(want), "%s:4: 'source.slot_name' applies only "
	    "to a postgresql source", path);
	ok(config_load_with(path, CONFIG_SECRETS_NONE, &cfg, &e) == -1 &&
	    strcmp(e.msg, want) == 0, "and the keys of the other kind are "
	    "refused as with the url: %s", e.msg);
	write_file("source:\n  url_env: P2O_T_NOSRC\n  server_id: 7\n"
	    TGT "sync:\n  items:\n    table: items\n");
	ok(config_load_with(path, CONFIG_SECRETS_NONE, &cfg, &e) == -1 &&
	    strstr(e.msg, "must be 'database.table' for a mysql source"),
	    "a mysql table still needs its database: %s", e.msg);
	ok(config_load_with("/nonexistent/x.yaml", CONFIG_SECRETS_NONE, &cfg,
	    &e) == -1 && e.code == P2O_EXIT_CONFIG &&
	    strstr(e.msg, "No such file"), "a missing file: %s", e.msg);

	/* the secrets no key table holds (an API key, the listeners'
	 * tokens): resolved, then freed by config_release - the sanitizer
	 * build's leak check fails this file when they are not */
	setenv("P2O_T_NOSRC", "postgres://u:pw@db/app", 1);
	setenv("P2O_T_KEY", "a-master-key-of-31-bytes-length", 1);
	setenv("P2O_T_MTOK", "metrics-token", 1);
	setenv("P2O_T_ATOK", "api-token", 1);
	write_file("source:\n  url_env: P2O_T_NOSRC\n"
	    "target:\n  url: http://127.0.0.1:7700\n  flavor: meilisearch\n"
	    "  api_key_env: P2O_T_KEY\n  state_dir: /tmp\n"
	    "sync:\n  items:\n    table: items\n"
	    "metrics:\n  bind: 127.0.0.1:9187\n  token_env: P2O_T_MTOK\n"
	    "api:\n  bind: 127.0.0.1:9188\n  token_env: P2O_T_ATOK\n");
	if (!ok(config_load_with(path, CONFIG_SECRETS_ALL |
	    CONFIG_SECRET_LISTEN, &cfg, &e) == 0 && cfg.target_api_key && strcmp(cfg.target_api_key,
	    "a-master-key-of-31-bytes-length") == 0 && cfg.metrics_token &&
	    strcmp(cfg.metrics_token, "metrics-token") == 0 && cfg.api_token &&
	    strcmp(cfg.api_token, "api-token") == 0, "api_key_env and both "
	    "token_env resolved", e.msg))
		printf("# %s\n", e.msg);
	config_release(&cfg);
	unsetenv("P2O_T_NOSRC");
	unsetenv("P2O_T_KEY");
	unsetenv("P2O_T_MTOK");
	unsetenv("P2O_T_ATOK");
}

/* sync.<name>.children and .aggregates: what loads, and every refusal */
#define CUST	SRC TGT "sync:\n  customers:\n    table: customers\n"
/* lines: sync 5, customers 6, table 7: a key appended is on line 8 */

static const struct {
	const char *what, *text;
	int line;
	const char *msg;
} nest_errors[] = {
	{ "a child without foreign_key", CUST "    children:\n"
	    "      - {table: orders, field: orders}\n", 9,
	    "missing required key "
	    "'sync.customers.children[0].foreign_key'" },
	{ "flatten without single", CUST "    children:\n"
	    "      - {table: profiles, field: p, foreign_key: cid, "
	    "flatten: true, columns: [bio]}\n", 9,
	    "'sync.customers.children[0].flatten' needs 'single': only one "
	    "row's columns can be lifted onto the parent" },
	{ "flatten without columns", CUST "    children:\n"
	    "      - {table: profiles, field: p, foreign_key: cid, "
	    "single: true, flatten: true}\n", 9,
	    "'sync.customers.children[0].flatten' needs 'columns': the "
	    "names it lifts onto the parent must be known here, to be "
	    "checked against the parent's" },
	{ "single through a junction", CUST "    children:\n"
	    "      - {table: tags, field: tag, foreign_key: cid, single: true, "
	    "through: ct, through_key: tid}\n", 9,
	    "'sync.customers.children[0].single' needs a child key naming "
	    "the parent: through a junction a child has many parents" },
	{ "through without through_key", CUST "    children:\n"
	    "      - {table: tags, field: tags, foreign_key: cid, "
	    "through: ct}\n", 9,
	    "'sync.customers.children[0]': 'through' and 'through_key' go "
	    "together (the junction table and its column naming the "
	    "child's key)" },
	{ "single with max_rows", CUST "    children:\n"
	    "      - {table: p, field: p, foreign_key: cid, single: true, "
	    "max_rows: 3}\n", 9,
	    "'sync.customers.children[0]': 'single' cannot be combined "
	    "with 'max_rows'" },
	{ "max_rows 0", CUST "    children:\n"
	    "      - {table: p, field: p, foreign_key: cid, max_rows: 0}\n", 9,
	    "'sync.customers.children[0].max_rows' must be an integer "
	    "between 1 and 1000000" },
	{ "a second level", CUST "    children:\n"
	    "      - table: orders\n        field: orders\n"
	    "        foreign_key: cid\n        children:\n"
	    "          - {table: lines, field: lines, foreign_key: oid}\n", 12,
	    "'sync.customers.children[0].children': nested children stay "
	    "one level deep; shape anything deeper in the database" },
	{ "children on append_only", CUST "    append_only: true\n"
	    "    children:\n"
	    "      - {table: orders, field: orders, foreign_key: cid}\n", 10,
	    "'sync.customers': an append_only section cannot embed children "
	    "or aggregates: its documents have no key a child could name" },
	{ "children on fan_out", CUST
	    "    fan_out: {column: t, id: \"{t}\"}\n"
	    "    aggregates:\n"
	    "      - {field: n, table: t, foreign_key: cid, op: count}\n", 10,
	    "'sync.customers': a fan_out section cannot embed children or "
	    "aggregates: one row is many documents, and a child change "
	    "would have to rewrite each" },
	{ "a child field on a kept column", CUST "    columns: [id, orders]\n"
	    "    children:\n"
	    "      - {table: orders, field: orders, foreign_key: cid}\n", 10,
	    "'sync.customers' puts 'orders' on the documents, which is the "
	    "name of a column the documents keep" },
	{ "a child field on a rename", CUST "    fields: {name: orders}\n"
	    "    children:\n"
	    "      - {table: orders, field: orders, foreign_key: cid}\n", 10,
	    "'sync.customers' puts 'orders' on the documents, which is the "
	    "name of a rename (fields)" },
	{ "an aggregate on a constant", CUST "    constants: {n: x}\n"
	    "    aggregates:\n"
	    "      - {field: n, table: t, foreign_key: cid, op: count}\n", 10,
	    "'sync.customers' puts 'n' on the documents, which is the name "
	    "of a constant" },
	{ "a child and an aggregate on one name", CUST "    children:\n"
	    "      - {table: orders, field: orders, foreign_key: cid}\n"
	    "    aggregates:\n"
	    "      - {field: orders, table: t, foreign_key: cid, op: count}\n",
	    11, "'sync.customers' puts 'orders' on the documents twice (two "
	    "children or aggregates name it)" },
	{ "max_rows' _total on another child", CUST "    children:\n"
	    "      - {table: o, field: o, foreign_key: cid, max_rows: 5}\n"
	    "      - {table: p, field: o_total, foreign_key: cid}\n", 10,
	    "'sync.customers' puts 'o_total' on the documents twice (two "
	    "children or aggregates name it)" },
	{ "a flattened column on a constant", CUST "    constants: {bio: x}\n"
	    "    children:\n"
	    "      - {table: p, field: p, foreign_key: cid, single: true, "
	    "flatten: true, columns: [bio]}\n", 10,
	    "'sync.customers' puts 'bio' on the documents, which is the name "
	    "of a constant" },
	{ "an unknown op", CUST "    aggregates:\n"
	    "      - {field: n, table: t, foreign_key: cid, op: sum}\n", 9,
	    "'sync.customers.aggregates[0].op' must be one of count" },
	{ "a bad aggregate where", CUST "    aggregates:\n"
	    "      - {field: n, table: t, foreign_key: cid, op: count, "
	    "where: \"status =\"}\n", 9,
	    NULL },
	{ "a child rename of a dropped column", CUST "    children:\n"
	    "      - {table: o, field: o, foreign_key: cid, columns: [id], "
	    "fields: {total: amount}}\n", 9,
	    "'sync.customers.children[0].fields.total': column 'total' is "
	    "not in the embedded rows (columns drops it)" },
	{ "a mysql child without its database", "source:\n  url: "
	    "mysql://u@db/app\n  server_id: 7\n" TGT "sync:\n  customers:\n"
	    "    table: app.customers\n    children:\n"
	    "      - {table: orders, field: o, foreign_key: cid}\n", 10,
	    "'sync.customers.children[0].table' must be 'database.table' for "
	    "a mysql source" },
	{ "the section's own table", CUST "    children:\n"
	    "      - {table: public.customers, field: o, foreign_key: cid}\n",
	    9, "'sync.customers.children[0].table' is the section's own "
	    "table: a table cannot be its own child" },
};

static void
test_nest(void)
{
	const char *text = CUST
	    "    columns: [id, name]\n"
	    "    children:\n"
	    "      - table: shop.orders\n"
	    "        field: orders\n"
	    "        foreign_key: customer_id\n"
	    "        columns: [id, total]\n"
	    "        fields: {total: amount}\n"
	    "        max_rows: 50\n"
	    "      - table: profiles\n"
	    "        field: profile\n"
	    "        foreign_key: customer_id\n"
	    "        single: true\n"
	    "      - table: tags\n"
	    "        field: tags\n"
	    "        through: customer_tags\n"
	    "        foreign_key: customer_id\n"
	    "        through_key: tag_id\n"
	    "    aggregates:\n"
	    "      - {field: open_tickets, table: tickets, foreign_key: "
	    "customer_id, op: count, where: \"status = 'open'\"}\n";
	const struct sync_section *s;
	struct config cfg;
	char err[512];
	size_t i;

	if (!ok(load(text, &cfg, err, sizeof(err)) == 0, "children load"))
		printf("# %s\n", err);
	else {
		s = &cfg.syncs[0];
		is_int(s->more->nchildren, 3, "three children");
		is_str(s->more->children[0].rel, "shop.orders",
		    "a schema kept");
		is_str(s->more->children[1].rel, "public.profiles",
		    "a child's schema defaults as a section's");
		is_int(s->more->children[0].max_rows, 50, "max_rows");
		is_int(s->more->children[0].line, 10, "a child's line");
		ok(s->more->children[1].single && !s->more->children[1].flatten,
		    "single");
		is_str(s->more->children[2].through_rel, "public.customer_tags",
		    "a junction's schema");
		is_str(s->more->children[2].through_key, "tag_id",
		    "through_key");
		is_int(s->more->naggregates, 1, "one aggregate");
		ok(s->more->aggregates[0].where_expr != NULL,
		    "its filter parsed");
		is_str(s->more->aggregates[0].rel, "public.tickets",
		    "an aggregate's table");
		ok(config_nest_member(s, "orders_total") &&
		    config_nest_member(s, "open_tickets") &&
		    !config_nest_member(s, "name"), "the members it adds");
		{
			const char **rels;
			int n = config_nest_tables(&cfg, &rels);

			ok(n == 5 && strcmp(rels[0], "shop.orders") == 0 &&
			    strcmp(rels[3], "public.customer_tags") == 0 &&
			    strcmp(rels[4], "public.tickets") == 0,
			    "the tables collections read, junction included "
			    "(%d)", n);
			free(rels);
		}
		config_release(&cfg);
	}
	for (i = 0; i < sizeof(nest_errors) / sizeof(nest_errors[0]); i++) {
		if (nest_errors[i].msg != NULL) {
			expect_err(nest_errors[i].what, nest_errors[i].text,
			    nest_errors[i].line, nest_errors[i].msg);
			continue;
		}
		ok(load(nest_errors[i].text, &cfg, err, sizeof(err)) == -1 &&
		    strstr(err, ".aggregates[0].where' ") != NULL,
		    "%s: refused (%s)", nest_errors[i].what, err);
	}
}

/* target.urls: the nodes of one cluster, each checked as target.url is */
static void
test_target_urls(void)
{
	const char *const *urls;
	struct config cfg;
	char err[512];
	int n;

	ok(load(SRC "target:\n  urls:\n    - http://10.0.0.1:9200/\n"
	    "    - https://10.0.0.2:9200/prefix//\n"
	    "    - http://10.0.0.3:9200\n" SYNC, &cfg, err, sizeof(err)) == 0,
	    "three nodes load");
	urls = config_target_urls(&cfg, &n);
	ok(n == 3 && strcmp(urls[0], "http://10.0.0.1:9200") == 0 &&
	    strcmp(urls[1], "https://10.0.0.2:9200/prefix") == 0 &&
	    strcmp(urls[2], "http://10.0.0.3:9200") == 0,
	    "in their order, trailing slashes stripped");
	ok(cfg.target_url == NULL, "and no target.url beside them");
	config_release(&cfg);

	ok(load(SRC TGT SYNC, &cfg, err, sizeof(err)) == 0, "one url loads");
	urls = config_target_urls(&cfg, &n);
	ok(n == 1 && strcmp(urls[0], "http://127.0.0.1:9200") == 0,
	    "target.url is a list of one node");
	config_release(&cfg);

	expect_err("urls beside url", SRC TGT "  urls:\n    - http://a:9200\n"
	    SYNC, 5, "'target.urls' and 'target.url' cannot both be set: list "
	    "every node in 'target.urls'");
	expect_err("urls beside url_env", SRC "target:\n  url_env: X\n"
	    "  urls: [http://a:9200]\n" SYNC, 5, "'target.urls' and "
	    "'target.url_env' cannot both be set: list every node in "
	    "'target.urls'");
	expect_err("urls: a bad node", SRC "target:\n  urls:\n"
	    "    - http://a:9200\n    - ftp://b\n" SYNC, 6,
	    "'target.urls[1]' must start with http:// or https://");
	expect_err("urls: credentials", SRC "target:\n  urls:\n"
	    "    - http://u:tsecret@a:9200\n" SYNC, 5,
	    "'target.urls[0]' must not hold credentials; use "
	    "'target.username' and 'target.password_env'");
	expect_err("urls: one node twice", SRC "target:\n  urls:\n"
	    "    - http://a:9200\n    - http://b:9200\n"
	    "    - http://a:9200/\n" SYNC, 7,
	    "'target.urls[2]' names the node of 'target.urls[0]' again");
	expect_err("urls: a scalar", SRC "target:\n  urls: http://a:9200\n"
	    SYNC, 4, "'target.urls' must be a list of urls, one per node");
	expect_err("urls: empty", SRC "target:\n  urls: []\n" SYNC, 4,
	    "'target.urls' must name at least one node");
	expect_err("urls: 33 nodes", SRC "target:\n  urls: [h1:1, h2:1, h3:1, "
	    "h4:1, h5:1, h6:1, h7:1, h8:1, h9:1, h10:1, h11:1, h12:1, h13:1, "
	    "h14:1, h15:1, h16:1, h17:1, h18:1, h19:1, h20:1, h21:1, h22:1, "
	    "h23:1, h24:1, h25:1, h26:1, h27:1, h28:1, h29:1, h30:1, h31:1, "
	    "h32:1, h33:1]\n" SYNC, 4, "'target.urls' lists 33 nodes: at "
	    "most 32");
	expect_err("urls on meilisearch", SRC "target:\n  flavor: meilisearch\n"
	    "  state_dir: /tmp\n  urls:\n    - http://a:7700\n"
	    "    - http://b:7700\n" SYNC, 6, "'target.urls' needs several "
	    "nodes, which target 'meilisearch' does not offer: each of its "
	    "servers keeps documents of its own: name one with 'target.url'");
	ok(load(SRC "target:\n  flavor: meilisearch\n  state_dir: /tmp\n"
	    "  urls:\n    - http://a:7700\n" SYNC, &cfg, err,
	    sizeof(err)) == 0, "a list of one node is one server, on "
	    "meilisearch too");
	config_release(&cfg);
}

/* n sections writing index "many", each with an id; extra appended */
static void
many_text(struct sbuf *t, int n, const char *extra)
{
	int i;

	sbuf_reset(t);
	sbuf_adds(t, SRC TGT "sync:\n");
	for (i = 1; i <= n; i++)
		sbuf_addf(t, "  s%05d:\n    table: t%05d\n    index: many\n"
		    "    id: \"s%05d-{id}\"\n", i, i, i);
	sbuf_adds(t, extra);
}

/*
 * Issue 38: ten thousand tables in one file. The sections were checked
 * against each other pair by pair (two sections may not sync one table,
 * and may share an index only on terms), 2 * 10^8 pairs for twenty
 * thousand: 16 s in every process at each start. The same rules hold,
 * naming the same first section a section conflicts with.
 */
static void
test_many(void)
{
	struct config cfg;
	struct sbuf t = SBUF_INIT;
	char err[512];
	double t0, secs, small;
	int rc;

	/* an eighth of them first: a loaded machine (or a sanitizer)
	 * slows both alike, while pairs make eight times the sections
	 * cost 64 times as much */
	many_text(&t, 2500, "");
	t0 = tap_now_s();
	rc = load(t.buf, &cfg, err, sizeof(err));
	small = tap_now_s() - t0;
	if (rc == 0)
		config_release(&cfg);
	many_text(&t, 20000, "");
	t0 = tap_now_s();
	rc = load(t.buf, &cfg, err, sizeof(err));
	secs = tap_now_s() - t0;
	ok(rc == 0 && cfg.nsyncs == 20000, "20,000 sections sharing an "
	    "index load (%s)", rc == 0 ? "ok" : err);
	ok(secs < 10.0 || secs < 25 * small, "in under 10 s, or 25 times "
	    "what 2,500 take (%.2f s, %.2f s; 31.7 s and 0.46 s when each "
	    "pair was compared)", secs, small);
	if (rc == 0) {
		ok(cfg.syncs[0].shared && cfg.syncs[19999].shared,
		    "every one shares the index");
		ok(config_find_rel(&cfg, "public.t12345") == &cfg.syncs[12344],
		    "config_find_rel finds a table among them");
		ok(config_find_rel(&cfg, "public.t20001") == NULL &&
		    config_find_rel(&cfg, "public.t1234") == NULL,
		    "and not one that is not configured");
		config_release(&cfg);
	}
	/* the last section repeats the first's table, or has no id: the
	 * message names the first section, as a walk of the pairs did */
	many_text(&t, 20000, "  again:\n    table: t00001\n");
	ok(load(t.buf, &cfg, err, sizeof(err)) == -1 &&
	    strstr(err, "sync sections 's00001' and 'again' both sync table "
	    "'public.t00001'") != NULL, "a table twice among many: %s", err);
	many_text(&t, 20000, "  noid:\n    table: other\n    index: many\n");
	ok(load(t.buf, &cfg, err, sizeof(err)) == -1 &&
	    strstr(err, "sync sections 's00001' and 'noid' both write index "
	    "'many': sections may share an index only when each declares "
	    "'id'") != NULL, "a sharer without an id among many: %s", err);
	many_text(&t, 3, "  tpl:\n    table: other\n    index: \"m{id}\"\n"
	    "    id: \"x-{id}\"\n");
	ok(load(t.buf, &cfg, err, sizeof(err)) == -1 &&
	    strstr(err, "sync section 'tpl' writes index 'm{id}', which "
	    "section 's00001' can write too") != NULL,
	    "a template over a shared index names its first writer: %s", err);
	sbuf_release(&t);
}

/* the process's resident and peak resident kB (/proc/self/status) */
static long
status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, strlen(field)) == 0 &&
		    line[strlen(field)] == ':')
			kb = atol(line + strlen(field) + 1);
	fclose(f);
	return kb;
}

/*
 * Issue 38: every stage holds the whole configuration and parses it at
 * start, so with ten thousand sections each one's bytes count six times
 * over, and the bench sums each process's peak. A section of many.py's
 * shape cost 840 bytes held (456 of struct, a dozen small strings) and
 * the parse peaked 17 MB above the start (64-byte tree nodes).
 */
static void
test_many_memory(void)
{
	struct config cfg;
	struct sbuf t = SBUF_INIT;
	struct mallinfo2 m0, m1;
	const struct sync_section *s;
	char err[512];
	long rss0, peak;
	size_t held;
	int fd, rc;

	many_text(&t, 10000, "");
	write_file(t.buf);
	sbuf_release(&t);
	mem_trim();
	m0 = mallinfo2();
	rss0 = status_kb("VmRSS");
	/* the peak from here: clear_refs 5 resets VmHWM to VmRSS */
	if ((fd = open("/proc/self/clear_refs", O_WRONLY)) != -1) {
		if (write(fd, "5", 1) != 1)
			rss0 = -1;
		close(fd);
	} else
		rss0 = -1;
	rc = load_path(path, &cfg, err, sizeof(err));
	peak = status_kb("VmHWM");
	m1 = mallinfo2();
	ok(rc == 0 && cfg.nsyncs == 10000, "10,000 sections load (%s)",
	    rc == 0 ? "ok" : err);
	if (rc != 0)
		return;
	s = &cfg.syncs[1233];
	ok(strcmp(s->name, "s01234") == 0 && strcmp(s->table, "t01234") == 0 &&
	    strcmp(s->schema, "public") == 0 &&
	    strcmp(s->rel, "public.t01234") == 0 &&
	    strcmp(s->index, "many") == 0 && strcmp(s->id, "s01234-{id}") == 0,
	    "a packed section's strings are its own: %s %s %s %s %s %s",
	    s->name, s->table, s->schema, s->rel, s->index, s->id);
	ok(s->id_t.nparts == 2 && strcmp(s->id_t.parts[0].text, "s01234-") == 0 &&
	    !s->id_t.parts[0].column && strcmp(s->id_t.parts[1].text, "id") == 0 &&
	    s->id_t.parts[1].column && s->index_t.nparts == 1 &&
	    strcmp(s->index_t.parts[0].text, "many") == 0,
	    "and so are its templates' parts");
	ok(cfg.syncs[0].schema == cfg.syncs[9999].schema &&
	    cfg.syncs[0].index == cfg.syncs[9999].index &&
	    cfg.syncs[0].index_t.parts == cfg.syncs[9999].index_t.parts,
	    "the schema, the index and its template are held once");
	ok(config_find_rel(&cfg, "public.t09999") == &cfg.syncs[9998],
	    "config_find_rel finds a table among them");
	ok(s->more == NULL && sync_more(s)->columns == NULL &&
	    sync_more(s)->where_expr == NULL && !s->has_join,
	    "a section of a table, an index and an id has no more");
	{
		struct config big;

		/* refused before a byte is read: the tree's offsets are
		 * 32-bit */
		ok(config_load_mem("big.yaml", "x", ((size_t)1 << 30) + 1,
		    &big, err, sizeof(err)) == -1 &&
		    strcmp(err, "big.yaml: larger than 1024 MiB") == 0,
		    "a file over 1 GiB is refused: %s", err);
	}
	held = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);
#ifdef __SANITIZE_ADDRESS__
	(void)held;
	(void)peak;
	(void)rss0;
	ok(1, "# skip the sanitizer's allocator counts otherwise");
	ok(1, "# skip the sanitizer's allocator counts otherwise");
#else
	ok(held / 10000 < 300, "a section holds under 300 bytes (%zu; 840 "
	    "before the strings were packed, 549 before what it rarely "
	    "sets went behind a pointer)", held / 10000);
	if (rss0 <= 0 || peak <= 0)
		ok(1, "# skip no peak resident size to read");
	else
		ok(peak - rss0 < 14 * 1024, "the load peaks under 14 MB above "
		    "where it started (%ld kB; 17 MB with 64-byte tree nodes)",
		    peak - rss0);
#endif
	config_release(&cfg);
}

int
main(void)
{
	log_init("t-config");
	log_set_level(LOG_LVL_INFO);
	snprintf(dir, sizeof(dir), "/tmp/t-config.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/cfg.yaml", dir);

	test_full();
	test_defaults();
	test_errors();
	test_target_urls();
	test_shaping();
	test_shaping_errors();
	test_mapping();
	test_nest();
	test_warnings();
	test_paths();
	test_mem();
	test_secrets();
	test_schema_valid();
	test_schema_errors();
	test_many();
	test_many_memory();

	unlink(path);
	rmdir(dir);
	return done_testing();
}
