/*
 * t-binlog-txn.c - capture-mysql's transaction assembler (txn.c) and
 * value mapping (myval.c) on event streams built byte by byte: a MariaDB
 * stream with a table of every column type (the exact frames), the same
 * values read from their text-protocol form (the loader's half: the same
 * JSON), TRUNCATE, ALTER with drift, a row shape the catalogue cannot
 * match, DROP, positions and texts, pos frames, rotation, resume and new
 * generations, the GTID set and what makes it incomplete, refusals
 * (PARTIAL_UPDATE_ROWS, a compressed event that does not inflate, a bad
 * CRC32); GTID set and position text parsing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "p2o.h"
#include "mysql-fixtures.h"

/* ---- building events ---- */

struct ev {
	unsigned char b[4096];
	size_t	 n;
};

static void
put(struct ev *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void
le(struct ev *e, uint64_t v, int n)
{
	while (n-- > 0) {
		e->b[e->n++] = v & 0xff;
		v >>= 8;
	}
}

static void
hex(struct ev *e, const char *h)
{
	long n = fx_unhex(h, strlen(h), e->b + e->n);

	e->n += (size_t)n;
}

/* header for type with log_pos; the body follows; ev_end() seals it */
static void
ev_begin(struct ev *e, int type, uint32_t log_pos, uint16_t flags)
{
	e->n = 0;
	le(e, 1709212455, 4);
	e->b[e->n++] = (unsigned char)type;
	le(e, 1, 4);		/* server id */
	le(e, 0, 4);		/* size, below */
	le(e, log_pos, 4);
	le(e, flags, 2);
}

static void
ev_end(struct ev *e, int crc)
{
	uint32_t c;

	if (crc)
		e->n += 4;
	e->b[9] = e->n & 0xff;
	e->b[10] = (e->n >> 8) & 0xff;
	e->b[11] = e->b[12] = 0;
	if (crc) {
		c = bl_crc32(0, e->b, e->n - 4);
		e->n -= 4;
		le(e, c, 4);
	}
}

/* a stream being fed: events at consecutive offsets of one file */
struct stream {
	struct txn t;
	struct sbuf out;
	uint32_t off;
	int	 rc;
	char	 warn[1024];
	int	 nwarn;
};

static struct stream *cur;
/* P2O_FUZZ_SEED_DIR: every stream is also written there, a seed for
 * tests/fuzz/fuzz-binlog.c */
static FILE *seed;

static void
on_warn(const char *m)
{
	if (cur != NULL) {
		snprintf(cur->warn, sizeof(cur->warn), "%s", m);
		cur->nwarn++;
	}
}

static int
feed(struct stream *s, struct ev *e, int crc, int log_pos_zero)
{
	ev_end(e, crc);
	if (!log_pos_zero) {
		uint32_t end = s->off + (uint32_t)e->n;

		e->b[13] = end & 0xff;
		e->b[14] = (end >> 8) & 0xff;
		e->b[15] = (end >> 16) & 0xff;
		e->b[16] = end >> 24;
		if (crc) {
			uint32_t c = bl_crc32(0, e->b, e->n - 4);

			e->n -= 4;
			le(e, c, 4);
		}
	}
	s->off += (uint32_t)e->n;
	cur = s;
	if (seed != NULL)
		fwrite(e->b, 1, e->n, seed);
	s->rc = txn_event(&s->t, e->b, e->n, &s->out);
	return s->rc;
}

static void
fde(struct stream *s, const char *version)
{
	struct ev e;
	char v[50];
	int i;

	ev_begin(&e, BL_FDE, 0, 0);
	le(&e, 4, 2);
	memset(v, 0, sizeof(v));
	snprintf(v, sizeof(v), "%s", version);
	put(&e, v, 50);
	le(&e, 0, 4);
	e.b[e.n++] = 19;
	for (i = 0; i < 164; i++)	/* post-header lengths by type */
		e.b[e.n++] = i + 1 == BL_QUERY ? 13 : i + 1 == BL_ROTATE ? 8 :
		    i + 1 == BL_TABLE_MAP ? 8 : (i + 1 >= BL_WRITE_V1 &&
		    i + 1 <= BL_DELETE_V1) ? 8 : (i + 1 >= BL_WRITE_V2 &&
		    i + 1 <= BL_PARTIAL_UPDATE) ? 10 : 0;
	e.b[e.n++] = 1;			/* CRC32 */
	feed(s, &e, 1, 0);
}

static void
query(struct stream *s, const char *db, const char *sql)
{
	struct ev e;

	ev_begin(&e, BL_QUERY, 0, 0);
	le(&e, 7, 4);
	le(&e, 0, 4);
	e.b[e.n++] = (unsigned char)strlen(db);
	le(&e, 0, 2);
	le(&e, 0, 2);		/* no status variables */
	put(&e, db, strlen(db) + 1);
	put(&e, sql, strlen(sql));
	feed(s, &e, 1, 0);
}

static void
mdb_gtid(struct stream *s, uint64_t seq, int standalone)
{
	struct ev e;

	ev_begin(&e, BL_MDB_GTID, 0, 0);
	le(&e, seq, 8);
	le(&e, 0, 4);
	e.b[e.n++] = standalone ? MDB_FL_STANDALONE : 0;
	le(&e, 0, 6);
	feed(s, &e, 1, 0);
}

static void
xid(struct stream *s)
{
	struct ev e;

	ev_begin(&e, BL_XID, 0, 0);
	le(&e, 99, 8);
	feed(s, &e, 1, 0);
}

/*
 * The table every-type test uses: p2o.every, its binlog types and
 * metadata, its catalogue declaration and one row's cells, its text
 * protocol form and the JSON both must give.
 */
static const struct {
	const char *name, *data_type, *column_type, *charset;
	int	 type;
	const char *meta;	/* hex, as the table map carries it */
	const char *cell;	/* hex */
	const char *text;	/* what SELECT prints; NULL: cell is NULL */
	size_t	 textlen;
	const char *json;
} every[] = {
	{ "id", "int", "int(11)", NULL, FT_LONG, "", "fbffffff", "-5", 2,
	    "-5" },
	{ "big", "bigint", "bigint(20) unsigned", NULL, FT_LONGLONG, "",
	    "ffffffffffffffff", "18446744073709551615", 20,
	    "18446744073709551615" },
	{ "tiny", "tinyint", "tinyint(4)", NULL, FT_TINY, "", "ff", "-1", 2,
	    "-1" },
	{ "med", "mediumint", "mediumint(8) unsigned", NULL, FT_INT24, "",
	    "ffffff", "16777215", 8, "16777215" },
	{ "price", "decimal", "decimal(10,2)", NULL, FT_NEWDECIMAL, "0a02",
	    "7ffffb2dcd", "-1234.50", 8, "\"-1234.50\"" },
	{ "f", "float", "float", NULL, FT_FLOAT, "04", "0000c03f",
	    "1.5", 3, "1.5" },
	{ "d", "double", "double", NULL, FT_DOUBLE, "08", "9a9999999999b93f",
	    "0.1", 3, "0.1" },
	{ "e", "enum", "enum('a','b''c')", "utf8mb4", FT_STRING, "f701",
	    "02", "b'c", 3, "\"b'c\"" },
	{ "s", "set", "set('x','y','z')", "utf8mb4", FT_STRING, "f801",
	    "05", "x,z", 3, "[\"x\",\"z\"]" },
	{ "b", "bit", "bit(12)", NULL, FT_BIT, "0401", "0abc", "\x0a\xbc", 2,
	    "2748" },
	{ "vb", "varbinary", "varbinary(8)", NULL, FT_VARCHAR, "0800",
	    "0200ff", "\x00\xff", 2, "\"AP8=\"" },
	{ "vc", "varchar", "varchar(10)", "utf8mb4", FT_VARCHAR, "2800",
	    "0668c3a96c6c6f", "h\xc3\xa9llo", 6, "\"h\xc3\xa9llo\"" },
	{ "l1", "char", "char(5)", "latin1", FT_STRING, "fe05", "04636166e9",
	    "caf\xc3\xa9", 5, "\"caf\xc3\xa9\"" },
	{ "dt", "date", "date", NULL, FT_DATE, "", "5dd00f", "2024-02-29", 10,
	    "\"2024-02-29\"" },
	{ "dtm", "datetime", "datetime(3)", NULL, FT_DATETIME2, "03",
	    "99b2bad38f04ce", "2024-02-29 13:14:15.123", 23,
	    "\"2024-02-29T13:14:15.123\"" },
	{ "ts", "timestamp", "timestamp(6)", NULL, FT_TIMESTAMP2, "06",
	    "65e0832700002a", "2024-02-29 13:14:15.000042", 26,
	    "\"2024-02-29T13:14:15.000042Z\"" },
	{ "tm", "time", "time", NULL, FT_TIME2, "00", "7f3748", "-12:34:56",
	    9, "\"-12:34:56\"" },
	{ "y", "year", "year(4)", NULL, FT_YEAR, "", "7c", "2024", 4, "2024" },
	{ "j", "json", "json", NULL, FT_JSON, "04",
	    "0f0000000001000e000b0001000c0c00610162", "{\"a\": \"b\"}", 10,
	    "{\"a\":\"b\"}" },
	{ "mj", "longtext", "longtext", "utf8mb4", FT_BLOB, "04",
	    "0a000000207b2261223a20317d20", " {\"a\": 1} ", 10,
	    "{\"a\":1}" },
	{ "bl", "blob", "blob", NULL, FT_BLOB, "02", "0300010203",
	    "\x01\x02\x03", 3, "\"AQID\"" },
	{ "nul", "varchar", "varchar(10)", "utf8mb4", FT_VARCHAR, "2800",
	    NULL, NULL, 0, "null" },
	{ "zd", "datetime", "datetime", NULL, FT_DATETIME2, "00",
	    "8000000000", "0000-00-00 00:00:00", 19, "null" },
};
#define NEVERY	((int)(sizeof(every) / sizeof(every[0])))

static void
every_table(struct my_table *tb, int extra)
{
	struct fx_col cols[NEVERY + 1];
	static const int keys[] = { 0 };
	int i;

	for (i = 0; i < NEVERY; i++) {
		cols[i].name = every[i].name;
		cols[i].data_type = every[i].data_type;
		cols[i].column_type = every[i].column_type;
		cols[i].charset = every[i].charset;
	}
	cols[NEVERY].name = "added";
	cols[NEVERY].data_type = "int";
	cols[NEVERY].column_type = "int(11)";
	cols[NEVERY].charset = NULL;
	fx_table(tb, "p2o", "every", cols, NEVERY + extra, keys, 1);
	/* the column whose declared type is JSON on MariaDB */
	for (i = 0; i < tb->ncols; i++)
		if (strcmp(tb->cols[i].name, "mj") == 0)
			tb->cols[i].kind = MK_JSON_TEXT;
}

static void
table_map(struct stream *s, uint64_t id, const char *db, const char *name,
    int ncols)
{
	struct ev e, meta;
	int i;

	ev_begin(&e, BL_TABLE_MAP, 0, 0);
	le(&e, id, 6);
	le(&e, 1, 2);
	e.b[e.n++] = (unsigned char)strlen(db);
	put(&e, db, strlen(db) + 1);
	e.b[e.n++] = (unsigned char)strlen(name);
	put(&e, name, strlen(name) + 1);
	e.b[e.n++] = (unsigned char)ncols;
	meta.n = 0;
	for (i = 0; i < ncols; i++) {
		int k = i < NEVERY ? i : 0;

		e.b[e.n++] = (unsigned char)every[k].type;
		hex(&meta, every[k].meta);
	}
	e.b[e.n++] = (unsigned char)meta.n;
	put(&e, meta.b, meta.n);
	for (i = 0; i < (ncols + 7) / 8; i++)
		e.b[e.n++] = 0xff;
	feed(s, &e, 1, 0);
}

/* one WRITE_ROWS v1 row (or an UPDATE: the same row twice) */
static void
rows(struct stream *s, int type, uint64_t id, int ncols)
{
	struct ev e;
	unsigned char nulls[8];
	int i, img;

	ev_begin(&e, type, 0, 0);
	le(&e, id, 6);
	le(&e, 1, 2);
	e.b[e.n++] = (unsigned char)ncols;
	for (img = 0; img < (type == BL_UPDATE_V1 ? 2 : 1); img++)
		for (i = 0; i < (ncols + 7) / 8; i++)
			e.b[e.n++] = 0xff;
	for (img = 0; img < (type == BL_UPDATE_V1 ? 2 : 1); img++) {
		memset(nulls, 0, sizeof(nulls));
		for (i = 0; i < ncols; i++)
			if (i < NEVERY && every[i].cell == NULL)
				nulls[i / 8] |= 1 << (i % 8);
		put(&e, nulls, (ncols + 7) / 8);
		for (i = 0; i < ncols; i++) {
			if (i >= NEVERY)
				hex(&e, "07000000");
			else if (every[i].cell != NULL)
				hex(&e, every[i].cell);
		}
	}
	feed(s, &e, 1, 0);
}

static void
seed_open(const char *name)
{
	const char *dir = name ? getenv("P2O_FUZZ_SEED_DIR") : NULL;
	char path[512];

	if (seed != NULL)
		fclose(seed);
	seed = NULL;
	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	seed = fopen(path, "wb");
}

static void
stream_open(struct stream *s, struct my_table *tables, int n,
    struct my_catalog cat)
{
	memset(s, 0, sizeof(*s));
	txn_init(&s->t, tables, n, cat);
	s->t.warn = on_warn;
	txn_start(&s->t, NULL, 0, "binlog.000001", 4);
	s->off = 4;
	fde(s, "10.11.19-MariaDB-log");
}

static void
stream_close(struct stream *s)
{
	txn_release(&s->t);
	sbuf_release(&s->out);
	cur = NULL;
}

/* the frames in out as NDJSON lines (prefixes dropped) */
static char *
lines(struct sbuf *out)
{
	struct sbuf b = SBUF_INIT;
	size_t i = 0;

	sbuf_grow(&b, 1);
	while (i < out->len) {
		char *sp = memchr(out->buf + i, ' ', out->len - i);
		size_t n = strtoul(out->buf + i, NULL, 10);

		sbuf_add(&b, sp + 1, n);
		i = (size_t)(sp + 1 - out->buf) + n;
	}
	sbuf_reset(out);
	return b.buf;
}

static void
test_every_type(void)
{
	struct my_table tb;
	struct my_catalog cat = { NULL, NULL };
	struct stream s;
	struct sbuf want = SBUF_INIT, text = SBUF_INIT;
	char *got;
	int i;
	uint32_t v;

	every_table(&tb, 0);
	seed_open("txn-every-type");
	stream_open(&s, &tb, 1, cat);
	mdb_gtid(&s, 7, 0);
	v = s.off;
	table_map(&s, 42, "p2o", "every", NEVERY);
	rows(&s, BL_WRITE_V1, 42, NEVERY);
	xid(&s);
	ok(s.rc == 0, "every type: the stream decodes%s%s", s.rc ? ": " : "",
	    s.t.err.msg);
	sbuf_addf(&want, "{\"k\":\"row\",\"op\":\"i\",\"rel\":\"p2o.every\","
	    "\"v\":%llu,\"key\":[\"id\"],\"new\":{",
	    (unsigned long long)mypos_coord(1, v));
	for (i = 0; i < NEVERY; i++)
		sbuf_addf(&want, "%s\"%s\":%s", i ? "," : "", every[i].name,
		    every[i].json);
	sbuf_addf(&want, "}}\n{\"k\":\"commit\",\"pos\":%llu,\"text\":"
	    "\"binlog.000001:%u;gtid=0-1-7\",\"ts\":1709212455000000,"
	    "\"n\":1}\n", (unsigned long long)mypos_coord(1, s.off), s.off);
	got = lines(&s.out);
	is_str(got, want.buf, "every type: the row and its commit, exactly");
	free(got);

	/* the loader's half: the same JSON from the text protocol */
	for (i = 0; i < NEVERY; i++) {
		if (every[i].text == NULL)
			continue;
		sbuf_reset(&text);
		sbuf_grow(&text, 1);
		myval_text(&tb.cols[i], every[i].text, every[i].textlen, &text);
		is_str(text.buf, every[i].json, "text '%s' gives the stream's "
		    "JSON", every[i].name);
	}
	stream_close(&s);
	my_table_release(&tb);
	sbuf_release(&want);
	sbuf_release(&text);
}

/* a catalogue whose table gained a column */
static int reloads;
static int reload_gone;

static int
reload_added(void *ctx, const char *db, const char *table,
    struct my_table *out, struct p2o_err *err)
{
	(void)ctx;
	reloads++;
	if (reload_gone || strcmp(table, "every") != 0)
		return 1;
	every_table(out, 1);
	return 0;
}

static void
test_ddl(void)
{
	struct my_table tb;
	struct my_catalog cat = { reload_added, NULL };
	struct stream s;
	char *got;

	every_table(&tb, 0);
	seed_open("txn-ddl");
	stream_open(&s, &tb, 1, cat);

	/* TRUNCATE: its own group, a truncate frame and a commit */
	mdb_gtid(&s, 8, 1);
	query(&s, "p2o", "/* x */ TRUNCATE TABLE `every`");
	got = lines(&s.out);
	ok(strncmp(got, "{\"k\":\"truncate\",", 16) == 0 &&
	    strstr(got, "\"rels\":[\"p2o.every\"]") != NULL &&
	    strstr(got, "\"n\":1}") != NULL &&
	    strstr(got, ";gtid=0-1-8\"") != NULL,
	    "TRUNCATE makes a truncate frame and "
	    "its commit");
	free(got);

	/* a transaction on another table: no frame, a pos owed */
	mdb_gtid(&s, 9, 0);
	table_map(&s, 50, "p2o", "other", 1);
	rows(&s, BL_WRITE_V1, 50, 1);
	xid(&s);
	ok(s.out.len == 0 && txn_pos_owed(&s.t), "another table's "
	    "transaction makes no frame, but a pos frame is owed");
	txn_put_pos(&s.t, &s.out);
	got = lines(&s.out);
	ok(strstr(got, "{\"k\":\"pos\",\"pos\":") == got && strstr(got,
	    ";gtid=0-1-9\"}") != NULL && !txn_pos_owed(&s.t),
	    "the pos frame carries the set through the skipped group");
	free(got);

	/* ALTER ADD COLUMN: re-read, a drift frame naming it */
	mdb_gtid(&s, 10, 1);
	query(&s, "p2o", "ALTER TABLE p2o.every ADD COLUMN added int");
	got = lines(&s.out);
	ok(reloads == 1 && strstr(got, "{\"k\":\"drift\",\"rel\":\"p2o.every\","
	    "\"added\":[\"added\"],\"removed\":[],\"retyped\":[]}") == got,
	    "ALTER re-reads the table and reports the added column");
	ok(strstr(got, "\"k\":\"commit\"") == NULL, "a DDL that changed no "
	    "row writes no commit");
	free(got);
	ok(s.t.tables[0].ncols == NEVERY + 1, "the new shape is in use");

	/* rows of the new shape land */
	mdb_gtid(&s, 11, 0);
	table_map(&s, 43, "p2o", "every", NEVERY + 1);
	rows(&s, BL_WRITE_V1, 43, NEVERY + 1);
	xid(&s);
	got = lines(&s.out);
	ok(s.rc == 0 && strstr(got, ",\"added\":7}}") != NULL, "a row of the "
	    "new shape carries the added column");
	free(got);

	/* an old-shaped row (a replay): re-read once, skipped, drift */
	mdb_gtid(&s, 12, 0);
	table_map(&s, 44, "p2o", "every", NEVERY);
	rows(&s, BL_WRITE_V1, 44, NEVERY);
	rows(&s, BL_WRITE_V1, 44, NEVERY);
	xid(&s);
	got = lines(&s.out);
	ok(s.rc == 0 && reloads == 2 && s.t.n.skipped_rows == 2 &&
	    strstr(got, "\"k\":\"row\"") == NULL && strstr(got,
	    "{\"k\":\"drift\",\"rel\":\"p2o.every\"}") == got, "a row the "
	    "catalogue cannot match is skipped and counted as drift, after "
	    "one re-read");
	ok(strstr(s.warn, "cannot match") != NULL && strstr(s.warn,
	    "p2o.every") != NULL, "... and logged with the table");
	free(got);
	mdb_gtid(&s, 13, 0);
	table_map(&s, 45, "p2o", "every", NEVERY);
	rows(&s, BL_WRITE_V1, 45, NEVERY);
	xid(&s);
	free(lines(&s.out));
	ok(reloads == 2, "the same unmatched shape is not re-read again");

	/* DROP: warned about, nothing else */
	s.nwarn = 0;
	mdb_gtid(&s, 14, 1);
	query(&s, "p2o", "DROP TABLE IF EXISTS `p2o`.`x`, `every` /* "
	    "generated by server */");
	got = lines(&s.out);
	ok(s.nwarn == 1 && strstr(s.warn, "'p2o.every' was dropped") != NULL &&
	    got[0] == '\0', "DROP TABLE of a configured table is warned "
	    "about");
	free(got);

	/* PARTIAL_UPDATE_ROWS on a configured table stops the stream */
	mdb_gtid(&s, 15, 0);
	table_map(&s, 46, "p2o", "every", NEVERY + 1);
	{
		struct ev e;

		ev_begin(&e, BL_PARTIAL_UPDATE, 0, 0);
		le(&e, 46, 6);
		le(&e, 1, 2);
		le(&e, 2, 2);
		e.b[e.n++] = NEVERY + 1;
		le(&e, 0xffffffffffffffffULL, 4);
		le(&e, 0xffffffffffffffffULL, 4);
		ok(feed(&s, &e, 1, 0) == -1 && s.t.err.code ==
		    P2O_EXIT_REFUSED && strstr(s.t.err.msg, "PARTIAL_JSON") !=
		    NULL, "PARTIAL_UPDATE_ROWS stops with exit 69: %s",
		    s.t.err);
	}
	stream_close(&s);
	my_table_release(&tb);
}

static void
test_positions(void)
{
	struct my_table tb;
	struct my_catalog cat = { NULL, NULL };
	struct stream s;
	struct mypos p;
	struct ev e;
	char err[256], *got;
	uint64_t token;

	every_table(&tb, 0);
	stream_open(&s, &tb, 1, cat);
	/* a zero log_pos advances by the event's size */
	mdb_gtid(&s, 3, 0);
	table_map(&s, 42, "p2o", "every", NEVERY);
	ev_begin(&e, BL_XID, 0, 0);
	le(&e, 1, 8);
	feed(&s, &e, 1, 1);
	ok(s.t.cur == mypos_coord(1, s.off), "a log_pos of 0 advances by "
	    "the event's size");
	free(lines(&s.out));
	/* a real rotate: a pos frame at the new file's head */
	ev_begin(&e, BL_ROTATE, 0, 0);
	le(&e, 4, 8);
	put(&e, "binlog.000002", 13);
	feed(&s, &e, 1, 0);
	got = lines(&s.out);
	ok(strstr(got, "\"pos\":8589934596,\"text\":\"binlog.000002:4;"
	    "gtid=0-1-3\"") != NULL, "a rotate writes a pos frame for the "
	    "next file's head");
	free(got);
	/* a bad CRC32 is a lost connection (75), nothing written */
	s.off = 4;
	fde(&s, "10.11.19-MariaDB-log");
	ev_begin(&e, BL_XID, 0, 0);
	le(&e, 1, 8);
	ev_end(&e, 1);
	e.b[20] ^= 1;
	ok(txn_event(&s.t, e.b, e.n, &s.out) == -1 && s.t.err.code ==
	    P2O_EXIT_TEMPFAIL && s.out.len == 0, "a CRC32 mismatch: exit 75");
	/* a compressed event whose compressed part is not one */
	ev_begin(&e, BL_QUERY_COMPRESSED, 0, 0);
	le(&e, 0, 20);
	ev_end(&e, 1);
	ok(txn_event(&s.t, e.b, e.n, &s.out) == -1 && s.t.err.code ==
	    P2O_EXIT_DATA && s.out.len == 0, "a compressed event that does "
	    "not inflate stops with exit 65, nothing written");
	stream_close(&s);

	/* resume without GTIDs: base = token - coordinate */
	ok(mypos_parse(&p, "binlog.000003:1000", err, sizeof(err)) == 0 &&
	    !p.has_gtid, "binlog.000003:1000 parses");
	token = mypos_coord(3, 1000) + 5000;
	memset(&s, 0, sizeof(s));
	txn_init(&s.t, &tb, 1, cat);
	s.t.warn = on_warn;
	txn_start(&s.t, &p, token, NULL, 0);
	s.off = 1000;
	fde(&s, "10.11.19-MariaDB-log");
	mdb_gtid(&s, 20, 0);
	table_map(&s, 42, "p2o", "every", NEVERY);
	rows(&s, BL_WRITE_V1, 42, NEVERY);
	xid(&s);
	got = lines(&s.out);
	ok(strstr(got, "\"pos\":") != NULL && s.t.base == 5000 &&
	    s.t.last_commit == 5000 + mypos_coord(3, s.off) &&
	    strstr(got, "\"text\":\"binlog.000003:") != NULL &&
	    strstr(got, ";gtid") == NULL, "resumed without a set: versions "
	    "continue the token's numbering, and no set is claimed");
	free(got);
	stream_close(&s);
	mypos_release(&p);

	/* resume by GTID on a server whose coordinates are behind the
	 * checkpoint's: a new generation */
	ok(mypos_parse(&p, "binlog.000009:5000;gtid=0-1-20", err,
	    sizeof(err)) == 0 && p.has_gtid, "a text with a set parses");
	token = mypos_coord(9, 5000) + 77;
	memset(&s, 0, sizeof(s));
	txn_init(&s.t, &tb, 1, cat);
	s.t.warn = on_warn;
	txn_start(&s.t, &p, token, NULL, 0);
	/* the dump declared CRC32: the artificial rotate carries one */
	s.t.crc_before_fde = 1;
	ev_begin(&e, BL_ROTATE, 0, BL_FLAG_ARTIFICIAL);
	le(&e, 4, 8);
	put(&e, "binlog.000001", 13);
	s.off = 0;
	feed(&s, &e, 1, 1);
	s.off = 4;
	fde(&s, "10.11.19-MariaDB-log");
	mdb_gtid(&s, 21, 0);
	table_map(&s, 42, "p2o", "every", NEVERY);
	rows(&s, BL_WRITE_V1, 42, NEVERY);
	xid(&s);
	got = lines(&s.out);
	ok(s.t.base == token + (1ULL << 40) && strstr(s.warn, "versioning "
	    "documents from a new generation at binlog.000001:") != NULL,
	    "a resume point behind the checkpoint opens a new generation, "
	    "logged");
	ok(s.t.last_commit > token && strstr(got, ";gtid=0-1-21\"") != NULL,
	    "its positions are past the checkpoint's token, the set goes on");
	free(got);
	stream_close(&s);
	mypos_release(&p);
	my_table_release(&tb);
}

/* MySQL GTIDs: the set grows; an anonymous group spoils it */
/*
 * A fresh start owes a pos frame for where it starts, once the log is
 * read up to it: the server keeps no position for us, and a checkpoint is
 * what a restart resumes from.
 */
static void
test_fresh_start(void)
{
	struct my_catalog cat = { NULL, NULL };
	struct stream s;
	uint32_t start;
	char *got, want[96];

	/* the server's position: just after the file's FDE */
	stream_open(&s, NULL, 0, cat);
	start = s.off;
	stream_close(&s);
	memset(&s, 0, sizeof(s));
	txn_init(&s.t, NULL, 0, cat);
	s.t.warn = on_warn;
	txn_start(&s.t, NULL, 0, "binlog.000001", start);
	ok(!txn_pos_owed(&s.t), "fresh start: nothing owed before the log "
	    "is read up to the start");
	s.off = 4;
	fde(&s, "10.11.19-MariaDB-log");
	ok(txn_pos_owed(&s.t), "fresh start: the start itself is owed once "
	    "the log is read up to it");
	txn_put_pos(&s.t, &s.out);
	got = lines(&s.out);
	snprintf(want, sizeof(want), "{\"k\":\"pos\",\"pos\":%llu,\"text\":"
	    "\"binlog.000001:%u", (unsigned long long)mypos_coord(1, start),
	    start);
	ok(strncmp(got, want, strlen(want)) == 0, "fresh start: a pos frame "
	    "at the start: %s", got);
	ok(!txn_pos_owed(&s.t), "fresh start: owed once");
	free(got);
	stream_close(&s);
}

static void
test_mysql_gtids(void)
{
	struct my_catalog cat = { NULL, NULL };
	struct stream s;
	struct ev e;
	char *got;
	static const char *uuid = "3c63db20a0cd11f1bc8532cf1c33a72f";
	int g;

	memset(&s, 0, sizeof(s));
	txn_init(&s.t, NULL, 0, cat);
	s.t.warn = on_warn;
	txn_start(&s.t, NULL, 0, "binlog.000001", 4);
	s.off = 4;
	fde(&s, "8.0.36");
	ev_begin(&e, BL_PREV_GTIDS, 0, 0);
	le(&e, 1, 8);
	hex(&e, uuid);
	le(&e, 1, 8);
	le(&e, 1, 8);
	le(&e, 11, 8);
	feed(&s, &e, 1, 0);
	for (g = 11; g <= 14; g++) {
		ev_begin(&e, g == 14 ? BL_ANON_GTID : BL_GTID, 0, 0);
		e.b[e.n++] = 1;
		if (g == 14)
			le(&e, 0, 16), le(&e, 0, 8);
		else
			hex(&e, uuid), le(&e, (uint64_t)g, 8);
		feed(&s, &e, 1, 0);
		query(&s, "db", "BEGIN");
		xid(&s);
		if (g == 13) {
			txn_put_pos(&s.t, &s.out);
			got = lines(&s.out);
			ok(strstr(got, ";gtid=3c63db20-a0cd-11f1-bc85-"
			    "32cf1c33a72f:1-13\"") != NULL, "PREVIOUS_GTIDS "
			    "and three GTIDs: uuid:1-13");
			free(got);
		}
	}
	txn_put_pos(&s.t, &s.out);
	got = lines(&s.out);
	ok(strstr(got, "gtid") == NULL && strstr(s.warn, "anonymous") != NULL,
	    "an anonymous transaction among GTID ones: the text drops the set, "
	    "logged");
	free(got);
	stream_close(&s);
}

static int
gp(struct gtid_set *s, const char *text)
{
	return gtid_set_parse(s, text, strlen(text));
}

static void
test_sets(void)
{
	struct gtid_set s, t;
	struct sbuf b = SBUF_INIT;
	struct mypos p;
	unsigned char u[16];
	char err[256];

	gtid_set_init(&s);
	gtid_set_init(&t);
	ok(gp(&s, "3c63db20-a0cd-11f1-bc85-32cf1c33a72f:1-14:20,"
	    "0c63db20-a0cd-11f1-bc85-32cf1c33a72f:3") == 0,
	    "a MySQL set parses");
	gtid_set_format(&s, &b);
	is_str(b.buf, "0c63db20-a0cd-11f1-bc85-32cf1c33a72f:3,"
	    "3c63db20-a0cd-11f1-bc85-32cf1c33a72f:1-14:20", "... and formats "
	    "sorted by uuid");
	uuid_parse("3c63db20-a0cd-11f1-bc85-32cf1c33a72f", 36, u);
	gtid_set_add(&s, u, 15);
	gtid_set_add_range(&s, u, 16, 20);
	sbuf_reset(&b);
	gtid_set_format(&s, &b);
	ok(strstr(b.buf, ":1-20") != NULL, "adding 15..19 joins 1-14 and 20 "
	    "into 1-20: %s", b.buf);
	sbuf_reset(&b);
	gtid_set_encode(&s, &b);
	is_int(b.len, 8 + 2 * (16 + 8 + 16), "the dump encoding: two sids, "
	    "one interval each");
	ok(gp(&t, "0-1-5,1-2-9") == 0 &&
	    (sbuf_reset(&b), gtid_set_format(&t, &b), strcmp(b.buf,
	    "0-1-5,1-2-9") == 0), "a MariaDB set round-trips");
	gtid_set_add_mdb(&t, 0, 3, 4);
	gtid_set_add_mdb(&t, 0, 3, 6);
	sbuf_reset(&b);
	gtid_set_format(&t, &b);
	is_str(b.buf, "0-3-6,1-2-9", "a later GTID of a domain replaces it");
	ok(gp(&t, "0-1-5,") == -1 &&
	    gp(&t, "3c63db20-a0cd-11f1-bc85-32cf1c33a72f:tag:1") == -1 &&
	    gp(&t, "0-1-5,3c63db20-a0cd-11f1-bc85-32cf1c33a72f:1") == -1 &&
	    gp(&t, "0-1-5") == 0,
	    "trailing commas, tags and mixed flavours are refused");
	ok(mypos_parse(&p, "mysql-bin.000004:724;gtid=0-1-5", err,
	    sizeof(err)) == 0 && strcmp(p.file, "mysql-bin.000004") == 0 &&
	    p.offset == 724 && p.has_gtid, "a position text parses");
	mypos_release(&p);
	ok(mypos_parse(&p, "mysql-bin:724", err, sizeof(err)) == -1 &&
	    mypos_parse(&p, "0/16B3748", err, sizeof(err)) == -1 &&
	    mypos_parse(&p, "b.000001:x", err, sizeof(err)) == -1 &&
	    mypos_parse(&p, "b.000001:99999999999", err, sizeof(err)) == -1 &&
	    mypos_parse(&p, "b.000001:5;gtid=", err, sizeof(err)) == -1,
	    "texts this tool never writes are refused");
	gtid_set_release(&s);
	gtid_set_release(&t);
	sbuf_release(&b);
}

int
main(void)
{
	test_every_type();
	test_ddl();
	test_positions();
	test_fresh_start();
	seed_open("txn-mysql-gtids");
	test_mysql_gtids();
	seed_open(NULL);
	test_sets();
	return done_testing();
}
