/*
 * t-pgnest.c - the PostgreSQL collection builder (lib/pg/pgnest.c) as
 * golden cases: the subquery text for a described child, junction and
 * aggregate, then child rows in (as the server returns the subquery) and
 * the parent document's members out - an ordered array, [] when empty,
 * single's object or null (lowest key, a second row tallied), flatten's
 * columns, max_rows' _truncated and _total, a count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "msg.h"
#include "pg/pgnest.h"
#include "tap.h"

static const char cfg_text[] =
    "source:\n  url: postgres://sync@db/app\n"
    "target:\n  url: http://127.0.0.1:9200\n"
    "sync:\n  customers:\n    table: customers\n"
    "    children:\n"
    "      - {table: orders, field: orders, foreign_key: customer_id,\n"
    "         columns: [id, total, placed], fields: {total: amount}}\n"
    "      - {table: profiles, field: profile, foreign_key: customer_id,\n"
    "         single: true, exclude_columns: [customer_id]}\n"
    "      - {table: tags, field: tags, foreign_key: customer_id,\n"
    "         through: customer_tags, through_key: tag_id, max_rows: 2}\n"
    "      - {table: addresses, field: addr, foreign_key: customer_id,\n"
    "         single: true, flatten: true, columns: [city]}\n"
    "    aggregates:\n"
    "      - {field: open_tickets, table: tickets, foreign_key: "
    "customer_id,\n         op: count, where: \"status = 'open'\"}\n";

/* the catalogue pgnest_describe would read */
static void
cols(struct pgnest_coll *k, int n, const char *const *names,
    const uint32_t *types, const int *keys)
{
	int i;

	k->ncols = n;
	k->cols = xcalloc((size_t)n, sizeof(*k->cols));
	for (i = 0; i < n; i++) {
		k->cols[i].name = xstrdup(names[i]);
		k->cols[i].typoid = types[i];
		k->cols[i].key = keys[i];
	}
}

static void
setup(struct pgnest *n, const struct sync_section *sec)
{
	static const char *const o[] = { "id", "customer_id", "total",
	    "placed", "note" };
	static const uint32_t ot[] = { 23, 23, 1700, 1184, 25 };
	static const int ok_[] = { 1, 0, 0, 0, 0 };
	static const char *const p[] = { "customer_id", "seq", "bio",
	    "vip" };
	static const uint32_t pt[] = { 23, 23, 25, 16 };
	static const int pk[] = { 1, 2, 0, 0 };
	static const char *const t[] = { "id", "name" };
	static const uint32_t tt[] = { 20, 25 };
	static const int tk[] = { 1, 0 };
	static const char *const a[] = { "id", "customer_id", "city" };
	static const uint32_t at[] = { 23, 23, 25 };
	static const int ak[] = { 1, 0, 0 };
	static const char *const k[] = { "id", "customer_id", "status" };
	static const uint32_t kt[] = { 23, 23, 25 };
	static const int kk[] = { 1, 0, 0 };
	int i;

	memset(n, 0, sizeof(*n));
	n->sec = sec;
	n->key = xstrdup("id");
	n->n = 5;
	n->coll = xcalloc(5, sizeof(*n->coll));
	for (i = 0; i < 4; i++)
		n->coll[i].child = &sync_more(sec)->children[i];
	n->coll[4].agg = &sync_more(sec)->aggregates[0];
	cols(&n->coll[0], 5, o, ot, ok_);
	cols(&n->coll[1], 4, p, pt, pk);
	cols(&n->coll[2], 2, t, tt, tk);
	cols(&n->coll[3], 3, a, at, ak);
	cols(&n->coll[4], 3, k, kt, kk);
}

static const char want_sql[] =
    ", (SELECT pg_catalog.json_build_array(pg_catalog.count(*), "
    "pg_catalog.json_agg(p2o_x.r ORDER BY p2o_x.n)) FROM (SELECT ARRAY["
    "CASE WHEN p2o_c.\"id\" IS NULL THEN NULL ELSE pg_catalog.format('%s', "
    "p2o_c.\"id\") END, "
    "CASE WHEN p2o_c.\"total\" IS NULL THEN NULL ELSE pg_catalog.format("
    "'%s', p2o_c.\"total\") END, "
    "CASE WHEN p2o_c.\"placed\" IS NULL THEN NULL ELSE pg_catalog.format("
    "'%s', p2o_c.\"placed\") END]::pg_catalog.text[] AS r, "
    "pg_catalog.row_number() OVER (ORDER BY p2o_c.\"id\") AS n FROM "
    "\"public\".\"orders\" p2o_c WHERE p2o_c.\"customer_id\" = "
    "p2o_p.\"id\") p2o_x)";

static const char want_tags[] =
    "pg_catalog.json_agg(p2o_x.r ORDER BY p2o_x.n) FILTER (WHERE "
    "p2o_x.n <= 2)";
static const char want_junction[] =
    "FROM \"public\".\"tags\" p2o_c JOIN \"public\".\"customer_tags\" "
    "p2o_j ON p2o_j.\"tag_id\" = p2o_c.\"id\" WHERE p2o_j.\"customer_id\" "
    "= p2o_p.\"id\") p2o_x)";
static const char want_count[] =
    ", (SELECT pg_catalog.count(*) FROM \"public\".\"tickets\" p2o_c "
    "WHERE p2o_c.\"customer_id\" = p2o_p.\"id\" AND (";

/* one parent: the five subquery results in, the members out */
static const struct {
	const char *what;
	const char *vals[5];
	const char *want;
} rows[] = {
	{ "a parent with nothing",
	    { "[0, null]", "[0, null]", "[0, null]", "[0, null]", "0" },
	    "{\"orders\":[],\"profile\":null,\"tags\":[],"
	    "\"tags_truncated\":false,\"tags_total\":0,\"city\":null,"
	    "\"open_tickets\":0}" },
	{ "values converted as the stream converts them",
	    { "[2, [[\"1\", \"12.50\", \"2024-01-02 03:04:05+00\"], "
	      "[\"3\", null, null]]]",
	      "[1, [[\"7\", \"hi \\\"there\\\"\", \"t\"]]]",
	      "[3, [[\"10\", \"red\"], [\"11\", \"blue\"]]]",
	      "[1, [[\"Oslo\"]]]", "4" },
	    "{\"orders\":[{\"id\":1,\"amount\":\"12.50\","
	    "\"placed\":\"2024-01-02T03:04:05Z\"},"
	    "{\"id\":3,\"amount\":null,\"placed\":null}],"
	    "\"profile\":{\"seq\":7,\"bio\":\"hi \\\"there\\\"\","
	    "\"vip\":true},"
	    "\"tags\":[{\"id\":10,\"name\":\"red\"},"
	    "{\"id\":11,\"name\":\"blue\"}],"
	    "\"tags_truncated\":true,\"tags_total\":3,\"city\":\"Oslo\","
	    "\"open_tickets\":4}" },
	{ "single: the lowest key of two",
	    { "[0, null]", "[2, [[\"1\", \"a\", \"f\"], [\"2\", \"b\", "
	      "\"t\"]]]", "[2, [[\"1\", \"x\"], [\"2\", \"y\"]]]",
	      "[0, null]", "0" },
	    "{\"orders\":[],\"profile\":{\"seq\":1,\"bio\":\"a\","
	    "\"vip\":false},\"tags\":[{\"id\":1,\"name\":\"x\"},"
	    "{\"id\":2,\"name\":\"y\"}],\"tags_truncated\":false,"
	    "\"tags_total\":2,\"city\":null,\"open_tickets\":0}" },
};

int
main(void)
{
	struct config cfg;
	struct pgnest n;
	struct p2o_err e;
	struct sbuf img = SBUF_INIT;
	char err[512];
	size_t lens[5], i, k;

	log_init("t-pgnest");
	if (!ok(config_load_mem("t.yaml", cfg_text, sizeof(cfg_text) - 1,
	    &cfg, err, sizeof(err)) == 0, "the config loads")) {
		printf("# %s\n", err);
		return done_testing();
	}
	setup(&n, &cfg.syncs[0]);
	ok(pgnest_build(&n, &e) == 0, "the subqueries build");
	ok(strncmp(n.select, want_sql, strlen(want_sql)) == 0,
	    "a child: its projected columns as output text, ordered by its "
	    "key, correlated to the parent's key");
	if (strncmp(n.select, want_sql, strlen(want_sql)) != 0)
		printf("# got %s\n", n.select);
	ok(strstr(n.select, want_tags) != NULL, "max_rows caps the rows "
	    "after numbering them, the count still counts every row");
	ok(strstr(n.select, want_junction) != NULL, "a junction joins on "
	    "the child's key and names the parent");
	ok(strstr(n.select, want_count) != NULL &&
	    strstr(n.select, "p2o_c.\"status\" = 'open'") != NULL,
	    "an aggregate counts with its filter");
	ok(strstr(n.select, "ORDER BY p2o_c.\"customer_id\", p2o_c.\"seq\"")
	    != NULL, "a composite key orders column by column");

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		sbuf_reset(&img);
		msg_image_begin(&img, MI_NEW);
		for (k = 0; k < 5; k++)
			lens[k] = strlen(rows[i].vals[k]);
		if (!ok(pgnest_put(&n, &img, rows[i].vals, lens, "1",
		    "public.customers", &e) == 0, "%s: read", rows[i].what))
			printf("# %s\n", e.msg);
		msg_image_end(&img);
		is_str(strchr(img.buf, '{'), rows[i].want, "%s",
		    rows[i].what);
	}
	ok(n.coll[1].dups.parents == 1 && n.coll[1].dups.worst == 2 &&
	    strcmp(n.coll[1].dups.worst_key, "1") == 0,
	    "a second single row is tallied for the batch's warning");
	pgnest_flush(&n);
	ok(n.coll[1].dups.parents == 0, "and the tally starts again");

	{
		const char *bad[5] = { "[1, [[\"1\"]]]", "[0, null]",
		    "[0, null]", "[0, null]", "0" };

		for (k = 0; k < 5; k++)
			lens[k] = strlen(bad[k]);
		sbuf_reset(&img);
		ok(pgnest_put(&n, &img, bad, lens, "1", "public.customers",
		    &e) == -1 && e.code == 65, "a row of the wrong width is "
		    "refused (65)");
	}
	sbuf_release(&img);
	pgnest_release(&n);
	config_release(&cfg);
	return done_testing();
}
