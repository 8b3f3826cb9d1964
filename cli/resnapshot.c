/*
 * resnapshot.c - pg2osync resnapshot --table T [--where P]: one table read
 * again into the index it is mapped to, beside a running pipeline. The
 * rows go the way a load's go - the loader (scoped to the table, and by
 * --where in its SQL), the shaper from its load fd, the writer - so a
 * document it writes is one the load would have written: mapping,
 * projections, transforms, children, ids. Each row carries the version
 * the loader reads before its range, so a change the stream writes later
 * wins at the target and one it wrote before is overwritten only by a
 * newer copy.
 *
 * It cannot move the checkpoint: a copy row carries a version, never a
 * position, the writer runs without a control channel (it reports
 * nothing), and no mark is stored - the loader runs stand-alone, so no
 * load progress is recorded and an interruption means running it again.
 * It never deletes: the delete the shaper turns a row outside the
 * section's where into is dropped here and counted (reconcile is the
 * verb that removes documents). Refresh is left alone: the index is in
 * use.
 */
#include <string.h>

#include "cli.h"
#include "p2o.h"

enum { O_TABLE = 0x100, O_WHERE };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "table", O_TABLE, "T", "the sync section to read again (its name, "
	    "its table or schema.table); required" },
	{ "where", O_WHERE, "P", "only the rows matching P, in the syntax of "
	    "a section's where (MySQL: refused when the server cannot run it "
	    "exactly as written)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *table = NULL;
	const char *where = NULL;
	const struct sync_section *s;
	struct config cfg;
	struct p2o_err e;
	uint64_t written = 0, dropped = 0;
	int ch, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else if (ch == O_TABLE)
			table = arg;
		else if (ch == O_WHERE)
			where = arg;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if (table == NULL)
		return cli_usage(v, "--table is required");
	if ((rc = cli_config(path, CONFIG_SECRET_TARGET |
	    CONFIG_SECRET_TRANSFORM, &cfg)) != 0)
		return rc;
	if ((s = config_find_named(&cfg, table)) == NULL) {
		rc = cli_usage(v, "no sync section is '%s'", table);
		goto out;
	}
	p2o_err_clear(&e);
	if (relay_rows(&cfg, s, where, NULL, &written, &dropped, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	printf("resnapshot of '%s'%s%s%s: %llu documents written, each at the "
	    "version read before its range (a newer streamed change kept)\n",
	    s->rel, where ? " (where " : "", where ? where : "",
	    where ? ")" : "", (unsigned long long)written);
	if (dropped)
		printf("%llu rows outside the section's where left alone: "
		    "pg2osync reconcile names and removes their documents\n",
		    (unsigned long long)dropped);
	rc = P2O_EXIT_OK;
out:
	config_release(&cfg);
	return rc;
}

const struct verb verb_resnapshot = {
	.name = "resnapshot",
	.summary = "read one table again into its index, beside the running "
	    "pipeline",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "--table T [--where P]",
	.about = "Reads the table of sync section T again (with --where, only "
	    "the rows matching P) and writes every row through the ordinary "
	    "write path - the loader, the shaper, the writer: mapping, "
	    "projections, transforms, ids - each versioned with the source "
	    "position read before its range, as the initial load does, so a "
	    "change the running pipeline streams meanwhile still wins. It "
	    "adds and updates, never deletes (pg2osync reconcile does), "
	    "records no load progress (an interrupted run is run again) and "
	    "never moves the checkpoint. Safe beside a running pipeline; "
	    "refresh is left as it is.",
	.opts = opts,
	.exits = "  0   every row read was written\n"
	    "  64  bad command line, no such section, or a --where that "
	    "cannot be read\n"
	    "  65  the loader or the shaper failed on a row\n"
	    "  69  the source refused (a table missing or unreadable)\n"
	    "  75  a server is unreachable or failing (temporary)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration\n",
	.run = run,
};
