/*
 * copy-decode - turn rows as a source returns them into the loader's copy
 * row frames, through the loader's own builders (wave_row_frame for
 * PostgreSQL, mysrc_row_frame for MySQL and MariaDB), for the golden tests
 * at the loader's boundary (tests/golden/loader). The same code the
 * loader runs on a live COPY or SELECT, without a server.
 *
 *   copy-decode NAME.table < NAME.rows > NAME.out
 *
 * NAME.table, one item per line:
 *   source postgres|mysql
 *   table SCHEMA.TABLE VERSION   the rows' relation and their "v"
 *   key COL...                   the key rows carry (none: none)
 *   column NAME TYPOID           PostgreSQL: a copied column and its type
 *   column NAME DATA_TYPE COLUMN_TYPE [CHARSET]
 *                                MySQL: as information_schema declares it
 *   # ...                        a comment
 * NAME.rows: one row a line. PostgreSQL: COPY's text format (fields
 * separated by tabs, \N for NULL, backslash escapes), parsed by the
 * loader's copy_split; a row that does not parse prints "error 75:
 * MESSAGE" and ends the run with 75, as the loader would. MySQL: the
 * bytes the text protocol returned, fields separated by tabs, \N for
 * NULL, and \t, \n, \\ and \xHH for the bytes a line cannot hold (a
 * binary value may hold a NUL, which COPY's text never does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../loader/loader.h"
#include "mysql/mycat.h"
#include "mysql/myval.h"
#include "msg.h"
#include "p2o.h"
#include "sbuf.h"
#include "spec.h"
#include "xio.h"

#define MAX_COLS	64

static int
hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* a MySQL rows line into its fields, unescaped in place; -1 bad */
static int
my_split(char *row, size_t len, struct copy_field *f, int nf)
{
	char *p = row, *end = row + len, *o;
	int i;

	if (len > 0 && end[-1] == '\n')
		end--;
	for (i = 0; i < nf; i++) {
		if (end - p >= 2 && p[0] == '\\' && p[1] == 'N' &&
		    (end - p == 2 || p[2] == '\t')) {
			f[i] = (struct copy_field){ NULL, 0 };
			p += 2;
		} else {
			f[i].p = o = p;
			while (p < end && *p != '\t') {
				if (*p != '\\' || p + 1 >= end)
					*o++ = *p++;
				else if (p[1] == 't' || p[1] == 'n' ||
				    p[1] == '\\') {
					*o++ = p[1] == 't' ? '\t' :
					    p[1] == 'n' ? '\n' : '\\';
					p += 2;
				} else if (p[1] == 'x' && p + 3 < end &&
				    hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
					*o++ = (char)(hexval(p[2]) << 4 |
					    hexval(p[3]));
					p += 4;
				} else
					return -1;
			}
			f[i].n = (size_t)(o - f[i].p);
		}
		if (i < nf - 1 && (p >= end || *p++ != '\t'))
			return -1;
	}
	return p == end ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct ld_table pt;
	struct ld_column pcols[MAX_COLS] = { 0 };
	struct ld_key pkeys[MAX_COLS];
	struct my_table mt;
	struct my_col mcols[MAX_COLS];
	int mkeys[MAX_COLS];
	struct copy_field f[MAX_COLS];
	const char *vals[MAX_COLS];
	unsigned long lens[MAX_COLS];
	char *keynames[MAX_COLS], *line = NULL, *w[SPEC_WORDS], err[256];
	struct p2o_err e;
	struct sbuf out = SBUF_INIT, j = SBUF_INIT;
	struct msg_in in = { 0, 0 };
	unsigned long long v = 0;
	size_t cap = 0;
	ssize_t len;
	FILE *tf;
	int mysql = 0, ncols = 0, nkeys = 0, n, i, k, lineno = 0, rc = 0;

	if (argc != 2 || (tf = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "usage: copy-decode NAME.table < NAME.rows\n");
		return 64;
	}
	memset(&pt, 0, sizeof(pt));
	memset(&mt, 0, sizeof(mt));
	while ((n = spec_next(tf, &line, &cap, w)) > 0) {
		if (strcmp(w[0], "source") == 0 && n == 2)
			mysql = strcmp(w[1], "mysql") == 0;
		else if (strcmp(w[0], "table") == 0 && n == 3) {
			pt.rel = mt.rel = xstrdup(w[1]);
			v = strtoull(w[2], NULL, 10);
		} else if (strcmp(w[0], "key") == 0)
			for (i = 1; i < n && nkeys < MAX_COLS; i++)
				keynames[nkeys++] = xstrdup(w[i]);
		else if (strcmp(w[0], "column") == 0 && ncols < MAX_COLS &&
		    !mysql && n == 3) {
			pcols[ncols].name = xstrdup(w[1]);
			pcols[ncols++].typoid = (uint32_t)strtoul(w[2], NULL,
			    10);
		} else if (strcmp(w[0], "column") == 0 && ncols < MAX_COLS &&
		    mysql && (n == 4 || n == 5)) {
			if (my_col_init(&mcols[ncols++], w[1], w[2], w[3],
			    n == 5 ? w[4] : NULL, 0, &e) == -1) {
				fprintf(stderr, "%s: %s\n", argv[1], e.msg);
				return 2;
			}
		} else {
			fprintf(stderr, "%s: not a source, table, key or "
			    "column line\n", argv[1]);
			return 2;
		}
	}
	fclose(tf);
	for (k = 0; k < nkeys; k++) {
		pkeys[k] = (struct ld_key){ keynames[k], keynames[k], "" };
		for (i = 0; i < ncols; i++)
			if (strcmp(mysql ? mcols[i].name : pcols[i].name,
			    keynames[k]) == 0)
				mkeys[k] = i;
	}
	pt.cols = pcols;
	pt.ncols = ncols;
	pt.keys = pkeys;
	pt.nkeys = nkeys;
	mt.cols = mcols;
	mt.ncols = ncols;
	mt.keys = mkeys;
	mt.nkeys = nkeys;
	/* as table_describe does: the rows go through the table's template */
	if (!mysql)
		table_template(&pt);

	while ((len = getline(&line, &cap, stdin)) != -1) {
		lineno++;
		if (mysql && my_split(line, (size_t)len, f, ncols) == -1) {
			fprintf(stderr, "row %d: not a row of %d fields\n",
			    lineno, ncols);
			rc = 2;
			break;
		}
		if (!mysql && copy_split(line, (size_t)len, f, ncols, err,
		    sizeof(err)) == -1) {
			rc = P2O_EXIT_TEMPFAIL;
			break;
		}
		if (!mysql) {
			wave_row_frame(&out, &in, &pt, v, f, NULL);
			continue;
		}
		for (i = 0; i < ncols; i++) {
			vals[i] = f[i].p;
			lens[i] = (unsigned long)f[i].n;
		}
		mysrc_row_frame(&out, &j, &mt, v, vals, lens);
	}
	/* the frames before a refusal, then the refusal, as the loader */
	if (out.len > 0 && write_in_full(1, out.buf, out.len) == -1)
		rc = 1;
	if (rc == P2O_EXIT_TEMPFAIL)
		printf("error %d: row %d: %s\n", rc, lineno, err);
	for (i = 0; i < ncols; i++)
		if (mysql)
			my_col_release(&mcols[i]);
		else
			free(pcols[i].name);
	for (k = 0; k < nkeys; k++)
		free(keynames[k]);
	if (pt.tpl != NULL) {
		msg_rowtpl_release(pt.tpl);
		free(pt.tpl);
	}
	free(pt.rel);
	free(line);
	sbuf_release(&out);
	sbuf_release(&j);
	return rc;
}
