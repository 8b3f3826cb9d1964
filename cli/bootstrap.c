/*
 * bootstrap.c - pg2osync bootstrap: creates what the first start would,
 * then exits: on PostgreSQL the publication (and <publication>_append for
 * append-only tables without a replica identity, placed by the rule
 * capture-pg applies) and the replication slot; on the target the state
 * index and every index a section names (with its mapping). What exists
 * is left as it is. A source that does not answer is an exit, never a
 * wait.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lsn.h"
#include "p2o.h"
#include "source.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "pg/pgserver.h"
#include "target.h"

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
publication(struct pg_conn *c, const char *name, char **rels, int n,
    int append, struct p2o_err *e)
{
	struct pgsrv_pub p;

	if (pgsrv_publication(c, name, &p, e) == -1)
		return -1;
	if (p.exists) {
		printf("publication '%s' exists: left as it is (the capture "
		    "checks it at its start)\n", name);
		return 0;
	}
	if (pgsrv_create_publication(c, name, (const char *const *)rels, n,
	    append, e) == -1)
		return -1;
	printf("created publication '%s' for %d table(s)\n", name, n);
	return 0;
}

static int
source_pg(const struct config *cfg, struct p2o_err *e)
{
	struct pgsrv_facts f;
	struct pgcat_table t;
	struct pgsrv_slot *slots = NULL;
	struct pg_conn *c;
	char **rels, **arels, apub[80], at[32];
	uint64_t now, lsn;
	int i, nrels = 0, narels = 0, nslots = 0, rc = -1;

	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync bootstrap", e)) == NULL)
		return -1;
	rels = xcalloc((size_t)cfg->nsyncs + 1, sizeof(char *));
	arels = xcalloc((size_t)cfg->nsyncs + 1, sizeof(char *));
	if (pgsrv_facts(c, &f, e) == -1)
		goto out;
	if (strcmp(f.wal_level, "logical") != 0) {
		p2o_fail(e, P2O_EXIT_REFUSED, "wal_level is '%s'; logical "
		    "replication needs wal_level = logical (pg2osync validate "
		    "says how)", f.wal_level);
		goto out;
	}
	for (i = 0; i < cfg->nsyncs; i++) {
		if (pgcat_describe(c, cfg->publication, &cfg->syncs[i], &t,
		    e) == -1)
			goto out;
		/* capture-pg's placement (slot.c): an append-only tree
		 * without a replica identity goes in <publication>_append */
		if (cfg->syncs[i].append_only && !pgcat_tree_has_identity(&t)) {
			if ((arels[narels++] = pg_qrel(c, &cfg->syncs[i],
			    e)) == NULL) {
				pgcat_table_release(&t);
				goto out;
			}
		} else if ((rels[nrels++] = pg_qrel(c, &cfg->syncs[i], e)) ==
		    NULL) {
			pgcat_table_release(&t);
			goto out;
		}
		pgcat_table_release(&t);
	}
	if (publication(c, cfg->publication, rels, nrels, 0, e) == -1)
		goto out;
	snprintf(apub, sizeof(apub), "%s_append", cfg->publication);
	if (narels && publication(c, apub, arels, narels, 1, e) == -1)
		goto out;
	if (pgsrv_slots(c, &slots, &nslots, &now, e) == -1)
		goto out;
	if (pgsrv_slot_find(slots, nslots, cfg->slot_name) != NULL)
		printf("slot '%s' exists: left as it is\n", cfg->slot_name);
	else {
		if (pgsrv_create_slot(c, cfg->slot_name, &lsn, e) == -1)
			goto out;
		lsn_format(lsn, at);
		printf("created replication slot '%s' at %s: it retains WAL "
		    "from now on, until the pipeline reads it (pg2osync "
		    "drop-slot removes it)\n", cfg->slot_name, at);
	}
	rc = 0;
out:
	for (i = 0; i < nrels; i++)
		free(rels[i]);
	for (i = 0; i < narels; i++)
		free(arels[i]);
	free(rels);
	free(arels);
	pgsrv_slots_free(slots, nslots);
	pgconn_close(c);
	return rc;
}

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
	if (strcmp(cfg.source->kind, "postgres") == 0 && source_pg(&cfg, &e) == -1)
		rc = cli_fail(&e);
	else if (strcmp(cfg.source->kind, "mysql") == 0)
		printf("a MySQL source has no slot or publication to create\n");
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
	.synopsis = "[-c FILE]",
	.about = "Creates what the pipeline's first start would, and exits: "
	    "on PostgreSQL the publication (and <publication>_append for "
	    "append-only tables without a replica identity) and the logical "
	    "replication slot, which retains WAL from then on; on the target "
	    "the state store and every index a section names, each with its "
	    "mapping. Anything that exists is left as it is. An unreachable "
	    "server ends it (exit 75) rather than being waited for.",
	.opts = opts,
	.exits = "  0   everything exists\n  64  bad command line\n  69  "
	    "refused: wal_level, a table, a privilege\n  75  the source or "
	    "the target is unreachable\n  77  authentication failed\n  78  "
	    "invalid configuration\n",
	.run = run,
};
