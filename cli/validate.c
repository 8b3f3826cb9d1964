/*
 * validate.c - pg2osync validate: every prerequisite of a configuration,
 * checked against the live servers, one line each, every failure named
 * (not only the first), then "all checks passed" or how many failed.
 *
 * It never creates, changes or drops anything: no slot, no publication,
 * no index, no document. What would be created at the first start is
 * checked for whether it could be (the role's rights), and what a DBA
 * must run instead is named. The order: the file, its secrets, the
 * source (its validate operation: lib/validate/pg.c, my.c, which report
 * the verdicts of the server's contract), the target
 * (lib/validate/target.c).
 */
#include <string.h>

#include "cli.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "source_ops.h"

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

/* the file loaded with some of its secrets; the error as a check line */
static int
load(struct check_report *r, const char *path, unsigned secrets,
    struct config *cfg, const char *what)
{
	struct p2o_err e;

	p2o_err_clear(&e);
	if (config_load_with(path, secrets, cfg, &e) == 0)
		return 0;
	check_fail(r, "%s: %s", what, e.msg);
	return -1;
}

/* the target as the file names it: its url, its nodes, or the variable
 * holding its url (not read before the secrets are) */
static const char *
target_named(const struct config *cfg, struct sbuf *out)
{
	const char *const *urls;
	int i, n;

	urls = config_target_urls(cfg, &n);
	if (n == 0) {
		sbuf_addf(out, "from '%s'", cfg->target_url_env ?
		    cfg->target_url_env : "");
		return out->buf;
	}
	for (i = 0; i < n; i++) {
		if (i > 0)
			sbuf_adds(out, ", ");
		sbuf_adds(out, urls[i]);
	}
	return out->buf;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	struct check_report r;
	struct config cfg, src, tgt, xf;
	struct sbuf named = SBUF_INIT;
	const char *path = CLI_DEFAULT_CONFIG, *arg;
	int ch, have_src, have_tgt, have_xf;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0)
		path = arg;
	if (ch < 0)
		return cli_opt_exit(ch);

	check_init(&r, stdout);
	/* the structure and every key, before any secret is asked for */
	if (load(&r, path, CONFIG_SECRETS_NONE, &cfg, "configuration") == -1) {
		check_skip(&r, "source and target: not checked without a "
		    "valid configuration");
		return check_end(&r);
	}
	check_ok(&r, "configuration '%s': %d sync section(s), a %s source, "
	    "target %s", path, cfg.nsyncs, cfg.source->title,
	    target_named(&cfg, &named));
	sbuf_release(&named);
	config_release(&cfg);

	/* each side's secrets on their own: one missing does not hide the
	 * other side's checks (the inline-secret warnings were said once) */
	log_set_level(LOG_LVL_ERROR);
	have_src = load(&r, path, CONFIG_SECRET_SOURCE, &src,
	    "source secret") == 0;
	have_tgt = load(&r, path, CONFIG_SECRET_TARGET, &tgt,
	    "target secret") == 0;
	/* the shaper's: the pseudonyms' keys, set and of their length */
	if ((have_xf = load(&r, path, CONFIG_SECRET_TRANSFORM, &xf,
	    "transform secret") == 0))
		config_release(&xf);
	log_set_level(LOG_LVL_WARN);
	if (have_src && have_tgt && have_xf)
		check_ok(&r, "secrets: every variable the file names is set");

	if (!have_src)
		check_skip(&r, "source: not checked without its url");
	else
		source_ops_of(&src)->validate(&r, &src);
	if (!have_tgt)
		check_skip(&r, "target: not checked without its password");
	else
		validate_target(&r, &tgt);
	if (have_src)
		config_release(&src);
	if (have_tgt)
		config_release(&tgt);
	return check_end(&r);
}

const struct verb verb_validate = {
	.name = "validate",
	.summary = "check every prerequisite against the live servers, "
	    "changing nothing",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]]",
	.about = "Checks the configuration against the live source and "
	    "target, one line per check, and reports every failure, each "
	    "with what fixes it: the file and its secrets; the source "
	    "connection and its TLS; PostgreSQL's wal_level, the role's "
	    "REPLICATION, the replication slot and the publication (they "
	    "exist and match, or the role may create them, else the "
	    "statements a DBA must run), every table the publication would "
	    "carry (inheritance children and partitions included) keeping "
	    "the application's UPDATE and DELETE working; MySQL's binary log "
	    "settings and the user's grants; every table (it exists, has a "
	    "key or is append_only, its replica identity carries what the "
	    "documents read, every column a section names exists and can be "
	    "read, its 'where' compiles on the server); the target (reachable, "
	    "its engine and version, the credentials, every ingest pipeline, "
	    "every index name writable, an existing index's mapping against "
	    "its mapping_file). Remedies for managed services (RDS, Aurora, "
	    "Cloud SQL, Azure, Supabase) are named where they are detected. "
	    "Nothing is created or changed: no slot, publication, index or "
	    "document.",
	.opts = opts,
	.exits = "  0   all checks passed\n  1   a check failed (each "
	    "failure is a line starting with FAIL)\n  64  bad command line\n",
	.run = run,
	.dir = CLI_DIR_EACH,
};
