/*
 * t-loader-progress.c - the progress object (progress.c): written into a
 * mark, carried back by the supervisor's load frame, read again exactly;
 * anything else refused with a reason.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "jscan.h"
#include "msg.h"
#include "sbuf.h"
#include "../../loader/loader.h"

static char *keys[] = { "tenant", "id" };
static char *types[] = { "text", "bigint" };
static char *bounds[] = {
	"O'Brien \"q\" \\ \t\n", "-9223372036854775808",
	"\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", "0",
	"", "9223372036854775807",
};

static int
same(const struct progress *a, const struct progress *b)
{
	int i;

	if (a->of != b->of || a->done != b->done || a->rows != b->rows ||
	    a->nkeys != b->nkeys)
		return 0;
	for (i = 0; i < a->nkeys; i++)
		if (strcmp(a->key[i], b->key[i]) != 0 ||
		    strcmp(a->types[i], b->types[i]) != 0)
			return 0;
	for (i = 0; i < (a->of - 1) * a->nkeys; i++)
		if (strcmp(a->bounds[i], b->bounds[i]) != 0)
			return 0;
	return 1;
}

/* the load frame a supervisor would send back, and its progress span */
static int
through_load_frame(const struct sbuf *prog, struct sbuf *frame,
    struct jspan *back)
{
	struct sbuf j = SBUF_INIT;
	struct frame f;
	struct jspan tables;
	struct msg_pos cp = { .present = 1, .pos = 4096, .text = "0/1000" };
	struct jiter it;
	char err[128], *table = NULL;
	int rc;

	msg_load_begin(&j, &cp);
	msg_load_table(&j, "public.items", (struct jspan){ prog->buf,
	    prog->len });
	msg_load_end(frame, &j, 0);
	sbuf_release(&j);
	f.obj.p = strchr(frame->buf, ' ') + 1;
	f.obj.n = frame->len - (f.obj.p - frame->buf) - 1;
	if (jscan_validate(f.obj.p, f.obj.n, NULL, NULL) == -1 ||
	    !jobj_get(f.obj, "k", &f.kind))
		return -1;
	f.offset = 0;
	if (msg_read_load(&f, &tables, &cp, err, sizeof(err)) == -1)
		return -1;
	if (!cp.present || cp.pos != 4096 || strcmp(cp.text, "0/1000") != 0) {
		msg_pos_release(&cp);
		return -1;
	}
	msg_pos_release(&cp);
	jiter_init(&it, tables);
	rc = msg_load_next(&it, &table, back, err, sizeof(err));
	rc = rc == 1 && strcmp(table, "public.items") == 0 ? 0 : -1;
	free(table);
	return rc;
}

static void
round_trip(void)
{
	struct progress p = { .of = 4, .done = 3, .rows = 18446744073709551615ULL,
	    .nkeys = 2, .key = keys, .types = types, .bounds = bounds };
	struct progress q, one = { .of = 1, .done = 1, .rows = 0, .nkeys = 2,
	    .key = keys, .types = types, .bounds = NULL };
	struct sbuf out = SBUF_INIT, frame = SBUF_INIT;
	struct jspan back;
	char err[128];

	progress_put(&out, &p);
	ok(jscan_validate(out.buf, out.len, NULL, NULL) == 0,
	    "the progress object is valid JSON: %s", out.buf);
	ok(memchr(out.buf, '\n', out.len) == NULL, "with no newline in it");
	ok(progress_parse((struct jspan){ out.buf, out.len }, &q, err,
	    sizeof(err)) == 0 && same(&p, &q), "read back: the same "
	    "boundaries, byte for byte, and the same counts");
	is_str(progress_bound(&q, 1)[0], bounds[2], "boundary 2's first "
	    "column");
	is_str(progress_bound(&q, 2)[1], bounds[5], "boundary 3's second "
	    "column");
	progress_release(&q);

	ok(through_load_frame(&out, &frame, &back) == 0, "carried back in a "
	    "load frame");
	ok(back.p != NULL && progress_parse(back, &q, err, sizeof(err)) == 0 &&
	    same(&p, &q), "and resumed from: the same progress");
	progress_release(&q);
	sbuf_release(&out);
	sbuf_release(&frame);

	progress_put(&out, &one);
	ok(progress_parse((struct jspan){ out.buf, out.len }, &q, err,
	    sizeof(err)) == 0 && same(&one, &q) && q.of == 1,
	    "one range: no boundaries (%s)", out.buf);
	progress_release(&q);
	sbuf_release(&out);

	/* an append-only table without a key is read as one range */
	{
		const char *keyless = "{\"done\":1,\"of\":1,\"rows\":7,"
		    "\"key\":[],\"types\":[],\"bounds\":[]}";

		ok(progress_parse((struct jspan){ keyless, strlen(keyless) },
		    &q, err, sizeof(err)) == 0 && q.nkeys == 0 && q.of == 1 &&
		    q.rows == 7, "no key, one range");
		progress_release(&q);
	}
}

static const struct {
	const char *json, *why;
} bad[] = {
	{ "[]", "is not an object" },
	{ "{}", "\"of\"" },
	{ "{\"done\":0,\"of\":0,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[]}", "\"of\"" },
	{ "{\"done\":0,\"of\":2001,\"rows\":0,\"key\":[\"id\"],"
	    "\"types\":[\"int\"],\"bounds\":[]}", "\"of\"" },
	{ "{\"done\":3,\"of\":2,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[[\"1\"]]}", "\"done\"" },
	{ "{\"done\":-1,\"of\":2,\"rows\":0,\"key\":[\"id\"],"
	    "\"types\":[\"int\"],\"bounds\":[[\"1\"]]}", "\"done\"" },
	{ "{\"done\":0,\"of\":2,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[[\"1\"]]}", "\"rows\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[],\"types\":[],"
	    "\"bounds\":[[\"1\"]]}", "\"key\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[1],\"types\":[\"int\"],"
	    "\"bounds\":[[\"1\"]]}", "\"key\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[\"id\"],\"types\":[],"
	    "\"bounds\":[[\"1\"]]}", "\"types\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[\"id\"],"
	    "\"types\":[\"int\",\"int\"],\"bounds\":[[\"1\"]]}", "\"types\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"]}",
	    "\"bounds\"" },
	{ "{\"done\":0,\"of\":3,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[[\"1\"]]}", "\"bounds\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[[\"1\"],[\"2\"]]}", "\"bounds\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[[\"1\",\"2\"]]}", "\"bounds\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[[1]]}", "\"bounds\"" },
	{ "{\"done\":0,\"of\":2,\"rows\":0,\"key\":[\"id\"],\"types\":[\"int\"],"
	    "\"bounds\":[\"1\"]}", "\"bounds\"" },
};

static void
refused(void)
{
	struct sbuf many = SBUF_INIT;
	struct progress q;
	char err[128];
	size_t i;
	int k, rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = progress_parse((struct jspan){ bad[i].json,
		    strlen(bad[i].json) }, &q, err, sizeof(err));
		ok(rc == -1 && strstr(err, bad[i].why) != NULL,
		    "refused: %s", bad[i].json);
		if (rc != -1 || strstr(err, bad[i].why) == NULL)
			diag("got %d '%s'", rc, rc == -1 ? err : "");
		ok(q.key == NULL && q.bounds == NULL, "and nothing is held");
	}
	/* more key columns than an index can have */
	sbuf_adds(&many, "{\"done\":0,\"of\":1,\"rows\":0,\"key\":[");
	for (k = 0; k < 33; k++)
		sbuf_addf(&many, "%s\"c%d\"", k ? "," : "", k);
	sbuf_adds(&many, "],\"types\":[],\"bounds\":[]}");
	ok(progress_parse((struct jspan){ many.buf, many.len }, &q, err,
	    sizeof(err)) == -1 && strstr(err, "\"key\""), "33 key columns "
	    "refused");
	sbuf_release(&many);
}

int
main(void)
{
	round_trip();
	refused();
	return done_testing();
}
