/*
 * nest.c - the members a parent document's collections become (nest.h).
 * Never reads a source: rows arrive converted, so a value inside an array
 * is the same bytes as the same value at the top level.
 */
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "log.h"
#include "msg.h"
#include "nest.h"
#include "p2o.h"

int
nest_keeps(const struct sync_child *c, const char *col)
{
	return config_projects(c->columns, c->ncolumns, c->exclude_columns,
	    c->nexclude_columns, col);
}

const char *
nest_name(const struct sync_child *c, const char *col)
{
	int i;

	for (i = 0; i < c->nfields; i++)
		if (strcmp(c->fields[i].name, col) == 0)
			return c->fields[i].value;
	return col;
}

static void
member(struct sbuf *img, const char *name)
{
	msg_column(img, name, strlen(name));
}

/* flatten: the first row's members onto the parent, each column listed
 * (null without a row) */
static void
put_flat(struct sbuf *img, const struct sync_child *c, struct jspan row)
{
	struct jspan val;
	const char *name;
	int k;

	for (k = 0; k < c->ncolumns; k++) {
		name = nest_name(c, c->columns[k]);
		member(img, name);
		if (row.p != NULL && jobj_get(row, name, &val))
			sbuf_add(img, val.p, val.n);
		else
			sbuf_adds(img, "null");
	}
}

static void
tally(struct nest_dups *d, uint64_t total, const char *key)
{
	if (d == NULL || total < 2)
		return;
	d->parents++;
	if (total > d->worst) {
		d->worst = total;
		free(d->worst_key);
		d->worst_key = xstrdup(key);
	}
}

void
nest_put_child(struct sbuf *img, const struct sync_child *c,
    const char *rows, size_t len, size_t first, uint64_t nrows,
    uint64_t total, const char *key, const char *rel,
    struct nest_dups *dups)
{
	struct sbuf name = SBUF_INIT;
	struct jspan row;

	if (c->single) {
		/* the lowest key stands: the rows come in key order */
		tally(dups, total, key);
		row.p = nrows > 0 ? rows : NULL;
		row.n = nrows > 0 ? first : 0;
		if (c->flatten) {
			put_flat(img, c, row);
			return;
		}
		member(img, c->field);
		if (row.p != NULL)
			sbuf_add(img, row.p, row.n);
		else
			sbuf_adds(img, "null");
		return;
	}
	member(img, c->field);
	sbuf_addc(img, '[');
	sbuf_add(img, rows, len);
	sbuf_addc(img, ']');
	if (c->max_rows > 0) {
		sbuf_addf(&name, "%s_truncated", c->field);
		member(img, name.buf);
		sbuf_adds(img, total > nrows ? "true" : "false");
		sbuf_reset(&name);
		sbuf_addf(&name, "%s_total", c->field);
		member(img, name.buf);
		sbuf_add_u64(img, total);
	} else if (nrows > NEST_ARRAY_WARN)
		log_warnx("table '%s' parent %s: '%s' holds %llu rows, past "
		    "the target's nested limit of %d (index.mapping."
		    "nested_objects.limit); a nested mapping refuses it",
		    rel, key, c->field, (unsigned long long)nrows,
		    NEST_ARRAY_WARN);
	sbuf_release(&name);
}

void
nest_put_count(struct sbuf *img, const struct sync_aggregate *a, uint64_t n)
{
	member(img, a->field);
	sbuf_add_u64(img, n);
}

void
nest_dups_flush(struct nest_dups *d, const char *rel,
    const struct sync_child *c)
{
	if (d->parents > 0)
		log_warnx("table '%s': %llu parent%s matched more than one "
		    "row of '%s' ('%s' is single; the lowest key is "
		    "embedded); the worst, parent %s, matched %llu", rel,
		    (unsigned long long)d->parents, d->parents == 1 ? "" :
		    "s", c->rel, c->field, d->worst_key,
		    (unsigned long long)d->worst);
	free(d->worst_key);
	memset(d, 0, sizeof(*d));
}

int
nest_no_column(const struct sync_section *sec, const char *rel,
    const char *col, const char *what, struct p2o_err *e)
{
	return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': table '%s' has "
	    "no column '%s' (%s)", sec->name, rel, col, what);
}
