/*
 * postgres_admin.c - the blocking operations of the PostgreSQL target, for
 * ckpt and the operator's commands, on the connection's own session: the
 * state documents (checkpoint, load progress) in the pg2osync_state
 * table, whether a table exists, its creation from the section's DDL,
 * its row count and its removal, and what a table has nothing of (load
 * settings to suspend, pipelines, a refresh: a committed row is visible
 * to the next statement). Never logs or exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "p2o.h"
#include "pg/pgconn.h"
#include "postgres.h"

#define STATE_DDL \
	"CREATE TABLE IF NOT EXISTS " PGT_STATE_TABLE " (" \
	"key text PRIMARY KEY, version bigint NOT NULL, doc json NOT NULL, " \
	"updated timestamptz NOT NULL DEFAULT pg_catalog.now())"

/* a statement on c's session; the result, or NULL with err (a lost
 * connection closed, for the next call to open another) */
static PGresult *
run(struct target_conn *c, int want, const char *what, const char *sql,
    int n, const char *const *params, struct p2o_err *err)
{
	struct pgt_session *s;
	PGresult *res;

	if ((s = pgt_session_of(c, err)) == NULL)
		return NULL;
	res = pgconn_run(s->pg, want, what, sql, n, params, err);
	if (res == NULL)
		pgt_session_check(c);
	return res;
}

/* 1 when the table (an index name, or one of ours) exists, 0 not, -1 */
static int
table_exists(struct target_conn *c, const char *index, struct p2o_err *err)
{
	struct sbuf q = SBUF_INIT;
	const char *param;
	PGresult *res;
	int rc;

	pgt_put_table(&q, index);
	param = q.buf;
	res = run(c, PGRES_TUPLES_OK, "looking a table up",
	    "SELECT pg_catalog.to_regclass($1) IS NOT NULL", 1, &param, err);
	sbuf_release(&q);
	if (res == NULL)
		return -1;
	rc = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return rc;
}

int
pgt_state_prepare(struct target_conn *c, int *created, struct p2o_err *err)
{
	PGresult *res;
	int rc;

	*created = 0;
	if ((rc = table_exists(c, PGT_STATE_TABLE, err)) == -1)
		return -1;
	if (rc == 0) {
		if ((res = run(c, PGRES_COMMAND_OK, "creating table '"
		    PGT_STATE_TABLE "'", STATE_DDL, 0, NULL, err)) == NULL)
			return -1;
		PQclear(res);
		*created = 1;
	}
	c->state_ready = 1;
	return 0;
}

int
pgt_state_get(struct target_conn *c, const char *key, struct sbuf *doc,
    int *found, struct p2o_err *err)
{
	PGresult *res;
	int rc;

	*found = 0;
	sbuf_reset(doc);
	if (!c->state_ready) {
		if ((rc = table_exists(c, PGT_STATE_TABLE, err)) != 1)
			return rc;
		c->state_ready = 1;
	}
	res = run(c, PGRES_TUPLES_OK, "reading a state document",
	    "SELECT doc::text FROM " PGT_STATE_TABLE " WHERE key = $1", 1,
	    &key, err);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 1) {
		sbuf_adds(doc, PQgetvalue(res, 0, 0));
		*found = 1;
	}
	PQclear(res);
	return 0;
}

int
pgt_state_put(struct target_conn *c, const char *key, const char *body,
    size_t len, uint64_t version, int *conflict, struct p2o_err *err)
{
	char ver[24], *doc;
	const char *params[3];
	PGresult *res;
	int created;

	*conflict = 0;
	if (!c->state_ready && pgt_state_prepare(c, &created, err) == -1)
		return -1;
	if (version > (uint64_t)INT64_MAX)
		return p2o_fail(err, P2O_EXIT_CHECKPOINT, "state version %llu "
		    "does not fit a bigint", (unsigned long long)version);
	snprintf(ver, sizeof(ver), "%llu", (unsigned long long)version);
	doc = xstrndup(body, len);
	params[0] = key, params[1] = ver, params[2] = doc;
	/* a versioned write never replaces a higher version */
	res = run(c, PGRES_COMMAND_OK, "writing a state document",
	    version == 0 ?
	    "INSERT INTO " PGT_STATE_TABLE " AS s (key, version, doc) "
	    "VALUES ($1, $2, $3::json) ON CONFLICT (key) DO UPDATE SET "
	    "version = excluded.version, doc = excluded.doc, "
	    "updated = pg_catalog.now()" :
	    "INSERT INTO " PGT_STATE_TABLE " AS s (key, version, doc) "
	    "VALUES ($1, $2, $3::json) ON CONFLICT (key) DO UPDATE SET "
	    "version = excluded.version, doc = excluded.doc, "
	    "updated = pg_catalog.now() WHERE s.version <= excluded.version",
	    3, params, err);
	free(doc);
	if (res == NULL)
		return -1;
	*conflict = atoi(PQcmdTuples(res)) == 0;
	PQclear(res);
	return 0;
}

int
pgt_index_exists(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	return table_exists(c, index, err);
}

int
pgt_index_create(struct target_conn *c, const char *index, const char *body,
    int *created, struct p2o_err *err)
{
	PGresult *res;
	int rc;

	*created = 0;
	if ((rc = table_exists(c, index, err)) != 0)
		return rc == 1 ? 0 : -1;
	if (body == NULL)
		return p2o_fail(err, P2O_EXIT_REFUSED, "table '%s' does not "
		    "exist, and its section has no mapping_file to create it "
		    "from", index);
	if ((res = run(c, PGRES_COMMAND_OK, "creating a target table", body,
	    0, NULL, err)) == NULL)
		return -1;
	PQclear(res);
	*created = 1;
	return 0;
}

/* nothing of a table's own is suspended during a load: an existing
 * table has nothing to restore ({}) */
int
pgt_load_settings(struct target_conn *c, const char *index,
    struct sbuf *orig, int *found, struct p2o_err *err)
{
	int rc = table_exists(c, index, err);

	*found = rc == 1;
	sbuf_reset(orig);
	if (rc == 1)
		sbuf_adds(orig, "{}");
	return rc == -1 ? -1 : 0;
}

int
pgt_load_suspend(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	(void)c, (void)index, (void)err;
	return 0;
}

int
pgt_load_restore(struct target_conn *c, const char *index, struct jspan orig,
    struct p2o_err *err)
{
	(void)c, (void)index, (void)orig, (void)err;
	return 0;
}

/* pipelines are refused at load (no TCAP_PIPELINES): none exists */
int
pgt_pipeline_exists(struct target_conn *c, const char *name,
    struct p2o_err *err)
{
	(void)c, (void)name, (void)err;
	return 0;
}

int
pgt_index_state(struct target_conn *c, const char *name,
    struct target_index_state *st, struct p2o_err *err)
{
	int rc;

	memset(st, 0, sizeof(*st));
	if ((rc = table_exists(c, name, err)) == -1)
		return -1;
	st->exists = rc;
	return 0;
}

/* the DDL runs only on a table that is not there: an existing table is
 * taken as it is, and its columns judged at each write */
int
pgt_mapping_conflicts(struct target_conn *c, const char *index,
    const char *body, struct sbuf *report, int *n, struct p2o_err *err)
{
	(void)c, (void)index, (void)body, (void)report, (void)err;
	*n = 0;
	return 0;
}

int
pgt_refresh(struct target_conn *c, const char *indices, struct p2o_err *err)
{
	(void)c, (void)indices, (void)err;
	return 0;
}

int
pgt_doc_count(struct target_conn *c, const char *index, uint64_t *n,
    struct p2o_err *err)
{
	struct sbuf q = SBUF_INIT;
	PGresult *res;

	*n = 0;
	sbuf_adds(&q, "SELECT pg_catalog.count(*) FROM ");
	pgt_put_table(&q, index);
	res = run(c, PGRES_TUPLES_OK, "counting a table's rows", q.buf, 0,
	    NULL, err);
	sbuf_release(&q);
	if (res == NULL)
		return -1;
	*n = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

int
pgt_index_delete(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	struct sbuf q = SBUF_INIT;
	PGresult *res;

	sbuf_adds(&q, "DROP TABLE IF EXISTS ");
	pgt_put_table(&q, index);
	res = run(c, PGRES_COMMAND_OK, "dropping a table", q.buf, 0, NULL,
	    err);
	sbuf_release(&q);
	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}
