/*
 * source_cat.c - what init does with any source's catalogue: the one rule
 * resolving the table names an operator gave, and the field kinds both
 * kinds of source share (a dynamic mapping guesses `long` for a number and
 * then refuses 18446744073709551615, and `text` for "12.50", so that a
 * range query on money compares words). Pure: no I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "source_cat.h"

void
source_cat_init(struct source_cat *c)
{
	memset(c, 0, sizeof(*c));
}

void
source_cat_release(struct source_cat *c)
{
	struct source_cat_table *t;
	int i, k;

	for (i = 0; i < c->n; i++) {
		t = &c->t[i];
		for (k = 0; k < t->nfields; k++) {
			free(t->colnames[k]);
			free(t->notes[k]);
		}
		free(t->colnames);
		free(t->notes);
		free(t->fields);
		free(t->schema);
		free(t->name);
	}
	free(c->t);
	free(c->chosen);
	memset(c, 0, sizeof(*c));
}

struct source_cat_table *
source_cat_add(struct source_cat *c, const char *schema, const char *name,
    int has_key)
{
	struct source_cat_table *t;

	c->t = xrealloc(c->t, ((size_t)c->n + 1) * sizeof(*c->t));
	t = &c->t[c->n++];
	memset(t, 0, sizeof(*t));
	t->schema = xstrdup(schema);
	t->name = xstrdup(name);
	t->has_key = has_key;
	return t;
}

int
source_cat_choose(struct source_cat *c, const char *const *want, int n,
    char *why, size_t whylen)
{
	const char *name, *dot;
	size_t slen;
	int w, i, hit;

	free(c->chosen);
	c->chosen = xcalloc((size_t)(n ? n : c->n) + 1, sizeof(int));
	c->nchosen = 0;
	for (w = 0; w < (n ? n : c->n); w++) {
		if (n == 0) {
			c->chosen[c->nchosen++] = w;
			continue;
		}
		name = want[w];
		dot = strchr(name, '.');
		for (hit = -1, i = 0; i < c->n; i++) {
			slen = strlen(c->t[i].schema);
			if (dot ? (size_t)(dot - name) == slen &&
			    strncmp(name, c->t[i].schema, slen) == 0 &&
			    strcmp(dot + 1, c->t[i].name) == 0 :
			    strcmp(name, c->t[i].name) == 0) {
				if (hit >= 0) {
					snprintf(why, whylen, "table '%s' is in "
					    "several schemas: name one, e.g. "
					    "'%s.%s'", name, c->t[i].schema,
					    name);
					return 1;
				}
				hit = i;
			}
		}
		if (hit < 0) {
			snprintf(why, whylen, "table '%s' is not one the role "
			    "can read; the eligible tables:", name);
			return 1;
		}
		c->chosen[c->nchosen++] = hit;
	}
	return 0;
}

void
source_cat_field(struct source_cat_table *t, int i, const char *col,
    enum target_field_kind kind, long long factor, const char *note)
{
	if (i >= t->nfields) {
		t->fields = xrealloc(t->fields, (size_t)(i + 1) *
		    sizeof(*t->fields));
		t->colnames = xrealloc(t->colnames, (size_t)(i + 1) *
		    sizeof(char *));
		t->notes = xrealloc(t->notes, (size_t)(i + 1) * sizeof(char *));
		memset(&t->fields[t->nfields], 0, (size_t)(i + 1 - t->nfields) *
		    sizeof(*t->fields));
		memset(&t->colnames[t->nfields], 0, (size_t)(i + 1 -
		    t->nfields) * sizeof(char *));
		memset(&t->notes[t->nfields], 0, (size_t)(i + 1 - t->nfields) *
		    sizeof(char *));
		t->nfields = i + 1;
	}
	free(t->colnames[i]);
	free(t->notes[i]);
	t->colnames[i] = xstrdup(col);
	t->notes[i] = xstrdup(note ? note : "");
	t->fields[i].name = t->colnames[i];
	t->fields[i].kind = kind;
	t->fields[i].factor = factor;
}

int
source_cat_typmods(const char *type, int *a, int *b)
{
	const char *p = strchr(type, '(');

	if (p == NULL)
		return 0;
	return sscanf(p, "(%d,%d)", a, b);
}

/* scaled_float keeps value * factor in a long: 18 digits at most */
void
source_cat_decimal(int prec, int scale, int known,
    const struct mapping_opts *o, struct target_field *out, char *note,
    size_t notelen)
{
	long long factor = 1;
	int i;

	if (!o->decimal_scaled) {
		/* the digits as written: exact, sortable as text only */
		out->kind = TF_KEYWORD;
		return;
	}
	if (!known || prec > 18) {
		snprintf(note, notelen, "kept as keyword: %s does not fit a "
		    "scaled_float (value x 10^scale must fit 64 bits)",
		    known ? "its precision" : "an unconstrained numeric");
		out->kind = TF_KEYWORD;
		return;
	}
	for (i = 0; i < scale; i++)
		factor *= 10;
	out->kind = TF_SCALED;
	out->factor = factor;
}

/* a timestamp's fraction digits decide between milliseconds and
 * nanoseconds: date keeps three */
enum target_field_kind
source_cat_timestamp(int fsp)
{
	return fsp > 3 ? TF_DATE_NANOS : TF_DATE;
}

enum target_field_kind
source_cat_json(const struct mapping_opts *o)
{
	return o->json_flat ? TF_FLAT : TF_OBJECT;
}
