/*
 * t-writer-toast.c - TOAST completion in the writer: where each
 * completion copies from (an earlier write of the same document in the
 * batch, or the stored document), which documents must be read and under
 * which index, id and routing, and the splice of stored values into a
 * document.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "writer-test.h"

static void
ref_is(const struct docref *r, const char *index, const char *id,
    const char *routing, const char *name)
{
	ok(r->ilen == strlen(index) && memcmp(r->index, index, r->ilen) == 0 &&
	    r->idlen == strlen(id) && memcmp(r->id, id, r->idlen) == 0 &&
	    r->rlen == strlen(routing) &&
	    (r->rlen == 0 || memcmp(r->routing, routing, r->rlen) == 0),
	    "%s", name);
}

static struct jspan
span(const char *s)
{
	struct jspan j = { s, strlen(s) };

	return j;
}

static void
complete_is(const char *doc, const char *fields, const char *source,
    const char *want, int wantn, const char *name)
{
	struct sbuf out = SBUF_INIT;
	struct jspan src = { NULL, 0 };
	int n;

	if (source)
		src = span(source);
	n = toast_complete(&out, span(doc), span(fields), src);
	is_int(n, wantn, "%s: fields copied", name);
	if (n >= 0)
		is_str(out.buf, want, "%s: document", name);
	sbuf_release(&out);
}

/* the op of own a completion copies from: -1 the stored document */
static int
src_op(const struct toast_from *from, const struct batch *own, int i)
{
	if (from[i].b == NULL)
		return -1;
	return from[i].b == own ? from[i].i : -3;
}

static void
test_toast(void)
{
	static const char *ops[] = {
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"1\",\"v\":1,"
		    "\"doc\":{\"id\":1,\"body\":\"first\"}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"2\",\"v\":1,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":2}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"1\",\"v\":2,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":1,\"n\":2}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"3\",\"v\":1,"
		    "\"routing\":\"r\",\"toast\":[\"body\"],\"doc\":{\"id\":3}}",
		"{\"k\":\"delete\",\"index\":\"t\",\"id\":\"4\",\"v\":1}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"4\",\"v\":2,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":4}}",
		"{\"k\":\"index\",\"index\":\"u\",\"id\":\"2\",\"v\":1,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":2}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"2\",\"v\":3,"
		    "\"toast\":[\"body\",\"tags\"],\"doc\":{\"id\":2}}",
		"{\"k\":\"commit\",\"pos\":9}",
	};
	struct batch b;
	struct frame f;
	struct sbuf body = SBUF_INIT;
	struct p2o_err err;
	struct toast_from src[16];
	struct docref refs[16];
	int asked[16], i, nread, nasked;

	batch_init(&b, tmod(), 100, 1 << 20);
	for (i = 0; i < (int)(sizeof(ops) / sizeof(ops[0])); i++) {
		f = mkframe(ops[i]);
		if (batch_add(&b, &f, &err) == -1)
			printf("# %s\n", err.msg);
	}
	ok(toast_needed(&b, b.nops), "batch needs completion");
	ok(!toast_needed(&b, 1), "first op alone does not");
	nread = toast_plan(&b, b.nops, NULL, 0, src);
	is_int(nread, 3, "three stored documents to read");
	is_int(src_op(src, &b, 1), -1, "t/2 read from the target");
	is_int(src_op(src, &b, 2), 0, "t/1 completed from the earlier op in the batch");
	is_int(src_op(src, &b, 3), -1, "t/3 (routed) read from the target");
	is_int(src_op(src, &b, 5), 4, "t/4 follows the delete before it");
	is_int(src_op(src, &b, 6), -1, "u/2 is another document than t/2");
	is_int(src_op(src, &b, 7), 1, "second t/2 completed from the first");
	nasked = toast_refs(&b, b.nops, src, refs, asked);
	is_int(nasked, 3, "three docs asked");
	ref_is(&refs[0], "\"t\"", "\"2\"", "", "t/2 asked");
	ref_is(&refs[1], "\"t\"", "\"3\"", "\"r\"", "t/3 asked with its routing");
	ref_is(&refs[2], "\"u\"", "\"2\"", "", "u/2 asked");
	ok(asked[0] == 1 && asked[1] == 3 && asked[2] == 6, "asked order");
	batch_release(&b);

	/* a key change: completion reads the document under its old id, or
	 * the pending write of that old id in the same batch */
	batch_init(&b, tmod(), 100, 1 << 20);
	{
		const char *moved[] = {
			"{\"k\":\"index\",\"index\":\"t\",\"id\":\"9\",\"v\":2,"
			    "\"toast\":[\"body\"],\"toast_id\":\"8\",\"doc\":{\"id\":9}}",
			"{\"k\":\"index\",\"index\":\"t\",\"id\":\"5\",\"v\":2,"
			    "\"doc\":{\"id\":5,\"body\":\"b\"}}",
			"{\"k\":\"index\",\"index\":\"t\",\"id\":\"6\",\"v\":3,"
			    "\"toast\":[\"body\"],\"toast_id\":\"5\",\"doc\":{\"id\":6}}",
			"{\"k\":\"commit\",\"pos\":9}",
		};
		for (i = 0; i < 4; i++) {
			f = mkframe(moved[i]);
			if (batch_add(&b, &f, &err) == -1)
				printf("# %s\n", err.msg);
		}
	}
	nread = toast_plan(&b, b.nops, NULL, 0, src);
	is_int(nread, 1, "key change: one stored document to read");
	is_int(src_op(src, &b, 0), -1, "t/9 reads the stored t/8");
	is_int(src_op(src, &b, 2), 1, "t/6 completes from the pending t/5");
	nasked = toast_refs(&b, b.nops, src, refs, asked);
	is_int(nasked, 2, "two docs asked");
	ref_is(&refs[0], "\"t\"", "\"8\"", "", "under the old id");
	ref_is(&refs[1], "\"t\"", "\"9\"", "", "then its own (a replay: "
	    "the old is gone, the move stored)");
	ok(asked[0] == 0 && asked[1] == 0, "both for the move");
	batch_release(&b);

	/* a write of the new id before the move in memory: only the old */
	batch_init(&b, tmod(), 100, 1 << 20);
	{
		const char *moved[] = {
			"{\"k\":\"delete\",\"index\":\"t\",\"id\":\"9\",\"v\":1}",
			"{\"k\":\"index\",\"index\":\"t\",\"id\":\"9\",\"v\":2,"
			    "\"toast\":[\"body\"],\"toast_id\":\"8\",\"doc\":{\"id\":9}}",
		};
		for (i = 0; i < 2; i++) {
			f = mkframe(moved[i]);
			if (batch_add(&b, &f, &err) == -1)
				printf("# %s\n", err.msg);
		}
	}
	toast_plan(&b, b.nops, NULL, 0, src);
	is_int(toast_refs(&b, b.nops, src, refs, asked), 1,
	    "the new id deleted before the move in memory: its stored copy "
	    "is not asked");

	complete_is("{\"id\":2}", "[\"body\",\"tags\"]",
	    "{\"id\":2,\"body\":\"stored \\u00e9\",\"tags\":[1, 2]}",
	    "{\"id\":2,\"body\":\"stored \\u00e9\",\"tags\":[1, 2]}", 2,
	    "values spliced verbatim");
	complete_is("{}", "[\"body\"]", "{\"body\":12345678901234567890.10}",
	    "{\"body\":12345678901234567890.10}", 1,
	    "empty doc, number kept exact");
	complete_is("{\"id\":2,\"body\":\"new\"}", "[\"body\"]",
	    "{\"body\":\"old\"}", "{\"id\":2,\"body\":\"new\"}", 0,
	    "a value the op carries wins");
	complete_is("{\"id\":2}", "[\"body\",\"body\"]",
	    "{\"body\":1}", "{\"id\":2,\"body\":1}", 1,
	    "a field listed twice is copied once");
	complete_is("{\"id\":2}", "[\"gone\"]", "{\"body\":1}",
	    "{\"id\":2}", 0, "a field the stored doc lacks stays absent");
	complete_is("{\"id\":2}", "[\"body\"]", NULL, "{\"id\":2}", 0,
	    "no stored document: doc unchanged");
	complete_is("{\"id\":2}", "[\"a\\\"b\"]", "{\"a\\\"b\":true}",
	    "{\"id\":2,\"a\\\"b\":true}", 1, "escaped field name");
	complete_is("{\"id\":2}", "[\"body\"]", "[1]", NULL, -1,
	    "a source that is not an object is an error");
	sbuf_release(&body);
	batch_release(&b);
}

int
main(void)
{
	test_toast();
	return done_testing();
}
