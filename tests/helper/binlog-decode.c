/*
 * binlog-decode - feed a binlog file through capture-mysql's assembler and
 * print the event frames it makes, for the golden tests at the capture's
 * boundary (tests/golden/capture-mysql). The same code the capture runs
 * on a live dump, with the catalogue read from a file instead of
 * information_schema.
 *
 *   binlog-decode NAME.tables BINLOG > NAME.out
 *
 * NAME.tables, one item per line:
 *   file NAME                  the binlog file's name (its number counts)
 *   table DB.TABLE key COL...  a configured table and the key its rows
 *                              are filed by (none: an append_only table)
 *   column NAME DATA_TYPE COLUMN_TYPE [CHARSET]
 *                              the table's next column, as
 *                              information_schema declares it
 *   # ...                      a comment
 * Every event from the start of the file is decoded; after the last, a
 * bare pos frame when the log moved past the last frame with a position
 * (the capture sends one at most once a second). An event the assembler
 * refuses prints "error EXIT: MESSAGE" and ends the run with that code,
 * as the capture would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../capture-mysql/binlog.h"
#include "sbuf.h"
#include "spec.h"
#include "xio.h"

#define MAX_TABLES	8
#define MAX_COLS	64

static void
on_warn(const char *msg)
{
	fprintf(stderr, "warn: %s\n", msg);
}

static int
bad(const char *path, int line, const char *what)
{
	fprintf(stderr, "%s:%d: %s\n", path, line, what);
	return -1;
}

/* the catalogue file into tables[]; the binlog file's name into file */
static int
read_tables(const char *path, struct my_table *tables, int *ntables,
    char *file, size_t filelen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *w[SPEC_WORDS], *p, *key[MAX_COLS];
	struct p2o_err err;
	size_t cap = 0;
	struct my_table *tb = NULL;
	int lineno = 0, n, i, k, nkey = 0, rc = 0;

	if (f == NULL)
		return bad(path, 0, "cannot open");
	while (rc == 0 && (n = spec_next(f, &line, &cap, w)) > 0) {
		lineno++;
		if (strcmp(w[0], "file") == 0 && n == 2)
			snprintf(file, filelen, "%s", w[1]);
		else if (strcmp(w[0], "table") == 0 && n >= 3 &&
		    strcmp(w[2], "key") == 0 && *ntables < MAX_TABLES &&
		    (p = strchr(w[1], '.')) != NULL) {
			tb = &tables[(*ntables)++];
			memset(tb, 0, sizeof(*tb));
			tb->rel = xstrdup(w[1]);
			tb->db = xstrndup(w[1], (size_t)(p - w[1]));
			tb->name = xstrdup(p + 1);
			tb->cols = xcalloc(MAX_COLS, sizeof(*tb->cols));
			tb->keys = xcalloc(MAX_COLS, sizeof(int));
			for (nkey = 0, i = 3; i < n; i++)
				key[nkey++] = xstrdup(w[i]);
			tb->nkeys = 0;
		} else if (strcmp(w[0], "column") == 0 && (n == 4 || n == 5) &&
		    tb != NULL && tb->ncols < MAX_COLS) {
			if (my_col_init(&tb->cols[tb->ncols], w[1], w[2], w[3],
			    n == 5 ? w[4] : NULL, 0, &err) == -1)
				rc = bad(path, lineno, err.msg);
			for (k = 0; k < nkey; k++)
				if (strcmp(key[k], w[1]) == 0)
					tb->keys[k] = tb->ncols;
			tb->ncols++;
			if (tb->nkeys < nkey)
				tb->nkeys = nkey;
		} else
			rc = bad(path, lineno, "not a file, table or column "
			    "line");
	}
	for (k = 0; k < nkey; k++)
		free(key[k]);
	free(line);
	fclose(f);
	return rc;
}

int
main(int argc, char **argv)
{
	struct my_table tables[MAX_TABLES];
	struct my_catalog cat = { NULL, NULL };
	struct txn t;
	struct sbuf out = SBUF_INIT;
	struct bl_header h;
	char file[MYPOS_FILE_MAX] = "binlog.000001";
	unsigned char *bin;
	size_t len, off = 4;
	FILE *f;
	int ntables = 0, i, rc = 0;
	long sz;

	if (argc != 3) {
		fprintf(stderr, "usage: binlog-decode NAME.tables BINLOG\n");
		return 64;
	}
	if (read_tables(argv[1], tables, &ntables, file, sizeof(file)) == -1)
		return 2;
	if ((f = fopen(argv[2], "rb")) == NULL || fseek(f, 0, SEEK_END) ||
	    (sz = ftell(f)) < 4 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "%s: cannot read\n", argv[2]);
		return 2;
	}
	len = (size_t)sz;
	bin = xmalloc(len);
	if (fread(bin, 1, len, f) != len || memcmp(bin, BL_MAGIC, 4) != 0) {
		fprintf(stderr, "%s: not a binlog file\n", argv[2]);
		return 2;
	}
	fclose(f);

	txn_init(&t, tables, ntables, cat);
	t.warn = on_warn;
	/* a fresh start at the file's head: every event is emitted */
	txn_start(&t, NULL, 0, file, 4);
	while (off + BL_HEADER_LEN <= len) {
		if (bl_header_parse(bin + off, len - off, &h) == -1 ||
		    h.size > len - off) {
			fprintf(stderr, "%s: a torn event at %zu\n", argv[2],
			    off);
			rc = 2;
			break;
		}
		if (txn_event(&t, bin + off, h.size, &out) == -1) {
			rc = t.err.code;
			break;
		}
		off += h.size;
	}
	if (rc == 0 && txn_pos_owed(&t))
		txn_put_pos(&t, &out);
	/* what was made before a refusal comes first, as on a live dump */
	if (out.len > 0 && write_in_full(1, out.buf, out.len) == -1)
		rc = 1;
	if (rc == t.err.code && rc != 0)
		printf("error %d: %s\n", t.err.code, t.err.msg);
	txn_release(&t);
	for (i = 0; i < ntables; i++)
		my_table_release(&tables[i]);
	sbuf_release(&out);
	free(bin);
	return rc;
}
