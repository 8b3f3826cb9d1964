/*
 * fuzz-where.c - arbitrary bytes as a sync section's filter (lib/where.c):
 * the parser either refuses them with a message or yields an expression
 * that evaluates against a row without crashing, whose SQL rendering
 * parses back to the same expression, and which evaluates the same way
 * again from that rendering. The first byte picks one of a few rows:
 * PostgreSQL booleans (JSON true/false) and MySQL ones (numbers) among
 * them, so TRUE and FALSE meet both.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "where.h"

static const char *const rows[] = {
	"{\"a\":1,\"b\":\"x\",\"c\":null,\"d\":\"12.50\",\"e\":true}",
	"{\"a\":\"-1e3\",\"b\":[1,2],\"status\":\"paid\",\"total\":\"9.99\"}",
	"{}",
	"{\"a\":\"caf\\u00e9\",\"b\":\"\\u0000\",\"n\":1.5e308}",
	"{\"active\":true,\"deleted\":false,\"a\":\"t\",\"b\":\" off \"}",
	"{\"active\":1,\"deleted\":0,\"a\":2,\"b\":\"1\",\"e\":null}",
};

static int
get(void *arg, const char *name, struct jspan *val)
{
	struct jspan row = { arg, strlen(arg) };

	return jobj_get(row, name, val);
}

/* quoting that the parser reads back: names as they are, literals with
 * quotes doubled */
static char *
quote(void *arg, const char *s, int ident)
{
	struct sbuf q = SBUF_INIT;

	if (ident) {
		sbuf_adds(&q, s);
		return q.buf;
	}
	sbuf_addc(&q, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sbuf_addc(&q, '\'');
		sbuf_addc(&q, *s);
	}
	sbuf_addc(&q, '\'');
	return q.buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct where *w, *w2;
	struct sbuf sql = SBUF_INIT, sql2 = SBUF_INIT;
	char why[512], *text;
	const char *row;
	int r;

	if (size == 0)
		return 0;
	row = rows[data[0] % (sizeof(rows) / sizeof(rows[0]))];
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if ((w = where_parse(text, why, sizeof(why))) == NULL) {
		if (why[0] == '\0')
			__builtin_trap();
		free(text);
		return 0;
	}
	r = where_match(w, get, (void *)row);
	if (where_sql(w, &sql, quote, NULL) == -1)
		__builtin_trap();
	/* a keyword spelled as a column name could not be read back;
	 * everything the parser accepted renders as something it accepts */
	if ((w2 = where_parse(sql.buf, why, sizeof(why))) == NULL)
		__builtin_trap();
	if (where_sql(w2, &sql2, quote, NULL) == -1 ||
	    strcmp(sql.buf, sql2.buf) != 0 ||
	    where_match(w2, get, (void *)row) != r)
		__builtin_trap();
	where_free(w);
	where_free(w2);
	sbuf_release(&sql);
	sbuf_release(&sql2);
	free(text);
	return 0;
}
