/*
 * t-config-set.c - a directory of configuration files (lib/config_set.c):
 * which files are in it (*.yaml directly in it, in name order, a link to a
 * file taken, dot-files, directories and other names left out, none at all
 * an error), every failing file named in one run, and the set's rules: a
 * name of its own for each source, a slot, a publication or a replica id
 * on one server taken once, one checkpoint document per target, an index
 * two sources write only with declared ids, one metrics.bind and one
 * api.bind, one log.format.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "config_set.h"
#include "log.h"
#include "p2o.h"

static char dir[256];

static void
put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		abort();
	fputs(text, f);
	fclose(f);
}

static void
gone(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* a PostgreSQL source at url with slot, one section writing index */
static void
pg(const char *name, const char *url, const char *slot, const char *extra,
    const char *index, const char *id)
{
	char text[2048];

	snprintf(text, sizeof(text), "source:\n  url: %s\n  slot_name: %s\n"
	    "  publication: %s\n%starget:\n  url: http://127.0.0.1:9200\n"
	    "sync:\n  t:\n    table: public.t\n    index: %s\n%s%s%s",
	    url, slot, slot, extra, index, id ? "    id: \"" : "", id ? id : "",
	    id ? "\"\n" : "");
	put(name, text);
}

/* load the directory: the rules broken (-1 when a file failed), why */
static int
load(struct sbuf *why)
{
	struct config_set set;
	struct p2o_err e;
	int rc;

	sbuf_reset(why);
	p2o_err_clear(&e);
	rc = config_set_load(dir, CONFIG_SECRETS_NONE, &set, why, &e);
	if (rc == 0)
		config_set_release(&set);
	else {
		config_set_release(&set);
		sbuf_adds(why, e.msg);
	}
	return rc;
}

static int
has(const struct sbuf *b, const char *s)
{
	return b->buf != NULL && strstr(b->buf, s) != NULL;
}

int
main(void)
{
	struct sbuf why = SBUF_INIT;
	struct config_set set;
	struct p2o_err e;
	char **paths, link[512], target[512];
	int n, rc;

	log_init("t-config-set");
	log_set_level(LOG_LVL_ERROR);
	snprintf(dir, sizeof(dir), "/tmp/t-config-set.XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();

	/* an empty directory */
	p2o_err_clear(&e);
	ok(config_dir_files(dir, &paths, &n, &e) == -1 &&
	    e.code == P2O_EXIT_CONFIG && strstr(e.msg, "holds no "
	    "configuration file"), "an empty directory is an error: %s", e.msg);
	ok(config_dir_files("/nonexistent/dir", &paths, &n, &e) == -1 &&
	    e.code == P2O_EXIT_CONFIG, "so is one that is not there: %s",
	    e.msg);

	/* which files: *.yaml, by name, a link to a file too */
	pg("b.yaml", "postgres://u@db1/app", "s_b", "", "ib", NULL);
	pg("a.yaml", "postgres://u@db1/app", "s_a", "", "ia", NULL);
	pg(".hidden.yaml", "postgres://u@db1/app", "s_h", "", "ih", NULL);
	put("notes.yml", "not: read\n");
	put("README", "not read\n");
	snprintf(target, sizeof(target), "%s/sub.yaml", dir);
	mkdir(target, 0700);
	snprintf(target, sizeof(target), "%s/b.yaml", dir);
	snprintf(link, sizeof(link), "%s/c.yaml", dir);
	pg("real.conf", "postgres://u@db2/app", "s_c", "", "ic", NULL);
	snprintf(target, sizeof(target), "%s/real.conf", dir);
	if (symlink(target, link) == -1)
		abort();
	rc = config_dir_files(dir, &paths, &n, &e);
	ok(rc == 0 && n == 3 &&
	    strstr(paths[0], "/a.yaml") && strstr(paths[1], "/b.yaml") &&
	    strstr(paths[2], "/c.yaml"), "a.yaml, b.yaml and the link c.yaml, "
	    "in name order; the dot-file, the directory, notes.yml and README "
	    "left out (%d)", n);
	config_paths_free(paths, n);
	rc = load(&why);
	ok(rc == 0, "three sources of their own load as a set: %s",
	    why.buf ? why.buf : "");
	p2o_err_clear(&e);
	sbuf_reset(&why);
	if (config_set_load(dir, CONFIG_SECRETS_NONE, &set, &why, &e) == 0) {
		is_str(set.names[0], "postgres:s_a", "a source without "
		    "source.name is named by its stream");
		ok(config_set_find(&set, "postgres:s_c") == 2, "and found by "
		    "it");
		ok(config_set_find(&set, "nope") == -1, "an unknown name is "
		    "not");
		config_set_release(&set);
	} else
		ok(0, "the set loads: %s", e.msg);
	gone("c.yaml");

	/* every failing file in one run */
	put("a.yaml", "source:\n  url: postgres://u@db1/app\n  slot_name: "
	    "s_a\n  bogus: 1\ntarget:\n  url: http://127.0.0.1:9200\nsync:\n"
	    "  t:\n    table: public.t\n");
	put("b.yaml", "source: [\n");
	rc = load(&why);
	ok(rc == -1 && has(&why, "a.yaml:4:") && has(&why, "b.yaml:")
	    && has(&why, "2 of 2 files are invalid"), "both failing files are "
	    "named with their lines, in one run:\n%s", why.buf);

	/* names */
	pg("a.yaml", "postgres://u@db1/app", "s_a", "  name: shop\n", "ia",
	    NULL);
	pg("b.yaml", "postgres://u@db2/app", "s_b", "  name: shop\n", "ib",
	    NULL);
	rc = load(&why);
	ok(rc == -1 && has(&why, "a.yaml, b.yaml: two sources named "
	    "'shop'"), "two sources of one name: %s", why.buf);

	/* one slot on one server, whatever the database */
	pg("a.yaml", "postgres://u@db1:5432/app", "s_x", "", "ia", NULL);
	put("b.yaml", "source:\n  url: host=db1 dbname=other\n  slot_name: "
	    "s_x\n  publication: p_b\ntarget:\n  url: http://127.0.0.1:9200\n"
	    "sync:\n  t:\n    table: public.t\n    index: ib\n");
	rc = load(&why);
	ok(rc == -1 && has(&why, "slot 's_x' on server db1:5432"),
	    "one slot twice on one server (a url and a conninfo string): %s",
	    why.buf);
	/* on two servers the slots are two, the checkpoint one */
	pg("b.yaml", "postgres://u@db2/app", "s_x", "", "ib", NULL);
	rc = load(&why);
	ok(rc == -1 && !has(&why, "slot 's_x' on server") &&
	    has(&why, "checkpoint in 'postgres:s_x' on target "
	    "http://127.0.0.1:9200: give one another source.slot_name"),
	    "one slot name on two servers writing one target share a "
	    "checkpoint: %s", why.buf);
	/* a publication is its database's */
	pg("a.yaml", "postgres://u@db1/app", "s_a", "", "ia", NULL);
	put("b.yaml", "source:\n  url: postgres://u@db1/app\n  slot_name: s_b\n"
	    "  publication: s_a\ntarget:\n  url: http://127.0.0.1:9200\nsync:\n"
	    "  t:\n    table: public.t\n    index: ib\n");
	rc = load(&why);
	ok(rc == -1 && has(&why, "publication 's_a' in database 'app' "
	    "on server db1:5432"), "one publication in one database: %s",
	    why.buf);
	put("b.yaml", "source:\n  url: postgres://u@db1/other\n  slot_name: "
	    "s_b\n  publication: s_a\ntarget:\n  url: http://127.0.0.1:9200\n"
	    "sync:\n  t:\n    table: public.t\n    index: ib\n");
	rc = load(&why);
	ok(rc == 0, "one publication name in two databases is two: %s",
	    why.buf ? why.buf : "");

	/* a replica id on one server */
	put("b.yaml", "source:\n  url: mysql://u@db3/app\n  server_id: 7\n"
	    "target:\n  url: http://127.0.0.1:9200\nsync:\n  t:\n    table: "
	    "app.t\n    index: ib\n");
	put("c.yaml", "source:\n  url: mariadb://u@db3:3306/other\n  "
	    "server_id: 7\ntarget:\n  url: http://127.0.0.1:9201\nsync:\n  t:\n"
	    "    table: other.t\n    index: ic\n");
	rc = load(&why);
	ok(rc == -1 && has(&why, "replica id (server_id) 7 on server "
	    "db3:3306"), "one replica id twice on one server: %s", why.buf);
	gone("c.yaml");

	/* one index, two sources: only with declared ids */
	pg("a.yaml", "postgres://u@db1/app", "s_a", "", "shared", NULL);
	pg("b.yaml", "postgres://u@db2/app", "s_b", "", "shared", "b-{id}");
	rc = load(&why);
	ok(rc == -1 && has(&why, "two sources write index 'shared' and "
	    "sync.t of a.yaml declares no id"), "an index two sources write, "
	    "one without an id: %s", why.buf);
	pg("a.yaml", "postgres://u@db1/app", "s_a", "", "shared", "a-{id}");
	rc = load(&why);
	ok(rc == 0, "both declaring ids: %s", why.buf ? why.buf : "");

	/* listeners and the log */
	pg("a.yaml", "postgres://u@db1/app", "s_a", "", "ia", NULL);
	put("b.yaml", "source:\n  url: postgres://u@db2/app\n  slot_name: s_b\n"
	    "target:\n  url: http://127.0.0.1:9200\nsync:\n  t:\n    table: "
	    "public.t\n    index: ib\nmetrics:\n  bind: 127.0.0.1:9187\n");
	rc = load(&why);
	ok(rc == 0, "one metrics.bind: %s", why.buf ? why.buf : "");
	put("a.yaml", "source:\n  url: postgres://u@db1/app\n  slot_name: s_a\n"
	    "target:\n  url: http://127.0.0.1:9200\nsync:\n  t:\n    table: "
	    "public.t\n    index: ia\nmetrics:\n  bind: 127.0.0.1:9188\napi:\n"
	    "  bind: 127.0.0.1:9189\nlog:\n  format: json\n");
	rc = load(&why);
	ok(rc == -1 && has(&why, "a.yaml, b.yaml: metrics.bind is set "
	    "in both") && has(&why, "log.format is 'json' in one and 'text'"),
	    "two metrics binds and two log formats: %s", why.buf);
	ok(has(&why, "break 2 rules"), "counted: %s", why.buf);

	sbuf_release(&why);
	gone("a.yaml");
	gone("b.yaml");
	gone("real.conf");
	gone("notes.yml");
	gone("README");
	gone(".hidden.yaml");
	snprintf(target, sizeof(target), "%s/sub.yaml", dir);
	rmdir(target);
	rmdir(dir);
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
