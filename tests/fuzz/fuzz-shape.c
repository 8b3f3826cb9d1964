/*
 * fuzz-shape.c - arbitrary bytes as one event frame's object, through the
 * shaper's mapping (shape_event) from both the stream and the load fd,
 * with a fixed configuration that exercises every projection. Input the
 * frame reader would refuse (invalid JSON, not an object, no string "k")
 * is skipped the same way, since shape_event only ever sees what it
 * accepted. Build and run (from the top of the tree):
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *       -I lib -o fuzz-shape tests/fuzz/fuzz-shape.c shaper/shape.c \
 *       shaper/id.c lib/jscan.c lib/sbuf.c lib/frame.c lib/xio.c \
 *       lib/log.c lib/config.c -lyaml
 *   mkdir corpus && (cd tests/golden/shaper && cat *.in) |
 *       sed -E 's/^[0-9]+ //' | split -l 1 - corpus/golden-
 *   ./fuzz-shape -max_total_time=60 corpus
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jscan.h"
#include "log.h"
#include "sbuf.h"
#include "../../shaper/shaper.h"

static char *cols[] = { "id", "title", "body" };
static char *excl[] = { "secret", "b\"ody" };

static struct sync_section sections[] = {
	{ .name = "items", .schema = "public", .table = "items",
	  .rel = "public.items", .index = "items" },
	{ .name = "slim", .schema = "public", .table = "slim",
	  .rel = "public.slim", .index = "slim", .columns = cols,
	  .ncolumns = 3 },
	{ .name = "users", .schema = "app", .table = "users",
	  .rel = "app.users", .index = "people", .exclude_columns = excl,
	  .nexclude_columns = 2 },
};

static struct config cfg = {
	.syncs = sections,
	.nsyncs = sizeof(sections) / sizeof(sections[0]),
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init("fuzz-shape");
	log_set_level(LOG_LVL_ERROR);	/* drift warnings would flood */
	return 0;
}

static void
check_output(const struct sbuf *out, size_t before)
{
	size_t off;
	const char *why;
	char *p, *end, *lim;
	unsigned long n;

	/* every operation frame the shaper writes must be valid JSON */
	p = out->buf + before;
	lim = out->buf + out->len;
	while (p < lim) {
		n = strtoul(p, &end, 10);
		if (*end != ' ' || n < 3 || (size_t)(lim - end - 1) < n ||
		    end[n] != '\n')
			__builtin_trap();
		if (jscan_validate(end + 1, n - 1, &off, &why) == -1)
			__builtin_trap();
		p = end + 1 + n;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shaper sh;
	static int ready;
	struct sbuf out = SBUF_INIT;
	struct jspan obj = { (const char *)data, size }, kind;
	const char *why;
	char err[512];
	size_t off, before;
	int rc;

	if (!ready) {
		shaper_init(&sh, &cfg);
		ready = 1;
	}
	if (memchr(data, '\n', size) != NULL ||
	    jscan_validate(obj.p, size, &off, &why) == -1)
		return 0;
	/* the frame reader's span is the value without whitespace around */
	while (obj.n > 0 && strchr(" \t\r", obj.p[0]) != NULL)
		obj.p++, obj.n--;
	while (obj.n > 0 && strchr(" \t\r", obj.p[obj.n - 1]) != NULL)
		obj.n--;
	if (obj.n == 0 || jspan_type(obj) != J_OBJECT ||
	    !jobj_get(obj, "k", &kind) || jspan_type(kind) != J_STRING)
		return 0;

	sbuf_adds(&out, "x");	/* output before the event must survive */
	for (int src = SHAPE_STREAM; src <= SHAPE_LOAD; src++) {
		before = out.len;
		rc = shape_event(&sh, src, obj, kind, &out, err, sizeof(err));
		if (rc == -1 && out.len != before)
			__builtin_trap();
		if (rc == 0)
			check_output(&out, before);
	}
	if (out.buf[0] != 'x')
		__builtin_trap();
	sbuf_release(&out);
	return 0;
}
