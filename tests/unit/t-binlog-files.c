/*
 * t-binlog-files.c - capture-mysql's decoder against real binlog files
 * (tests/fixtures/mysql): every event of every file is read, checked
 * (CRC32 where the FDE says so), every table map parsed and every row
 * image of every rows event measured to its last byte; the events then go
 * through the transaction assembler, which must take each file without an
 * error. Then what the files hold: the MySQL 8.0.28 compressed
 * transaction's UPDATE, the sakila load's actor rows, Aurora's unknown
 * event type 100.
 *
 * The walk is also the offline driver: `t-binlog-files FILE` prints the
 * frames a binlog file makes for every table it touches.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "xio.h"
#include "jscan.h"
#include "msg.h"
#include "mysql-fixtures.h"

struct walk {
	int	 events, bad_crc, rows_bad, images;
	int	 by_type[256];
	int	 offsets[16];
	int	 types[16];
	int	 txn_errors;
	char	 txn_err[512];
	int	 warnings;
	char	 last_warning[600];
};

static struct walk *cur_walk;

static void
on_warn(const char *msg)
{
	if (cur_walk != NULL) {
		cur_walk->warnings++;
		snprintf(cur_walk->last_warning,
		    sizeof(cur_walk->last_warning), "%s", msg);
	}
	if (getenv("VERBOSE"))
		fprintf(stderr, "# warn: %s\n", msg);
}

/* one image, or both of an update: 1, 0 at the end, -1 malformed */
static int
image(const struct bl_rows *r, const struct bl_table_map *tm, size_t *off,
    struct bl_cell *cells)
{
	struct p2o_err err;
	int rc;

	rc = bl_image_next(r, tm, r->present, off, cells, &err);
	if (rc == 1 && r->op == 'u')
		rc = bl_image_next(r, tm, r->present2, off, cells, &err) == 1 ? 1 : -1;
	return rc;
}

/*
 * Every event: header, body (CRC), table maps and the images of rows
 * events (against the last table map of their id), then the assembler.
 */
static void
walk(const unsigned char *f, size_t len, struct txn *t, struct sbuf *out,
    struct walk *w)
{
	struct bl_format fmt;
	struct bl_table_map maps[8];
	uint64_t ids[8];
	int nmaps = 0, i;
	size_t off = 4;
	struct p2o_err err;

	memset(w, 0, sizeof(*w));
	memset(&fmt, 0, sizeof(fmt));
	memset(maps, 0, sizeof(maps));
	cur_walk = w;
	while (off + BL_HEADER_LEN <= len) {
		struct bl_header h;
		const unsigned char *body;
		size_t blen;

		if (bl_header_parse(f + off, len - off, &h) == -1 ||
		    h.size > len - off)
			break;
		if (w->events < 16) {
			w->offsets[w->events] = (int)off;
			w->types[w->events] = h.type;
		}
		w->events++;
		w->by_type[h.type]++;
		if (bl_event_body(&fmt, 1, f + off, &h, &body, &blen, &err) == -1) {
			w->bad_crc++;
			off += h.size;
			continue;
		}
		if (h.type == BL_FDE)
			bl_format_parse(&fmt, body, blen, &err);
		if (h.type == BL_TABLE_MAP) {
			struct bl_table_map tm;

			memset(&tm, 0, sizeof(tm));
			if (bl_table_map_parse(&fmt, body, blen, &tm, &err) == -1)
				w->rows_bad++;
			for (i = 0; i < nmaps && ids[i] != tm.table_id; i++)
				;
			if (i == 8)
				i = 0;
			if (i == nmaps && nmaps < 8)
				nmaps++;
			bl_table_map_release(&maps[i]);
			maps[i] = tm;
			ids[i] = tm.table_id;
		}
		if ((h.type >= BL_WRITE_V1 && h.type <= BL_DELETE_V1) ||
		    (h.type >= BL_WRITE_V2 && h.type <= BL_DELETE_V2)) {
			struct bl_rows r;
			struct bl_cell cells[TM_MAX_COLS];
			size_t ro = 0;
			int rc;

			if (bl_rows_parse(&fmt, h.type, body, blen, &r, &err) == -1) {
				w->rows_bad++;
			} else {
				for (i = 0; i < nmaps && ids[i] != r.table_id;
				    i++)
					;
				if (i == nmaps)
					w->rows_bad++;
				else
					while ((rc = image(&r, &maps[i],
					    &ro, cells)) == 1)
						w->images++;
				if (i < nmaps && (rc == -1 || ro != r.rowslen))
					w->rows_bad++;
			}
		}
		if (t != NULL && txn_event(t, f + off, h.size, out) == -1) {
			if (w->txn_errors++ == 0)
				snprintf(w->txn_err, sizeof(w->txn_err),
				    "%.400s", t->err.msg);
		}
		off += h.size;
	}
	if (off != len)
		w->rows_bad++;
	for (i = 0; i < nmaps; i++)
		bl_table_map_release(&maps[i]);
	cur_walk = NULL;
}

static struct txn *
new_txn(struct my_table *tables, int n, const char *file)
{
	struct txn *t = xcalloc(1, sizeof(*t));
	struct my_catalog cat = { NULL, NULL };

	txn_init(t, tables, n, cat);
	t->warn = on_warn;
	txn_start(t, NULL, 0, file, 4);
	return t;
}

/* frames in out: count by kind, and the nth row frame's JSON */
static int
count_frames(const struct sbuf *out, enum msg_kind kind, int nth,
    struct sbuf *got)
{
	struct frame_reader rd;
	struct frame fr;
	int fds[2], n = 0, rc;

	if (pipe(fds) == -1)
		return -1;
	/* the frames go through the real reader: they must be valid */
	if (out->len > 0 && write_in_full(fds[1], out->buf, out->len) == -1)
		return -1;
	close(fds[1]);
	frame_reader_init(&rd, fds[0], "frames");
	while ((rc = frame_read(&rd, &fr)) == 1) {
		if (msg_kind(&fr) != kind)
			continue;
		if (n++ == nth && got != NULL)
			sbuf_add(got, fr.obj.p, fr.obj.n);
	}
	frame_reader_release(&rd);
	close(fds[0]);
	return rc == -1 ? -1 : n;
}

static void
test_compressed(void)
{
	static const struct fx_col cols[] = {
		{ "id", "int", "int", NULL },
		{ "title", "varchar", "varchar(255)", "utf8mb4" },
		{ "year", "int", "int", NULL },
		{ "country", "varchar", "varchar(1024)", "utf8mb4" },
		{ "genres", "varchar", "varchar(1024)", "utf8mb4" },
		{ "actors", "varchar", "varchar(1024)", "utf8mb4" },
		{ "directors", "varchar", "varchar(1024)", "utf8mb4" },
		{ "composers", "varchar", "varchar(1024)", "utf8mb4" },
		{ "screenwriters", "varchar", "varchar(1024)", "utf8mb4" },
		{ "cinematographer", "varchar", "varchar(1024)", "utf8mb4" },
		{ "production_companies", "varchar", "varchar(1024)",
		    "utf8mb4" },
	};
	static const int keys[] = { 0 };
	struct my_table tb;
	struct txn *t;
	struct sbuf out = SBUF_INIT, row = SBUF_INIT, commit = SBUF_INIT;
	struct walk w;
	unsigned char *f;
	size_t len;
	int i;

	f = fx_read("mysql-bin.compressed", &len);
	ok(f != NULL, "mysql-bin.compressed is readable");
	if (f == NULL)
		return;
	fx_table(&tb, "demo", "movies", cols, 11, keys, 1);
	t = new_txn(&tb, 1, "mysql-bin.000004");
	walk(f, len, t, &out, &w);
	is_int(w.events, 5, "compressed: 5 top-level events");
	{
		static const int types[] = { 15, 35, 34, 40, 4 };
		static const int offs[] = { 4, 126, 157, 236, 724 };
		int same = 1;

		for (i = 0; i < 5; i++)
			same &= w.types[i] == types[i] && w.offsets[i] ==
			    offs[i];
		ok(same, "compressed: FDE, PREVIOUS_GTIDS, ANONYMOUS_GTID, "
		    "TRANSACTION_PAYLOAD, ROTATE at 4, 126, 157, 236, 724");
	}
	is_int(w.bad_crc, 0, "compressed: every CRC32 is valid");
	is_int(w.txn_errors, 0, "compressed: the assembler takes every "
	    "event%s%s", w.txn_errors ? ": " : "", w.txn_err);
	is_int(count_frames(&out, MSG_ROW, 0, &row), 1,
	    "compressed: one row frame, from inside the payload");
	is_int(count_frames(&out, MSG_COMMIT, 0, &commit), 1,
	    "compressed: one commit frame");
	if (getenv("VERBOSE"))
		fprintf(stderr, "# %s\n# %s\n", row.buf, commit.buf);
	ok(row.buf && strncmp(row.buf, "{\"k\":\"row\",\"op\":\"u\","
	    "\"rel\":\"demo.movies\",", 40) == 0, "compressed: the row is an "
	    "update of demo.movies");
	ok(row.buf && strstr(row.buf, "\"new\":{\"id\":1,\"title\":\"Once "
	    "Upon a Time in the West\",\"year\":1968,\"country\":\"Italy\","
	    "\"genres\":\"Western|Action\",") != NULL && strstr(row.buf,
	    "\"old\":{\"id\":1,\"title\":\"Once Upon a Time in the West\","
	    "\"year\":1968,\"country\":\"Italy\",\"genres\":\"Western\",") !=
	    NULL && strstr(row.buf, "\"production_companies\":\"Paramount "
	    "Pictures\"}") != NULL, "compressed: the UPDATE sets genres "
	    "'Western' to 'Western|Action' on 'Once Upon a Time in the West'");
	/* the version: base 0 + the end of the ANONYMOUS_GTID event (file
	 * 4, offset 236); the commit: the end of the payload (724) */
	ok(row.buf && strstr(row.buf, "\"v\":17179869420,") != NULL,
	    "compressed: the row's version is the end of its GTID event");
	ok(commit.buf && strstr(commit.buf, "\"pos\":17179869908,") != NULL &&
	    strstr(commit.buf, "\"text\":\"mysql-bin.000004:724\"") != NULL,
	    "compressed: the commit is at the payload's end, "
	    "mysql-bin.000004:724");
	ok(commit.buf && strstr(commit.buf, "\"ts\":1646406641223033") !=
	    NULL, "compressed: the commit time is the GTID event's "
	    "microseconds");
	ok(row.buf && strstr(row.buf, "\"new\":{\"id\":1,") != NULL &&
	    strstr(row.buf, "\"old\":{\"id\":1,") != NULL,
	    "compressed: before and after images of row id 1");
	free(f);
	sbuf_release(&out);
	sbuf_release(&row);
	sbuf_release(&commit);
	txn_release(t);
	free(t);
	my_table_release(&tb);
}

struct expect {
	const char *file;
	int	 events;
	int	 types[12][2];	/* type, count */
};

static const struct expect files[] = {
	{ "mysql-bin.checksum-crc32", 303, { { 15, 1 }, { 35, 1 },
	    { 34, 60 }, { 2, 60 }, { 19, 60 }, { 30, 34 }, { 31, 20 },
	    { 32, 6 }, { 16, 60 }, { 4, 1 } } },
	{ "mysql-bin.checksum-none", 191, { { 15, 1 }, { 35, 1 },
	    { 34, 40 }, { 2, 40 }, { 19, 36 }, { 30, 34 }, { 31, 2 },
	    { 16, 36 }, { 3, 1 } } },
	{ "mysql-bin.aurora-padding", 5, { { 15, 1 }, { 35, 1 }, { 34, 1 },
	    { 100, 1 }, { 2, 1 } } },
	{ "mysql-bin.sakila.gz", 1462, { { 15, 1 }, { 2, 54 }, { 19, 18 },
	    { 23, 1374 }, { 16, 15 } } },
};

static void
test_files(void)
{
	const struct expect *e;
	struct walk w;
	struct txn *t;
	struct sbuf out = SBUF_INIT;
	unsigned char *f;
	size_t len, k;
	int i, same;

	for (k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		e = &files[k];
		f = fx_read(e->file, &len);
		if (!ok(f != NULL && len > 4 && memcmp(f, BL_MAGIC, 4) == 0,
		    "%s: readable, starts with the binlog magic", e->file))
			continue;
		t = new_txn(NULL, 0, "mysql-bin.000001");
		sbuf_reset(&out);
		walk(f, len, t, &out, &w);
		is_int(w.events, e->events, "%s: %d events", e->file,
		    e->events);
		for (same = 1, i = 0; i < 12 && e->types[i][0]; i++)
			if (w.by_type[e->types[i][0]] != e->types[i][1]) {
				same = 0;
				printf("# type %d: %d, want %d\n",
				    e->types[i][0], w.by_type[e->types[i][0]],
				    e->types[i][1]);
			}
		ok(same, "%s: the events by type", e->file);
		is_int(w.bad_crc, 0, "%s: every event's body (and CRC32 where "
		    "the FDE says so) checks out", e->file);
		is_int(w.rows_bad, 0, "%s: every table map and row image "
		    "decodes to its last byte (%d images)", e->file,
		    w.images);
		is_int(w.txn_errors, 0, "%s: the assembler takes every event%s"
		    "%s", e->file, w.txn_errors ? ": " : "", w.txn_err);
		if (strcmp(e->file, "mysql-bin.aurora-padding") == 0) {
			ok(w.warnings == 1 && strstr(w.last_warning,
			    "unknown type 100") != NULL,
			    "aurora: type 100 is skipped, logged once");
			ok(t->cur == mypos_coord(1, 1294), "aurora: the "
			    "position moved past it to the last event's end");
		}
		if (strcmp(e->file, "mysql-bin.checksum-crc32") == 0)
			ok(count_frames(&out, MSG_POS, 0, NULL) == 1,
			    "crc32: the rotate at its end writes a pos frame");
		txn_release(t);
		free(t);
		free(f);
	}
	sbuf_release(&out);
}

/* how many frames of a kind carry a member, as JSON text */
static int
count_with(const struct sbuf *out, enum msg_kind kind, const char *needle)
{
	struct sbuf f = SBUF_INIT;
	int i, n = 0, total = count_frames(out, kind, -1, NULL);

	for (i = 0; i < total; i++) {
		sbuf_reset(&f);
		count_frames(out, kind, i, &f);
		n += f.buf != NULL && strstr(f.buf, needle) != NULL;
	}
	sbuf_release(&f);
	return n;
}

/*
 * MariaDB 10.11 with log_bin_compress=ON (log_bin_compress_min_len=10),
 * recorded from the test server: CREATE TABLE, a two-row insert, an
 * update, a delete, a 51-row INSERT ... SELECT, TRUNCATE, an insert;
 * every statement and every rows event (v1) compressed with zlib.
 */
static void
test_mariadb_compressed(void)
{
	static const struct fx_col cols[] = {
		{ "id", "int", "int(11)", NULL },
		{ "name", "varchar", "varchar(40)", "utf8mb4" },
		{ "price", "decimal", "decimal(10,2)", NULL },
		{ "note", "text", "text", "utf8mb4" },
		{ "b", "binary", "binary(4)", NULL },
		{ "ts", "timestamp", "timestamp(3)", NULL },
	};
	static const int keys[] = { 0 };
	struct my_table tb;
	struct txn *t;
	struct sbuf out = SBUF_INIT, row = SBUF_INIT, note = SBUF_INIT;
	struct walk w;
	unsigned char *f;
	size_t len;
	int i;

	f = fx_read("mariadb-bin.compressed", &len);
	ok(f != NULL, "mariadb-bin.compressed is readable");
	if (f == NULL)
		return;
	fx_table(&tb, "p2o", "cz", cols, 6, keys, 1);
	t = new_txn(&tb, 1, "binlog.000002");
	walk(f, len, t, &out, &w);
	is_int(w.bad_crc, 0, "mariadb compressed: every CRC32 is valid");
	ok(w.by_type[BL_QUERY_COMPRESSED] >= 2 && w.by_type[BL_WRITE_C_V1] +
	    w.by_type[BL_WRITE_C] == 3 && w.by_type[BL_UPDATE_C_V1] +
	    w.by_type[BL_UPDATE_C] == 1 && w.by_type[BL_DELETE_C_V1] +
	    w.by_type[BL_DELETE_C] == 1 && w.by_type[BL_QUERY] == 0,
	    "mariadb compressed: statements and rows events are all "
	    "compressed (%d QUERY_COMPRESSED)", w.by_type[BL_QUERY_COMPRESSED]);
	is_int(w.txn_errors, 0, "mariadb compressed: the assembler takes "
	    "every event%s%s", w.txn_errors ? ": " : "", w.txn_err);
	is_int(count_frames(&out, MSG_ROW, -1, NULL), 56, "mariadb "
	    "compressed: 56 row frames (54 inserts, an update, a delete)");
	is_int(count_with(&out, MSG_ROW, "\"op\":\"i\""), 54,
	    "mariadb compressed: 54 inserts");
	is_int(count_frames(&out, MSG_TRUNCATE, -1, NULL), 1,
	    "mariadb compressed: the TRUNCATE, out of a compressed statement");
	count_frames(&out, MSG_ROW, 0, &row);
	for (i = 0; i < 40; i++)
		sbuf_adds(&note, "compressible text ");
	ok(row.buf && strstr(row.buf, "\"new\":{\"id\":1,\"name\":"
	    "\"lamp\",\"price\":\"12.50\",\"note\":\"") != NULL &&
	    strstr(row.buf, note.buf) != NULL && strstr(row.buf,
	    "\"b\":\"AQAAAA==\",\"ts\":\"2024-02-29T13:14:15.123Z\"}") != NULL,
	    "mariadb compressed: the first insert's values, whole");
	sbuf_reset(&row);
	count_frames(&out, MSG_ROW, 1, &row);
	ok(row.buf && strstr(row.buf, "\"name\":\"d\xc3\xa9sk "
	    "\xe6\x97\xa5\xe6\x9c\xac\",\"price\":\"0.10\",\"note\":null")
	    != NULL, "mariadb compressed: the second row of the same event");
	sbuf_reset(&row);
	count_frames(&out, MSG_ROW, 2, &row);
	ok(row.buf && strstr(row.buf, "\"op\":\"u\"") != NULL &&
	    strstr(row.buf, "\"name\":\"lamp 2\",\"price\":\"12.50\","
	    "\"note\":\"updated updated ") != NULL && strstr(row.buf,
	    "\"old\":{\"id\":1,\"name\":\"lamp\",") != NULL,
	    "mariadb compressed: the update, both images");
	is_int(count_with(&out, MSG_ROW, "\"op\":\"d\",\"rel\":\"p2o.cz\""),
	    1, "mariadb compressed: the delete");
	free(f);
	txn_release(t);
	free(t);
	my_table_release(&tb);
	sbuf_release(&out);
	sbuf_release(&row);
	sbuf_release(&note);
}

/* sakila.actor: 200 rows in one transaction, ROWS v1, no checksums */
static void
test_sakila(void)
{
	static const struct fx_col cols[] = {
		{ "actor_id", "smallint", "smallint(5) unsigned", NULL },
		{ "first_name", "varchar", "varchar(45)", "utf8" },
		{ "last_name", "varchar", "varchar(45)", "utf8" },
		{ "last_update", "timestamp", "timestamp", NULL },
	};
	static const int keys[] = { 0 };
	struct my_table tb;
	struct txn *t;
	struct sbuf out = SBUF_INIT, row = SBUF_INIT, commit = SBUF_INIT;
	struct walk w;
	unsigned char *f;
	size_t len;

	if ((f = fx_read("mysql-bin.sakila.gz", &len)) == NULL) {
		ok(0, "sakila readable");
		return;
	}
	fx_table(&tb, "sakila", "actor", cols, 4, keys, 1);
	t = new_txn(&tb, 1, "mysql-bin.000001");
	walk(f, len, t, &out, &w);
	is_int(count_frames(&out, MSG_ROW, 0, &row), 200,
	    "sakila: 200 actor rows");
	is_int(count_frames(&out, MSG_COMMIT, 0, &commit), 1,
	    "sakila: in one commit");
	ok(strstr(row.buf, "\"op\":\"i\",\"rel\":\"sakila.actor\"") != NULL &&
	    strstr(row.buf, "\"key\":[\"actor_id\"]") != NULL &&
	    strstr(row.buf, "\"new\":{\"actor_id\":1,\"first_name\":"
	    "\"PENELOPE\",\"last_name\":\"GUINESS\",\"last_update\":\"2006-02-"
	    "15T") != NULL, "sakila: the first actor row");
	ok(strstr(commit.buf, "\"n\":200") != NULL, "sakila: the commit "
	    "counts 200 rows");
	if (getenv("VERBOSE"))
		fprintf(stderr, "# %s\n# %s\n", row.buf, commit.buf);
	is_int((long long)t->n.commits, 1, "sakila: one commit counted");
	sbuf_release(&out);
	sbuf_release(&row);
	sbuf_release(&commit);
	txn_release(t);
	free(t);
	free(f);
	my_table_release(&tb);
}

/* the offline driver: every table a file touches, as frames on stdout */
static int
dump(const char *path)
{
	FILE *fp = fopen(path, "rb");
	struct sbuf b = SBUF_INIT;
	char chunk[65536];
	size_t n;

	if (fp == NULL) {
		perror(path);
		return 1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		sbuf_add(&b, chunk, n);
	fclose(fp);
	setenv("VERBOSE", "1", 1);
	{
		struct txn *t = new_txn(NULL, 0, "mysql-bin.000001");
		struct sbuf out = SBUF_INIT;
		struct walk w;

		walk((unsigned char *)b.buf, b.len, t, &out, &w);
		fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
		sbuf_release(&out);
		printf("%d events, %d bad checksums, %d undecodable images\n",
		    w.events, w.bad_crc, w.rows_bad);
		txn_release(t);
		free(t);
	}
	sbuf_release(&b);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1)
		return dump(argv[1]);
	test_files();
	test_compressed();
	test_mariadb_compressed();
	test_sakila();
	return done_testing();
}
