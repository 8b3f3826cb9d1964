/*
 * config-keys - every key the configuration's tables declare, one path a
 * line, walked from the tables themselves (lib/config*.c): what the man
 * page and docs/config.md are checked against
 * (tests/integration/116-cli-install.t, tests/helper/doc-keys.py; the
 * guides' keys in 154-docs, tests/helper/docs-check.py).
 *
 *   source
 *   source.url
 *   sync.*
 *   sync.*.transform.*.redact
 *   sync.*.children[]
 *   sync.*.children[].table
 *
 * A name the user chooses (a sync section, a column) is '*', a list
 * element '[]'; each is a line of its own as well. A value with two
 * spellings (transform's 'hash' or '{redact: ...}') lists the keys of
 * both. A table met again inside itself (a child's 'children', there
 * only to be refused by name) is listed, not entered.
 */
#include <stdio.h>
#include <string.h>

#include "config_sections.h"
#include "sbuf.h"

#define DEPTH_MAX	8

static const struct cs_node *stack[DEPTH_MAX];
static int depth;

static void	value(const struct cs_node *, struct sbuf *);

static void
keys(const struct cs_node *table, struct sbuf *path)
{
	const struct cs_node *k;
	size_t len;
	int i;

	for (i = 0; i < depth; i++)
		if (stack[i] == table)
			return;
	if (depth == DEPTH_MAX) {
		fprintf(stderr, "config-keys: tables nest deeper than %d\n",
		    DEPTH_MAX);
		return;
	}
	stack[depth++] = table;
	for (k = table; k->name; k++) {
		len = path->len;
		if (len > 0)
			sbuf_addc(path, '.');
		sbuf_adds(path, k->name);
		printf("%s\n", path->buf);
		value(k, path);
		path->len = len;
		path->buf[len] = '\0';
	}
	depth--;
}

/* what lies under key node s, whose path is in path */
static void
value(const struct cs_node *s, struct sbuf *path)
{
	size_t len = path->len;

	switch (s->kind) {
	case CS_STRUCT:
		keys(s->keys, path);
		break;
	case CS_MAP:
	case CS_LIST:
		/* the element itself is a path too: sync.*, columns[] */
		sbuf_adds(path, s->kind == CS_MAP ? ".*" : "[]");
		printf("%s\n", path->buf);
		value(s->elem, path);
		break;
	default:
		break;
	}
	path->len = len;
	path->buf[len] = '\0';
	if (s->alt != NULL)
		value(s->alt, path);
}

int
main(int argc, char **argv)
{
	struct sbuf path = SBUF_INIT;

	if (argc != 1) {
		fprintf(stderr, "usage: config-keys\n");
		return 64;
	}
	sbuf_add(&path, "", 0);
	keys(config_root.keys, &path);
	sbuf_release(&path);
	return fflush(stdout) == 0 ? 0 : 1;
}
