/*
 * drop_slot.c - pg2osync drop-slot: drops the configured replication slot
 * (never another), and with --publication the configured publications
 * (never by default: another pipeline may share one), through the
 * source's drop_stream operation (lib/pg/pgsource.c). A slot a pipeline
 * streams from is refused: stop the pipeline first. A source whose server
 * keeps no slot has none to drop.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "source.h"
#include "source_ops.h"

enum { O_PUBLICATION = 0x100 };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "publication", O_PUBLICATION, NULL, "drop the configured "
	    "publication too (and its _append companion)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg;
	const struct source_ops *ops;
	struct config cfg;
	struct p2o_err e;
	char why[512];
	int ch, pub = 0, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else
			pub = 1;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if ((rc = cli_config(path, CONFIG_SECRET_SOURCE, &cfg)) != 0)
		return rc;
	if ((ops = source_ops_of(&cfg))->drop_stream == NULL) {
		rc = cli_usage(v, "a %s source has no slot: the server keeps "
		    "no position for a reader", cfg.source->title);
		config_release(&cfg);
		return rc;
	}
	p2o_err_clear(&e);
	rc = ops->drop_stream(&cfg, pub, stdout, why, sizeof(why), &e);
	if (rc == 1) {
		fprintf(stderr, "pg2osync drop-slot: %s\n", why);
		rc = CLI_EXIT_FAILED;
	} else if (rc == -1)
		rc = cli_fail(&e);
	config_release(&cfg);
	return rc;
}

const struct verb verb_drop_slot = {
	.name = "drop-slot",
	.summary = "drop the configured replication slot (PostgreSQL)",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "[--publication]",
	.about = "Drops the configured replication slot, so that the server "
	    "stops retaining WAL for it; never another slot, and never one "
	    "a pipeline streams from. The publication is kept unless "
	    "--publication is given: another pipeline may share it. The "
	    "stored checkpoint is kept.",
	.opts = opts,
	.exits = "  0   dropped, or there was nothing to drop\n  1   the slot "
	    "is active: stop the pipeline first\n  64  bad command line, or "
	    "a MySQL source\n  69  refused by the server (a privilege)\n"
	    "  75  the server is unreachable\n  77  authentication failed\n"
	    "  78  invalid configuration\n",
	.run = run,
};
