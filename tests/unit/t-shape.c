/*
 * t-shape.c - the shaper's mapping: document ids (framing.md §7) and
 * event → operation frames (§4 → §5) against a hand-built configuration.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jscan.h"
#include "sbuf.h"
#include "../../shaper/shaper.h"
#include "tap.h"

static char *items_cols[] = { "id", "title" };
static char *secret_cols[] = { "password", "body" };

static struct sync_section sections[] = {
	{ .name = "items", .schema = "public", .table = "items",
	  .rel = "public.items", .index = "items" },
	{ .name = "slim", .schema = "public", .table = "slim",
	  .rel = "public.slim", .index = "slim",
	  .more = &(struct sync_more){ .columns = items_cols,
	      .ncolumns = 2 } },
	{ .name = "users", .schema = "app", .table = "users",
	  .rel = "app.users", .index = "people",
	  .more = &(struct sync_more){ .exclude_columns = secret_cols,
	      .nexclude_columns = 2 } },
	{ .name = "members", .schema = "app", .table = "members",
	  .rel = "app.members", .index = "members" },
};

static struct config cfg = {
	.syncs = sections,
	.nsyncs = sizeof(sections) / sizeof(sections[0]),
};

static struct shaper sh;
static struct sbuf out = SBUF_INIT;
static char err[512];

static struct jspan
span(const char *s)
{
	struct jspan j = { s, strlen(s) };
	return j;
}

/* the id of row for keys, or "ERR: <message>" */
static const char *
id_of(const char *keys, const char *row)
{
	static struct sbuf id = SBUF_INIT;
	static char buf[600];
	size_t off;
	const char *why;
	char e[256];

	if (jscan_validate(keys, strlen(keys), &off, &why) == -1 ||
	    jscan_validate(row, strlen(row), &off, &why) == -1)
		return "BAD TEST INPUT";
	sbuf_reset(&id);
	if (id_render(span(keys), span(row), &id, e, sizeof(e)) == -1) {
		snprintf(buf, sizeof(buf), "ERR: %s", e);
		return buf;
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)id.len, id.buf ? id.buf : "");
	return buf;
}

/* shape one event from src; the output frames as NDJSON (prefixes
 * checked and removed), or "ERR: <message>" */
static const char *
shape_src(enum shape_source src, const char *json)
{
	static char buf[4096];
	struct jspan obj = span(json), kind;
	size_t off, pos = 0, o = 0, n;
	struct jtop top;
	const char *why;
	char *end;

	/* as the shaper's frame reader does: the members noted while
	 * validating (t-transform covers the path without them) */
	if (jscan_validate_top(json, strlen(json), &top, &off, &why) == -1 ||
	    !jobj_get(obj, "k", &kind))
		return "BAD TEST INPUT";
	sbuf_reset(&out);
	err[0] = '\0';
	if (shape_event(&sh, src, obj, kind, &top, &out, err,
	    sizeof(err)) == -1) {
		snprintf(buf, sizeof(buf), "ERR: %s%s", err,
		    out.len ? " (and output left behind)" : "");
		return buf;
	}
	while (pos < out.len) {
		n = strtoul(out.buf + pos, &end, 10);
		if (*end != ' ' || end + n >= out.buf + out.len + 1 ||
		    end[n] != '\n')
			return "BAD FRAME PREFIX";
		pos = end + 1 - out.buf;
		/* the length counts the LF */
		o += snprintf(buf + o, sizeof(buf) - o, "%.*s", (int)n - 1,
		    out.buf + pos);
		pos += n;
	}
	buf[o] = '\0';
	return buf;
}

static const char *
shape(const char *json)
{
	return shape_src(SHAPE_STREAM, json);
}

static int
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void
test_ids(void)
{
	is_str(id_of("[\"id\"]", "{\"id\":7}"), "7", "integer key");
	is_str(id_of("[\"id\"]", "{\"x\":1,\"id\":-3}"), "-3",
	    "negative key, not the first member");
	is_str(id_of("[\"id\"]", "{\"id\":1.50e3}"), "1.50e3",
	    "a number keeps its literal text");
	is_str(id_of("[\"id\"]", "{\"id\":\"12.50\"}"), "12.50",
	    "numeric as a string");
	is_str(id_of("[\"id\"]", "{\"id\":\"a|b%c\"}"), "a|b%c",
	    "single key: no escaping");
	is_str(id_of("[\"id\"]", "{\"id\":\"caf\\u00e9 \\\"q\\\" \\ud83d\\ude00\"}"),
	    "caf\xc3\xa9 \"q\" \xf0\x9f\x98\x80",
	    "string escapes and a surrogate pair unescaped");
	is_str(id_of("[\"id\"]", "{\"id\":\"\xc3\xa9t\xc3\xa9\"}"),
	    "\xc3\xa9t\xc3\xa9", "raw UTF-8 as is");
	is_str(id_of("[\"flag\"]", "{\"flag\":true}"), "true", "true");
	is_str(id_of("[\"flag\"]", "{\"flag\":false}"), "false", "false");
	is_str(id_of("[\"tenant\",\"id\"]", "{\"id\":7,\"tenant\":\"a|b\"}"),
	    "a%7Cb|7", "composite: key order, '|' escaped");
	is_str(id_of("[\"a\",\"b\",\"c\"]",
	    "{\"a\":\"50%\",\"b\":\"x%7Cy\",\"c\":false}"),
	    "50%25|x%257Cy|false", "composite: '%%' escaped first");
	is_str(id_of("[\"a\",\"b\"]", "{\"a\":\"\\u007c\",\"b\":\"\"}"),
	    "%7C|", "composite: escaped '|' and an empty string");
	is_str(id_of("[\"tags\"]", "{\"tags\":[1,2]}"), "[1,2]",
	    "an array key as its JSON text");
	ok(starts(id_of("[\"id\"]", "{\"id\":null}"),
	    "ERR: key column 'id' is null"), "null key is an error");
	ok(starts(id_of("[\"a\",\"id\"]", "{\"a\":1,\"id\":null}"),
	    "ERR: key column 'id' is null"), "null in a composite key");
	ok(starts(id_of("[\"id\"]", "{\"x\":1}"),
	    "ERR: key column 'id' is missing"), "missing key column");
	ok(starts(id_of("[]", "{\"x\":1}"), "ERR: "), "empty key");
	ok(starts(id_of("[1]", "{\"x\":1}"), "ERR: "), "non-string key name");
	ok(starts(id_of("[\"id\"]", "{\"id\":\"a\\u0000b\"}"), "ERR: "),
	    "a NUL in a string key is refused, not truncated");
}

static void
test_rows(void)
{
	is_str(shape("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.items\","
	    "\"v\":100,\"key\":[\"id\"],\"new\":{\"id\":7,\"title\":\"lamp\","
	    "\"body\":null}}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"7\",\"v\":100,"
	    "\"doc\":{\"id\":7,\"title\":\"lamp\",\"body\":null}}",
	    "insert: the row image as the document");
	is_str(shape("{\"k\":\"row\",\"op\":\"c\",\"rel\":\"public.items\","
	    "\"v\":5,\"key\":[\"id\"],\"new\":{\"id\":\"x\\\"y\",\"n\":[1, {\"a\" : 2}]}}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"x\\\"y\",\"v\":5,"
	    "\"doc\":{\"id\":\"x\\\"y\",\"n\":[1, {\"a\" : 2}]}}",
	    "copy row: values copied byte for byte, id re-quoted");
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":101,\"key\":[\"id\"],\"new\":{\"id\":7,\"title\":\"desk\"},"
	    "\"old\":{\"id\":7}}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"7\",\"v\":101,"
	    "\"doc\":{\"id\":7,\"title\":\"desk\"}}",
	    "update with an unchanged key in old: one index");
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":102,\"key\":[\"id\"],\"new\":{\"id\":8,\"title\":\"desk\"},"
	    "\"old\":{\"id\":7}}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"8\",\"v\":102,"
	    "\"doc\":{\"id\":8,\"title\":\"desk\"}}"
	    "{\"k\":\"delete\",\"index\":\"items\",\"id\":\"7\",\"v\":102}",
	    "primary key change: index the new id, then delete the old");
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":102,\"key\":[\"id\"],\"new\":{\"id\":\"x\"},"
	    "\"old\":{\"id\":\"\"}}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"x\",\"v\":102,"
	    "\"doc\":{\"id\":\"x\"}}"
	    "{\"k\":\"delete\",\"index\":\"items\",\"id\":\"\",\"v\":102}",
	    "key changed from an empty string: the old id is still deleted");
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":102,\"key\":[\"id\"],\"new\":{\"id\":\"\"},"
	    "\"old\":{\"id\":\"\"}}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"\",\"v\":102,"
	    "\"doc\":{\"id\":\"\"}}",
	    "empty key unchanged: no delete");
	is_str(shape("{\"k\":\"row\",\"op\":\"d\",\"rel\":\"public.items\","
	    "\"v\":103,\"key\":[\"id\"],\"old\":{\"id\":8}}"),
	    "{\"k\":\"delete\",\"index\":\"items\",\"id\":\"8\",\"v\":103}",
	    "delete: id from old");
	is_str(shape("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.slim\","
	    "\"v\":1,\"key\":[\"id\"],\"new\":{\"title\":\"t\",\"price\":\"1.00\","
	    "\"id\":3}}"),
	    "{\"k\":\"index\",\"index\":\"slim\",\"id\":\"3\",\"v\":1,"
	    "\"doc\":{\"title\":\"t\",\"id\":3}}",
	    "columns: an allow-list, in the row's order");
	is_str(shape("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"app.users\","
	    "\"v\":2,\"key\":[\"name\"],\"new\":{\"name\":\"ann\","
	    "\"password\":\"x\",\"age\":30}}"),
	    "{\"k\":\"index\",\"index\":\"people\",\"id\":\"ann\",\"v\":2,"
	    "\"doc\":{\"name\":\"ann\",\"age\":30}}",
	    "exclude_columns");
	is_str(shape("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.slim\","
	    "\"v\":1,\"key\":[\"sku\"],\"new\":{\"sku\":\"s1\",\"title\":\"t\"}}"),
	    "{\"k\":\"index\",\"index\":\"slim\",\"id\":\"s1\",\"v\":1,"
	    "\"doc\":{\"title\":\"t\"}}",
	    "the id comes from the key before projection");
}

static void
test_toast(void)
{
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":9,\"key\":[\"id\"],\"new\":{\"id\":1},\"toast\":[\"body\","
	    "\"notes\"]}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"1\",\"v\":9,"
	    "\"toast\":[\"body\",\"notes\"],\"rel\":\"public.items\",\"doc\":{\"id\":1}}",
	    "toast passed through before doc");
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"app.users\","
	    "\"v\":9,\"key\":[\"name\"],\"new\":{\"name\":\"ann\"},"
	    "\"toast\":[\"body\",\"bio\",\"password\"]}"),
	    "{\"k\":\"index\",\"index\":\"people\",\"id\":\"ann\",\"v\":9,"
	    "\"toast\":[\"bio\"],\"rel\":\"app.users\",\"doc\":{\"name\":\"ann\"}}",
	    "toast: excluded columns dropped");
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.slim\","
	    "\"v\":9,\"key\":[\"id\"],\"new\":{\"id\":1},\"toast\":[\"body\"]}"),
	    "{\"k\":\"index\",\"index\":\"slim\",\"id\":\"1\",\"v\":9,"
	    "\"doc\":{\"id\":1}}",
	    "toast: omitted when no name survives");
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":9,\"key\":[\"id\"],\"new\":{\"id\":2},\"old\":{\"id\":1},"
	    "\"toast\":[\"body\"]}"),
	    "{\"k\":\"index\",\"index\":\"items\",\"id\":\"2\",\"v\":9,"
	    "\"toast\":[\"body\"],\"rel\":\"public.items\",\"toast_id\":\"1\",\"doc\":{\"id\":2}}"
	    "{\"k\":\"delete\",\"index\":\"items\",\"id\":\"1\",\"v\":9}",
	    "toast with a key change completes from the old id");
}

static void
test_truncate_and_passthrough(void)
{
	is_str(shape("{\"k\":\"truncate\",\"rels\":[\"public.items\","
	    "\"public.nothere\",\"app.users\",\"app.members\",\"public.slim\"],"
	    "\"v\":77}"),
	    "{\"k\":\"clear\",\"index\":\"items\",\"v\":77}"
	    "{\"k\":\"clear\",\"index\":\"people\",\"v\":77}"
	    "{\"k\":\"clear\",\"index\":\"members\",\"v\":77}"
	    "{\"k\":\"clear\",\"index\":\"slim\",\"v\":77}",
	    "truncate: a clear per mapped table, in order; unmapped ignored");
	is_str(shape("{\"k\":\"truncate\",\"rels\":[\"x.y\"],\"v\":1}"), "",
	    "truncate of unmapped rels only: nothing");
	is_str(shape("{\"k\":\"commit\",\"pos\":22817480,\"text\":\"0/15C2A48\","
	    " \"ts\":1,\"n\":3,\"extra\":{\"a\":[]}}"),
	    "{\"k\":\"commit\",\"pos\":22817480,\"text\":\"0/15C2A48\","
	    " \"ts\":1,\"n\":3,\"extra\":{\"a\":[]}}",
	    "commit forwarded byte for byte");
	is_str(shape("{\"k\":\"pos\",\"pos\":1,\"text\":\"0/1\"}"),
	    "{\"k\":\"pos\",\"pos\":1,\"text\":\"0/1\"}", "pos forwarded");
	is_str(shape_src(SHAPE_LOAD, "{\"k\":\"mark\",\"table\":\"public.items\","
	    "\"wave\":1,\"id\":\"public.items#1\"}"),
	    "{\"k\":\"mark\",\"table\":\"public.items\",\"wave\":1,"
	    "\"id\":\"public.items#1\"}", "mark from the loader forwarded");
	is_str(shape("{\"k\":\"drift\",\"rel\":\"public.items\","
	    "\"added\":[\"color\"],\"removed\":[],\"retyped\":[\"price\"]}"), "",
	    "drift is not forwarded");
	is_int((int)kcount_get(&sh.drift, "public.items"), 1,
	    "drift counted for its table");
}

static void
test_unmapped_and_errors(void)
{
	struct shape_counters before = sh.n;

	is_str(shape("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.other\","
	    "\"v\":1,\"key\":[\"id\"],\"new\":{\"id\":null}}"), "",
	    "unmapped rel: dropped, its key not even read");
	is_int(sh.n.rows_unmapped, before.rows_unmapped + 1,
	    "rows_unmapped counted");
	is_int(sh.n.rows_in, before.rows_in + 1, "rows_in counted");

	ok(starts(shape("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.items\","
	    "\"v\":1,\"key\":[\"id\"],\"new\":{\"id\":null}}"),
	    "ERR: table 'public.items': row op 'i': key column 'id' is null"),
	    "null key names table and column");
	ok(starts(shape("{\"k\":\"row\",\"op\":\"d\",\"rel\":\"public.items\","
	    "\"v\":1,\"key\":[\"id\"]}"), "ERR: "), "delete without old");
	ok(starts(shape("{\"k\":\"row\",\"op\":\"x\",\"rel\":\"public.items\","
	    "\"v\":1,\"key\":[\"id\"],\"new\":{\"id\":1}}"), "ERR: "),
	    "unknown op");
	ok(starts(shape("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.items\","
	    "\"v\":-1,\"key\":[\"id\"],\"new\":{\"id\":1}}"), "ERR: "),
	    "negative v");
	ok(starts(shape("{\"k\":\"frob\"}"), "ERR: unknown event kind 'frob'"),
	    "unknown kind");
	ok(starts(shape_src(SHAPE_LOAD, "{\"k\":\"commit\",\"pos\":1}"),
	    "ERR: "), "a commit on the load stream is refused");
	ok(starts(shape_src(SHAPE_LOAD, "{\"k\":\"row\",\"op\":\"i\","
	    "\"rel\":\"public.items\",\"v\":1,\"key\":[\"id\"],"
	    "\"new\":{\"id\":1}}"), "ERR: "),
	    "a streamed row on the load stream is refused");

	/* an error in the second op of a row leaves none of the first */
	is_str(shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":1,\"key\":[\"id\"],\"new\":{\"id\":1},\"old\":{\"x\":1}}"),
	    "ERR: table 'public.items': row op 'u': key column 'id' is missing "
	    "in \"old\"", "bad old image: error, no output left");
	sbuf_reset(&out);
	sbuf_adds(&out, "earlier");
	{
		const char *bad = "{\"k\":\"truncate\",\"rels\":[\"public.items\","
		    "7],\"v\":1}";
		struct jspan kind;

		jobj_get(span(bad), "k", &kind);
		is_int(shape_event(&sh, SHAPE_STREAM, span(bad), kind, NULL, &out,
		    err, sizeof(err)), -1, "truncate with a non-string rel");
		is_str(out.buf, "earlier", "earlier output untouched");
	}
}

/* a copy row of public.items at version v */
static const char *
copy(int id, int v)
{
	static char json[256];

	snprintf(json, sizeof(json), "{\"k\":\"row\",\"op\":\"c\","
	    "\"rel\":\"public.items\",\"v\":%d,\"key\":[\"id\"],"
	    "\"new\":{\"id\":%d,\"title\":\"copied\"}}", v, id);
	return shape_src(SHAPE_LOAD, json);
}

static void
mark_after_wave(const char *n)
{
	char json[128];

	snprintf(json, sizeof(json), "{\"k\":\"mark\",\"id\":"
	    "\"public.items#%s\",\"table\":\"public.items\"}", n);
	shape_src(SHAPE_LOAD, json);
}

/*
 * The tombstone window: a copy older than a removal the stream made since
 * the last mark is dropped; one newer than it is a row put back after the
 * removal and stays; a mark forgets every removal at or below the version
 * of the wave before it.
 */
static void
test_window(void)
{
	uint64_t dropped = sh.n.copies_dropped;

	shape("{\"k\":\"row\",\"op\":\"d\",\"rel\":\"public.items\","
	    "\"v\":500,\"key\":[\"id\"],\"old\":{\"id\":7}}");
	is_str(copy(7, 400), "", "a copy read before the stream's delete is "
	    "dropped");
	is_str(copy(7, 600), "{\"k\":\"index\",\"index\":\"items\",\"id\":"
	    "\"7\",\"v\":600,\"doc\":{\"id\":7,\"title\":\"copied\"}}",
	    "a copy read after it (the row came back) is kept");
	ok(starts(copy(8, 400), "{\"k\":\"index\""),
	    "another key is not touched");
	/* a key change removes the old id */
	shape("{\"k\":\"row\",\"op\":\"u\",\"rel\":\"public.items\","
	    "\"v\":510,\"key\":[\"id\"],\"new\":{\"id\":90},"
	    "\"old\":{\"id\":9}}");
	is_str(copy(9, 505), "", "the old id of a key change is a removal too");
	shape("{\"k\":\"truncate\",\"v\":700,\"rels\":[\"public.items\"]}");
	is_str(copy(1, 650), "", "a truncate removes every older copy of its "
	    "table");
	ok(starts(copy(1, 750), "{\"k\":\"index\""),
	    "a copy read after the truncate is kept");
	is_int(sh.n.copies_dropped - dropped, 3, "three copies dropped, counted");
	is_str(shape_src(SHAPE_LOAD, "{\"k\":\"mark\",\"id\":\"public.items#1\","
	    "\"table\":\"public.items\"}"), "{\"k\":\"mark\",\"id\":"
	    "\"public.items#1\",\"table\":\"public.items\"}",
	    "the mark passes on");
	ok(starts(copy(7, 400), "{\"k\":\"index\"") &&
	    starts(copy(1, 650), "{\"k\":\"index\""),
	    "and the window is empty after it");

	/* the next wave may be read while a mark is stored: a removal newer
	 * than the wave before the mark outlives the mark */
	mark_after_wave("2");
	shape("{\"k\":\"row\",\"op\":\"d\",\"rel\":\"public.items\","
	    "\"v\":900,\"key\":[\"id\"],\"old\":{\"id\":7}}");
	ok(starts(copy(5, 800), "{\"k\":\"index\""), "a wave at 800");
	mark_after_wave("3");
	is_str(copy(7, 850), "", "a removal at 900 outlives the mark after a "
	    "wave at 800: the next wave's copy of it is dropped");
	/* a mark after a wave without rows says nothing: nothing goes */
	mark_after_wave("4");
	mark_after_wave("5");
	is_str(copy(7, 860), "", "a mark after a wave without rows keeps it");
	mark_after_wave("6");
	ok(starts(copy(7, 950), "{\"k\":\"index\""), "a wave at 950");
	mark_after_wave("7");
	ok(starts(copy(7, 890), "{\"k\":\"index\""), "forgotten at the mark "
	    "after a wave newer than it");
}

/* a stream row of public.items: op, version, new and optional old/toast */
static const char *
srow(const char *op, int v, const char *rest)
{
	static char json[512];

	snprintf(json, sizeof(json), "{\"k\":\"row\",\"op\":\"%s\","
	    "\"rel\":\"public.items\",\"v\":%d,\"key\":[\"id\"],%s}", op, v,
	    rest);
	return shape(json);
}

/* a copy of public.items' row id at v with a large body */
static const char *
bigcopy(int id, int v)
{
	static char json[256];

	snprintf(json, sizeof(json), "{\"k\":\"row\",\"op\":\"c\","
	    "\"rel\":\"public.items\",\"v\":%d,\"key\":[\"id\"],"
	    "\"new\":{\"id\":%d,\"title\":\"old\",\"body\":\"big\"}}", v, id);
	return shape_src(SHAPE_LOAD, json);
}

/*
 * The TOAST window: a copy that reaches the shaper after updates that
 * left its large value unchanged fills the document the last of them
 * wrote, at that write's version, and is dropped itself (the stream wrote
 * the document after it); through a key move the copy of the old key
 * fills the new one; a write with every value, a delete, an older
 * removal, a newer copy, or a mark after the head's wave: no fill.
 */
static void
test_fill(void)
{
	shaper_release(&sh);
	shaper_init(&sh, &cfg);
	ok(starts(srow("u", 100, "\"new\":{\"id\":20,\"title\":\"a\"},"
	    "\"toast\":[\"body\"]"), "{\"k\":\"index\""), "an update with a "
	    "marker");
	srow("u", 110, "\"new\":{\"id\":20,\"title\":\"b\"},\"toast\":[\"body\"]");
	is_str(bigcopy(20, 50), "{\"k\":\"fill\",\"index\":\"items\",\"id\":"
	    "\"20\",\"v\":110,\"toast\":[\"body\"],\"rel\":\"public.items\","
	    "\"doc\":{\"id\":20,\"title\":\"old\",\"body\":\"big\"}}",
	    "the late copy fills the last update's document, and is dropped");
	is_str(bigcopy(20, 60), "", "once: the chain ended at the fill");

	/* a key move: the old key's copy fills the new document */
	srow("u", 200, "\"new\":{\"id\":31,\"title\":\"m\"},\"old\":{\"id\":30},"
	    "\"toast\":[\"body\"]");
	is_str(bigcopy(30, 150), "{\"k\":\"fill\",\"index\":\"items\",\"id\":"
	    "\"31\",\"v\":200,\"toast\":[\"body\"],\"rel\":\"public.items\","
	    "\"doc\":{\"id\":30,\"title\":\"old\",\"body\":\"big\"}}",
	    "a key move: the copy of the old key fills the new one");

	/* the chain ends at a write with every value */
	srow("u", 300, "\"new\":{\"id\":40,\"title\":\"a\"},\"toast\":[\"body\"]");
	srow("u", 310, "\"new\":{\"id\":40,\"title\":\"a\",\"body\":\"new\"}");
	is_str(bigcopy(40, 250), "", "a full write ends the chain: no fill, "
	    "the copy dropped");
	/* and at a delete */
	srow("u", 400, "\"new\":{\"id\":41,\"title\":\"a\"},\"toast\":[\"body\"]");
	srow("d", 410, "\"old\":{\"id\":41}");
	is_str(bigcopy(41, 350), "", "a delete ends it");
	/* a copy from before the row's last removal is no source */
	srow("d", 500, "\"old\":{\"id\":42}");
	srow("i", 510, "\"new\":{\"id\":42,\"title\":\"a\",\"body\":\"x\"}");
	srow("u", 520, "\"new\":{\"id\":42,\"title\":\"b\"},\"toast\":[\"body\"]");
	is_str(bigcopy(42, 450), "", "a copy older than the delete: none");
	/* a copy newer than the head wins by itself */
	srow("u", 600, "\"new\":{\"id\":43,\"title\":\"a\"},\"toast\":[\"body\"]");
	ok(starts(bigcopy(43, 650), "{\"k\":\"index\""), "a newer copy: "
	    "written, no fill");
	/* a mark after a wave newer than the head forgets the chain */
	srow("u", 700, "\"new\":{\"id\":44,\"title\":\"a\"},\"toast\":[\"body\"]");
	bigcopy(45, 750);
	mark_after_wave("9");
	ok(starts(bigcopy(44, 650), "{\"k\":\"index\""), "forgotten at the "
	    "mark, with the stream's write (no copy to come is older)");
	/* no load: nothing is kept */
	shaper_load(&sh, 0);
	srow("u", 800, "\"new\":{\"id\":46,\"title\":\"a\"},\"toast\":[\"body\"]");
	ok(sh.toasts.nchain == 0 && sh.tombs.n == 0,
	    "without a load neither window keeps anything");
}

/* the window's table grows and finds every key again */
static void
test_window_many(void)
{
	struct tombstones w;
	char id[16];
	int i, n, wrong = 0;

	tomb_init(&w);
	for (i = 0; i < 20000; i++) {
		n = snprintf(id, sizeof(id), "%d", i);
		tomb_delete(&w, "idx", 3, id, (size_t)n, 1000 + (uint64_t)i);
	}
	tomb_delete(&w, "idx", 3, "5", 1, 10);	/* older: kept at 1005 */
	for (i = 0; i < 20000; i++) {
		n = snprintf(id, sizeof(id), "%d", i);
		wrong += !tomb_drops(&w, "t", 1, "idx", 3, id, (size_t)n,
		    999 + (uint64_t)i);
		wrong += tomb_drops(&w, "t", 1, "idx", 3, id, (size_t)n,
		    1000 + (uint64_t)i);
		wrong += tomb_drops(&w, "t", 1, "other", 5, id, (size_t)n, 0);
	}
	is_int(wrong, 0, "20,000 removals: each found, at its version, in its "
	    "index only");
	ok(!tomb_drops(&w, "t", 1, "idx", 3, "20000", 5, 0), "an unknown key");
	ok(!tomb_drops(&w, "t", 1, "id", 2, "x5", 2, 0) &&
	    !tomb_drops(&w, "t", 1, "idx5", 4, "", 0, 0),
	    "index and id are told apart");
	tomb_release(&w);
}

int
main(void)
{
	shaper_init(&sh, &cfg);
	test_window();
	test_window_many();
	test_ids();
	test_rows();
	test_toast();
	test_truncate_and_passthrough();
	test_unmapped_and_errors();
	test_fill();
	shaper_release(&sh);
	sbuf_release(&out);
	return done_testing();
}
