/*
 * mysql-fixtures.h - reading tests/fixtures/mysql for the capture-mysql
 * unit tests: whole files, hex files (one byte string per line), the
 * expected values (JSON, through jansson) and a table shape built the
 * way the catalogue builds one. Header-only, like tap.h.
 */
#ifndef MYSQL_FIXTURES_H
#define MYSQL_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hex.h"
#include "sbuf.h"
#include "../../capture-mysql/binlog.h"

static inline const char *
fx_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("P2O_MYSQL_FIXTURES");

	snprintf(buf, len, "%s/%s", dir ? dir : "tests/fixtures/mysql", name);
	return buf;
}

/* a whole file (a .gz through gzip -dc); NULL if unreadable */
static inline unsigned char *
fx_read(const char *name, size_t *len)
{
	char path[512], cmd[600];
	struct sbuf b = SBUF_INIT;
	char chunk[65536];
	size_t n;
	FILE *f;
	int gz = strlen(name) > 3 && strcmp(name + strlen(name) - 3,
	    ".gz") == 0;

	fx_path(name, path, sizeof(path));
	if (gz) {
		snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", path);
		f = popen(cmd, "r");
	} else
		f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sbuf_add(&b, chunk, n);
	if (gz ? pclose(f) != 0 : fclose(f) != 0) {
		sbuf_release(&b);
		return NULL;
	}
	*len = b.len;
	return (unsigned char *)b.buf;
}

struct fx_hex {
	int	 n;
	unsigned char *b[64];
	size_t	 len[64];
};

/* hex text -> bytes; -1 if not hex */
static inline long
fx_unhex(const char *s, size_t n, unsigned char *out)
{
	size_t i;

	if (n % 2)
		return -1;
	for (i = 0; i < n; i += 2) {
		int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(n / 2);
}

static inline int
fx_read_hex(const char *name, struct fx_hex *h)
{
	size_t len = 0, i = 0, e;
	unsigned char *t = fx_read(name, &len);

	memset(h, 0, sizeof(*h));
	if (t == NULL)
		return -1;
	while (i < len) {
		for (e = i; e < len && t[e] != '\n'; e++)
			;
		if (e > i && t[i] != '#' && h->n < 64) {
			h->b[h->n] = xmalloc((e - i) / 2 + 1);
			if (fx_unhex((char *)t + i, e - i, h->b[h->n]) < 0) {
				free(t);
				return -1;
			}
			h->len[h->n++] = (e - i) / 2;
		}
		i = e + 1;
	}
	free(t);
	return 0;
}

static inline void
fx_hex_release(struct fx_hex *h)
{
	int i;

	for (i = 0; i < h->n; i++)
		free(h->b[i]);
}

static inline json_t *
fx_json(const char *name)
{
	char path[512];
	json_error_t e;

	return json_load_file(fx_path(name, path, sizeof(path)), 0, &e);
}

/* entries[i] of an .expected.json, then a member of it */
static inline json_t *
fx_entry(json_t *doc, int i, const char *part)
{
	json_t *e = json_array_get(json_object_get(doc, "entries"), i);

	return e ? json_object_get(e, part) : NULL;
}

/* a column spec: name, data_type, column_type, charset (NULL none) */
struct fx_col {
	const char *name, *data_type, *column_type, *charset;
};

static inline void
fx_table(struct my_table *tb, const char *db, const char *name,
    const struct fx_col *cols, int ncols, const int *keys, int nkeys)
{
	struct p2o_err err;
	int i;

	memset(tb, 0, sizeof(*tb));
	tb->db = xstrdup(db);
	tb->name = xstrdup(name);
	tb->rel = xmalloc(strlen(db) + strlen(name) + 2);
	sprintf(tb->rel, "%s.%s", db, name);
	tb->ncols = ncols;
	tb->cols = xcalloc(ncols, sizeof(*tb->cols));
	for (i = 0; i < ncols; i++)
		if (my_col_init(&tb->cols[i], cols[i].name, cols[i].data_type,
		    cols[i].column_type, cols[i].charset, 0, &err) == -1)
			fprintf(stderr, "fixture column: %s\n", err.msg);
	tb->nkeys = nkeys;
	tb->keys = xcalloc(nkeys ? nkeys : 1, sizeof(int));
	memcpy(tb->keys, keys, nkeys * sizeof(int));
}

#endif
