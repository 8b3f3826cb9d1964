/*
 * bootstrap.c - pg2osync bootstrap: creates what the first start would,
 * then exits: the source's part is its bootstrap operation (on PostgreSQL
 * the server's contract judged as the capture judges it, then the
 * publications it lacks - <publication>_append for append-only tables
 * without a replica identity, by the capture's placement rule - and the
 * replication slot: lib/pg/pgsource.c); on the target the state index and
 * every index a section names (with its mapping). What exists is left as
 * it is. A source that does not answer is an exit, never a wait.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "source_ops.h"
#include "target.h"

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
target(const struct config *cfg, struct p2o_err *e)
{
	struct target_conn tc;
	const struct sync_section *s;
	int i, created, rc = -1;

	if (target_conn_open(&tc, cfg, e) == -1)
		return -1;
	if (tc.mod->ops->state_prepare(&tc, &created, e) == -1)
		goto out;
	printf("%s the state store (%s)\n", created ? "created" :
	    "found", tc.mod->state_place);
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (!section_first_of_index(cfg, i))
			continue;
		if (s->index_templated) {
			printf("index template '%s': each index is created at "
			    "its first document\n", s->index);
			continue;
		}
		if (cfg->target_require_alias) {
			printf("index '%s': not created - target.require_alias "
			    "writes through an alias made beforehand with its "
			    "index (pg2osync reindex builds both)\n", s->index);
			continue;
		}
		if (tc.mod->ops->index_create(&tc, s->index,
		    config_index_body(cfg, s->index), &created, e) == -1) {
			p2o_err_prefix(e, "creating index '%s'", s->index);
			goto out;
		}
		printf("%s index '%s'%s\n", created ? "created" : "found",
		    s->index, created && config_index_body(cfg, s->index) ?
		    " with its mapping" : "");
	}
	rc = 0;
out:
	target_conn_release(&tc);
	return rc;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg;
	struct config cfg;
	struct p2o_err e;
	int ch, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0)
		path = arg;
	if (ch < 0)
		return cli_opt_exit(ch);
	if ((rc = cli_config(path, CONFIG_SECRETS_ALL, &cfg)) != 0)
		return rc;
	p2o_err_clear(&e);
	if (source_ops_of(&cfg)->bootstrap(&cfg, stdout, &e) == -1)
		rc = cli_fail(&e);
	if (rc == 0 && target(&cfg, &e) == -1)
		rc = cli_fail(&e);
	if (rc == 0)
		printf("bootstrapped: pg2osync run -c %s starts the pipeline\n",
		    path);
	config_release(&cfg);
	return rc;
}

const struct verb verb_bootstrap = {
	.name = "bootstrap",
	.summary = "create the slot, the publication and the indices, then "
	    "exit",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]]",
	.about = "Creates what the pipeline's first start would, and exits: "
	    "on PostgreSQL, after the checks the capture starts by, the "
	    "publication with the tables collections read (and "
	    "<publication>_append for append-only tables without a replica "
	    "identity) and the logical replication slot, which retains WAL "
	    "from then on; on the target "
	    "the state store and every index a section names, each with its "
	    "mapping. Anything that exists is left as it is. An unreachable "
	    "server ends it (exit 75) rather than being waited for.",
	.opts = opts,
	.exits = "  0   everything exists\n  64  bad command line\n  69  "
	    "refused: wal_level, a table, a privilege\n  75  the source or "
	    "the target is unreachable\n  77  authentication failed\n  78  "
	    "invalid configuration\n",
	.run = run,
	.dir = CLI_DIR_EACH,
};
