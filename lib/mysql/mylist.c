/*
 * mylist.c - the MySQL/MariaDB catalogue for `pg2osync init`: the base
 * tables of the database the url names (a table of another database could
 * be read, but the url's is the one meant) and the field each column
 * becomes. The values arrive in their document form (capture-mysql/
 * README.md "Type mapping"). Reads only; never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "mycat.h"
#include "myconn.h"
#include "mylist.h"
#include "myval.h"
#include "p2o.h"
#include "sbuf.h"

void
mylist_field(const char *data_type, const char *column_type, int is_json,
    const struct mapping_opts *o, struct target_field *out, char *note,
    size_t notelen)
{
	int a = 0, b = 0, n = source_cat_typmods(column_type, &a, &b);
	int uns = strstr(column_type, "unsigned") != NULL;
	const char *t = data_type;

	note[0] = '\0';
	out->factor = 0;
	if (is_json || strcasecmp(t, "json") == 0)
		out->kind = source_cat_json(o);
	else if (strcasecmp(t, "tinyint") == 0)
		out->kind = uns ? TF_SHORT : TF_BYTE;
	else if (strcasecmp(t, "smallint") == 0)
		out->kind = uns ? TF_INTEGER : TF_SHORT;
	else if (strcasecmp(t, "mediumint") == 0)
		out->kind = TF_INTEGER;
	else if (strcasecmp(t, "int") == 0 || strcasecmp(t, "integer") == 0)
		out->kind = uns ? TF_LONG : TF_INTEGER;
	else if (strcasecmp(t, "bigint") == 0)
		/* up to 18446744073709551615, which long refuses */
		out->kind = uns ? TF_UNSIGNED_LONG : TF_LONG;
	else if (strcasecmp(t, "decimal") == 0 || strcasecmp(t, "numeric") == 0)
		source_cat_decimal(a, n == 2 ? b : 0, n >= 1, o, out, note,
		    notelen);
	else if (strcasecmp(t, "float") == 0)
		out->kind = TF_FLOAT;
	else if (strcasecmp(t, "double") == 0 || strcasecmp(t, "real") == 0)
		out->kind = TF_DOUBLE;
	else if (strcasecmp(t, "bit") == 0)
		out->kind = n >= 1 && a > 63 ? TF_UNSIGNED_LONG : TF_LONG;
	else if (strcasecmp(t, "year") == 0)
		out->kind = TF_SHORT;
	else if (strcasecmp(t, "date") == 0)
		out->kind = TF_DATE;
	else if (strcasecmp(t, "datetime") == 0 ||
	    strcasecmp(t, "timestamp") == 0)
		out->kind = source_cat_timestamp(n >= 1 ? a : 0);
	else if (strcasecmp(t, "char") == 0 || strcasecmp(t, "varchar") == 0 ||
	    strcasecmp(t, "tinytext") == 0 || strcasecmp(t, "text") == 0 ||
	    strcasecmp(t, "mediumtext") == 0 || strcasecmp(t, "longtext") == 0)
		out->kind = TF_TEXT;
	else if (strcasecmp(t, "binary") == 0 ||
	    strcasecmp(t, "varbinary") == 0 || strcasestr(t, "blob") != NULL ||
	    strcasecmp(t, "geometry") == 0 || strcasecmp(t, "point") == 0 ||
	    strcasecmp(t, "linestring") == 0 || strcasecmp(t, "polygon") == 0)
		out->kind = TF_BINARY;
	else
		/* enum, set, time and whatever comes later: whole values */
		out->kind = TF_KEYWORD;
}

/* 0, 1 when the table is gone or not a base table (since the listing),
 * -1 with err */
static int
describe(struct st_mysql *m, const char *db, struct source_cat_table *ct,
    const struct mapping_opts *mo, struct p2o_err *e)
{
	struct my_table t;
	struct target_field f;
	char note[256];
	int k, r;

	if ((r = mycat_table(m, myconn_mariadb(m), db, ct->name, &t, e)) != 0) {
		if (r > 0)
			snprintf(e->msg, sizeof(e->msg), "table '%s.%s' is no "
			    "longer a base table the user may read", db,
			    ct->name);
		return r > 0 ? 1 : -1;
	}
	for (k = 0; k < t.ncols; k++) {
		memset(&f, 0, sizeof(f));
		mylist_field(t.cols[k].data_type, t.cols[k].column_type,
		    t.cols[k].kind == MK_JSON || t.cols[k].kind == MK_JSON_TEXT,
		    mo, &f, note, sizeof(note));
		source_cat_field(ct, k, t.cols[k].name, f.kind, f.factor, note);
	}
	my_table_release(&t);
	return 0;
}

int
mylist_catalogue(const struct config *cf, const char *const *want, int n,
    const struct mapping_opts *mo, struct source_cat *cat, struct p2o_err *e)
{
	struct mycat_name *all = NULL;
	struct st_mysql *m;
	struct my_url u;
	char uerr[256];
	int nall = 0, i, rc = -1;

	if (my_url_parse(cf->source_url, &u, uerr, sizeof(uerr)) == -1)
		return p2o_fail(e, P2O_EXIT_CONFIG, "%s", uerr);
	if ((m = myconn_open(cf, "catalogue", e)) == NULL) {
		my_url_release(&u);
		return -1;
	}
	snprintf(cat->from, sizeof(cat->from), "the catalogue of database "
	    "'%s'", u.db);
	if (mycat_tables(m, u.db, &all, &nall, e) == -1)
		goto out;
	for (i = 0; i < nall; i++)
		source_cat_add(cat, u.db, all[i].name, all[i].has_key);
	if ((rc = source_cat_choose(cat, want, n, e->msg,
	    sizeof(e->msg))) != 0)
		goto out;
	for (i = 0; mo != NULL && i < cat->nchosen; i++)
		if ((rc = describe(m, u.db, &cat->t[cat->chosen[i]], mo,
		    e)) != 0)
			goto out;
out:
	mycat_names_free(all, nall);
	myconn_close(m);
	my_url_release(&u);
	return rc;
}
