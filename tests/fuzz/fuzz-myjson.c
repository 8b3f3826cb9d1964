/*
 * fuzz-myjson.c - libFuzzer target for capture-mysql's MySQL binary JSON
 * decoder (myjson.c) and json_compact. Input: a JSON column's bytes. A
 * decoded document must be valid JSON; a refused one must append
 * nothing; compacting valid JSON text must give valid JSON again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "../../capture-mysql/binlog.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbuf out = SBUF_INIT, c = SBUF_INIT;
	char err[256];
	const char *why;
	size_t off;

	sbuf_adds(&out, "x");
	if (myjson_to_text(data, size, &out, err, sizeof(err)) == 0) {
		if (jscan_validate(out.buf + 1, out.len - 1, &off, &why) != 0)
			abort();
		if (json_compact(out.buf + 1, out.len - 1, &c) != 0 ||
		    c.len != out.len - 1 || memcmp(c.buf, out.buf + 1,
		    c.len) != 0)
			abort();	/* our own output is already compact */
	} else if (out.len != 1)
		abort();
	sbuf_reset(&c);
	if (json_compact((const char *)data, size, &c) == 0 &&
	    jscan_validate(c.buf ? c.buf : "", c.len, &off, &why) != 0)
		abort();
	sbuf_release(&out);
	sbuf_release(&c);
	return 0;
}
