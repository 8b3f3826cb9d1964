/*
 * mynest.c - the one reader of a MySQL or MariaDB parent's collections
 * (mynest.h): each child table described by mycat, one statement per
 * collection for a set of parents, the rows kept by parent key and handed
 * to lib/nest.c. Every name in the SQL is quoted here, and every value a
 * child row holds goes through myval_text, so the load and the stream
 * embed the bytes they would write for the same column at the top level.
 *
 * The statements, for the parents whose key satisfies a condition:
 *   child:    SELECT p.key, c.cols FROM child c JOIN parent p
 *             ON p.key = c.fk WHERE p.key <cond> ORDER BY p.key, c.pk
 *   through:  SELECT p.key, c.cols FROM junction j JOIN child c
 *             ON c.pk = j.through_key JOIN parent p ON p.key = j.fk
 *             WHERE p.key <cond> ORDER BY p.key, c.pk
 *   count:    SELECT p.key, COUNT(*) FROM t c JOIN parent p
 *             ON p.key = c.fk WHERE (where) AND p.key <cond>
 *             GROUP BY p.key
 * A row belongs to the parent the server's own comparison gives it: under
 * a case-insensitive, PAD SPACE collation a foreign key 'A' or 'a ' names
 * parent 'a' (an InnoDB foreign key and WHERE fk = 'a' say so), which the
 * bytes of the foreign key do not. So the row carries the parent's own
 * key, selected through the join, and is filed by those bytes - the bytes
 * the parent's row has, as the text protocol prints them; that is why a
 * parent key must be an integer or a string (mynest_describe refuses the
 * others). A child that names no parent is not read at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "keyset.h"
#include "msg.h"
#include "p2o.h"
#include "where.h"
#include "mysql/myconn.h"
#include "mysql/mynest.h"

#define CHILD	"`p2o_c`"
#define JUNC	"`p2o_j`"
#define PARENT	"`p2o_p`"

static void
put_qname(struct sbuf *b, const char *db, const char *table)
{
	myconn_ident(b, db);
	sbuf_addc(b, '.');
	myconn_ident(b, table);
}

static void
put_col(struct sbuf *b, const char *alias, const char *col)
{
	if (alias != NULL) {
		sbuf_adds(b, alias);
		sbuf_addc(b, '.');
	}
	myconn_ident(b, col);
}

void
mynest_select_cols(struct sbuf *out, const struct my_table *t,
    const char *alias)
{
	int i;

	for (i = 0; i < t->ncols; i++) {
		if (i > 0)
			sbuf_adds(out, ", ");
		/* the text protocol prints a FLOAT to 6 digits */
		if (t->cols[i].kind == MK_FLOAT) {
			sbuf_adds(out, "CAST(");
			put_col(out, alias, t->cols[i].name);
			sbuf_adds(out, " AS DOUBLE)");
		} else
			put_col(out, alias, t->cols[i].name);
	}
}

static int
describe_table(struct st_mysql *m, int mariadb, const struct sync_section *sec,
    const char *db, const char *table, const char *rel, struct my_table *t,
    struct p2o_err *e)
{
	int rc = mycat_table(m, mariadb, db, table, t, e);

	if (rc == -1)
		return -1;
	if (rc != 0)
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': table "
		    "'%s' (a collection) does not exist, is not a base table, "
		    "or may not be read", sec->name, rel);
	return 0;
}

/* the child's key, in key order, as "alias.a, alias.b" */
static void
put_order(struct sbuf *b, const struct my_table *t, const char *alias)
{
	int i;

	for (i = 0; i < t->npk; i++) {
		if (i)
			sbuf_adds(b, ", ");
		put_col(b, alias, t->cols[t->pk[i]].name);
	}
}

/* the catalogue's side of a child: its table, and a junction's columns */
static int
describe_child(struct st_mysql *m, int mariadb,
    const struct sync_section *sec, struct mynest_coll *k, struct p2o_err *e)
{
	const struct sync_child *c = k->child;
	struct my_table jt;
	int i;

	if (describe_table(m, mariadb, sec, c->schema, c->table, c->rel, &k->t,
	    e) == -1)
		return -1;
	if (c->through == NULL)
		return 0;
	if (describe_table(m, mariadb, sec, c->through_schema,
	    c->through_table, c->through_rel, &jt, e) == -1)
		return -1;
	i = mycat_column(&jt, c->foreign_key) < 0 ? 0 :
	    mycat_column(&jt, c->through_key) < 0 ? 1 : 2;
	my_table_release(&jt);
	if (i < 2)
		return nest_no_column(sec, c->through_rel, i == 0 ?
		    c->foreign_key : c->through_key, i == 0 ? "foreign_key" :
		    "through_key", e);
	return 0;
}

/* " JOIN parent p ON p.key = alias.fk" */
static void
put_parent_join(struct sbuf *b, const struct my_table *parent,
    const char *alias, const char *fk)
{
	sbuf_adds(b, " JOIN ");
	put_qname(b, parent->db, parent->name);
	sbuf_adds(b, " " PARENT " ON ");
	put_col(b, PARENT, parent->cols[parent->keys[0]].name);
	sbuf_adds(b, " = ");
	put_col(b, alias, fk);
}

static int
plan_child(const struct sync_section *sec, const struct my_table *parent,
    struct mynest_coll *k, struct p2o_err *e)
{
	const char *pkey = parent->cols[parent->keys[0]].name;
	const struct sync_child *c = k->child;
	struct sbuf b = SBUF_INIT;
	int i;

	if (k->t.npk == 0)
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': child "
		    "table '%s' has no primary key: its rows are embedded in "
		    "key order, and a single child's lowest key wins",
		    sec->name, c->rel);
	if (c->through == NULL && mycat_column(&k->t, c->foreign_key) < 0)
		return nest_no_column(sec, c->rel, c->foreign_key,
		    "foreign_key", e);
	if (c->through != NULL && k->t.npk != 1)
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': child "
		    "table '%s' is read through '%s', which names one key "
		    "column; its primary key has %d", sec->name, c->rel,
		    c->through_rel, k->t.npk);
	for (i = 0; c->columns && i < c->ncolumns; i++)
		if (mycat_column(&k->t, c->columns[i]) < 0)
			return nest_no_column(sec, c->rel, c->columns[i],
			    "columns", e);
	free(k->emb);
	k->nemb = 0;
	k->emb = xcalloc((size_t)k->t.ncols + 1, sizeof(int));
	for (i = 0; i < k->t.ncols; i++)
		if (nest_keeps(c, k->t.cols[i].name))
			k->emb[k->nemb++] = i;
	if (k->nemb == 0)
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': child "
		    "table '%s' keeps no column", sec->name, c->rel);
	sbuf_adds(&b, "SELECT ");
	put_col(&b, PARENT, pkey);
	for (i = 0; i < k->nemb; i++) {
		const struct my_col *col = &k->t.cols[k->emb[i]];

		sbuf_adds(&b, ", ");
		if (col->kind == MK_FLOAT) {
			sbuf_adds(&b, "CAST(");
			put_col(&b, CHILD, col->name);
			sbuf_adds(&b, " AS DOUBLE)");
		} else
			put_col(&b, CHILD, col->name);
	}
	sbuf_adds(&b, " FROM ");
	if (c->through != NULL) {
		put_qname(&b, c->through_schema, c->through_table);
		sbuf_adds(&b, " " JUNC " JOIN ");
		put_qname(&b, c->schema, c->table);
		sbuf_adds(&b, " " CHILD " ON ");
		put_order(&b, &k->t, CHILD);
		sbuf_adds(&b, " = ");
		put_col(&b, JUNC, c->through_key);
	} else {
		put_qname(&b, c->schema, c->table);
		sbuf_adds(&b, " " CHILD);
	}
	put_parent_join(&b, parent, c->through ? JUNC : CHILD, c->foreign_key);
	sbuf_adds(&b, " WHERE ");
	put_col(&b, PARENT, pkey);
	sbuf_addc(&b, ' ');
	free(k->head);
	k->head = b.buf;
	sbuf_init(&b);
	/* the order the array keeps and the row single and max_rows keep:
	 * the server's, by the child's key as the server compares it (a
	 * string key by its collation), which C could not repeat */
	sbuf_adds(&b, " ORDER BY ");
	put_col(&b, PARENT, pkey);
	sbuf_adds(&b, ", ");
	put_order(&b, &k->t, CHILD);
	free(k->tail);
	k->tail = b.buf;
	return 0;
}

/* the aggregate's filter as the server runs it: each column as the
 * expression whose value is its document form where SQL has one (the
 * load's pushed-down filter does the same), else the column */
struct agg_quote {
	struct st_mysql *m;
	const struct my_table *t;
};

static char *
agg_quote(void *arg, const char *s, int ident)
{
	struct agg_quote *a = arg;
	struct sbuf b = SBUF_INIT;
	int ix;

	/* qualified: the parent joined may have a column of the name */
	if (!ident)
		myconn_quote(a->m, &b, s, strlen(s));
	else if ((ix = mycat_column(a->t, s)) < 0 ||
	    myval_filter_sql_as(&a->t->cols[ix], CHILD, &b) == -1) {
		sbuf_reset(&b);
		put_col(&b, CHILD, s);
	}
	sbuf_add(&b, "", 0);
	return b.buf;
}

static int
plan_agg(struct st_mysql *m, const struct sync_section *sec,
    const struct my_table *parent, struct mynest_coll *k, struct p2o_err *e)
{
	const char *pkey = parent->cols[parent->keys[0]].name;
	const struct sync_aggregate *a = k->agg;
	struct agg_quote aq = { m, &k->t };
	struct sbuf b = SBUF_INIT;

	if (mycat_column(&k->t, a->foreign_key) < 0)
		return nest_no_column(sec, a->rel, a->foreign_key,
		    "foreign_key", e);
	sbuf_adds(&b, "SELECT ");
	put_col(&b, PARENT, pkey);
	sbuf_adds(&b, ", COUNT(*) FROM ");
	put_qname(&b, a->schema, a->table);
	sbuf_adds(&b, " " CHILD);
	put_parent_join(&b, parent, CHILD, a->foreign_key);
	sbuf_adds(&b, " WHERE ");
	if (a->where_expr != NULL) {
		if (where_sql(a->where_expr, &b, agg_quote, &aq) == -1) {
			sbuf_release(&b);
			return p2o_fail(e, P2O_EXIT_CONFIG, "sync section '%s': "
			    "quoting the filter of '%s'", sec->name, a->field);
		}
		sbuf_adds(&b, " AND ");
	}
	put_col(&b, PARENT, pkey);
	sbuf_addc(&b, ' ');
	free(k->head);
	k->head = b.buf;
	sbuf_init(&b);
	/* one group per parent row: its own key bytes */
	sbuf_adds(&b, " GROUP BY ");
	put_col(&b, PARENT, pkey);
	free(k->tail);
	k->tail = b.buf;
	return 0;
}

int
mynest_plan(struct st_mysql *m, const struct sync_section *sec,
    const struct my_table *parent, struct mynest_coll *k, struct p2o_err *e)
{
	return k->agg != NULL ? plan_agg(m, sec, parent, k, e) :
	    plan_child(sec, parent, k, e);
}

int
mynest_describe(struct st_mysql *m, int mariadb,
    const struct sync_section *sec, const struct my_table *parent,
    struct mynest *n, struct p2o_err *e)
{
	const struct sync_more *more = sync_more(sec);
	const struct my_col *key;
	int i, rc = 0;

	memset(n, 0, sizeof(*n));
	n->sec = sec;
	if (parent->nkeys != 1)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' embeds "
		    "children or aggregates, which name their parent by one "
		    "key column; its key has %d", sec->rel, parent->nkeys);
	key = &parent->cols[parent->keys[0]];
	if (!mynest_keyable(key->kind))
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' embeds "
		    "children or aggregates, whose rows are matched to the "
		    "parent by its key's text: its key column '%s' is %s, "
		    "not an integer or a string", sec->rel, key->name,
		    key->column_type);
	n->key = xstrdup(key->name);
	n->key_kind = key->kind;
	n->n = more->nchildren + more->naggregates;
	n->coll = xcalloc((size_t)n->n + 1, sizeof(*n->coll));
	for (i = 0; i < n->n && rc == 0; i++) {
		struct mynest_coll *k = &n->coll[i];

		if (i < more->nchildren) {
			k->child = &more->children[i];
			rc = describe_child(m, mariadb, sec, k, e);
		} else {
			k->agg = &more->aggregates[i - more->nchildren];
			rc = describe_table(m, mariadb, sec, k->agg->schema,
			    k->agg->table, k->agg->rel, &k->t, e);
		}
		if (rc == 0)
			rc = mynest_plan(m, sec, parent, k, e);
	}
	return rc;
}

int
mynest_keyable(enum my_kind k)
{
	return k == MK_INT || k == MK_UINT || k == MK_TEXT;
}

int
mynest_literal(enum my_kind k, struct st_mysql *m, struct sbuf *out,
    const char *s, size_t len)
{
	size_t i = 0;

	if (!mynest_keyable(k))
		return -1;
	if (k == MK_TEXT) {
		myconn_quote(m, out, s, len);
		return 0;
	}
	/* digits bare: a quoted number compares as a double */
	if (len > 0 && s[0] == '-' && k == MK_INT)
		i++;
	if (i == len)
		return -1;
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	sbuf_add(out, s, len);
	return 0;
}

static void
got_clear(struct mynest_coll *k)
{
	struct mynest_got *g, *next;
	size_t i;

	for (i = 0; i < k->ngot; i++) {
		for (g = k->got[i]; g; g = next) {
			next = g->next;
			sbuf_release(&g->rows);
			free(g);
		}
		k->got[i] = NULL;
	}
}

static struct mynest_got *
got_find(struct mynest_coll *k, const char *key, size_t n, int add)
{
	struct mynest_got *g;
	size_t h;

	if (k->ngot == 0) {
		if (!add)
			return NULL;
		k->ngot = 4096;
		k->got = xcalloc(k->ngot, sizeof(*k->got));
	}
	h = keyset_hash(key, n) % k->ngot;
	for (g = k->got[h]; g; g = g->next)
		if (g->n == n && memcmp(g->key, key, n) == 0)
			return g;
	if (!add)
		return NULL;
	g = xcalloc(1, sizeof(*g) + n + 1);
	memcpy(g->key, key, n);
	g->n = n;
	sbuf_init(&g->rows);
	g->next = k->got[h];
	k->got[h] = g;
	return g;
}

void
mynest_forget(struct mynest *n)
{
	int i;

	for (i = 0; i < n->n; i++)
		got_clear(&n->coll[i]);
}

/* one child row's embedded columns (vals[0] is its parent key) as an
 * object onto g */
static void
keep_row(struct mynest_coll *k, struct mynest_got *g,
    const char *const *vals, const unsigned long *lens)
{
	const struct sync_child *c = k->child;
	const char *name;
	int i;

	g->total++;
	if ((c->single && g->nrows >= 1) ||
	    (c->max_rows > 0 && g->nrows >= (uint64_t)c->max_rows))
		return;
	if (g->nrows)
		sbuf_addc(&g->rows, ',');
	sbuf_addc(&g->rows, '{');
	for (i = 0; i < k->nemb; i++) {
		const struct my_col *col = &k->t.cols[k->emb[i]];

		if (i)
			sbuf_addc(&g->rows, ',');
		name = nest_name(c, col->name);
		sbuf_add_jstr(&g->rows, name, strlen(name));
		sbuf_addc(&g->rows, ':');
		if (vals[i + 1] == NULL)
			sbuf_adds(&g->rows, "null");
		else
			myval_text(col, vals[i + 1], lens[i + 1], &g->rows);
	}
	sbuf_addc(&g->rows, '}');
	if (g->nrows++ == 0)
		g->first = g->rows.len;
}

void
mynest_take(struct mynest_coll *k, const char *const *vals,
    const unsigned long *lens)
{
	struct mynest_got *g;

	/* a child naming no parent, or a count of such rows */
	if (vals[0] == NULL)
		return;
	g = got_find(k, vals[0], lens[0], 1);
	if (k->agg != NULL)
		g->total = vals[1] ? strtoull(vals[1], NULL, 10) : 0;
	else
		keep_row(k, g, vals, lens);
}

static int
read_coll(struct mynest *n, struct mynest_coll *k, struct st_mysql *m,
    const char *cond, const char *lock, struct p2o_err *e)
{
	struct sbuf q = SBUF_INIT;
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned err;

	sbuf_adds(&q, k->head);
	sbuf_adds(&q, cond);
	sbuf_adds(&q, k->tail);
	if (lock[0] != '\0') {
		sbuf_addc(&q, ' ');
		sbuf_adds(&q, lock);
	}
	n->queries++;
	if (mysql_real_query(m, q.buf, q.len) != 0 ||
	    (r = mysql_use_result(m)) == NULL) {
		sbuf_release(&q);
		return myconn_failed(m, "reading a collection", e);
	}
	sbuf_release(&q);
	while ((row = mysql_fetch_row(r)) != NULL)
		mynest_take(k, (const char *const *)row,
		    mysql_fetch_lengths(r));
	err = mysql_errno(m);
	mysql_free_result(r);
	if (err != 0)
		return myconn_failed(m, "reading a collection", e);
	return 0;
}

int
mynest_read(struct mynest *n, struct st_mysql *m, const char *cond,
    const char *lock, struct p2o_err *e)
{
	int i;

	mynest_forget(n);
	for (i = 0; i < n->n; i++)
		if (read_coll(n, &n->coll[i], m, cond, lock, e) == -1)
			return -1;
	return 0;
}

void
mynest_put(struct mynest *n, struct sbuf *img, const char *key, size_t len)
{
	struct mynest_coll *k;
	struct mynest_got *g;
	char *kt = xstrndup(key, len);
	int i;

	for (i = 0; i < n->n; i++) {
		k = &n->coll[i];
		g = got_find(k, key, len, 0);
		if (k->agg != NULL)
			nest_put_count(img, k->agg, g ? g->total : 0);
		else
			nest_put_child(img, k->child, g && g->rows.buf ?
			    g->rows.buf : "", g ? g->rows.len : 0, g ? g->first :
			    0, g ? g->nrows : 0, g ? g->total : 0, kt,
			    n->sec->rel, &k->dups);
	}
	free(kt);
}

void
mynest_flush(struct mynest *n)
{
	int i;

	for (i = 0; i < n->n; i++)
		if (n->coll[i].child && n->coll[i].child->single)
			nest_dups_flush(&n->coll[i].dups, n->sec->rel,
			    n->coll[i].child);
}

void
mynest_release(struct mynest *n)
{
	int i;

	for (i = 0; n->coll && i < n->n; i++) {
		got_clear(&n->coll[i]);
		free(n->coll[i].got);
		my_table_release(&n->coll[i].t);
		free(n->coll[i].emb);
		free(n->coll[i].head);
		free(n->coll[i].tail);
		free(n->coll[i].dups.worst_key);
	}
	free(n->coll);
	free(n->key);
	memset(n, 0, sizeof(*n));
}

void
mynest_row_frame(struct sbuf *out, struct sbuf *j, char op,
    const struct my_table *t, uint64_t v, const char *const *vals,
    const unsigned long *lens, struct mynest *nest)
{
	int i, kc = -1;

	/* the stream's builders, names, order and value mapping: an
	 * inserted row's new image and its copy are the same bytes */
	msg_row_begin(j, op, t->rel, strlen(t->rel), v);
	msg_list_begin(j, ML_KEY);
	for (i = 0; i < t->nkeys; i++)
		msg_list_item(j, t->cols[t->keys[i]].name,
		    strlen(t->cols[t->keys[i]].name));
	msg_list_end(j);
	msg_image_begin(j, MI_NEW);
	for (i = 0; i < t->ncols; i++) {
		if (nest != NULL && config_nest_member(nest->sec,
		    t->cols[i].name))
			continue;
		msg_column(j, t->cols[i].name, strlen(t->cols[i].name));
		if (vals[i] == NULL)
			sbuf_adds(j, "null");
		else
			myval_text(&t->cols[i], vals[i], lens[i], j);
	}
	if (nest != NULL && t->nkeys == 1)
		kc = t->keys[0];
	if (kc >= 0 && vals[kc] != NULL)
		mynest_put(nest, j, vals[kc], lens[kc]);
	msg_image_end(j);
	msg_end(out, j);
}
