/*
 * template.c - a section's templates parsed into literal and column parts,
 * and the globs a templated index claims. Owns the template syntax; knows
 * no row and renders nothing (shaper/id.c does). Never logs, never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "template.h"

static void
add_part(struct tmpl *t, const char *s, size_t n, int column)
{
	struct tmpl_part *p;

	/* two literal runs in a row (around "{{") are one part */
	if (!column && t->nparts > 0 && !t->parts[t->nparts - 1].column) {
		p = &t->parts[t->nparts - 1];
		p->text = xrealloc(p->text, strlen(p->text) + n + 1);
		strncat(p->text, s, n);
		t->nliteral += (int)n;
		return;
	}
	t->parts = xrealloc(t->parts, (size_t)(t->nparts + 1) *
	    sizeof(*t->parts));
	p = &t->parts[t->nparts++];
	p->text = xstrndup(s, n);
	p->column = column;
	if (column)
		t->ncolumns++;
	else
		t->nliteral += (int)n;
}

int
tmpl_parse(const char *s, struct tmpl *t, char *why, size_t len)
{
	const char *p = s, *run = s, *close;

	memset(t, 0, sizeof(*t));
	while (*p) {
		if (*p == '}') {
			if (p[1] != '}') {
				snprintf(why, len, "has a '}' without its '{' "
				    "(write '}}' for a literal brace)");
				goto fail;
			}
			add_part(t, run, (size_t)(p - run) + 1, 0);
			p += 2;
			run = p;
			continue;
		}
		if (*p != '{') {
			p++;
			continue;
		}
		if (p[1] == '{') {
			add_part(t, run, (size_t)(p - run) + 1, 0);
			p += 2;
			run = p;
			continue;
		}
		if (p > run)
			add_part(t, run, (size_t)(p - run), 0);
		if ((close = strchr(p + 1, '}')) == NULL) {
			snprintf(why, len, "has a '{' without its '}'");
			goto fail;
		}
		if (close == p + 1) {
			snprintf(why, len, "has an empty placeholder '{}'");
			goto fail;
		}
		if (memchr(p + 1, '{', (size_t)(close - p - 1)) != NULL) {
			snprintf(why, len, "has a '{' inside a placeholder");
			goto fail;
		}
		add_part(t, p + 1, (size_t)(close - p - 1), 1);
		p = close + 1;
		run = p;
	}
	if (p > run)
		add_part(t, run, (size_t)(p - run), 0);
	return 0;
fail:
	tmpl_release(t);
	return -1;
}

void
tmpl_release(struct tmpl *t)
{
	int i;

	for (i = 0; i < t->nparts; i++)
		free(t->parts[i].text);
	free(t->parts);
	memset(t, 0, sizeof(*t));
}

int
tmpl_names(const struct tmpl *t, const char *column)
{
	int i;

	for (i = 0; i < t->nparts; i++)
		if (t->parts[i].column && strcmp(t->parts[i].text, column) == 0)
			return 1;
	return 0;
}

char *
tmpl_glob(const struct tmpl *t)
{
	struct sbuf g = SBUF_INIT;
	int i;

	sbuf_add(&g, "", 0);
	for (i = 0; i < t->nparts; i++) {
		if (!t->parts[i].column)
			sbuf_adds(&g, t->parts[i].text);
		else if (g.len == 0 || g.buf[g.len - 1] != '*')
			sbuf_addc(&g, '*');
	}
	return g.buf;
}

int
glob_match(const char *pat, const char *s)
{
	const char *star = NULL, *retry = NULL;

	/* the classic backtrack to the last '*': linear enough for names */
	while (*s) {
		if (*pat == '*') {
			star = pat++;
			retry = s;
		} else if (*pat == *s) {
			pat++;
			s++;
		} else if (star) {
			pat = star + 1;
			s = ++retry;
		} else
			return 0;
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

/* a and b from their positions; memo[i][j] in a flat array, -1 unknown */
static int
overlap_at(const char *a, size_t i, size_t la, const char *b, size_t j,
    size_t lb, signed char *memo)
{
	signed char *m = &memo[i * (lb + 1) + j];
	int r;

	if (*m >= 0)
		return *m;
	if (i == la && j == lb)
		r = 1;
	else if (i < la && a[i] == '*')
		/* the star matches nothing, or one more byte of b */
		r = overlap_at(a, i + 1, la, b, j, lb, memo) ||
		    (j < lb && overlap_at(a, i, la, b, j + 1, lb, memo));
	else if (j < lb && b[j] == '*')
		r = overlap_at(a, i, la, b, j + 1, lb, memo) ||
		    (i < la && overlap_at(a, i + 1, la, b, j, lb, memo));
	else
		r = i < la && j < lb && a[i] == b[j] &&
		    overlap_at(a, i + 1, la, b, j + 1, lb, memo);
	*m = (signed char)r;
	return r;
}

int
glob_overlap(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	signed char *memo;
	int r;

	memo = xmalloc((la + 1) * (lb + 1));
	memset(memo, -1, (la + 1) * (lb + 1));
	r = overlap_at(a, 0, la, b, 0, lb, memo);
	free(memo);
	return r;
}
