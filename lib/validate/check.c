/*
 * validate/check.c - validate's report: one line per check, a failure with what
 * fixes it, every check run whatever failed before it (a check that
 * cannot run because another failed says so as skipped), and one closing
 * line. Owns the words "all checks passed", and the list of columns a
 * section names, which every source checks against its table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "validate/check.h"
#include "p2o.h"
#include "source_ops.h"
#include "where.h"

const char *
check_mb(int64_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f MB", (double)bytes / 1e6);
	return buf;
}

void
check_init(struct check_report *r, FILE *out)
{
	r->passed = r->failed = r->skipped = 0;
	r->out = out;
	r->applies = NULL;
}

static void
line(struct check_report *r, const char *tag, const char *fmt, va_list ap)
{
	fprintf(r->out, "%-5s ", tag);
	vfprintf(r->out, fmt, ap);
	fputc('\n', r->out);
	fflush(r->out);
}

void
check_ok(struct check_report *r, const char *fmt, ...)
{
	va_list ap;

	r->passed++;
	va_start(ap, fmt);
	line(r, "ok", fmt, ap);
	va_end(ap);
}

void
check_fail(struct check_report *r, const char *fmt, ...)
{
	va_list ap;

	r->failed++;
	va_start(ap, fmt);
	line(r, "FAIL", fmt, ap);
	va_end(ap);
}

void
check_skip(struct check_report *r, const char *fmt, ...)
{
	va_list ap;

	r->skipped++;
	va_start(ap, fmt);
	line(r, "skip", fmt, ap);
	va_end(ap);
}

int
check_verdict(void *arg, const struct source_verdict *v)
{
	struct check_report *r = arg;
	const char *subject = v->subject ? v->subject : "";
	const char *sep = v->subject ? ": " : "";

	if (v->kind == SV_FAIL && v->apply && r->applies != NULL) {
		sbuf_addf(r->applies, "%s\n", v->remedy);
		check_ok(r, "the reload runs: %s", v->remedy);
	} else if (v->kind == SV_FAIL)
		check_fail(r, "%s%s%s", subject, sep, v->text);
	else
		check_ok(r, "%s%s%s", subject, sep, v->text);
	return 0;
}

int
check_end(struct check_report *r)
{
	if (r->failed == 0 && r->skipped == 0) {
		fprintf(r->out, "all checks passed\n");
		return P2O_EXIT_OK;
	}
	if (r->failed == 0) {
		fprintf(r->out, "%d checks passed, %d skipped\n", r->passed,
		    r->skipped);
		return P2O_EXIT_OK;
	}
	fprintf(r->out, "%d of %d checks failed%s\n", r->failed,
	    r->passed + r->failed, r->skipped ? " (some skipped)" : "");
	return CHECK_FAILED;
}

void
check_where(struct check_report *r, const struct sync_section *s, int rc,
    const char *why, const struct p2o_err *err)
{
	if (rc == 0)
		check_ok(r, "table '%s': 'sync.%s.where' compiles on the server",
		    s->rel, s->name);
	else if (rc == 1)
		check_fail(r, "table '%s': 'sync.%s.where' does not compile on "
		    "the server, which the initial load needs: %s", s->rel,
		    s->name, why);
	else
		check_fail(r, "table '%s': compiling 'sync.%s.where': %s",
		    s->rel, s->name, err->msg);
}

static int
add(struct named_col *v, int n, int max, const char *col, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].col, col) == 0)
			return n;
	if (n < max) {
		v[n].col = col;
		v[n].key = key;
		n++;
	}
	return n;
}

static int
add_tmpl(struct named_col *v, int n, int max, const struct tmpl *t,
    const char *key)
{
	int i;

	for (i = 0; i < t->nparts; i++)
		if (t->parts[i].column)
			n = add(v, n, max, t->parts[i].text, key);
	return n;
}

int
section_columns(const struct sync_section *s, struct named_col *v, int max)
{
	const struct sync_more *more = sync_more(s);
	int n = 0, i;

	for (i = 0; i < more->ncolumns; i++)
		n = add(v, n, max, more->columns[i], "columns");
	for (i = 0; i < more->nexclude_columns; i++)
		n = add(v, n, max, more->exclude_columns[i], "exclude_columns");
	for (i = 0; i < more->nprimary_key; i++)
		n = add(v, n, max, more->primary_key[i], "primary_key");
	if (more->routing)
		n = add(v, n, max, more->routing, "routing");
	for (i = 0; i < more->ntransforms; i++)
		n = add(v, n, max, more->transforms[i].name, "transform");
	for (i = 0; i < more->nfields; i++)
		n = add(v, n, max, more->fields[i].name, "fields");
	for (i = 0; more->where_expr && i < where_ncolumns(more->where_expr);
	    i++)
		n = add(v, n, max, where_column(more->where_expr, i), "where");
	if (s->id)
		n = add_tmpl(v, n, max, &s->id_t, "id");
	if (s->index_templated)
		n = add_tmpl(v, n, max, &s->index_t, "index");
	if (s->has_fan_out)
		n = add(v, n, max, more->fan_out.column, "fan_out.column");
	if (s->has_join && more->join.column)
		n = add(v, n, max, more->join.column, "join.column");
	return n;
}

int
section_first_of_index(const struct config *cfg, int i)
{
	int k;

	for (k = 0; k < i; k++)
		if (strcmp(cfg->syncs[k].index, cfg->syncs[i].index) == 0)
			return 0;
	return 1;
}
