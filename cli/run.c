/*
 * run.c - pg2osync run: the pipeline, which is pg2osync-supervise's to
 * run. Every argument after the verb goes to it unchanged; nothing is
 * read or checked here, so the two cannot disagree.
 */
#include <string.h>

#include "cli.h"
#include "p2o.h"

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "stage", 0x100, "NAME=PROGRAM", "run PROGRAM in a stage's place "
	    "(pg2osync-supervise(1))" },
	{ "tap", 0x101, "POINT=FILE", "copy the frames crossing a boundary "
	    "to FILE (pg2osync-supervise(1))" },
	{ "tap-max", 0x102, "BYTES", "rotate a tap's file past this size" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
run(const struct verb *v, int argc, char **argv)
{
	struct p2o_err e;
	char *args[256];
	int i, n = 0;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			cli_help(v, stdout);
			return P2O_EXIT_OK;
		}
	if (argc > 250)
		return cli_usage(v, "too many arguments");
	args[n++] = "pg2osync-supervise";
	for (i = 1; i < argc; i++)
		args[n++] = argv[i];
	/* the supervisor has no default file: give it ours, unless a file
	 * or a directory (--config, --config-dir) is named */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-c") == 0 ||
		    strncmp(argv[i], "--config", 8) == 0 ||
		    strncmp(argv[i], "-c", 2) == 0)
			break;
	if (i == argc) {
		args[n++] = "-c";
		args[n++] = CLI_DEFAULT_CONFIG;
	}
	args[n] = NULL;
	p2o_err_clear(&e);
	tool_exec(args, &e);
	return cli_fail(&e);
}

const struct verb verb_run = {
	.name = "run",
	.summary = "run the pipeline (pg2osync-supervise)",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "[pg2osync-supervise options]",
	.about = "Runs the pipeline: execs pg2osync-supervise with every "
	    "argument given, and -c " CLI_DEFAULT_CONFIG " when none names a "
	    "file or a directory (--config-dir: every source of it in one "
	    "process). On its first start the capture creates the replication "
	    "slot and the publication when they do not exist (pg2osync "
	    "bootstrap creates them ahead).",
	.opts = opts,
	.exits = "  pg2osync-supervise's: 0 stopped by a signal after "
	    "draining; 64 usage; 65,\n  66, 69, 77, 78 a stage's permanent "
	    "failure; 75 gave up after\n  source.reconnect_max failures; 1 "
	    "internal, or the program was not found.\n",
	.run = run,
	.dir = CLI_DIR_OWN,
};
