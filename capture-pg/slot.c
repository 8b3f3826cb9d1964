/*
 * slot.c - capture-pg's start against the server: the server's contract
 * judged (lib/pg/pgcontract.c: the settings, the role, the publications,
 * the slot) and its first failure refused, the publications and the slot
 * a first start creates, each table registered with the decoder, and
 * START_REPLICATION, which begins the stream. What the server must
 * provide is lib/pg's to say and to create; the connections and the
 * catalogue are the source layer's (lib/pg/pgconn.c, lib/pg/pgcat.c).
 *
 * It never reads the stream and never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "capture-pg.h"
#include "config.h"
#include "log.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "pg/pgserver.h"
#include "sbuf.h"
#include "source_ops.h"

void
slot_init(struct pg_source *s)
{
	memset(s, 0, sizeof(*s));
}

void
slot_release(struct pg_source *s)
{
	if (s->sql != NULL)
		PQfinish(s->sql);
	if (s->repl != NULL)
		PQfinish(s->repl);
	s->sql = s->repl = NULL;
	if (s->k.cfg != NULL)
		pgsrv_contract_release(&s->k);
	s->tables = NULL;
}

void
slot_forget_tables(struct pg_source *s)
{
	pgsrv_contract_forget_tables(&s->k);
	s->tables = NULL;
}

int
slot_connect_sql(struct pg_source *s, const struct config *cfg)
{
	pgsrv_contract_init(&s->k, cfg);
	s->tables = s->k.tables;
	s->sql = pgconn_open(cfg, PGCONN_ADMIN, "capture-pg", &s->err);
	return s->sql == NULL ? -1 : 0;
}

int
slot_connect_repl(struct pg_source *s, const struct config *cfg)
{
	s->repl = pgconn_open(cfg, PGCONN_REPLICATION, "capture-pg", &s->err);
	return s->repl == NULL ? -1 : 0;
}

int
slot_check_server(struct pg_source *s)
{
	if (pgsrv_facts(s->sql, &s->k.facts, &s->err) == -1)
		return -1;
	return pgsrv_judge_server(&s->k.facts, source_refuse, &s->err) ? -1 : 0;
}

/* a table's inheritance children are its rows: filed under it */
static void
follow_children(const struct pgcat_table *t, struct pgo_decoder *dec)
{
	const char **cols = xcalloc((size_t)t->ncols + 1, sizeof(char *));
	int i, n = 0;

	for (i = 0; i < t->ncols; i++)
		if (t->cols[i].sent)
			cols[n++] = t->cols[i].name;
	for (i = 0; i < t->nrels; i++)
		if (!t->rels[i].partition) {
			pgo_follow(dec, t->rels[i].qname, t->sec->rel, cols, n);
			log_info("table '%s' inherits from '%s': its rows are "
			    "synced as the parent's", t->rels[i].qname,
			    t->sec->rel);
		}
	free(cols);
}

/* the checks of one described table, and what the decoder learns of it */
static int
check_table(struct pg_source *s, const struct config *cfg,
    struct pgo_decoder *dec, int i)
{
	const struct sync_section *sec = &cfg->syncs[i];
	struct pgcat_table *t = &s->k.tables[i];
	const char **key;
	int j;

	if (pgcat_check_overlap(cfg, t, &s->err) == -1)
		return -1;
	if (sec->append_only) {
		/* filed by its content: no key, no before-image */
		pgo_allow_keyless(dec, sec->rel);
	} else {
		if (pgcat_check_images(t, &s->err) == -1)
			return -1;
		/* with REPLICA IDENTITY FULL pgoutput flags every column:
		 * the decoder needs the real key */
		key = xcalloc((size_t)t->nkey + 1, sizeof(char *));
		for (j = 0; j < t->nkey; j++)
			key[j] = t->cols[t->key[j]].name;
		pgo_set_key(dec, sec->rel, key, t->nkey);
		free(key);
	}
	s->k.usable[i] = 1;
	follow_children(t, dec);
	log_debug("table '%s': replica identity '%c', %d key column(s), %d "
	    "table(s) under it", sec->rel, t->ident, t->nkey, t->nrels);
	return 0;
}

int
slot_check_tables(struct pg_source *s, const struct config *cfg,
    struct pgo_decoder *dec)
{
	const struct sync_section **secs;
	struct p2o_err de;
	int i, j, a, n, ndone, drc = 0, rc = 0;

	/* described a batch at a time (a few questions for each batch, not
	 * four for each table: 5 ms a table at 4,000); checked in order, so
	 * the first table that fails is the one named */
	secs = xcalloc(PGCAT_BATCH, sizeof(*secs));
	for (a = 0; a < cfg->nsyncs && drc == 0 && rc == 0; a += n) {
		n = cfg->nsyncs - a < PGCAT_BATCH ? cfg->nsyncs - a :
		    PGCAT_BATCH;
		for (j = 0; j < n; j++)
			secs[j] = &cfg->syncs[a + j];
		drc = pgcat_describe_many(s->sql, cfg->publication, secs, n,
		    &s->k.tables[a], &ndone, &de);
		for (i = a; i < a + ndone && rc == 0; i++)
			rc = check_table(s, cfg, dec, i);
	}
	free(secs);
	if (rc == -1)
		return -1;
	if (drc == -1) {
		s->err = de;
		return -1;
	}
	pgsrv_place(&s->k);
	for (i = 0; i < cfg->nsyncs; i++)
		if (s->k.append[i])
			log_info("table '%s' (or a table under it) has no "
			    "replica identity: synced append-only through "
			    "publication '%s', which publishes inserts and "
			    "truncates only; its updates and deletes cannot be "
			    "seen", cfg->syncs[i].rel,
			    s->k.pubname[PGSRV_APPEND]);
	return 0;
}

/*
 * One publication: created when it is not there and the role may (a
 * first start), else judged - one the operator made is checked, never
 * changed. A slot older than <publication>_append cannot decode what it
 * holds from before: walstream.c says to drop the slot and load again.
 */
static int
ensure_pub(struct pg_source *s, enum pgsrv_which which)
{
	const struct config *cfg = s->k.cfg;
	int n;

	if (pgsrv_read_pub(s->sql, &s->k, which, &s->err) == -1 ||
	    pgsrv_judge_pub(&s->k, which, source_refuse, &s->err) != 0)
		return -1;
	if (s->k.pub[which].exists) {
		log_info("publication '%s' covers the %d configured table(s)",
		    s->k.pubname[which], which == PGSRV_APPEND ? s->k.nappend :
		    cfg->nsyncs - s->k.nappend);
		return 0;
	}
	if (pgsrv_create_pub(s->sql, &s->k, which, &s->err) == -1)
		return -1;
	n = which == PGSRV_APPEND ? s->k.nappend :
	    cfg->nsyncs - s->k.nappend + s->k.nnest;
	log_info("created publication '%s' for %d table(s)",
	    s->k.pubname[which], n);
	return 0;
}

int
slot_ensure_publication(struct pg_source *s, const struct config *cfg)
{
	if (ensure_pub(s, PGSRV_MAIN) == -1)
		return -1;
	return s->k.nappend ? ensure_pub(s, PGSRV_APPEND) : 0;
}

static int
create_slot(struct pg_source *s, const struct config *cfg)
{
	char at[32];

	if (pgsrv_create_slot(s->sql, cfg->slot_name, cfg->slot_failover,
	    &s->confirmed, &s->err) == -1)
		return -1;
	lsn_format(s->confirmed, at);
	log_info("created replication slot '%s' at %s%s", cfg->slot_name, at,
	    cfg->slot_failover ? " with failover = true: a standby running "
	    "sync_replication_slots keeps a copy" : "");
	return 0;
}

int
slot_ensure_slot(struct pg_source *s, const struct config *cfg,
    int new_stream)
{
	const struct pgsrv_slot *sl = &s->k.slot;
	char at[32];

	if (pgsrv_read_slot(s->sql, &s->k, &s->err) == -1)
		return -1;
	if (s->k.slot_found && strcmp(sl->wal_status, "lost") == 0 &&
	    new_stream) {
		/* the supervisor reloads every table: nothing is resumed
		 * from this slot, and it can never stream again */
		log_warnx("replication slot '%s' lost WAL it needed: dropping "
		    "it for a new stream (the tables are loaded again)",
		    cfg->slot_name);
		if (pgsrv_drop_slot(s->sql, cfg->slot_name, &s->err) == -1)
			return -1;
		return create_slot(s, cfg);
	}
	if (pgsrv_judge_slot(&s->k, source_refuse, &s->err) != 0)
		return -1;
	if (!s->k.slot_found)
		return create_slot(s, cfg);
	s->confirmed = sl->confirmed;
	lsn_format(s->confirmed, at);
	log_info("replication slot '%s' at %s retains %lld MiB of WAL "
	    "(wal_status '%s'%s)", cfg->slot_name, at,
	    (long long)(sl->retained / (1024 * 1024)), sl->wal_status,
	    sl->synced ? ", synchronized from the primary before this server "
	    "was promoted" : sl->failover ? ", failover" : "");
	return 0;
}

int
slot_start(struct pg_source *s, const struct config *cfg, uint64_t start_lsn)
{
	struct sbuf cmd = SBUF_INIT, pubs = SBUF_INIT;
	char at[32], slotpos[32];
	PGresult *res;
	char *q;
	int rc = -1;

	lsn_format(s->confirmed, slotpos);
	if (start_lsn != 0 && s->confirmed > start_lsn) {
		lsn_format(start_lsn, at);
		return p2o_fail(&s->err, P2O_EXIT_LOST, "checkpoint %s "
		    "is behind slot '%s' (confirmed %s): refusing to skip "
		    "changes; the changes in between are no longer in the "
		    "slot, so the tables must be loaded again", at,
		    cfg->slot_name, slotpos);
	}
	/* 0/0 asks the server for the slot's own position */
	s->start = start_lsn != 0 ? start_lsn : s->confirmed;
	lsn_format(start_lsn, at);

	/* publication_names is an identifier list inside a string */
	if ((q = PQescapeIdentifier(s->repl, cfg->publication,
	    strlen(cfg->publication))) == NULL)
		return pgconn_failed(s->repl, NULL, "quoting the publication",
		    &s->err);
	sbuf_adds(&pubs, q);
	PQfreemem(q);
	if (s->k.nappend) {
		if ((q = PQescapeIdentifier(s->repl, s->k.pubname[PGSRV_APPEND],
		    strlen(s->k.pubname[PGSRV_APPEND]))) == NULL)
			return pgconn_failed(s->repl, NULL, "quoting the "
			    "publication", &s->err);
		sbuf_addc(&pubs, ',');
		sbuf_adds(&pubs, q);
		PQfreemem(q);
	}

	sbuf_adds(&cmd, "START_REPLICATION SLOT ");
	pgconn_put_ident(&cmd, cfg->slot_name);
	sbuf_addf(&cmd, " LOGICAL %s (\"proto_version\" '1', "
	    "\"publication_names\" ", at);
	pgconn_put_literal(&cmd, pubs.buf);
	if (PQserverVersion(s->repl) >= 140000)
		sbuf_adds(&cmd, ", \"messages\" 'true'");
	sbuf_addc(&cmd, ')');

	res = pgconn_run(s->repl, PGRES_COPY_BOTH, "starting replication",
	    cmd.buf, 0, NULL, &s->err);
	if (res == NULL)
		goto out;
	PQclear(res);
	lsn_format(s->start, at);
	log_info("streaming slot '%s' publication '%s' from %s (slot "
	    "confirmed %s)", cfg->slot_name, cfg->publication, at, slotpos);
	/* the catalogue connection has nothing left to do */
	if (s->sql != NULL)
		PQfinish(s->sql);
	s->sql = NULL;
	rc = 0;
out:
	sbuf_release(&cmd);
	sbuf_release(&pubs);
	return rc;
}
