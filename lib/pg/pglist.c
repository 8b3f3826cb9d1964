/*
 * pglist.c - the PostgreSQL catalogue for `pg2osync init`: the tables a
 * section could name (lib/pg/pgcat.c's listing) and the field each column
 * becomes. The values arrive in their document form (capture-pg/README.md
 * "Type mapping"): numeric as strings with every digit, timestamps as ISO
 * 8601 with the column's fraction, bytea as base64, JSON as JSON.
 * Reads only; never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "pgcat.h"
#include "pgconn.h"
#include "pglist.h"
#include "sbuf.h"

/* an array type's element (pg_type.typelem of the arrays capture-pg maps) */
static uint32_t
element(uint32_t oid)
{
	static const uint32_t arr[][2] = {
		{ 1000, 16 }, { 1005, 21 }, { 1007, 23 }, { 1016, 20 },
		{ 1028, 26 }, { 1009, 25 }, { 1015, 1043 }, { 1014, 1042 },
		{ 1021, 700 }, { 1022, 701 }, { 1231, 1700 }, { 1115, 1114 },
		{ 1185, 1184 }, { 1182, 1082 }, { 2951, 2950 }, { 199, 114 },
		{ 3807, 3802 }, { 1001, 17 },
	};
	size_t i;

	for (i = 0; i < sizeof(arr) / sizeof(arr[0]); i++)
		if (arr[i][0] == oid)
			return arr[i][1];
	return oid;
}

void
pglist_field(const char *type, uint32_t typoid, const struct mapping_opts *o,
    struct target_field *out, char *note, size_t notelen)
{
	int a = 0, b = 0, n = source_cat_typmods(type, &a, &b);

	note[0] = '\0';
	out->factor = 0;
	/* an array is its elements: one field of the element's kind */
	switch (element(typoid)) {
	case 16:
		out->kind = TF_BOOLEAN;
		return;
	case 21:
		out->kind = TF_SHORT;
		return;
	case 23:
		out->kind = TF_INTEGER;
		return;
	case 20: case 26:
		out->kind = TF_LONG;
		return;
	case 700:
		out->kind = TF_FLOAT;
		return;
	case 701:
		out->kind = TF_DOUBLE;
		return;
	case 1700:
		source_cat_decimal(a, n == 2 ? b : 0, n >= 1, o, out, note,
		    notelen);
		return;
	case 25: case 1043: case 1042: case 19:
		out->kind = TF_TEXT;
		return;
	case 2950:
		out->kind = TF_KEYWORD;
		return;
	case 1082:
		out->kind = TF_DATE;
		return;
	case 1114: case 1184:
		/* without a typmod a timestamp keeps microseconds */
		out->kind = source_cat_timestamp(n >= 1 ? a : 6);
		return;
	case 114: case 3802:
		out->kind = source_cat_json(o);
		return;
	case 17:
		out->kind = TF_BINARY;
		return;
	default:
		/* times, intervals, enums, ranges, network types: the text
		 * as printed, searched whole */
		out->kind = TF_KEYWORD;
	}
}

/* a chosen table's columns, described as an append_only section would be:
 * the key does not matter to a mapping */
static int
describe(struct pg_conn *c, struct source_cat_table *ct,
    const struct mapping_opts *mo, struct p2o_err *e)
{
	struct sync_section sec;
	struct pgcat_table t;
	struct target_field f;
	char rel[512], note[256];
	int k;

	memset(&sec, 0, sizeof(sec));
	sec.name = ct->name;
	sec.schema = ct->schema;
	sec.table = ct->name;
	snprintf(rel, sizeof(rel), "%s.%s", ct->schema, ct->name);
	sec.rel = rel;
	sec.append_only = 1;
	if (pgcat_describe(c, "", &sec, &t, e) == -1)
		return -1;
	for (k = 0; k < t.ncols; k++) {
		memset(&f, 0, sizeof(f));
		pglist_field(t.cols[k].type, t.cols[k].typoid, mo, &f, note,
		    sizeof(note));
		source_cat_field(ct, k, t.cols[k].name, f.kind, f.factor, note);
	}
	pgcat_table_release(&t);
	return 0;
}

int
pglist_catalogue(const struct config *cf, const char *const *want, int n,
    const struct mapping_opts *mo, struct source_cat *cat, struct p2o_err *e)
{
	struct pgcat_name *all = NULL;
	struct pg_conn *c;
	int nall = 0, i, rc = -1;

	if ((c = pgconn_open(cf, PGCONN_ADMIN, "pg2osync init", e)) == NULL)
		return -1;
	snprintf(cat->from, sizeof(cat->from), "the catalogue of database "
	    "'%s'", PQdb((PGconn *)c));
	if (pgcat_tables(c, &all, &nall, e) == -1)
		goto out;
	for (i = 0; i < nall; i++)
		source_cat_add(cat, all[i].schema, all[i].name, all[i].has_key);
	if ((rc = source_cat_choose(cat, want, n, e->msg,
	    sizeof(e->msg))) != 0)
		goto out;
	for (i = 0; mo != NULL && i < cat->nchosen; i++)
		if (describe(c, &cat->t[cat->chosen[i]], mo, e) == -1) {
			rc = -1;
			goto out;
		}
out:
	pgcat_names_free(all, nall);
	pgconn_close(c);
	return rc;
}
