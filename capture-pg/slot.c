/*
 * slot.c - everything capture-pg asks the server before streaming starts:
 * the checks that refuse a server or a table we cannot stream from, the
 * publication, the replication slot and the START_REPLICATION command.
 * Owns every replication command the tool sends and every statement about
 * the publication and the slot; the connections and the catalogue are the
 * source layer's (lib/pg/pgconn.c, lib/pg/pgcat.c).
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
#include "sbuf.h"

void
slot_init(struct pg_source *s)
{
	memset(s, 0, sizeof(*s));
}

void
slot_release(struct pg_source *s)
{
	int i;

	if (s->sql != NULL)
		PQfinish(s->sql);
	if (s->repl != NULL)
		PQfinish(s->repl);
	s->sql = s->repl = NULL;
	for (i = 0; i < s->ntables; i++)
		pgcat_table_release(&s->tables[i]);
	free(s->tables);
	free(s->append);
	s->tables = NULL;
	s->append = NULL;
	s->ntables = s->nappend = 0;
}

int
slot_connect_sql(struct pg_source *s, const struct config *cfg)
{
	s->sql = pgconn_open(cfg, PGCONN_SQL, "capture-pg", &s->err);
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
	PGresult *res;
	const char *v;

	res = pgconn_run(s->sql, PGRES_TUPLES_OK, "reading wal_level",
	    "SHOW wal_level", 0, NULL, &s->err);
	if (res == NULL)
		return -1;
	v = PQgetvalue(res, 0, 0);
	if (strcmp(v, "logical") != 0) {
		p2o_fail(&s->err, P2O_EXIT_REFUSED, "wal_level is '%s'; "
		    "logical replication needs wal_level = logical", v);
		PQclear(res);
		return -1;
	}
	PQclear(res);

	res = pgconn_run(s->sql, PGRES_TUPLES_OK, "reading the role's "
	    "attributes", "SELECT r.rolreplication OR r.rolsuper, "
	    "current_user, pg_catalog.current_database() FROM "
	    "pg_catalog.pg_roles r WHERE r.rolname = current_user", 0, NULL,
	    &s->err);
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return p2o_fail(&s->err, P2O_EXIT_REFUSED, "the current role "
		    "is not in pg_roles");
	}
	snprintf(s->dbname, sizeof(s->dbname), "%s", PQgetvalue(res, 0, 2));
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
		p2o_fail(&s->err, P2O_EXIT_REFUSED, "role '%s' has neither "
		    "REPLICATION nor SUPERUSER; logical replication needs "
		    "ALTER ROLE ... REPLICATION", PQgetvalue(res, 0, 1));
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 0;
}

/* which publication a table goes in: an append-only table whose tree
 * lacks a replica identity anywhere in <publication>_append, which
 * publishes no update or delete, so that the source's own UPDATE and
 * DELETE keep working */
static void
place(struct pg_source *s, const struct config *cfg, int i)
{
	if (cfg->syncs[i].append_only &&
	    !pgcat_tree_has_identity(&s->tables[i])) {
		s->append[i] = 1;
		s->nappend++;
	}
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

int
slot_check_tables(struct pg_source *s, const struct config *cfg,
    struct pgo_decoder *dec)
{
	const struct sync_section *sec;
	struct pgcat_table *t;
	const char **key;
	int i, j;

	s->tables = xcalloc((size_t)cfg->nsyncs + 1, sizeof(*s->tables));
	s->append = xcalloc((size_t)cfg->nsyncs + 1, sizeof(int));
	for (i = 0; i < cfg->nsyncs; i++) {
		sec = &cfg->syncs[i];
		t = &s->tables[i];
		if (pgcat_describe(s->sql, cfg->publication, sec, t,
		    &s->err) == -1)
			return -1;
		s->ntables = i + 1;
		if (pgcat_check_overlap(cfg, t, &s->err) == -1)
			return -1;
		place(s, cfg, i);
		if (sec->append_only) {
			/* filed by its content: no key, no before-image */
			pgo_allow_keyless(dec, sec->rel);
			if (s->append[i])
				log_info("table '%s' (or a table under it) has "
				    "no replica identity: synced append-only "
				    "through publication '%s_append', which "
				    "publishes inserts and truncates only; its "
				    "updates and deletes cannot be seen",
				    sec->rel, cfg->publication);
		} else {
			if (pgcat_check_images(t, &s->err) == -1)
				return -1;
			/* with REPLICA IDENTITY FULL pgoutput flags every
			 * column: the decoder needs the real key */
			key = xcalloc((size_t)t->nkey + 1, sizeof(char *));
			for (j = 0; j < t->nkey; j++)
				key[j] = t->cols[t->key[j]].name;
			pgo_set_key(dec, sec->rel, key, t->nkey);
			free(key);
		}
		follow_children(t, dec);
		log_debug("table '%s': replica identity '%c', %d key "
		    "column(s), %d table(s) under it", sec->rel, t->ident,
		    t->nkey, t->nrels);
	}
	return 0;
}
/* "schema"."table", quoted for SQL; 0 or -1 with s->err */
static int
add_qualified(struct pg_source *s, struct sbuf *b,
    const struct sync_section *sec)
{
	char *q;

	if ((q = PQescapeIdentifier(s->sql, sec->schema,
	    strlen(sec->schema))) == NULL)
		return pgconn_failed(s->sql, NULL, "quoting a schema name",
		    &s->err);
	sbuf_adds(b, q);
	PQfreemem(q);
	sbuf_addc(b, '.');
	if ((q = PQescapeIdentifier(s->sql, sec->table,
	    strlen(sec->table))) == NULL)
		return pgconn_failed(s->sql, NULL, "quoting a table name",
		    &s->err);
	sbuf_adds(b, q);
	PQfreemem(q);
	return 0;
}

/* "schema"."table" of a "schema.table" name */
static int
add_rel(struct pg_source *s, struct sbuf *b, const char *rel)
{
	struct sync_section sec = { 0 };
	const char *dot = strchr(rel, '.');
	int rc;

	sec.schema = xstrndup(rel, (size_t)(dot - rel));
	sec.table = (char *)dot + 1;
	rc = add_qualified(s, b, &sec);
	free(sec.schema);
	return rc;
}

/* "<publication>_append" (the configuration keeps it within 63 bytes) */
static void
append_name(const struct config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%s_append", cfg->publication);
}

/* CREATE PUBLICATION name FOR TABLE the sections whose s->append is
 * append, or without tables when there are none */
static int
create_publication(struct pg_source *s, const struct config *cfg,
    const char *name, int append)
{
	struct sbuf sql = SBUF_INIT;
	PGresult *res;
	const char **nest;
	char *q;
	int i, n = 0, rc = -1, nnest = config_nest_tables(cfg, &nest);

	if ((q = PQescapeIdentifier(s->sql, name, strlen(name))) == NULL) {
		free(nest);
		return pgconn_failed(s->sql, NULL, "quoting the publication",
		    &s->err);
	}
	sbuf_adds(&sql, "CREATE PUBLICATION ");
	sbuf_adds(&sql, q);
	PQfreemem(q);
	for (i = 0; i < cfg->nsyncs; i++) {
		if (s->append[i] != append)
			continue;
		sbuf_adds(&sql, n++ == 0 ? " FOR TABLE " : ", ");
		if (add_qualified(s, &sql, &cfg->syncs[i]) == -1)
			goto out;
	}
	/* a collection's tables: their changes rewrite the parents */
	for (i = 0; !append && i < nnest; i++) {
		sbuf_adds(&sql, n++ == 0 ? " FOR TABLE " : ", ");
		if (add_rel(s, &sql, nest[i]) == -1)
			goto out;
	}
	/* a partitioned table's rows then arrive under its own name; the
	 * append publication publishes no update or delete, so a table
	 * without a replica identity may be in it and still be updated */
	sbuf_adds(&sql, append ? " WITH (publish = 'insert, truncate', "
	    "publish_via_partition_root = true)" :
	    " WITH (publish_via_partition_root = true)");
	res = pgconn_run(s->sql, PGRES_COMMAND_OK, "creating the publication",
	    sql.buf, 0, NULL, &s->err);
	if (res == NULL)
		goto out;
	PQclear(res);
	log_info("created publication '%s' for %d table(s)", name, n);
	rc = 0;
out:
	free(nest);
	sbuf_release(&sql);
	return rc;
}

/* 1 if the publication holds the table oid */
static int
publishes(struct pg_source *s, const char *pub, uint32_t oid)
{
	char buf[16];
	const char *params[2] = { pub, buf };
	PGresult *res;
	int found;

	snprintf(buf, sizeof(buf), "%u", oid);
	res = pgconn_query(s->sql, "reading the publication's tables",
	    "SELECT 1 FROM pg_catalog.pg_publication_tables pt "
	    "JOIN pg_catalog.pg_namespace n ON n.nspname = pt.schemaname "
	    "JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid "
	    "AND c.relname = pt.tablename "
	    "WHERE pt.pubname = $1 AND c.oid = $2", 2, params, &s->err);
	if (res == NULL)
		return -1;
	found = PQntuples(res) > 0;
	PQclear(res);
	return found;
}

/*
 * Each inheritance child of section i is in pub, which the table is in:
 * a publication holds the children a table had when it was added, and
 * one created since would be read by the load but never streamed.
 */
static int
publishes_children(struct pg_source *s, const char *pub, int i)
{
	const struct pgcat_table *t = &s->tables[i];
	int k, r, missing = 0;

	for (k = 0; k < t->nrels; k++) {
		if (t->rels[k].partition)
			continue;
		if ((r = publishes(s, pub, t->rels[k].oid)) == -1)
			return -1;
		if (r)
			continue;
		log_warnx("publication '%s' does not include table '%s', "
		    "which inherits from '%s' (ALTER PUBLICATION %s ADD TABLE "
		    "%s)", pub, t->rels[k].qname, t->sec->rel, pub,
		    t->rels[k].qname);
		if (missing++ == 0)
			p2o_fail(&s->err, P2O_EXIT_REFUSED, "publication '%s' "
			    "does not include table '%s', which inherits from "
			    "'%s' (sync section '%s'): its changes would never "
			    "reach the index (ALTER PUBLICATION %s ADD TABLE "
			    "%s)", pub, t->rels[k].qname, t->sec->rel,
			    t->sec->name, pub, t->rels[k].qname);
	}
	if (missing > 1)
		p2o_err_prefix(&s->err, "%d children of '%s' are missing from "
		    "publication '%s', each logged above", missing,
		    t->sec->rel, pub);
	return missing ? -1 : 0;
}

/* a publication the operator made holds every table a collection
 * reads, or their changes would never rewrite a parent */
static int
publishes_nest(struct pg_source *s, const struct config *cfg)
{
	const char **nest;
	const char *params[3];
	const char *dot;
	PGresult *res;
	char *schema;
	int i, n = config_nest_tables(cfg, &nest), found, rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		dot = strchr(nest[i], '.');
		schema = xstrndup(nest[i], (size_t)(dot - nest[i]));
		params[0] = cfg->publication;
		params[1] = schema;
		params[2] = dot + 1;
		res = pgconn_query(s->sql, "reading the publication's tables",
		    "SELECT 1 FROM pg_catalog.pg_publication_tables WHERE "
		    "pubname = $1 AND schemaname = $2 AND tablename = $3", 3,
		    params, &s->err);
		free(schema);
		if (res == NULL) {
			rc = -1;
			break;
		}
		found = PQntuples(res) > 0;
		PQclear(res);
		if (!found)
			rc = p2o_fail(&s->err, P2O_EXIT_REFUSED, "publication "
			    "'%s' does not include table '%s', which a "
			    "collection reads: its changes would never rewrite "
			    "the parents (ALTER PUBLICATION %s ADD TABLE %s)",
			    cfg->publication, nest[i], cfg->publication,
			    nest[i]);
	}
	free(nest);
	return rc;
}

/* the publication's actions (insert, update, delete, truncate), or
 * NULL when it does not exist; -1 on a failed read */
static int
pub_actions(struct pg_source *s, const char *name, int act[4])
{
	const char *params[1] = { name };
	PGresult *res;
	int i;

	res = pgconn_run(s->sql, PGRES_TUPLES_OK, "reading the publication",
	    "SELECT p.pubinsert, p.pubupdate, p.pubdelete, p.pubtruncate "
	    "FROM pg_catalog.pg_publication p WHERE p.pubname = $1",
	    1, params, &s->err);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return 0;
	}
	for (i = 0; i < 4; i++)
		act[i] = strcmp(PQgetvalue(res, 0, i), "t") == 0;
	PQclear(res);
	return 1;
}

/* the append publication: inserts, no update or delete, every keyless
 * append-only table */
static int
ensure_append(struct pg_source *s, const struct config *cfg)
{
	char name[80];
	int act[4], i, r;

	append_name(cfg, name, sizeof(name));
	if ((r = pub_actions(s, name, act)) == -1)
		return -1;
	if (r == 0) {
		/* a slot older than it cannot decode what it holds from
		 * before: drop the slot and load again (walstream.c says so) */
		return create_publication(s, cfg, name, 1);
	}
	if (!act[0] || act[1] || act[2])
		return p2o_fail(&s->err, P2O_EXIT_REFUSED, "publication '%s' "
		    "must publish inserts and no update or delete: the tables "
		    "in it have no replica identity, and the source's own "
		    "updates of them would fail", name);
	for (i = 0; i < cfg->nsyncs; i++) {
		if (!s->append[i])
			continue;
		if ((r = publishes(s, name, s->tables[i].oid)) == -1)
			return -1;
		if (!r)
			return p2o_fail(&s->err, P2O_EXIT_REFUSED,
			    "publication '%s' does not include table '%s' "
			    "(sync section '%s'); add it with ALTER "
			    "PUBLICATION", name, cfg->syncs[i].rel,
			    cfg->syncs[i].name);
		if (publishes_children(s, name, i) == -1)
			return -1;
	}
	return 0;
}

int
slot_ensure_publication(struct pg_source *s, const struct config *cfg)
{
	static const char *const ops[] = { "insert", "update", "delete" };
	const struct sync_section *sec;
	int act[4], i, r;

	if ((r = pub_actions(s, cfg->publication, act)) == -1)
		return -1;
	if (r == 0) {
		if (create_publication(s, cfg, cfg->publication, 0) == -1)
			return -1;
		return s->nappend ? ensure_append(s, cfg) : 0;
	}
	/* one the operator made: check it, never change it */
	for (i = 0; i < 3; i++)
		if (!act[i])
			return p2o_fail(&s->err, P2O_EXIT_REFUSED,
			    "publication '%s' does not publish %s; the index "
			    "would miss those changes", cfg->publication,
			    ops[i]);
	if (!act[3])
		log_warnx("publication '%s' does not publish truncate; a "
		    "TRUNCATE will not clear the index", cfg->publication);

	for (i = 0; i < cfg->nsyncs; i++) {
		sec = &cfg->syncs[i];
		if ((r = publishes(s, cfg->publication,
		    s->tables[i].oid)) == -1)
			return -1;
		if (s->append[i] && r)
			return p2o_fail(&s->err, P2O_EXIT_REFUSED,
			    "publication '%s' includes table '%s', which has "
			    "no replica identity: its own UPDATE and DELETE "
			    "fail while a publication publishes them. Remove "
			    "it (ALTER PUBLICATION %s DROP TABLE %s): as an "
			    "append_only table it is read through '%s_append'",
			    cfg->publication, sec->rel, cfg->publication,
			    sec->rel, cfg->publication);
		if (!s->append[i] && !r)
			return p2o_fail(&s->err, P2O_EXIT_REFUSED,
			    "publication '%s' does not include table '%s' "
			    "(sync section '%s'); add it with ALTER "
			    "PUBLICATION or configure another publication",
			    cfg->publication, sec->rel, sec->name);
		if (!s->append[i] &&
		    publishes_children(s, cfg->publication, i) == -1)
			return -1;
	}
	if (publishes_nest(s, cfg) == -1)
		return -1;
	log_info("publication '%s' covers the %d configured table(s)",
	    cfg->publication, cfg->nsyncs - s->nappend);
	return s->nappend ? ensure_append(s, cfg) : 0;
}

static int
create_slot(struct pg_source *s, const struct config *cfg)
{
	struct sbuf cmd = SBUF_INIT;
	PGresult *res;
	int rc = -1;

	sbuf_adds(&cmd, "CREATE_REPLICATION_SLOT ");
	pgconn_put_ident(&cmd, cfg->slot_name);
	sbuf_adds(&cmd, " LOGICAL \"pgoutput\"");
	/* no snapshot: the initial load does not read from one */
	if (PQserverVersion(s->repl) >= 150000)
		sbuf_adds(&cmd, " (SNAPSHOT 'nothing')");
	else
		sbuf_adds(&cmd, " NOEXPORT_SNAPSHOT");
	res = pgconn_run(s->repl, PGRES_TUPLES_OK, "creating the replication "
	    "slot", cmd.buf, 0, NULL, &s->err);
	if (res == NULL)
		goto out;
	if (PQntuples(res) != 1 || PQnfields(res) < 2 ||
	    lsn_parse(PQgetvalue(res, 0, 1), &s->confirmed) == -1) {
		p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "CREATE_REPLICATION_SLOT "
		    "returned no consistent point");
		PQclear(res);
		goto out;
	}
	log_info("created replication slot '%s' at %s", cfg->slot_name,
	    PQgetvalue(res, 0, 1));
	PQclear(res);
	rc = 0;
out:
	sbuf_release(&cmd);
	return rc;
}

/* a slot that can never stream again, dropped on the SQL connection */
static int
drop_slot(struct pg_source *s, const struct config *cfg)
{
	const char *params[1] = { cfg->slot_name };
	PGresult *res;

	res = pgconn_run(s->sql, PGRES_TUPLES_OK, "dropping the lost "
	    "replication slot", "SELECT pg_catalog.pg_drop_replication_slot("
	    "$1)", 1, params, &s->err);
	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}

int
slot_ensure_slot(struct pg_source *s, const struct config *cfg,
    int new_stream)
{
	const char *params[1] = { cfg->slot_name };
	const char *type, *plugin, *db, *status;
	PGresult *res;
	long long retained;

	res = pgconn_run(s->sql, PGRES_TUPLES_OK, "reading the replication "
	    "slot", "SELECT slot_type, plugin, database, confirmed_flush_lsn, "
	    "wal_status, "
	    "pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), "
	    "restart_lsn)::bigint FROM pg_catalog.pg_replication_slots WHERE "
	    "slot_name = $1", 1, params, &s->err);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return create_slot(s, cfg);
	}
	type = PQgetvalue(res, 0, 0);
	plugin = PQgetvalue(res, 0, 1);
	db = PQgetvalue(res, 0, 2);
	status = PQgetvalue(res, 0, 4);
	if (strcmp(type, "logical") != 0)
		p2o_fail(&s->err, P2O_EXIT_REFUSED, "replication slot '%s' is "
		    "a %s slot, not a logical one", cfg->slot_name, type);
	else if (strcmp(plugin, "pgoutput") != 0)
		p2o_fail(&s->err, P2O_EXIT_REFUSED, "replication slot '%s' "
		    "uses plugin '%s', not 'pgoutput'", cfg->slot_name, plugin);
	else if (strcmp(db, s->dbname) != 0)
		p2o_fail(&s->err, P2O_EXIT_REFUSED, "replication slot '%s' "
		    "belongs to database '%s', not '%s'", cfg->slot_name, db,
		    s->dbname);
	else if (strcmp(status, "lost") == 0 && new_stream) {
		/* the supervisor reloads every table: nothing is resumed
		 * from this slot, and it can never stream again */
		PQclear(res);
		log_warnx("replication slot '%s' lost WAL it needed: dropping "
		    "it for a new stream (the tables are loaded again)",
		    cfg->slot_name);
		if (drop_slot(s, cfg) == -1)
			return -1;
		return create_slot(s, cfg);
	} else if (strcmp(status, "lost") == 0)
		p2o_fail(&s->err, P2O_EXIT_LOST, "replication slot '%s' has "
		    "lost WAL it needs (wal_status 'lost', max_slot_wal_keep_"
		    "size): the changes since its position are gone, the "
		    "tables must be loaded again", cfg->slot_name);
	else if (lsn_parse(PQgetvalue(res, 0, 3), &s->confirmed) == -1)
		p2o_fail(&s->err, P2O_EXIT_REFUSED, "replication slot '%s' has "
		    "no confirmed position", cfg->slot_name);
	else {
		retained = PQgetisnull(res, 0, 5) ? 0 :
		    strtoll(PQgetvalue(res, 0, 5), NULL, 10);
		log_info("replication slot '%s' at %s retains %lld MiB of WAL "
		    "(wal_status '%s')", cfg->slot_name, PQgetvalue(res, 0, 3),
		    retained / (1024 * 1024), status);
		PQclear(res);
		return 0;
	}
	PQclear(res);
	return -1;
}

int
slot_start(struct pg_source *s, const struct config *cfg, uint64_t start_lsn)
{
	struct sbuf cmd = SBUF_INIT, pubs = SBUF_INIT;
	char at[32], slotpos[32], name[80];
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
	if (s->nappend) {
		append_name(cfg, name, sizeof(name));
		if ((q = PQescapeIdentifier(s->repl, name,
		    strlen(name))) == NULL)
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
