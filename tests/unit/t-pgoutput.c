/*
 * t-pgoutput.c - capture-pg's pgoutput decoder (pgoutput.c): messages
 * assembled byte by byte in big-endian, decoded into frames compared
 * byte-exactly; malformed and truncated messages.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "jscan.h"
#include "p2o.h"
#include "sbuf.h"
#include "../../capture-pg/capture-pg.h"

/* a message under construction */
struct msg {
	unsigned char b[4096];
	size_t	n;
};

static void
m_init(struct msg *m, char type)
{
	m->n = 0;
	m->b[m->n++] = (unsigned char)type;
}

static void
m_u8(struct msg *m, unsigned v)
{
	m->b[m->n++] = (unsigned char)v;
}

static void
m_u16(struct msg *m, unsigned v)
{
	m_u8(m, (v >> 8) & 0xff);
	m_u8(m, v & 0xff);
}

static void
m_u32(struct msg *m, uint32_t v)
{
	m_u16(m, v >> 16);
	m_u16(m, v & 0xffff);
}

static void
m_u64(struct msg *m, uint64_t v)
{
	m_u32(m, (uint32_t)(v >> 32));
	m_u32(m, (uint32_t)v);
}

static void
m_str(struct msg *m, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(m->b + m->n, s, n);
	m->n += n;
}

/* TupleData column: text value, NULL, unchanged TOAST */
static void
m_text(struct msg *m, const char *s)
{
	m_u8(m, 't');
	m_u32(m, (uint32_t)strlen(s));
	memcpy(m->b + m->n, s, strlen(s));
	m->n += strlen(s);
}

static void
m_begin(struct msg *m, uint64_t final_lsn, uint64_t ts, uint32_t xid)
{
	m_init(m, 'B');
	m_u64(m, final_lsn);
	m_u64(m, ts);
	m_u32(m, xid);
}

static void
m_commit(struct msg *m, uint64_t lsn, uint64_t end, uint64_t ts)
{
	m_init(m, 'C');
	m_u8(m, 0);
	m_u64(m, lsn);
	m_u64(m, end);
	m_u64(m, ts);
}

struct col {
	int	 key;
	const char *name;
	uint32_t typoid;
};

static void
m_relation(struct msg *m, uint32_t oid, const char *nsp, const char *name,
    char ident, const struct col *cols, int ncols)
{
	int i;

	m_init(m, 'R');
	m_u32(m, oid);
	m_str(m, nsp);
	m_str(m, name);
	m_u8(m, (unsigned char)ident);
	m_u16(m, (unsigned)ncols);
	for (i = 0; i < ncols; i++) {
		m_u8(m, (unsigned)cols[i].key);
		m_str(m, cols[i].name);
		m_u32(m, cols[i].typoid);
		m_u32(m, 0xffffffff);
	}
}

static struct pgo_decoder d;
static struct sbuf out;

/* every frame in out checked and its JSON joined by '\n'; out reset */
static const char *
frames(void)
{
	static struct sbuf got;
	size_t i = 0, len, off;
	const char *why;
	char *end;

	sbuf_reset(&got);
	sbuf_adds(&got, "");
	while (i < out.len) {
		len = strtoul(out.buf + i, &end, 10);
		if (end == out.buf + i || *end != ' ' ||
		    (size_t)(end + 1 - out.buf) + len > out.len ||
		    end[len] != '\n') {
			sbuf_adds(&got, "<BAD FRAME>");
			break;
		}
		if (jscan_validate(end + 1, len - 1, &off, &why) < 0 ||
		    memchr(end + 1, '\n', len - 1)) {
			sbuf_adds(&got, "<INVALID JSON>");
			break;
		}
		if (got.len)
			sbuf_addc(&got, '\n');
		sbuf_add(&got, end + 1, len - 1);
		i = (size_t)(end + 1 - out.buf) + len;
	}
	sbuf_reset(&out);
	return got.buf;
}

static int
dec(const struct msg *m)
{
	return pgo_decode(&d, m->b, m->n, &out);
}

#define LSN	0x16B374D848ULL		/* 16/B374D848 */
#define END	0x16B374D900ULL
#define TS	817804800123456ULL	/* 2025-12-01T08:00:00.123456Z - 2000 */

static const struct col items_cols[] = {
	{ 1, "id", 23 }, { 0, "title", 25 }, { 0, "price", 1700 },
	{ 0, "body", 25 }, { 0, "mood", 16385 }, { 0, "tags", 1009 },
};

static void
test_stream(void)
{
	struct msg m;
	const struct col full_cols[] = {
		{ 1, "id", 20 }, { 1, "doc", 3802 }, { 1, "note", 25 },
	};

	pgo_init(&d);

	m_init(&m, 'Y');
	m_u32(&m, 16385);
	m_str(&m, "public");
	m_str(&m, "mood");
	is_int(dec(&m), 0, "Type message");
	is_str(frames(), "", "  emits nothing");
	ok(d.ntypes == 1 && strcmp(d.types[0].qname, "public.mood") == 0,
	    "  caches public.mood");

	m_relation(&m, 16400, "public", "items", 'd', items_cols, 6);
	is_int(dec(&m), 0, "Relation message");
	is_str(frames(), "", "  emits nothing");
	ok(pgo_rel_find(&d, 16400) &&
	    strcmp(pgo_rel_find(&d, 16400)->qname, "public.items") == 0,
	    "  caches public.items");

	m_begin(&m, LSN, TS, 700);
	is_int(dec(&m), 0, "Begin");
	ok(d.in_txn && d.txn_lsn == LSN && d.txn_xid == 700, "  opens the txn");

	m_init(&m, 'O');
	m_u64(&m, 0x1000);
	m_str(&m, "pg_16400");
	is_int(dec(&m), 0, "Origin is ignored");
	is_str(frames(), "", "  emits nothing");

	m_init(&m, 'I');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_text(&m, "7");
	m_text(&m, "lamp \"desk\"\n");
	m_text(&m, "12.50");
	m_u8(&m, 'n');
	m_text(&m, "happy");
	m_text(&m, "{a,\"b c\",NULL}");
	is_int(dec(&m), 0, "Insert");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.items\","
	    "\"v\":97500059720,\"key\":[\"id\"],\"new\":{\"id\":7,\"title\":"
	    "\"lamp \\\"desk\\\"\\n\",\"price\":\"12.50\",\"body\":null,"
	    "\"mood\":\"happy\",\"tags\":[\"a\",\"b c\",null]}}",
	    "  row frame");

	/* U, no old tuple, body unchanged TOAST */
	m_init(&m, 'U');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_text(&m, "7");
	m_text(&m, "lamp");
	m_text(&m, "13.00");
	m_u8(&m, 'u');
	m_u8(&m, 'n');
	m_u8(&m, 'u');
	is_int(dec(&m), 0, "Update without old tuple, TOAST columns");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":97500059720,\"key\":[\"id\"],\"new\":{\"id\":7,\"title\":"
	    "\"lamp\",\"price\":\"13.00\",\"mood\":null},"
	    "\"toast\":[\"body\",\"tags\"]}", "  row frame with toast");

	/* U with K: the key changed */
	m_init(&m, 'U');
	m_u32(&m, 16400);
	m_u8(&m, 'K');
	m_u16(&m, 6);
	m_text(&m, "6");
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_text(&m, "7");
	m_text(&m, "lamp");
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_text(&m, "{}");
	is_int(dec(&m), 0, "Update with K");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":97500059720,\"key\":[\"id\"],\"new\":{\"id\":7,\"title\":"
	    "\"lamp\",\"price\":null,\"body\":null,\"mood\":null,\"tags\":[]},"
	    "\"old\":{\"id\":6}}", "  old carries only the key");

	/* D with K */
	m_init(&m, 'D');
	m_u32(&m, 16400);
	m_u8(&m, 'K');
	m_u16(&m, 6);
	m_text(&m, "7");
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	is_int(dec(&m), 0, "Delete with K");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"d\",\"rel\":\"public.items\","
	    "\"v\":97500059720,\"key\":[\"id\"],\"old\":{\"id\":7}}",
	    "  delete frame");

	/* transactional logical message */
	m_init(&m, 'M');
	m_u8(&m, 1);
	m_u64(&m, LSN - 8);
	m_str(&m, "app");
	m_u32(&m, 5);
	memcpy(m.b + m.n, "hello", 5);
	m.n += 5;
	is_int(dec(&m), 0, "transactional Message");
	is_str(frames(), "", "  emits nothing");

	m_commit(&m, LSN, END, TS);
	is_int(dec(&m), 0, "Commit");
	is_str(frames(), "{\"k\":\"commit\",\"pos\":97500059904,"
	    "\"text\":\"16/B374D900\",\"ts\":1764489600123456,\"n\":4}",
	    "  commit frame: end LSN, Unix µs, 4 rows");
	ok(!d.in_txn && d.last_commit == END, "  closes the txn");

	/* non-transactional message, outside any txn */
	m_init(&m, 'M');
	m_u8(&m, 0);
	m_u64(&m, END + 8);
	m_str(&m, "app");
	m_u32(&m, 0);
	is_int(dec(&m), 0, "non-transactional Message outside a txn");
	is_str(frames(), "", "  emits nothing");

	/* REPLICA IDENTITY FULL: every column flagged */
	m_relation(&m, 16401, "s", "full", 'f', full_cols, 3);
	is_int(dec(&m), 0, "Relation with identity full");
	m_begin(&m, LSN + 0x1000, TS + 1, 701);
	is_int(dec(&m), 0, "Begin");

	/* U with O: the old row fills the unchanged TOAST column */
	m_init(&m, 'U');
	m_u32(&m, 16401);
	m_u8(&m, 'O');
	m_u16(&m, 3);
	m_text(&m, "1");
	m_text(&m, "{\"big\":\n true}");
	m_u8(&m, 'n');
	m_u8(&m, 'N');
	m_u16(&m, 3);
	m_text(&m, "1");
	m_u8(&m, 'u');
	m_text(&m, "x");
	is_int(dec(&m), 0, "Update with O filling a TOAST column");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"u\",\"rel\":\"s.full\","
	    "\"v\":97500063816,\"key\":[\"id\",\"doc\",\"note\"],\"new\":"
	    "{\"id\":1,\"doc\":{\"big\":  true},\"note\":\"x\"},\"old\":"
	    "{\"id\":1,\"doc\":{\"big\":  true},\"note\":null}}",
	    "  value carried, no toast member");

	/* U with O whose column is itself unchanged TOAST: not fillable */
	m_init(&m, 'U');
	m_u32(&m, 16401);
	m_u8(&m, 'O');
	m_u16(&m, 3);
	m_text(&m, "1");
	m_u8(&m, 'u');
	m_u8(&m, 'n');
	m_u8(&m, 'N');
	m_u16(&m, 3);
	m_text(&m, "1");
	m_u8(&m, 'u');
	m_u8(&m, 'n');
	is_int(dec(&m), 0, "Update with O not filling a TOAST column");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"u\",\"rel\":\"s.full\","
	    "\"v\":97500063816,\"key\":[\"id\",\"doc\",\"note\"],\"new\":"
	    "{\"id\":1,\"note\":null},\"old\":{\"id\":1,\"note\":null},"
	    "\"toast\":[\"doc\"]}", "  listed in toast");

	/* D with O: all columns, NULLs included */
	m_init(&m, 'D');
	m_u32(&m, 16401);
	m_u8(&m, 'O');
	m_u16(&m, 3);
	m_text(&m, "1");
	m_text(&m, "[1,2]");
	m_u8(&m, 'n');
	is_int(dec(&m), 0, "Delete with O");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"d\",\"rel\":\"s.full\","
	    "\"v\":97500063816,\"key\":[\"id\",\"doc\",\"note\"],\"old\":"
	    "{\"id\":1,\"doc\":[1,2],\"note\":null}}", "  the whole old row");

	/* T with two relations */
	m_init(&m, 'T');
	m_u32(&m, 2);
	m_u8(&m, 1);
	m_u32(&m, 16400);
	m_u32(&m, 16401);
	is_int(dec(&m), 0, "Truncate of two relations");
	is_str(frames(), "{\"k\":\"truncate\",\"v\":97500063816,\"rels\":"
	    "[\"public.items\",\"s.full\"]}", "  truncate frame");

	m_commit(&m, LSN + 0x1000, END + 0x1000, 0);
	is_int(dec(&m), 0, "Commit");
	is_str(frames(), "{\"k\":\"commit\",\"pos\":97500064000,"
	    "\"text\":\"16/B374E900\",\"ts\":946684800000000,\"n\":4}",
	    "  n counts the truncate; ts of PG epoch 0");

	/* the primary key registered by the caller beats identity full */
	{
		const char *pk[] = { "id" };

		pgo_set_key(&d, "s.full", pk, 1);
		ok(pgo_rel_find(&d, 16401)->nkeys == 1,
		    "pgo_set_key applies to a cached relation");
	}

	/* drift: title removed, color added, price retyped */
	{
		const struct col v2[] = {
			{ 1, "id", 23 }, { 0, "price", 701 }, { 0, "body", 25 },
			{ 0, "mood", 16385 }, { 0, "tags", 1009 },
			{ 0, "color", 25 },
		};

		m_relation(&m, 16400, "public", "items", 'd', v2, 6);
		is_int(dec(&m), 0, "changed Relation");
		is_str(frames(), "{\"k\":\"drift\",\"rel\":\"public.items\","
		    "\"added\":[\"color\"],\"removed\":[\"title\"],"
		    "\"retyped\":[\"price\"]}", "  drift frame");
		is_int(d.n.drift, 1, "  counted");
		is_int(pgo_rel_find(&d, 16400)->ncols, 6, "  replaced");
		m_relation(&m, 16400, "public", "items", 'd', v2, 6);
		is_int(dec(&m), 0, "same Relation again");
		is_str(frames(), "", "  no drift");
	}

	is_int(d.n.inserts, 1, "counter inserts");
	is_int(d.n.updates, 4, "counter updates");
	is_int(d.n.deletes, 2, "counter deletes");
	is_int(d.n.truncates, 1, "counter truncates");
	is_int(d.n.commits, 2, "counter commits");
	is_int(d.n.messages, 2, "counter messages");

	/* with the registered key, rows carry it */
	m_begin(&m, LSN + 0x2000, TS, 702);
	dec(&m);
	m_init(&m, 'I');
	m_u32(&m, 16401);
	m_u8(&m, 'N');
	m_u16(&m, 3);
	m_text(&m, "5");
	m_text(&m, "null");
	m_text(&m, "n");
	is_int(dec(&m), 0, "Insert after pgo_set_key");
	is_str(frames(), "{\"k\":\"row\",\"op\":\"i\",\"rel\":\"s.full\","
	    "\"v\":97500067912,\"key\":[\"id\"],\"new\":{\"id\":5,\"doc\":null,"
	    "\"note\":\"n\"}}", "  key is the primary key");
	m_commit(&m, LSN + 0x2000, END + 0x2000, TS);
	dec(&m);
	frames();
	pgo_release(&d);
}

/* a registered key on a default identity orders the flagged columns */
static void
test_key_order(void)
{
	struct msg m;
	const struct col cols[] = {
		{ 1, "a", 23 }, { 0, "x", 25 }, { 1, "b", 23 },
	};
	const char *pk[] = { "b", "a" }, *bad[] = { "b", "x" };

	pgo_init(&d);
	pgo_set_key(&d, "public.t", pk, 2);
	m_relation(&m, 1, "public", "t", 'd', cols, 3);
	dec(&m);
	ok(d.rels[0].nkeys == 2 && d.rels[0].keys[0] == 2 &&
	    d.rels[0].keys[1] == 0, "registered key order for identity default");
	pgo_set_key(&d, "public.t", bad, 2);
	ok(d.rels[0].nkeys == 2 && d.rels[0].keys[0] == 0 &&
	    d.rels[0].keys[1] == 2, "a key naming unflagged columns is ignored");
	pgo_set_key(&d, "public.i", pk, 2);
	m_relation(&m, 3, "public", "i", 'i', cols, 3);
	dec(&m);
	ok(pgo_rel_find(&d, 3)->nkeys == 2 && pgo_rel_find(&d, 3)->keys[0] == 2,
	    "registered key order for an identity index");
	m_relation(&m, 2, "", "pg_thing", 'd', cols, 3);
	dec(&m);
	is_str(pgo_rel_find(&d, 2)->qname, "pg_catalog.pg_thing",
	    "empty namespace is pg_catalog");
	pgo_release(&d);
}

static void
expect_error(const struct msg *m, int code, const char *err, const char *what)
{
	size_t before = out.len;

	is_int(dec(m), -1, "%s", what);
	is_str(d.err.msg, err, "  message");
	is_int(d.err.code, code, "  exit code");
	is_int(out.len, before, "  nothing appended");
}

static void
test_errors(void)
{
	struct msg m;
	const struct col nokey[] = { { 0, "a", 23 }, { 0, "b", 25 } };
	const struct col nothing[] = { { 0, "a", 23 } };

	pgo_init(&d);
	m_relation(&m, 16400, "public", "items", 'd', items_cols, 6);
	dec(&m);
	m_relation(&m, 500, "public", "nokey", 'd', nokey, 2);
	dec(&m);
	m_relation(&m, 501, "public", "nothing", 'n', nothing, 1);
	dec(&m);

	m_init(&m, 'I');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_text(&m, "1");
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "pgoutput 'I' message outside a transaction", "row outside a txn");

	m_init(&m, 'T');
	m_u32(&m, 1);
	m_u8(&m, 0);
	m_u32(&m, 16400);
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "pgoutput 'T' message outside a transaction",
	    "truncate outside a txn");

	m_commit(&m, 1, 2, 3);
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "pgoutput Commit outside a transaction", "commit outside a txn");

	m_begin(&m, LSN, TS, 9);
	is_int(dec(&m), 0, "Begin");
	m_begin(&m, LSN, TS, 10);
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "pgoutput Begin of xid 10 inside xid 9", "nested Begin");

	m_init(&m, 'I');
	m_u32(&m, 500);
	m_u8(&m, 'N');
	m_u16(&m, 2);
	m_text(&m, "1");
	m_text(&m, "x");
	expect_error(&m, P2O_EXIT_REFUSED,
	    "table 'public.nokey' has no primary key or replica identity",
	    "row of a table without key");
	/* an append-only table: its rows are filed by their content */
	pgo_allow_keyless(&d, "public.nokey");
	is_int(dec(&m), 0, "a keyless row of an append-only table");
	ok(strstr(out.buf, "\"key\":[]") != NULL, "carries an empty key");
	sbuf_reset(&out);

	m_init(&m, 'D');
	m_u32(&m, 501);
	m_u8(&m, 'O');
	m_u16(&m, 1);
	m_text(&m, "1");
	expect_error(&m, P2O_EXIT_REFUSED,
	    "table 'public.nothing' has no primary key or replica identity",
	    "row of a table with replica identity nothing");

	m_init(&m, 'U');
	m_u32(&m, 999);
	m_u8(&m, 'N');
	m_u16(&m, 0);
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput 'U' message for relation "
	    "999 that no Relation message described", "row of an unknown OID");

	m_init(&m, 'T');
	m_u32(&m, 2);
	m_u8(&m, 0);
	m_u32(&m, 16400);
	m_u32(&m, 998);
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput 'T' message for relation "
	    "998 that no Relation message described",
	    "truncate of an unknown OID");

	m_init(&m, 'I');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_u8(&m, 'b');
	m_u32(&m, 4);
	m_u32(&m, 7);
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput sent a binary value for "
	    "'public.items'.'id', which was not requested", "binary tuple");

	m_init(&m, 'I');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 5);
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput 'I' message for "
	    "'public.items' has 5 columns, its relation 6",
	    "column count mismatch");

	m_init(&m, 'I');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_text(&m, "1");
	m_u8(&m, 'u');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	m_u8(&m, 'n');
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput 'I' message for "
	    "'public.items' has an unchanged-TOAST column 'title'",
	    "unchanged TOAST in an insert");

	m_init(&m, 'I');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_u8(&m, 'x');
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "malformed pgoutput 'I' message: column kind 0x78",
	    "unknown column kind");

	m_init(&m, 'D');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "malformed pgoutput 'D' message: tuple marker 0x4e",
	    "delete with a new tuple");

	m_init(&m, 'U');
	m_u32(&m, 16400);
	m_u8(&m, 'X');
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "malformed pgoutput 'U' message: tuple marker 0x58",
	    "update with a bad marker");

	m_begin(&m, 1, 2, 3);
	m_u8(&m, 0);
	expect_error(&m, P2O_EXIT_TEMPFAIL, "malformed pgoutput 'B' message: "
	    "1 unexpected trailing bytes", "trailing byte");

	m_relation(&m, 16400, "public", "items", 'x', items_cols, 6);
	expect_error(&m, P2O_EXIT_TEMPFAIL, "malformed pgoutput 'R' message: "
	    "replica identity 0x78", "bad replica identity");

	m_init(&m, 'S');
	m_u32(&m, 1);
	m_u8(&m, 1);
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput sent a streamed "
	    "transaction message 'S', but streaming was not requested",
	    "Stream Start refused");
	m_init(&m, 'c');
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput sent a streamed "
	    "transaction message 'c', but streaming was not requested",
	    "Stream Commit refused");
	m_init(&m, 'P');
	expect_error(&m, P2O_EXIT_TEMPFAIL, "pgoutput sent a two-phase "
	    "message 'P', but two-phase was not requested", "Prepare refused");
	m_init(&m, 'Z');
	expect_error(&m, P2O_EXIT_TEMPFAIL,
	    "unknown pgoutput message type 0x5a", "unknown message type");
	m.n = 0;
	expect_error(&m, P2O_EXIT_TEMPFAIL, "empty pgoutput message",
	    "empty message");

	ok(d.in_txn && d.txn_xid == 9, "errors left the open txn as it was");
	is_int(pgo_rel_find(&d, 16400)->ncols, 6,
	    "errors left the relation as it was");
	pgo_release(&d);
}

/* every proper prefix of every valid message is an error, not a crash */
static void
test_prefixes(void)
{
	struct msg all[16], m;
	size_t nall = 0, i, k, before;
	int bad = 0, rc;
	const struct col full[] = { { 1, "id", 23 }, { 1, "j", 114 } };

	pgo_init(&d);
	m_relation(&m, 16400, "public", "items", 'd', items_cols, 6);
	all[nall++] = m;
	dec(&m);
	m_relation(&m, 16401, "s", "full", 'f', full, 2);
	all[nall++] = m;
	dec(&m);
	m_begin(&m, LSN, TS, 1);
	all[nall++] = m;
	dec(&m);

	m_init(&m, 'Y');
	m_u32(&m, 16385);
	m_str(&m, "public");
	m_str(&m, "mood");
	all[nall++] = m;
	m_init(&m, 'O');
	m_u64(&m, 5);
	m_str(&m, "origin");
	all[nall++] = m;
	m_init(&m, 'I');
	m_u32(&m, 16400);
	m_u8(&m, 'N');
	m_u16(&m, 6);
	m_text(&m, "7");
	m_text(&m, "lamp");
	m_text(&m, "1.5");
	m_u8(&m, 'n');
	m_text(&m, "happy");
	m_text(&m, "{x}");
	all[nall++] = m;
	m_init(&m, 'U');
	m_u32(&m, 16401);
	m_u8(&m, 'O');
	m_u16(&m, 2);
	m_text(&m, "1");
	m_text(&m, "{}");
	m_u8(&m, 'N');
	m_u16(&m, 2);
	m_text(&m, "1");
	m_u8(&m, 'u');
	all[nall++] = m;
	m_init(&m, 'D');
	m_u32(&m, 16400);
	m_u8(&m, 'K');
	m_u16(&m, 6);
	m_text(&m, "7");
	for (k = 0; k < 5; k++)
		m_u8(&m, 'n');
	all[nall++] = m;
	m_init(&m, 'T');
	m_u32(&m, 2);
	m_u8(&m, 0);
	m_u32(&m, 16400);
	m_u32(&m, 16401);
	all[nall++] = m;
	m_init(&m, 'M');
	m_u8(&m, 1);
	m_u64(&m, 5);
	m_str(&m, "p");
	m_u32(&m, 3);
	m_u8(&m, 'a');
	m_u8(&m, 'b');
	m_u8(&m, 'c');
	all[nall++] = m;
	m_commit(&m, LSN, END, TS);
	all[nall++] = m;

	for (i = 0; i < nall; i++) {
		for (k = 0; k < all[i].n; k++) {
			/* the prefix alone in a heap block, so ASan sees any
			 * read past its end */
			unsigned char *p = malloc(k ? k : 1);

			memcpy(p, all[i].b, k);
			before = out.len;
			rc = pgo_decode(&d, p, k, &out);
			if (rc != -1 || out.len != before) {
				bad++;
				printf("# message '%c' prefix %zu: rc %d\n",
				    all[i].b[0], k, rc);
			}
			free(p);
		}
	}
	is_int(bad, 0, "every proper prefix of %zu messages is an error",
	    nall);
	/* and the whole ones still decode afterwards */
	for (i = 3, bad = 0; i < nall; i++)
		if (pgo_decode(&d, all[i].b, all[i].n, &out) != 0)
			bad++;
	is_int(bad, 0, "the whole messages decode");
	ok(!d.in_txn, "  through Commit");
	frames();
	pgo_release(&d);
}

int
main(void)
{
	sbuf_init(&out);
	test_stream();
	test_key_order();
	test_errors();
	test_prefixes();
	sbuf_release(&out);
	return done_testing();
}
