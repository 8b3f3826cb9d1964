/*
 * t-loader-mychunk.c - the MySQL loader's pure half: the chunk statement
 * (mychunk.c: the columns, the filter as the server must run it, the key
 * comparison written out column by column, each key value as the literal
 * that means it exactly, the columns a table cannot be paged by, a table
 * without a key read in one statement) and the progress object
 * (myprogress.c: written, read back byte for byte, anything else refused
 * with a reason).
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "jscan.h"
#include "sbuf.h"
#include "mysql/mycat.h"
#include "mysql/myval.h"
#include "where.h"
#include "../../loader/loader.h"

/* a quoter like the connection's, for the test: backslash escapes */
static void
quote(void *arg, struct sbuf *out, const char *s, size_t n)
{
	size_t i;

	(void)arg;
	sbuf_addc(out, '\'');
	for (i = 0; i < n; i++) {
		if (s[i] == '\'' || s[i] == '\\')
			sbuf_addc(out, '\\');
		sbuf_addc(out, s[i]);
	}
	sbuf_addc(out, '\'');
}

static void
col(struct my_col *c, const char *name, const char *dt, const char *ct,
    const char *cs)
{
	struct p2o_err err;

	if (my_col_init(c, name, dt, ct, cs, 0, &err) == -1)
		BAIL_OUT(err.msg);
}

static void
test_sql(void)
{
	struct my_col cols[5];
	int keys[3] = { 1, 3, 4 };
	struct my_table t = { .db = "shop", .name = "it`ems", .rel =
	    "shop.it`ems", .ncols = 5, .cols = cols, .nkeys = 3, .keys = keys };
	struct copy_field after[3] = {
		{ "O'Brien \\", 9 }, { "\x00\xff\x27", 3 }, { "-12.50", 6 },
	};
	struct copy_field bad[3] = {
		{ "x", 1 }, { "", 0 }, { "12.5; DROP", 10 },
	};
	struct sbuf sql = SBUF_INIT;
	int i;

	col(&cols[0], "f", "float", "float", NULL);
	col(&cols[1], "tenant", "varchar", "varchar(20)", "utf8mb4");
	col(&cols[2], "note", "text", "text", "utf8mb4");
	col(&cols[3], "raw", "varbinary", "varbinary(4)", NULL);
	col(&cols[4], "n", "decimal", "decimal(6,2)", NULL);

	ok(mychunk_sql(&sql, &t, NULL, NULL, 50000, "", quote, NULL) == 0,
	    "the first chunk");
	is_str(sql.buf, "SELECT CAST(`f` AS DOUBLE), `tenant`, `note`, `raw`, "
	    "`n` FROM `shop`.`it``ems` ORDER BY `tenant`, `raw`, `n` LIMIT "
	    "50000", "every column (a FLOAT as a DOUBLE), in key order, no "
	    "WHERE");
	ok(mychunk_sql(&sql, &t, NULL, after, 10, "FOR SHARE NOWAIT", quote,
	    NULL) == 0, "a chunk after a key");
	is_str(sql.buf, "SELECT CAST(`f` AS DOUBLE), `tenant`, `note`, `raw`, "
	    "`n` FROM `shop`.`it``ems` WHERE `tenant` >= 'O\\'Brien \\\\' AND "
	    "((`tenant` > 'O\\'Brien \\\\') OR (`tenant` = 'O\\'Brien \\\\' "
	    "AND `raw` > X'00FF27') OR (`tenant` = 'O\\'Brien \\\\' AND "
	    "`raw` = X'00FF27' AND `n` > -12.50)) ORDER BY `tenant`, `raw`, "
	    "`n` LIMIT 10 FOR SHARE NOWAIT", "the key comparison written "
	    "out, text quoted, bytes in hex, a decimal bare, the tail last");
	ok(mychunk_sql(&sql, &t, NULL, bad, 10, "", quote, NULL) == -1,
	    "a decimal key value that is not a number is refused");
	bad[2] = (struct copy_field){ "1.", 2 };
	ok(mychunk_sql(&sql, &t, NULL, bad, 10, "", quote, NULL) == -1,
	    "... and so is one with a bare point");

	t.nkeys = 1;
	keys[0] = 4;
	after[0] = (struct copy_field){ "18446744073709551615", 20 };
	ok(mychunk_sql(&sql, &t, NULL, after, 7, "", quote, NULL) == 0 &&
	    strstr(sql.buf, " WHERE (`n` > 18446744073709551615) ORDER BY "
	    "`n` LIMIT 7") != NULL, "one key column: one comparison, the "
	    "number's every digit");

	ok(!mychunk_pageable(&cols[0]), "a float key cannot be paged");
	for (i = 1; i < 5; i++)
		ok(mychunk_pageable(&cols[i]), "a %s key can",
		    cols[i].column_type);
	for (i = 0; i < 5; i++)
		my_col_release(&cols[i]);
	col(&cols[0], "e", "enum", "enum('b','a')", "utf8mb4");
	col(&cols[1], "s", "set", "set('b','a')", "utf8mb4");
	col(&cols[2], "b", "bit", "bit(3)", NULL);
	col(&cols[3], "d", "datetime", "datetime(3)", NULL);
	col(&cols[4], "y", "year", "year(4)", NULL);
	ok(!mychunk_pageable(&cols[0]) && !mychunk_pageable(&cols[1]) &&
	    !mychunk_pageable(&cols[2]), "enum, set and bit keys cannot: "
	    "the server orders them by number, not by what they show");
	ok(mychunk_pageable(&cols[3]) && mychunk_pageable(&cols[4]),
	    "datetime and year keys can");
	for (i = 0; i < 5; i++)
		my_col_release(&cols[i]);
	sbuf_release(&sql);
}

/* the filter of text w as mychunk_filter writes it for table t: 0 with
 * the SQL in out, 1 not pushed down (why), -1 */
static int
filter(const struct my_table *t, const char *w, struct sbuf *out, char *why,
    size_t whylen)
{
	struct where *e;
	int rc;

	if ((e = where_parse(w, why, whylen)) == NULL)
		BAIL_OUT(why);
	rc = mychunk_filter(out, t, e, quote, NULL, why, whylen);
	where_free(e);
	return rc;
}

static void
test_filter(void)
{
	struct my_col cols[10];
	int keys[1] = { 0 };
	struct my_table t = { .db = "shop", .name = "items", .rel =
	    "shop.items", .ncols = 10, .cols = cols, .nkeys = 1,
	    .keys = keys };
	struct copy_field after[1] = { { "41", 2 } };
	struct sbuf sql = SBUF_INIT;
	char why[256];
	int i;

	col(&cols[0], "id", "int", "int(11)", NULL);
	col(&cols[1], "grp", "int", "int(11)", NULL);
	col(&cols[2], "name", "varchar", "varchar(20)", "latin1");
	col(&cols[3], "price", "decimal", "decimal(8,2)", NULL);
	col(&cols[4], "day", "date", "date", NULL);
	col(&cols[5], "at", "datetime", "datetime", NULL);
	col(&cols[6], "ts", "timestamp", "timestamp(3)", NULL);
	col(&cols[7], "w", "float", "float", NULL);
	col(&cols[8], "raw", "varbinary", "varbinary(8)", NULL);
	col(&cols[9], "doc", "json", "json", NULL);

	ok(filter(&t, "grp = 7 AND price >= 1.5", &sql, why, sizeof(why)) ==
	    0, "numbers are pushed down");
	is_str(sql.buf, "((`grp` = 7) AND (`price` >= 1.5))", "a number "
	    "column bare: the server compares it exactly, as the shaper");
	ok(filter(&t, "name = 'Ab' OR name > 'a '", &sql, why,
	    sizeof(why)) == 0, "a string column is pushed down");
	is_str(sql.buf, "((CAST(CONVERT(`name` USING utf8mb4) AS BINARY) = "
	    "'Ab') OR (CAST(CONVERT(`name` USING utf8mb4) AS BINARY) > "
	    "'a '))", "compared as its UTF-8 bytes: no collation folds "
	    "case, no PAD SPACE drops a trailing space");
	ok(filter(&t, "day >= '2024-01-01' AND at < '2024-01-05T10:00:00' "
	    "AND ts IS NOT NULL", &sql, why, sizeof(why)) == 0,
	    "dates are pushed down");
	is_str(sql.buf, "((CAST(IF(CONVERT(`day` USING utf8mb4) REGEXP "
	    "'[1-9]', CONVERT(`day` USING utf8mb4), NULL) AS BINARY) >= "
	    "'2024-01-01') AND (CAST(IF(CONVERT(`at` USING utf8mb4) REGEXP "
	    "'[1-9]', CONCAT(REPLACE(CONVERT(`at` USING utf8mb4), ' ', 'T'), "
	    "''), NULL) AS BINARY) < '2024-01-05T10:00:00') AND "
	    "(CAST(IF(CONVERT(`ts` USING utf8mb4) REGEXP '[1-9]', "
	    "CONCAT(REPLACE(CONVERT(`ts` USING utf8mb4), ' ', 'T'), 'Z'), "
	    "NULL) AS BINARY) IS NOT NULL))", "as their document text: a T, "
	    "a Z after a timestamp, a zero date NULL");
	ok(mychunk_sql(&sql, &t, "(`grp` = 7)", after, 100, "", quote,
	    NULL) == 0 && strstr(sql.buf, " WHERE (`grp` = 7) AND (`id` > "
	    "41) ORDER BY `id` LIMIT 100") != NULL, "the filter and the key "
	    "comparison both: %s", sql.buf);
	ok(mychunk_sql(&sql, &t, "(`grp` = 7)", NULL, 100, "", quote,
	    NULL) == 0 && strstr(sql.buf, " WHERE (`grp` = 7) ORDER BY") !=
	    NULL, "the filter alone on the first chunk");

	ok(filter(&t, "w > 0.3", &sql, why, sizeof(why)) == 1 &&
	    strstr(why, "'w' is float") != NULL, "a float is not pushed "
	    "down: %s", why);
	ok(filter(&t, "grp = 7 AND raw IS NULL", &sql, why, sizeof(why)) ==
	    1 && strstr(why, "'raw'") != NULL, "nor bytes (base64): %s", why);
	ok(filter(&t, "doc = 'x'", &sql, why, sizeof(why)) == 1,
	    "nor JSON: %s", why);
	ok(filter(&t, "gone = 1", &sql, why, sizeof(why)) == 1 &&
	    strstr(why, "'gone'") != NULL, "nor a column the table lacks: %s",
	    why);
	ok(filter(&t, "grp < 2e3", &sql, why, sizeof(why)) == 1 &&
	    strstr(why, "exponent") != NULL, "nor a number with an exponent "
	    "(a double to the server): %s", why);
	ok(filter(&t, "name = '2e3'", &sql, why, sizeof(why)) == 0,
	    "an exponent inside a string is no number");

	/* a keyless table: one statement, no order, no limit */
	t.nkeys = 0;
	ok(mychunk_sql(&sql, &t, "(`grp` = 7)", NULL, 100, "", quote,
	    NULL) == 0 && strstr(sql.buf, "FROM `shop`.`items` WHERE (`grp` = "
	    "7)") != NULL && strstr(sql.buf, "ORDER BY") == NULL &&
	    strstr(sql.buf, "LIMIT") == NULL, "a table without a key is read "
	    "in one statement: %s", sql.buf);
	for (i = 0; i < 10; i++)
		my_col_release(&cols[i]);
	sbuf_release(&sql);
}

static void
test_progress(void)
{
	static const char *const names[] = { "tenant", "raw" };
	static const char *const types[] = { "varchar(20)", "varbinary(4)" };
	struct copy_field last[2] = { { "\xe6\x97\xa5 \"q\"", 7 },
	    { "\x00\xff", 2 } };
	struct myprogress p, q;
	struct sbuf out = SBUF_INIT;
	char err[128];

	myprogress_start(&p, 2, names, types);
	myprogress_put(&out, &p);
	is_str(out.buf, "{\"chunks\":0,\"rows\":0,\"key\":[\"tenant\",\"raw\"],"
	    "\"types\":[\"varchar(20)\",\"varbinary(4)\"],\"finished\":false}",
	    "a fresh progress: no key written yet");
	ok(myprogress_parse((struct jspan){ out.buf, out.len }, &q, err,
	    sizeof(err)) == 0 && !q.have_after && q.nkeys == 2,
	    "read back");
	myprogress_release(&q);

	p.chunks = 7;
	p.rows = 18446744073709551615ULL;
	p.finished = 1;
	myprogress_after(&p, last);
	sbuf_reset(&out);
	myprogress_put(&out, &p);
	is_str(out.buf, "{\"chunks\":7,\"rows\":18446744073709551615,\"key\":"
	    "[\"tenant\",\"raw\"],\"types\":[\"varchar(20)\",\"varbinary(4)\"],"
	    "\"after_hex\":[\"e697a520227122\",\"00ff\"],"
	    "\"finished\":true}", "the last key as the hex of its bytes");
	ok(myprogress_parse((struct jspan){ out.buf, out.len }, &q, err,
	    sizeof(err)) == 0 && q.have_after && q.chunks == 7 &&
	    q.rows == p.rows && q.finished && q.after[0].n == 7 &&
	    memcmp(q.after[0].p, last[0].p, 7) == 0 && q.after[1].n == 2 &&
	    memcmp(q.after[1].p, "\x00\xff", 2) == 0 &&
	    strcmp(q.types[1], "varbinary(4)") == 0, "read back byte for "
	    "byte: %s", err);
	myprogress_release(&q);
	myprogress_release(&p);

#define REFUSED(json, why) do {						\
	ok(myprogress_parse((struct jspan){ json, strlen(json) }, &q,	\
	    err, sizeof(err)) == -1 && strstr(err, why) != NULL,	\
	    "refused: %s (%s)", json, err);				\
} while (0)
	REFUSED("[]", "not an object");
	REFUSED("{\"rows\":1,\"key\":[\"a\"],\"types\":[\"int\"],"
	    "\"finished\":false}", "\"chunks\"");
	REFUSED("{\"chunks\":1,\"rows\":-1,\"key\":[\"a\"],\"types\":[\"int\"],"
	    "\"finished\":false}", "\"rows\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\"],\"types\":[\"int\"]}",
	    "\"finished\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[],\"types\":[],"
	    "\"finished\":false}", "\"key\"");
	REFUSED("{\"chunks\":2,\"rows\":1,\"key\":[],\"types\":[],"
	    "\"finished\":true}", "\"key\"");
	ok(myprogress_parse((struct jspan){ "{\"chunks\":1,\"rows\":3,"
	    "\"key\":[],\"types\":[],\"finished\":true}", 57 }, &q, err,
	    sizeof(err)) == 0 && q.nkeys == 0 && q.finished, "a table without "
	    "a key, read in its one chunk: %s", err);
	myprogress_release(&q);
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\",\"b\"],\"types\":"
	    "[\"int\"],\"finished\":false}", "\"types\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\"],\"types\":"
	    "[\"int\",\"int\"],\"finished\":false}", "\"types\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\",\"b\"],\"types\":"
	    "[\"int\",\"int\"],\"after_hex\":[\"31\"],\"finished\":false}",
	    "\"after_hex\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\"],\"types\":[\"int\"],"
	    "\"finished\":false}", "no \"after_hex\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\"],\"types\":[\"int\"],"
	    "\"after_hex\":[\"3\"],\"finished\":false}", "\"after_hex\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\"],\"types\":[\"int\"],"
	    "\"after_hex\":[\"3G\"],\"finished\":false}", "\"after_hex\"");
	REFUSED("{\"chunks\":1,\"rows\":1,\"key\":[\"a\"],\"types\":[\"int\"],"
	    "\"after_hex\":[\"31\",\"32\"],\"finished\":false}",
	    "\"after_hex\"");
	REFUSED("{\"done\":1,\"of\":2,\"rows\":1,\"key\":[\"a\"],\"types\":"
	    "[\"int\"],\"bounds\":[[\"5\"]]}", "\"chunks\"");
	sbuf_release(&out);
}

int
main(void)
{
	test_sql();
	test_filter();
	test_progress();
	return done_testing();
}
