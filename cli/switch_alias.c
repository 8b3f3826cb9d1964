/*
 * switch_alias.c - pg2osync switch-alias --alias A --index I: the name
 * readers use moved onto an index in one atomic request, the rollback
 * of a reindex (and its manual form). Refused when I does not exist
 * (the alias would name nothing readers could search) or when A is an
 * index's own name.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"

enum { O_ALIAS = 0x100, O_INDEX };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	{ "alias", O_ALIAS, "A", "the alias to move; required" },
	{ "index", O_INDEX, "I", "the index it is to name, alone; required" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *alias = NULL;
	const char *index = NULL;
	struct target_index_state st;
	struct target_conn tc;
	struct config cfg;
	struct p2o_err e;
	struct sbuf was = SBUF_INIT;
	int ch, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else if (ch == O_ALIAS)
			alias = arg;
		else if (ch == O_INDEX)
			index = arg;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if (alias == NULL || index == NULL)
		return cli_usage(v, "--alias and --index are required");
	if ((rc = cli_config(path, CONFIG_SECRET_TARGET, &cfg)) != 0)
		return rc;
	rc = P2O_EXIT_CONFIG;
	if (cfg.target_module->ops->alias_switch == NULL) {
		fprintf(stderr, "pg2osync switch-alias: target '%s' has no "
		    "alias switch in this version (Meilisearch's swap-indexes "
		    "is not implemented yet)\n", cfg.target_module->name);
		goto out;
	}
	p2o_err_clear(&e);
	if (target_conn_open(&tc, &cfg, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	if (tc.mod->ops->index_state(&tc, alias, &st, &e) == -1) {
		rc = cli_fail(&e);
		goto conn;
	}
	if (st.exists && !st.alias) {
		fprintf(stderr, "pg2osync switch-alias: '%s' is an index, not "
		    "an alias\n", alias);
		goto conn;
	}
	if (tc.mod->ops->index_state(&tc, index, &st, &e) == -1) {
		rc = cli_fail(&e);
		goto conn;
	}
	if (!st.exists || st.alias) {
		fprintf(stderr, "pg2osync switch-alias: '%s' is %s\n", index,
		    st.exists ? "an alias, not an index" : "no index");
		goto conn;
	}
	if (tc.mod->ops->alias_switch(&tc, alias, index, &was, &e) == -1) {
		rc = cli_fail(&e);
		goto conn;
	}
	printf("alias '%s' now names '%s' (before: %s)\n", alias, index,
	    was.len ? was.buf : "nothing");
	rc = P2O_EXIT_OK;
conn:
	target_conn_release(&tc);
out:
	sbuf_release(&was);
	config_release(&cfg);
	return rc;
}

const struct verb verb_switch_alias = {
	.name = "switch-alias",
	.summary = "move an alias onto an index atomically (a reindex's "
	    "rollback)",
	.synopsis = "[-c FILE] --alias A --index I",
	.about = "Makes alias A name index I alone, in one atomic request: "
	    "readers never see A resolve to nothing or to two indices. The "
	    "rollback of a reindex is switch-alias back onto the index the "
	    "alias named before (reindex prints it). Refused when I is not "
	    "an index or A is an index's own name.",
	.opts = opts,
	.exits = "  0   the alias names the index\n"
	    "  64  bad command line\n"
	    "  69  the target refused the request\n"
	    "  75  the target is unreachable or failing (temporary)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration; I is no index, A is an index; a "
	    "target without aliases (Meilisearch)\n",
	.run = run,
};
