/*
 * mycat.c - the catalogue questions about a MySQL or MariaDB table
 * (mycat.h): its columns from information_schema.COLUMNS (DATA_TYPE,
 * COLUMN_TYPE with its labels and "unsigned", CHARACTER_SET_NAME),
 * MariaDB's JSON columns from CHECK_CONSTRAINTS, the primary key from
 * KEY_COLUMN_USAGE, and the key rule mycat.h states: the only place it is
 * written. Reads no row of data; never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "config.h"
#include "mycat.h"
#include "myconn.h"
#include "myval.h"
#include "p2o.h"
#include "sbuf.h"

/* 'v' for the connection */
static void
quote(MYSQL *m, struct sbuf *b, const char *v)
{
	myconn_quote(m, b, v, strlen(v));
}

void
my_table_release(struct my_table *tb)
{
	int i;

	for (i = 0; i < tb->ncols; i++)
		my_col_release(&tb->cols[i]);
	free(tb->cols);
	free(tb->pk);
	free(tb->keys);
	free(tb->db);
	free(tb->name);
	free(tb->rel);
	memset(tb, 0, sizeof(*tb));
}

int
mycat_column(const struct my_table *tb, const char *name)
{
	int i;

	for (i = 0; i < tb->ncols; i++)
		if (strcmp(tb->cols[i].name, name) == 0)
			return i;
	return -1;
}

/* MariaDB's JSON is a longtext with CHECK (json_valid(`col`)) */
static int
json_checked(char **clauses, int n, const char *col)
{
	char want[256];
	int i;

	snprintf(want, sizeof(want), "json_valid(`%s`)", col);
	for (i = 0; i < n; i++)
		if (strcmp(clauses[i], want) == 0)
			return 1;
	return 0;
}

int
mycat_table(struct st_mysql *m, int mariadb, const char *db,
    const char *name, struct my_table *tb, struct p2o_err *e)
{
	struct sbuf q = SBUF_INIT, where = SBUF_INIT;
	MYSQL_RES *r = NULL;
	MYSQL_ROW row;
	char **clauses = NULL;
	int nclauses = 0, i, rc = -1, k;

	memset(tb, 0, sizeof(*tb));
	sbuf_adds(&where, " WHERE TABLE_SCHEMA = ");
	quote(m, &where, db);
	sbuf_adds(&where, " AND TABLE_NAME = ");
	quote(m, &where, name);

	sbuf_addf(&q, "SELECT TABLE_TYPE FROM information_schema.TABLES%s",
	    where.buf);
	if ((r = myconn_query(m, q.buf, "reading information_schema", e)) ==
	    NULL)
		goto done;
	row = mysql_fetch_row(r);
	if (row == NULL || row[0] == NULL ||
	    strcmp(row[0], "BASE TABLE") != 0) {
		rc = row == NULL ? 1 : 2;
		goto done;
	}
	mysql_free_result(r);
	r = NULL;

	if (mariadb) {
		sbuf_reset(&q);
		sbuf_addf(&q, "SELECT CHECK_CLAUSE FROM "
		    "information_schema.CHECK_CONSTRAINTS WHERE "
		    "CONSTRAINT_SCHEMA = ");
		quote(m, &q, db);
		sbuf_adds(&q, " AND TABLE_NAME = ");
		quote(m, &q, name);
		if ((r = myconn_query(m, q.buf, "reading information_schema",
		    e)) == NULL)
			goto done;
		clauses = xcalloc(mysql_num_rows(r) + 1, sizeof(char *));
		while ((row = mysql_fetch_row(r)) != NULL)
			if (row[0] != NULL)
				clauses[nclauses++] = xstrdup(row[0]);
		mysql_free_result(r);
		r = NULL;
	}

	sbuf_reset(&q);
	sbuf_addf(&q, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, "
	    "CHARACTER_SET_NAME FROM information_schema.COLUMNS%s ORDER BY "
	    "ORDINAL_POSITION", where.buf);
	if ((r = myconn_query(m, q.buf, "reading information_schema", e)) ==
	    NULL)
		goto done;
	tb->db = xstrdup(db);
	tb->name = xstrdup(name);
	tb->rel = xmalloc(strlen(db) + strlen(name) + 2);
	snprintf(tb->rel, strlen(db) + strlen(name) + 2, "%s.%s", db, name);
	tb->cols = xcalloc(mysql_num_rows(r) + 1, sizeof(*tb->cols));
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (row[0] == NULL || row[1] == NULL || row[2] == NULL)
			continue;
		if (my_col_init(&tb->cols[tb->ncols], row[0], row[1], row[2],
		    row[3], json_checked(clauses, nclauses, row[0]),
		    e) == -1) {
			my_col_release(&tb->cols[tb->ncols]);
			p2o_err_prefix(e, "table '%s.%s'", db, name);
			e->code = P2O_EXIT_REFUSED;
			goto done;
		}
		tb->ncols++;
	}
	mysql_free_result(r);
	r = NULL;

	sbuf_reset(&q);
	sbuf_addf(&q, "SELECT COLUMN_NAME FROM "
	    "information_schema.KEY_COLUMN_USAGE%s AND CONSTRAINT_NAME = "
	    "'PRIMARY' ORDER BY ORDINAL_POSITION", where.buf);
	if ((r = myconn_query(m, q.buf, "reading information_schema", e)) ==
	    NULL)
		goto done;
	tb->pk = xcalloc(tb->ncols + 1, sizeof(int));
	while ((row = mysql_fetch_row(r)) != NULL)
		for (k = 0; k < tb->ncols; k++)
			if (row[0] != NULL && strcmp(tb->cols[k].name,
			    row[0]) == 0 && tb->npk < tb->ncols)
				tb->pk[tb->npk++] = k;
	tb->keys = xcalloc(tb->ncols + 1, sizeof(int));
	memcpy(tb->keys, tb->pk, (size_t)tb->npk * sizeof(int));
	tb->nkeys = tb->npk;
	rc = 0;
done:
	if (r != NULL)
		mysql_free_result(r);
	for (i = 0; i < nclauses; i++)
		free(clauses[i]);
	free(clauses);
	sbuf_release(&q);
	sbuf_release(&where);
	if (rc != 0 && tb->cols != NULL)
		my_table_release(tb);
	return rc;
}


int
mycat_key(struct my_table *tb, const struct sync_section *sec,
    struct p2o_err *e)
{
	const struct sync_more *more = sync_more(sec);
	int j, ix;

	if (more->primary_key != NULL) {
		/* every column is in every image: any columns will do */
		tb->nkeys = 0;
		free(tb->keys);
		tb->keys = xcalloc((size_t)more->nprimary_key + 1, sizeof(int));
		for (j = 0; j < more->nprimary_key; j++) {
			if ((ix = mycat_column(tb, more->primary_key[j])) < 0)
				return p2o_fail(e, P2O_EXIT_REFUSED, "table "
				    "'%s' (sync '%s'): 'primary_key' names "
				    "column '%s', which the table does not "
				    "have", sec->rel, sec->name,
				    more->primary_key[j]);
			tb->keys[tb->nkeys++] = ix;
		}
		return 0;
	}
	if (tb->nkeys == 0 && !sec->append_only)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' (sync '%s') "
		    "has no primary key: a document's id is its row's key "
		    "(declare 'append_only: true' for an insert-only table, or "
		    "name its key with 'primary_key')", sec->rel, sec->name);
	return 0;
}

int
mycat_describe(struct st_mysql *m, int mariadb,
    const struct sync_section *sec, struct my_table *tb, struct p2o_err *e)
{
	int rc;

	if ((rc = mycat_table(m, mariadb, sec->schema, sec->table, tb, e)) ==
	    -1)
		return -1;
	if (rc == 1)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' (sync '%s') "
		    "does not exist, or the user may not read it", sec->rel,
		    sec->name);
	if (rc == 2)
		return p2o_fail(e, P2O_EXIT_REFUSED, "'%s' (sync '%s') is not "
		    "a base table: only tables have rows in the binlog",
		    sec->rel, sec->name);
	if (mycat_key(tb, sec, e) == -1) {
		my_table_release(tb);
		return -1;
	}
	return 0;
}

int
mycat_tables(struct st_mysql *m, const char *db, struct mycat_name **v,
    int *n, struct p2o_err *e)
{
	struct sbuf q = SBUF_INIT;
	MYSQL_RES *r;
	MYSQL_ROW row;

	*v = NULL;
	*n = 0;
	sbuf_adds(&q, "SELECT t.TABLE_NAME, EXISTS (SELECT 1 FROM "
	    "information_schema.TABLE_CONSTRAINTS k WHERE k.TABLE_SCHEMA = "
	    "t.TABLE_SCHEMA AND k.TABLE_NAME = t.TABLE_NAME AND "
	    "k.CONSTRAINT_TYPE = 'PRIMARY KEY') FROM information_schema.TABLES t "
	    "WHERE t.TABLE_TYPE = 'BASE TABLE' AND t.TABLE_SCHEMA = ");
	quote(m, &q, db);
	sbuf_adds(&q, " ORDER BY 1");
	r = myconn_query(m, q.buf, "listing the tables", e);
	sbuf_release(&q);
	if (r == NULL)
		return -1;
	*v = xcalloc(mysql_num_rows(r) + 1, sizeof(**v));
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (row[0] == NULL)
			continue;
		(*v)[*n].name = xstrdup(row[0]);
		(*v)[*n].has_key = row[1] != NULL && strcmp(row[1], "1") == 0;
		(*n)++;
	}
	mysql_free_result(r);
	return 0;
}

void
mycat_names_free(struct mycat_name *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

int
mycat_row_estimate(MYSQL *m, const char *db, const char *table,
    uint64_t *rows, struct p2o_err *e)
{
	struct sbuf q = SBUF_INIT;
	int rc;

	sbuf_adds(&q, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE "
	    "TABLE_SCHEMA = ");
	myconn_quote(m, &q, db, strlen(db));
	sbuf_adds(&q, " AND TABLE_NAME = ");
	myconn_quote(m, &q, table, strlen(table));
	rc = myconn_query_u64(m, q.buf, "reading the row estimate", rows, e);
	sbuf_release(&q);
	return rc;
}
