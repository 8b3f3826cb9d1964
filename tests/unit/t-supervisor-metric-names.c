/*
 * t-supervisor-metric-names - the names of metrics written outside the
 * code are the ones the supervisor exports: every metric named by
 * examples/grafana-dashboard.json and examples/alerts.yaml exists (a
 * dashboard panel or an alert on a name that is not exported is silently
 * empty, and an alert that never fires looks like a healthy pipeline),
 * and the list in docs/metrics.md is exactly the set
 * /metrics carries, no more, no fewer. The exported set is read from what
 * sv_metrics_render writes: every metric has its # TYPE line even before
 * it has a sample. Run from the top of the tree (prove does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "../../supervisor/supervisor.h"
#include "tap.h"

#define MAXN	256

struct names {
	char	*v[MAXN];
	int	 n;
};

static int
has(const struct names *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return 1;
	return 0;
}

static void
add(struct names *s, const char *p, size_t n)
{
	char *v;

	if (s->n >= MAXN)
		return;
	v = strndup(p, n);
	if (has(s, v)) {
		free(v);
		return;
	}
	s->v[s->n++] = v;
}

static void
release(struct names *s)
{
	while (s->n > 0)
		free(s->v[--s->n]);
}

/* every pg2osync_... word in text[0, len) */
static void
words(struct names *s, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *q;

	while (p < end && (p = memmem(p, (size_t)(end - p), "pg2osync_",
	    9)) != NULL) {
		/* .pg2osync_meta is an index, not a metric */
		if (p > text && (p[-1] == '.' || p[-1] == '_' ||
		    (p[-1] >= 'a' && p[-1] <= 'z'))) {
			p += 9;
			continue;
		}
		for (q = p + 9; q < end && ((*q >= 'a' && *q <= 'z') ||
		    *q == '_' || (*q >= '0' && *q <= '9')); q++)
			;
		add(s, p, (size_t)(q - p));
		p = q;
	}
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* the exported metrics, and which are histograms */
static void
exported(struct names *all, struct names *hists)
{
	static struct sv_metrics m;
	struct sbuf out = SBUF_INIT;
	const char *p, *sp;

	sv_metrics_init(&m);
	m.source = "t";
	sv_metrics_render(&m, &out);
	for (p = out.buf; p != NULL && *p; p = strchr(p, '\n') ?
	    strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, "# TYPE ", 7) != 0)
			continue;
		sp = strchr(p + 7, ' ');
		add(all, p + 7, (size_t)(sp - (p + 7)));
		if (strncmp(sp + 1, "histogram", 9) == 0)
			add(hists, p + 7, (size_t)(sp - (p + 7)));
	}
	sbuf_release(&out);
}

/* name as a metric: itself, or a histogram's _bucket, _sum or _count */
static int
is_exported(const struct names *all, const struct names *hists,
    const char *name)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	char base[200];
	size_t n = strlen(name), k, i;

	if (has(all, name))
		return 1;
	for (i = 0; i < 3; i++) {
		k = strlen(sfx[i]);
		if (n > k && n - k < sizeof(base) &&
		    strcmp(name + n - k, sfx[i]) == 0) {
			memcpy(base, name, n - k);
			base[n - k] = '\0';
			if (has(hists, base))
				return 1;
		}
	}
	return 0;
}

static void
check_file(const struct names *all, const struct names *hists,
    const char *path)
{
	struct names used = { 0 };
	size_t len;
	char *text = slurp(path, &len);
	int i, bad = 0;

	if (!ok(text != NULL, "%s is there", path))
		return;
	words(&used, text, len);
	ok(used.n > 5, "%s names %d metrics", path, used.n);
	for (i = 0; i < used.n; i++)
		if (!is_exported(all, hists, used.v[i])) {
			diag("%s names '%s', which the supervisor does not "
			    "export", path, used.v[i]);
			bad++;
		}
	ok(bad == 0, "every metric %s names is exported (%d not)", path, bad);
	release(&used);
	free(text);
}

static void
check_metrics_doc(const struct names *all)
{
	struct names listed = { 0 };
	const char *start;
	size_t len;
	char *text = slurp("docs/metrics.md", &len);
	int i, missing = 0, extra = 0;

	if (!ok(text != NULL, "docs/metrics.md is there"))
		return;
	start = strstr(text, "\n| metric |");
	if (!ok(start != NULL, "docs/metrics.md has the table of metrics")) {
		free(text);
		return;
	}
	words(&listed, start, strlen(start));
	for (i = 0; i < all->n; i++)
		if (!has(&listed, all->v[i])) {
			diag("docs/metrics.md does not list '%s'", all->v[i]);
			missing++;
		}
	for (i = 0; i < listed.n; i++)
		if (!has(all, listed.v[i])) {
			diag("docs/metrics.md lists '%s', which the supervisor "
			    "does not export", listed.v[i]);
			extra++;
		}
	ok(missing == 0, "docs/metrics.md lists every exported metric (%d of "
	    "%d missing)", missing, all->n);
	ok(extra == 0, "docs/metrics.md lists no metric that is not exported "
	    "(%d)", extra);
	release(&listed);
	free(text);
}

int
main(void)
{
	struct names all = { 0 }, hists = { 0 };

	exported(&all, &hists);
	ok(all.n > 30, "the supervisor exports %d metrics", all.n);
	ok(has(&all, "pg2osync_config_reloads_total") &&
	    has(&hists, "pg2osync_commit_to_indexed_seconds"),
	    "among them the reloads counter and the latency histogram");
	check_file(&all, &hists, "examples/grafana-dashboard.json");
	check_file(&all, &hists, "examples/alerts.yaml");
	check_metrics_doc(&all);
	/* a name the check must refuse */
	ok(!is_exported(&all, &hists, "pg2osync_no_such_metric") &&
	    !is_exported(&all, &hists, "pg2osync_up_bucket"),
	    "a name that is not exported is caught");
	release(&all);
	release(&hists);
	return done_testing();
}
