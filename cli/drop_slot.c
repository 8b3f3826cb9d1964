/*
 * drop_slot.c - pg2osync drop-slot: drops the configured replication slot
 * (never another), and with --publication the configured publications
 * (never by default: another pipeline may share one). A slot a pipeline
 * streams from is refused: stop the pipeline first.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "source.h"
#include "pg/pgconn.h"
#include "pg/pgserver.h"

enum { O_PUBLICATION = 0x100 };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	{ "publication", O_PUBLICATION, NULL, "drop the configured "
	    "publication too (and its _append companion)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
drop_pub(struct pg_conn *c, const char *name, struct p2o_err *e)
{
	struct pgsrv_pub p;
	char sql[256], *q;

	if (pgsrv_publication(c, name, &p, e) == -1)
		return -1;
	if (!p.exists)
		return 0;
	if ((q = pgconn_ident(c, name, e)) == NULL)
		return -1;
	snprintf(sql, sizeof(sql), "DROP PUBLICATION %s", q);
	free(q);
	if (pgconn_exec(c, "dropping the publication", sql, e) == -1)
		return -1;
	printf("dropped publication '%s'\n", name);
	return 1;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg;
	const struct pgsrv_slot *s;
	struct pgsrv_slot *slots = NULL;
	struct config cfg;
	struct p2o_err e;
	struct pg_conn *c;
	char apub[80];
	uint64_t now;
	int ch, pub = 0, n = 0, rc;

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
	if (strcmp(cfg.source->kind, "postgres") != 0) {
		config_release(&cfg);
		return cli_usage(v, "a MySQL source has no slot: the server "
		    "keeps no position for a reader");
	}
	p2o_err_clear(&e);
	if ((c = pgconn_open(&cfg, PGCONN_SQL, "pg2osync drop-slot", &e)) ==
	    NULL) {
		rc = cli_fail(&e);
		goto out;
	}
	if (pgsrv_slots(c, &slots, &n, &now, &e) == -1)
		goto fail;
	if ((s = pgsrv_slot_find(slots, n, cfg.slot_name)) == NULL)
		printf("slot '%s' does not exist: nothing to drop\n",
		    cfg.slot_name);
	else if (s->active) {
		fprintf(stderr, "pg2osync drop-slot: slot '%s' is active (pid "
		    "%d streams from it): stop the pipeline first\n",
		    cfg.slot_name, s->active_pid);
		rc = CLI_EXIT_FAILED;
		goto out;
	} else {
		if (pgsrv_drop_slot(c, cfg.slot_name, &e) == -1)
			goto fail;
		printf("dropped slot '%s'; the checkpoint 'postgres:%s' in the "
		    "target is kept: a new slot starts after it, so the next "
		    "start refuses it (exit 66) until it is deleted and the "
		    "tables loaded again\n", cfg.slot_name, cfg.slot_name);
	}
	if (pub) {
		snprintf(apub, sizeof(apub), "%s_append", cfg.publication);
		if ((rc = drop_pub(c, cfg.publication, &e)) == -1 ||
		    drop_pub(c, apub, &e) == -1)
			goto fail;
		if (rc == 0)
			printf("publication '%s' does not exist: nothing to "
			    "drop\n", cfg.publication);
	} else
		printf("publication '%s' is kept (--publication drops it)\n",
		    cfg.publication);
	rc = 0;
	goto out;
fail:
	rc = cli_fail(&e);
out:
	pgsrv_slots_free(slots, n);
	pgconn_close(c);
	config_release(&cfg);
	return rc;
}

const struct verb verb_drop_slot = {
	.name = "drop-slot",
	.summary = "drop the configured replication slot (PostgreSQL)",
	.synopsis = "[-c FILE] [--publication]",
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
