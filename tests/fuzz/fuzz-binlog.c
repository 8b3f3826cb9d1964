/*
 * fuzz-binlog.c - libFuzzer target for capture-mysql's event decoder:
 * the transaction assembler (txn.c) and everything under it (events,
 * table maps, row images, values, binary JSON, GTID sets, zstd payloads,
 * MariaDB's zlib-compressed events).
 *
 * Input: a binlog event stream, optionally behind the 4-byte binlog magic
 * (the fixture files are the seeds). Events are cut by their own size
 * field; a short last one is fed as it is. Three tables are configured:
 * demo.movies and sakila.actor (what the fixtures touch) and p2o.every,
 * a column of every kind; the catalogue answers a re-read with the same
 * shape; p2o.cz is the table of the MariaDB compressed-events fixture.
 * Each event's CRC32 is made right before it is fed (the checksum
 * itself is tested in the unit tests; a mutation should reach the
 * decoder behind it). Whatever txn_event appends must be valid frames of
 * valid JSON objects without LF, and on an error it must append nothing;
 * a violation aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "../../capture-mysql/binlog.h"

/* the column kinds of t-binlog-txn.c's p2o.every, in its order, so that
 * the streams that test writes are seeds here */
static const char *const kinds[][3] = {
	{ "int", "int(11)", NULL },
	{ "bigint", "bigint(20) unsigned", NULL },
	{ "tinyint", "tinyint(4)", NULL },
	{ "mediumint", "mediumint(8) unsigned", NULL },
	{ "decimal", "decimal(10,2)", NULL }, { "float", "float", NULL },
	{ "double", "double", NULL },
	{ "enum", "enum('a','b''c')", "utf8mb4" },
	{ "set", "set('x','y','z')", "utf8mb4" }, { "bit", "bit(12)", NULL },
	{ "varbinary", "varbinary(8)", NULL },
	{ "varchar", "varchar(10)", "utf8mb4" },
	{ "char", "char(5)", "latin1" },
	{ "date", "date", NULL }, { "datetime", "datetime(3)", NULL },
	{ "timestamp", "timestamp(6)", NULL }, { "time", "time", NULL },
	{ "year", "year(4)", NULL }, { "json", "json", NULL },
	{ "longtext", "longtext", "utf8mb4" }, { "blob", "blob", NULL },
	{ "varchar", "varchar(10)", "utf8mb4" },
	{ "datetime", "datetime", NULL },
	{ "geometry", "geometry", NULL }, { "text", "text", "gbk" },
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

/* p2o.cz of tests/fixtures/mysql/mariadb-bin.compressed */
static const char *const cz[][3] = {
	{ "int", "int(11)", NULL }, { "varchar", "varchar(40)", "utf8mb4" },
	{ "decimal", "decimal(10,2)", NULL }, { "text", "text", "utf8mb4" },
	{ "binary", "binary(4)", NULL }, { "timestamp", "timestamp(3)", NULL },
};

static void
cz_table(struct my_table *tb)
{
	struct p2o_err err;
	int i;

	memset(tb, 0, sizeof(*tb));
	tb->db = xstrdup("p2o");
	tb->name = xstrdup("cz");
	tb->rel = xstrdup("p2o.cz");
	tb->ncols = 6;
	tb->cols = xcalloc(6, sizeof(*tb->cols));
	for (i = 0; i < 6; i++) {
		char cname[4] = { 'c', (char)('0' + i), 0 };

		if (my_col_init(&tb->cols[i], cname, cz[i][0], cz[i][1],
		    cz[i][2], 0, &err) == -1)
			abort();
	}
	tb->nkeys = 1;
	tb->keys = xcalloc(1, sizeof(int));
}

static void
table(struct my_table *tb, const char *db, const char *name, int ncols,
    int first_kind)
{
	struct p2o_err err;
	char cname[16];
	int i, k;

	memset(tb, 0, sizeof(*tb));
	tb->db = xstrdup(db);
	tb->name = xstrdup(name);
	tb->rel = xmalloc(strlen(db) + strlen(name) + 2);
	strcpy(tb->rel, db);
	strcat(tb->rel, ".");
	strcat(tb->rel, name);
	tb->ncols = ncols;
	tb->cols = xcalloc(ncols, sizeof(*tb->cols));
	for (i = 0; i < ncols; i++) {
		k = (first_kind + i) % (int)NKINDS;
		snprintf(cname, sizeof(cname), "c%d", i);
		if (my_col_init(&tb->cols[i], cname, kinds[k][0], kinds[k][1],
		    kinds[k][2], k == 19, &err) == -1)
			abort();
	}
	tb->nkeys = 1;
	tb->keys = xcalloc(1, sizeof(int));
}

static int
reload(void *ctx, const char *db, const char *name, struct my_table *out,
    struct p2o_err *err)
{
	(void)ctx;
	(void)err;
	if (strcmp(db, "p2o") == 0 && strcmp(name, "cz") == 0)
		cz_table(out);
	else if (strcmp(db, "p2o") == 0)
		table(out, "p2o", "every", (int)NKINDS, 0);
	else if (strcmp(db, "demo") == 0)
		table(out, db, name, 11, 0);
	else
		table(out, db, name, 4, 21);
	return 0;
}

/* the frames appended from offset 'from' must be well-formed */
static void
check_frames(const struct sbuf *out, size_t from)
{
	size_t i = from, len, off;
	const char *why;
	char *end;

	while (i < out->len) {
		len = strtoul(out->buf + i, &end, 10);
		if (end == out->buf + i || *end != ' ' || len < 3 ||
		    (size_t)(end + 1 - out->buf) + len > out->len ||
		    end[len] != '\n' || end[1] != '{')
			abort();
		if (memchr(end + 1, '\n', len - 1) != NULL)
			abort();
		if (jscan_validate(end + 1, len - 1, &off, &why) != 0)
			abort();
		i = (size_t)(end + 1 - out->buf) + len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct my_table tables[4];
	struct my_catalog cat = { reload, NULL };
	struct txn t;
	struct sbuf out = SBUF_INIT;
	size_t i = 0, n, before;
	unsigned char *ev = NULL;
	int k;

	table(&tables[0], "p2o", "every", (int)NKINDS, 0);
	table(&tables[1], "demo", "movies", 11, 0);
	table(&tables[2], "sakila", "actor", 4, 21);
	cz_table(&tables[3]);
	txn_init(&t, tables, 4, cat);
	txn_start(&t, NULL, 0, "binlog.000001", 4);
	if (size >= 4 && memcmp(data, BL_MAGIC, 4) == 0)
		i = 4;
	while (i < size) {
		n = size - i;
		if (n >= BL_HEADER_LEN) {
			uint32_t sz = le32(data + i + 9);

			if (sz >= BL_HEADER_LEN && sz < n)
				n = sz;
		}
		ev = xrealloc(ev, n ? n : 1);
		memcpy(ev, data + i, n);
		if (n >= BL_HEADER_LEN + BL_CRC_LEN && ((t.fmt.have &&
		    t.fmt.crc) || ev[4] == BL_FDE)) {
			uint32_t c = bl_crc32(0, ev, n - BL_CRC_LEN);

			ev[n - 4] = c & 0xff;
			ev[n - 3] = (c >> 8) & 0xff;
			ev[n - 2] = (c >> 16) & 0xff;
			ev[n - 1] = c >> 24;
		}
		before = out.len;
		if (txn_event(&t, ev, n, &out) == -1) {
			if (out.len != before)
				abort();
			break;
		}
		check_frames(&out, before);
		if (txn_pos_owed(&t)) {
			before = out.len;
			txn_put_pos(&t, &out);
			check_frames(&out, before);
		}
		i += n;
		if (out.len > (1u << 20))
			sbuf_reset(&out);
	}
	free(ev);
	txn_release(&t);
	for (k = 0; k < 4; k++)
		my_table_release(&tables[k]);
	sbuf_release(&out);
	return 0;
}
