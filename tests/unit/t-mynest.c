/*
 * t-mynest.c - the MySQL/MariaDB collection builder (lib/mysql/mynest.c)
 * as golden cases, without a server: the statements planned for
 * described tables, then child rows in - as a result set gives them, text
 * per column with its length, NULL as NULL, converted by the kind the
 * catalogue gave each column - through mynest_take, the function every
 * fetched row goes through, and the parent's row frame out, byte for
 * byte: arrays in the order the rows come (the statement's child key
 * order, composite and string keys included), [] when empty, single's
 * object or null (the first row, a second tallied and warned about once),
 * flatten's members, max_rows' _truncated and _total, a junction, counts
 * (0 when none), projected and renamed columns, and values whose
 * conversion matters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mysql.h>

#include "config.h"
#include "log.h"
#include "mysql/mynest.h"
#include "tap.h"

static const char cfg_text[] =
    "source:\n  url: mysql://sync@db/shop\n  server_id: 7\n"
    "target:\n  url: http://127.0.0.1:9200\n"
    "sync:\n  customers:\n    table: shop.customers\n"
    "    children:\n"
    "      - {table: shop.orders, field: orders, foreign_key: customer_id,\n"
    "         columns: [id, total, placed, big, weight, doc, mdoc, note],\n"
    "         fields: {total: amount}}\n"
    "      - {table: shop.visits, field: visits, foreign_key: customer_id,\n"
    "         columns: [seq, day, what], max_rows: 2}\n"
    "      - {table: shop.profiles, field: profile, foreign_key: "
    "customer_id,\n"
    "         single: true, exclude_columns: [customer_id]}\n"
    "      - {table: shop.addresses, field: address, foreign_key: "
    "customer_id,\n"
    "         single: true, flatten: true, columns: [city, country],\n"
    "         fields: {country: land}}\n"
    "      - {table: shop.tags, field: tags, foreign_key: customer_id,\n"
    "         through: shop.customer_tags, through_key: tag_id}\n"
    "    aggregates:\n"
    "      - {field: open_tickets, table: shop.tickets, foreign_key: "
    "customer_id,\n         op: count, where: \"status = 'open'\"}\n"
    "      - {field: tickets, table: shop.tickets, foreign_key: "
    "customer_id,\n         op: count}\n"
    "  accounts:\n    table: shop.accounts\n"
    "    children:\n"
    "      - {table: shop.notes, field: notes, foreign_key: acct,\n"
    "         columns: [id, acct]}\n"
    "    aggregates:\n"
    "      - {field: notes_n, table: shop.notes, foreign_key: acct, "
    "op: count}\n";

/* a column as information_schema declares it */
struct colspec {
	const char *name, *data_type, *column_type, *charset;
	int	 json_check;	/* MariaDB JSON: longtext, checked */
};

/* the table mycat_table would read: every string on the heap, as
 * my_table_release frees it */
static void
table(struct my_table *t, const char *db, const char *name,
    const struct colspec *c, int ncols, const int *pk, int npk)
{
	struct p2o_err e;
	int i;

	memset(t, 0, sizeof(*t));
	t->db = xstrdup(db);
	t->name = xstrdup(name);
	t->rel = xcalloc(1, strlen(db) + strlen(name) + 2);
	sprintf(t->rel, "%s.%s", db, name);
	t->ncols = ncols;
	t->cols = xcalloc((size_t)ncols, sizeof(*t->cols));
	for (i = 0; i < ncols; i++)
		if (my_col_init(&t->cols[i], c[i].name, c[i].data_type,
		    c[i].column_type, c[i].charset, c[i].json_check, &e) == -1)
			BAIL_OUT(e.msg);
	t->npk = t->nkeys = npk;
	t->pk = xcalloc((size_t)npk, sizeof(int));
	t->keys = xcalloc((size_t)npk, sizeof(int));
	for (i = 0; i < npk; i++)
		t->pk[i] = t->keys[i] = pk[i];
}

#define NCOLL	7
enum { ORDERS, VISITS, PROFILE, ADDRESS, TAGS, OPEN, TICKETS };

static const struct colspec customers_c[] = {
	{ "id", "int", "int(11)", NULL, 0 },
	{ "name", "varchar", "varchar(40)", "utf8mb4", 0 },
	/* the collection's member wins over a parent column of its name */
	{ "tags", "varchar", "varchar(40)", "utf8mb4", 0 },
	{ "city", "varchar", "varchar(40)", "utf8mb4", 0 },
};
static const struct colspec orders_c[] = {
	{ "id", "int", "int(11)", NULL, 0 },
	{ "customer_id", "int", "int(11)", NULL, 0 },
	{ "total", "decimal", "decimal(20,6)", NULL, 0 },
	{ "placed", "datetime", "datetime(6)", NULL, 0 },
	{ "big", "bigint", "bigint(20) unsigned", NULL, 0 },
	{ "weight", "float", "float", NULL, 0 },
	{ "doc", "json", "json", NULL, 0 },
	{ "mdoc", "longtext", "longtext", "utf8mb4", 1 },
	{ "note", "varchar", "varchar(40)", "utf8mb4", 0 },
	{ "secret", "varchar", "varchar(40)", "utf8mb4", 0 },
};
/* PRIMARY KEY (customer_id, day, seq): key order is not column order */
static const struct colspec visits_c[] = {
	{ "seq", "int", "int(11)", NULL, 0 },
	{ "customer_id", "int", "int(11)", NULL, 0 },
	{ "day", "date", "date", NULL, 0 },
	{ "what", "varchar", "varchar(20)", "utf8mb4", 0 },
};
static const struct colspec profiles_c[] = {
	{ "id", "int", "int(11)", NULL, 0 },
	{ "customer_id", "int", "int(11)", NULL, 0 },
	{ "bio", "text", "text", "utf8mb4", 0 },
	{ "vip", "tinyint", "tinyint(1)", NULL, 0 },
};
static const struct colspec addresses_c[] = {
	{ "id", "int", "int(11)", NULL, 0 },
	{ "customer_id", "int", "int(11)", NULL, 0 },
	{ "city", "varchar", "varchar(40)", "utf8mb4", 0 },
	{ "country", "char", "char(2)", "utf8mb4", 0 },
};
/* a string key: the server orders it by its collation */
static const struct colspec tags_c[] = {
	{ "id", "varchar", "varchar(20)", "utf8mb4", 0 },
	{ "label", "varchar", "varchar(20)", "utf8mb4", 0 },
};
static const struct colspec tickets_c[] = {
	{ "id", "int", "int(11)", NULL, 0 },
	{ "customer_id", "int", "int(11)", NULL, 0 },
	{ "status", "varchar", "varchar(10)", "utf8mb4", 0 },
};

static void
setup(struct mynest *n, const struct sync_section *sec, struct my_table *p)
{
	static const int one[] = { 0 }, visits_pk[] = { 1, 2, 0 };
	int i;

	table(p, "shop", "customers", customers_c, 4, one, 1);
	memset(n, 0, sizeof(*n));
	n->sec = sec;
	n->key = xstrdup("id");
	n->key_kind = MK_INT;
	n->n = NCOLL;
	n->coll = xcalloc(NCOLL + 1, sizeof(*n->coll));
	for (i = 0; i < sec->more->nchildren; i++)
		n->coll[i].child = &sec->more->children[i];
	for (i = 0; i < sec->more->naggregates; i++)
		n->coll[sec->more->nchildren + i].agg =
		    &sec->more->aggregates[i];
	table(&n->coll[ORDERS].t, "shop", "orders", orders_c, 10, one, 1);
	table(&n->coll[VISITS].t, "shop", "visits", visits_c, 4, visits_pk,
	    3);
	table(&n->coll[PROFILE].t, "shop", "profiles", profiles_c, 4, one,
	    1);
	table(&n->coll[ADDRESS].t, "shop", "addresses", addresses_c, 4, one,
	    1);
	table(&n->coll[TAGS].t, "shop", "tags", tags_c, 2, one, 1);
	table(&n->coll[OPEN].t, "shop", "tickets", tickets_c, 3, one, 1);
	table(&n->coll[TICKETS].t, "shop", "tickets", tickets_c, 3, one, 1);
}

/* one result-set row: up to 10 columns, NULL a NULL */
struct row {
	int	 coll;
	const char *v[10];
};

/* the rows in, each as the server's result set gives it */
static void
take(struct mynest *n, const struct row *rows, size_t nrows)
{
	unsigned long lens[10];
	size_t i, k;

	for (i = 0; i < nrows; i++) {
		for (k = 0; k < 10; k++)
			lens[k] = rows[i].v[k] ? strlen(rows[i].v[k]) : 0;
		mynest_take(&n->coll[rows[i].coll], rows[i].v, lens);
	}
}

static struct sbuf j = SBUF_INIT;

/* parent key id's row frame, its JSON without the length and the LF */
static const char *
frame(struct mynest *n, const struct my_table *p, const char *id,
    const char *name, struct sbuf *out)
{
	const char *vals[4] = { id, name, "parent's tags", "parent's city" };
	unsigned long lens[4];
	char *sp;
	int k;

	for (k = 0; k < 4; k++)
		lens[k] = vals[k] ? strlen(vals[k]) : 0;
	sbuf_reset(out);
	mynest_row_frame(out, &j, 'c', p, 7, vals, lens, n);
	if (out->len == 0 || out->buf[out->len - 1] != '\n' ||
	    (sp = strchr(out->buf, ' ')) == NULL)
		return "(not a frame)";
	out->buf[--out->len] = '\0';
	return sp + 1;
}

/* stderr into a file while f runs: what was logged */
static char logged[4096];

static void
capture_flush(struct mynest *n)
{
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t got;

	if (f == NULL || saved < 0)
		BAIL_OUT("no temporary file");
	fflush(stderr);
	dup2(fileno(f), 2);
	mynest_flush(n);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	got = fread(logged, 1, sizeof(logged) - 1, f);
	logged[got] = '\0';
	fclose(f);
}

static int
count_lines(const char *s)
{
	int k = 0;

	for (; *s; s++)
		k += *s == '\n';
	return k;
}

#define HEAD	"{\"k\":\"row\",\"op\":\"c\",\"rel\":\"shop.customers\"," \
		"\"v\":7,\"key\":[\"id\"],\"new\":{"
#define EMPTY	"\"orders\":[],\"visits\":[],\"visits_truncated\":false," \
		"\"visits_total\":0,\"profile\":null,\"city\":null," \
		"\"land\":null,\"tags\":[],\"open_tickets\":0,\"tickets\":0}}"

#define JOINP	" JOIN `shop`.`customers` `p2o_p` ON `p2o_p`.`id` = "

static void
test_sql(struct mynest *n)
{
	is_str(n->coll[ORDERS].head, "SELECT `p2o_p`.`id`, "
	    "`p2o_c`.`id`, `p2o_c`.`total`, `p2o_c`.`placed`, `p2o_c`.`big`, "
	    "CAST(`p2o_c`.`weight` AS DOUBLE), `p2o_c`.`doc`, `p2o_c`.`mdoc`, "
	    "`p2o_c`.`note` FROM `shop`.`orders` `p2o_c`" JOINP
	    "`p2o_c`.`customer_id` WHERE `p2o_p`.`id` ", "a child: the "
	    "parent's own key through a join on its table, then the projected "
	    "columns (a FLOAT as a DOUBLE)");
	is_str(n->coll[ORDERS].tail, " ORDER BY `p2o_p`.`id`, "
	    "`p2o_c`.`id`", "ordered by the parent, then the child's key");
	is_str(n->coll[VISITS].tail, " ORDER BY `p2o_p`.`id`, "
	    "`p2o_c`.`customer_id`, `p2o_c`.`day`, `p2o_c`.`seq`",
	    "a composite key orders in its key order, not column order");
	is_str(n->coll[PROFILE].head, "SELECT `p2o_p`.`id`, "
	    "`p2o_c`.`id`, `p2o_c`.`bio`, `p2o_c`.`vip` FROM "
	    "`shop`.`profiles` `p2o_c`" JOINP "`p2o_c`.`customer_id` WHERE "
	    "`p2o_p`.`id` ", "exclude_columns leaves the column out");
	is_str(n->coll[ADDRESS].head, "SELECT `p2o_p`.`id`, "
	    "`p2o_c`.`city`, `p2o_c`.`country` FROM `shop`.`addresses` "
	    "`p2o_c`" JOINP "`p2o_c`.`customer_id` WHERE `p2o_p`.`id` ",
	    "columns keeps only those (not the key)");
	is_str(n->coll[ADDRESS].tail, " ORDER BY `p2o_p`.`id`, "
	    "`p2o_c`.`id`", "but orders by it: the lowest key stands");
	is_str(n->coll[TAGS].head, "SELECT `p2o_p`.`id`, "
	    "`p2o_c`.`id`, `p2o_c`.`label` FROM `shop`.`customer_tags` "
	    "`p2o_j` JOIN `shop`.`tags` `p2o_c` ON `p2o_c`.`id` = "
	    "`p2o_j`.`tag_id`" JOINP "`p2o_j`.`customer_id` WHERE "
	    "`p2o_p`.`id` ", "a junction joins on the child's key, and the "
	    "parent on the junction's foreign key");
	is_str(n->coll[TAGS].tail, " ORDER BY `p2o_p`.`id`, "
	    "`p2o_c`.`id`", "and orders by the child's key");
	is_str(n->coll[OPEN].head, "SELECT `p2o_p`.`id`, COUNT(*) FROM "
	    "`shop`.`tickets` `p2o_c`" JOINP "`p2o_c`.`customer_id` WHERE "
	    "(CAST(CONVERT(`p2o_c`.`status` USING utf8mb4) AS BINARY) = "
	    "'open') AND `p2o_p`.`id` ", "a count with its filter, a string "
	    "column compared by its bytes, named by the counted table (the "
	    "parent may have a column of its name)");
	is_str(n->coll[TICKETS].head, "SELECT `p2o_p`.`id`, COUNT(*) FROM "
	    "`shop`.`tickets` `p2o_c`" JOINP "`p2o_c`.`customer_id` WHERE "
	    "`p2o_p`.`id` ", "a count without one");
	is_str(n->coll[TICKETS].tail, " GROUP BY `p2o_p`.`id`",
	    "grouped by the parent's own key");
}

/* the first read: three parents, their rows interleaved across
 * collections and parents as the statements return them per collection */
static const struct row read1[] = {
	/* parent 2's order before parent 1's: filed by parent key, not by
	 * arrival */
	{ ORDERS, { "2", "3", "-0.000001", "2024-12-31 23:59:59.000000",
	    "18446744073709551614", "-0", "[]", "\"s\"", "", NULL } },
	/* ids 2 then 10, as the server orders them: numbers, not bytes */
	{ ORDERS, { "1", "2", "12345678901234.500000",
	    "2024-01-02 03:04:05.123456", "18446744073709551615",
	    "1.100000023841858", "{\"a\": [1.5, 2.50], \"b\": {\"c\": null}}",
	    "{ \"x\" : \"y z\",\n \"n\": 1e3 }",
	    "say \"hi\"\t\x01\\ \xc3\xa9 \xe2\x9c\x93", NULL } },
	{ ORDERS, { "1", "10", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	    NULL } },
	/* a child naming no parent */
	{ ORDERS, { NULL, "11", "1.000000", NULL, NULL, NULL, NULL, NULL,
	    NULL, NULL } },
	/* by (day, seq): seq 2, 10, 1 */
	{ VISITS, { "1", "2", "2024-01-01", "a" } },
	{ VISITS, { "1", "10", "2024-01-01", "b" } },
	{ VISITS, { "1", "1", "2024-02-01", "c" } },
	{ VISITS, { "2", "5", "2024-03-01", "d" } },
	{ VISITS, { "2", "6", "2024-03-01", NULL } },
	/* two profiles for parent 1: the lower key came first */
	{ PROFILE, { "1", "3", "bio one", "1" } },
	{ PROFILE, { "1", "7", "second", "0" } },
	{ ADDRESS, { "1", "Oslo", "NO" } },
	/* a case-insensitive collation's order: kept as it comes */
	{ TAGS, { "1", "apple", "A" } },
	{ TAGS, { "1", "Banana", "B" } },
	{ TAGS, { "1", "cherry", "C" } },
	{ OPEN, { "1", "4" } },
	{ TICKETS, { "1", "9" } },
	{ TICKETS, { "2", "1" } },
};

static const char want1_p1[] = HEAD "\"id\":1,\"name\":\"Ann\","
    "\"orders\":[{\"id\":2,\"amount\":\"12345678901234.500000\","
    "\"placed\":\"2024-01-02T03:04:05.123456\","
    "\"big\":18446744073709551615,\"weight\":1.1,"
    "\"doc\":{\"a\":[1.5,2.50],\"b\":{\"c\":null}},"
    "\"mdoc\":{\"x\":\"y z\",\"n\":1e3},"
    "\"note\":\"say \\\"hi\\\"\\t\\u0001\\\\ \xc3\xa9 \xe2\x9c\x93\"},"
    "{\"id\":10,\"amount\":null,\"placed\":null,\"big\":null,"
    "\"weight\":null,\"doc\":null,\"mdoc\":null,\"note\":null}],"
    "\"visits\":[{\"seq\":2,\"day\":\"2024-01-01\",\"what\":\"a\"},"
    "{\"seq\":10,\"day\":\"2024-01-01\",\"what\":\"b\"}],"
    "\"visits_truncated\":true,\"visits_total\":3,"
    "\"profile\":{\"id\":3,\"bio\":\"bio one\",\"vip\":1},"
    "\"city\":\"Oslo\",\"land\":\"NO\","
    "\"tags\":[{\"id\":\"apple\",\"label\":\"A\"},"
    "{\"id\":\"Banana\",\"label\":\"B\"},{\"id\":\"cherry\","
    "\"label\":\"C\"}],\"open_tickets\":4,\"tickets\":9}}";

static const char want1_p2[] = HEAD "\"id\":2,\"name\":null,"
    "\"orders\":[{\"id\":3,\"amount\":\"-0.000001\","
    "\"placed\":\"2024-12-31T23:59:59.000000\","
    "\"big\":18446744073709551614,\"weight\":-0,\"doc\":[],"
    "\"mdoc\":\"s\",\"note\":\"\"}],"
    "\"visits\":[{\"seq\":5,\"day\":\"2024-03-01\",\"what\":\"d\"},"
    "{\"seq\":6,\"day\":\"2024-03-01\",\"what\":null}],"
    "\"visits_truncated\":false,\"visits_total\":2,"
    "\"profile\":null,\"city\":null,\"land\":null,\"tags\":[],"
    "\"open_tickets\":0,\"tickets\":1}}";

static const char want_p3[] = HEAD "\"id\":3,\"name\":\"Cy\"," EMPTY;

/* the next read: what the first held is gone; a flattened single's
 * second row */
static const struct row read2[] = {
	{ ADDRESS, { "2", "Bergen", NULL } },
	{ ADDRESS, { "2", "Oslo", "NO" } },
	{ TAGS, { "2", "b\xc3\xa6r", "\"q\"" } },
	{ OPEN, { "2", "0" } },
};

static const char want2_p2[] = HEAD "\"id\":2,\"name\":\"Bo\","
    "\"orders\":[],\"visits\":[],\"visits_truncated\":false,"
    "\"visits_total\":0,\"profile\":null,\"city\":\"Bergen\","
    "\"land\":null,\"tags\":[{\"id\":\"b\xc3\xa6r\",\"label\":\"\\\"q\\\"\"}],"
    "\"open_tickets\":0,\"tickets\":0}}";

static void
test_refusals(const struct sync_section *sec, const struct my_table *parent)
{
	static const int one[] = { 0 };
	static const struct colspec nofk[] = {
		{ "id", "int", "int(11)", NULL, 0 },
		{ "total", "decimal", "decimal(20,6)", NULL, 0 },
	};
	struct mynest_coll k;
	struct p2o_err e;

	memset(&k, 0, sizeof(k));
	k.child = &sync_more(sec)->children[ORDERS];
	table(&k.t, "shop", "orders", orders_c, 10, one, 1);
	k.t.npk = 0;
	ok(mynest_plan(NULL, sec, parent, &k, &e) == -1 && e.code == 69 &&
	    strstr(e.msg, "has no primary key") != NULL,
	    "a child without a primary key is refused (69)");
	my_table_release(&k.t);
	table(&k.t, "shop", "orders", nofk, 2, one, 1);
	ok(mynest_plan(NULL, sec, parent, &k, &e) == -1 && e.code == 69 &&
	    strstr(e.msg, "no column 'customer_id' (foreign_key)") != NULL,
	    "a child without its foreign key is refused (69)");
	my_table_release(&k.t);
	table(&k.t, "shop", "orders", orders_c, 9, one, 1);
	ok(mynest_plan(NULL, sec, parent, &k, &e) == 0,
	    "every listed column there");
	ok(k.nemb == 8, "eight embedded");
	my_table_release(&k.t);
	table(&k.t, "shop", "orders", orders_c, 8, one, 1);
	ok(mynest_plan(NULL, sec, parent, &k, &e) == -1 && e.code == 69 &&
	    strstr(e.msg, "no column 'note' (columns)") != NULL,
	    "a listed column the table lacks is refused (69)");
	my_table_release(&k.t);
	free(k.emb);
	free(k.head);
	free(k.tail);
}

/*
 * A varchar parent key under a case-insensitive, PAD SPACE collation:
 * the server matches notes whose acct is 'A', 'a ' or 'a' to parent 'a'.
 * The statement selects the parent's own key through the join, so every
 * such row comes with vals[0] "a" and is filed there, the child's own
 * bytes kept in its object; the lookup by the parent row's key stays
 * exact, and another spelling of it finds nothing of its own.
 */
static void
test_collate(struct st_mysql *m, const struct sync_section *sec)
{
	static const int one[] = { 0 };
	static const struct colspec accounts_c[] = {
		{ "code", "varchar", "varchar(10)", "utf8mb4", 0 },
		{ "name", "varchar", "varchar(20)", "utf8mb4", 0 },
	};
	static const struct colspec notes_c[] = {
		{ "id", "int", "int(11)", NULL, 0 },
		{ "acct", "varchar", "varchar(10)", "utf8mb4", 0 },
	};
	static const struct row rows[] = {
		{ 0, { "a", "1", "A" } },
		{ 0, { "a", "2", "a " } },
		{ 0, { "Bb", "4", "bB" } },
		{ 0, { "a", "3", "a" } },
		{ 1, { "a", "3" } },
		{ 1, { "Bb", "1" } },
	};
	struct my_table p;
	struct mynest n;
	struct sbuf out = SBUF_INIT;
	struct p2o_err e;
	const char *vals[2];
	unsigned long lens[2];
	char *sp;
	int i, planned = 1;

	table(&p, "shop", "accounts", accounts_c, 2, one, 1);
	memset(&n, 0, sizeof(n));
	n.sec = sec;
	n.key = xstrdup("code");
	n.key_kind = MK_TEXT;
	n.n = 2;
	n.coll = xcalloc(3, sizeof(*n.coll));
	n.coll[0].child = &sync_more(sec)->children[0];
	n.coll[1].agg = &sync_more(sec)->aggregates[0];
	table(&n.coll[0].t, "shop", "notes", notes_c, 2, one, 1);
	table(&n.coll[1].t, "shop", "notes", notes_c, 2, one, 1);
	for (i = 0; i < 2; i++)
		if (mynest_plan(m, sec, &p, &n.coll[i], &e) == -1) {
			diag("%s", e.msg);
			planned = 0;
		}
	ok(planned, "a string-keyed parent's collections plan");
	is_str(n.coll[0].head, "SELECT `p2o_p`.`code`, `p2o_c`.`id`, "
	    "`p2o_c`.`acct` FROM `shop`.`notes` `p2o_c` JOIN "
	    "`shop`.`accounts` `p2o_p` ON `p2o_p`.`code` = `p2o_c`.`acct` "
	    "WHERE `p2o_p`.`code` ", "a string key: the row names the parent "
	    "the server's comparison matches, by the parent's own key");
	is_str(n.coll[1].head, "SELECT `p2o_p`.`code`, COUNT(*) FROM "
	    "`shop`.`notes` `p2o_c` JOIN `shop`.`accounts` `p2o_p` ON "
	    "`p2o_p`.`code` = `p2o_c`.`acct` WHERE `p2o_p`.`code` ",
	    "and a count of them, grouped by that key");
	mynest_forget(&n);
	take(&n, rows, sizeof(rows) / sizeof(rows[0]));
	for (i = 0; i < 3; i++) {
		static const char *const keys[] = { "a", "Bb", "A" };
		static const char *const want[] = {
		    "\"code\":\"a\",\"name\":\"x\",\"notes\":[{\"id\":1,"
		    "\"acct\":\"A\"},{\"id\":2,\"acct\":\"a \"},{\"id\":3,"
		    "\"acct\":\"a\"}],\"notes_n\":3}}",
		    "\"code\":\"Bb\",\"name\":\"x\",\"notes\":[{\"id\":4,"
		    "\"acct\":\"bB\"}],\"notes_n\":1}}",
		    "\"code\":\"A\",\"name\":\"x\",\"notes\":[],"
		    "\"notes_n\":0}}",
		};
		static const char *const what[] = {
		    "parent 'a': the notes named 'A', 'a ' and 'a', in key "
		    "order, each with its own foreign key bytes; counted 3",
		    "parent 'Bb': the note named 'bB'",
		    "a key text 'A' is not parent 'a''s: filed by the parent "
		    "row's own bytes, matched by the server, not folded in C",
		};
		char head[512];

		vals[0] = keys[i];
		vals[1] = "x";
		lens[0] = strlen(vals[0]);
		lens[1] = 1;
		sbuf_reset(&out);
		mynest_row_frame(&out, &j, 'c', &p, 7, vals, lens, &n);
		if (out.len > 0)
			out.buf[--out.len] = '\0';
		snprintf(head, sizeof(head), "%s%s", "{\"k\":\"row\","
		    "\"op\":\"c\",\"rel\":\"shop.accounts\",\"v\":7,\"key\":"
		    "[\"code\"],\"new\":{", want[i]);
		sp = strchr(out.buf ? out.buf : "", ' ');
		is_str(sp ? sp + 1 : "(not a frame)", head, what[i]);
	}
	sbuf_release(&out);
	mynest_release(&n);
	my_table_release(&p);
}

int
main(void)
{
	struct config cfg;
	struct mynest n;
	struct my_table parent;
	struct p2o_err e;
	struct sbuf out = SBUF_INIT;
	MYSQL *m;
	char err[512];
	int i, planned = 1;

	log_init("t-mynest");
	if (!ok(config_load_mem("t.yaml", cfg_text, sizeof(cfg_text) - 1,
	    &cfg, err, sizeof(err)) == 0, "the config loads")) {
		diag("%s", err);
		return done_testing();
	}
	/* a handle never connected: only its escaping is used */
	if ((m = mysql_init(NULL)) == NULL)
		BAIL_OUT("mysql_init");
	setup(&n, &cfg.syncs[0], &parent);
	for (i = 0; i < NCOLL; i++)
		if (mynest_plan(m, n.sec, &parent, &n.coll[i], &e) == -1) {
			diag("%s", e.msg);
			planned = 0;
		}
	if (!ok(planned, "every collection plans"))
		BAIL_OUT("a collection did not plan");
	test_sql(&n);

	mynest_forget(&n);
	take(&n, read1, sizeof(read1) / sizeof(read1[0]));
	is_str(frame(&n, &parent, "1", "Ann", &out), want1_p1, "parent 1: "
	    "every collection, in key order, its values converted as at the "
	    "top level");
	is_str(frame(&n, &parent, "2", NULL, &out), want1_p2, "parent 2: "
	    "max_rows not passed, no profile, no address, no tag, no open "
	    "ticket");
	is_str(frame(&n, &parent, "3", "Cy", &out), want_p3, "parent 3: "
	    "nothing: [] and null and 0, never absent");
	ok(n.coll[PROFILE].dups.parents == 1 &&
	    n.coll[PROFILE].dups.worst == 2 &&
	    strcmp(n.coll[PROFILE].dups.worst_key, "1") == 0,
	    "the second profile is tallied");
	capture_flush(&n);
	if (!ok(count_lines(logged) == 1 && strstr(logged, "table "
	    "'shop.customers': 1 parent matched more than one row of "
	    "'shop.profiles' ('profile' is single; the lowest key is "
	    "embedded); the worst, parent 1, matched 2") != NULL,
	    "one warning for the batch"))
		diag("logged: %s", logged);
	ok(n.coll[PROFILE].dups.parents == 0, "and the tally starts again");

	mynest_forget(&n);
	take(&n, read2, sizeof(read2) / sizeof(read2[0]));
	is_str(frame(&n, &parent, "1", "Ann", &out), HEAD "\"id\":1,"
	    "\"name\":\"Ann\"," EMPTY, "the next read: parent 1's rows are "
	    "forgotten");
	is_str(frame(&n, &parent, "2", "Bo", &out), want2_p2, "a flattened "
	    "single: the first row's columns, NULL as null; a count of 0");
	capture_flush(&n);
	ok(count_lines(logged) == 1 && strstr(logged, "1 parent matched "
	    "more than one row of 'shop.addresses' ('address' is single") !=
	    NULL, "one warning for the flattened one");
	is_str(frame(&n, &parent, NULL, "nobody", &out), HEAD "\"id\":null,"
	    "\"name\":\"nobody\"}}", "a parent without a key embeds nothing");

	test_refusals(n.sec, &parent);
	test_collate(m, &cfg.syncs[1]);
	sbuf_release(&out);
	sbuf_release(&j);
	mynest_release(&n);
	my_table_release(&parent);
	mysql_close(m);
	config_release(&cfg);
	return done_testing();
}
