/*
 * switch_alias.c - pg2osync switch-alias --alias A --index I: the name
 * readers use moved onto an index in one atomic request, the rollback
 * of a reindex (and its manual form). Refused when I does not exist
 * (the alias would name nothing readers could search) or when A is an
 * index's own name.
 *
 * A target without aliases that swaps indexes (TCAP_INDEX_SWAP,
 * Meilisearch) exchanges the two named indexes' documents and settings
 * in one atomic task instead: readers of A then search what I held, and
 * I holds what A held - the same command again swaps them back, which
 * is the rollback of a reindex there.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"

enum { O_ALIAS = 0x100, O_INDEX };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "alias", O_ALIAS, "A", "the alias to move (Meilisearch: the index "
	    "readers search); required" },
	{ "index", O_INDEX, "I", "the index it is to name, alone "
	    "(Meilisearch: the index swapped with A); required" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

/* a target without aliases: A and I exchanged. A missing one is left
 * to the task to find (index_not_found): the server answers for both
 * at the moment of the swap, and the message names it */
static int
swap_both(struct target_conn *tc, const char *a, const char *b,
    struct p2o_err *e)
{
	if (strcmp(a, b) == 0) {
		fprintf(stderr, "pg2osync switch-alias: '%s' would be swapped "
		    "with itself\n", a);
		return P2O_EXIT_CONFIG;
	}
	if (tc->mod->ops->index_swap(tc, a, b, e) == -1)
		return cli_fail(e);
	printf("swapped '%s' and '%s': '%s' holds what '%s' held, and the "
	    "other way round\n", a, b, a, b);
	return P2O_EXIT_OK;
}

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
	int ch, rc, swap;

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
	swap = !target_can(cfg.target_module, TCAP_ALIASES);
	if (swap && !target_can(cfg.target_module, TCAP_INDEX_SWAP)) {
		fprintf(stderr, "pg2osync switch-alias: target '%s' has "
		    "neither aliases nor index swaps\n",
		    cfg.target_module->name);
		goto out;
	}
	p2o_err_clear(&e);
	if (target_conn_open(&tc, &cfg, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	if (swap) {
		rc = swap_both(&tc, alias, index, &e);
		goto conn;
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
	.summary = "move an alias onto an index atomically, or swap two "
	    "indexes where there are no aliases (a reindex's rollback)",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "--alias A --index I",
	.about = "Makes alias A name index I alone, in one atomic request: "
	    "readers never see A resolve to nothing or to two indices. The "
	    "rollback of a reindex is switch-alias back onto the index the "
	    "alias named before (reindex prints it). Refused when I is not "
	    "an index or A is an index's own name. On a target without "
	    "aliases that swaps indexes (Meilisearch), A and I are two "
	    "indexes exchanged in one atomic task: readers of A search what "
	    "I held, I holds what A held, and the same command again swaps "
	    "them back (the rollback of a reindex there); a missing one fails "
	    "the swap task, which changes nothing.",
	.opts = opts,
	.exits = "  0   the alias names the index (or the two are swapped)\n"
	    "  64  bad command line\n"
	    "  69  the target refused the request, or the swap task failed "
	    "(an index missing)\n"
	    "  75  the target is unreachable or failing (temporary)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration; I is no index, A is an index (on "
	    "a target that swaps: A and I the same)\n",
	.run = run,
};
