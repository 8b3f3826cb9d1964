/*
 * metrics.c - what /metrics reports: the stages' stats counters, summed
 * across pipeline restarts, the supervisor's own gauges and the commit ->
 * indexed latency histogram, rendered in the Prometheus text format
 * (version 0.0.4). Owns the mapping from stage counter names to metrics;
 * never touches a socket.
 */
#include <stdio.h>
#include <string.h>

#include "jscan.h"
#include "supervisor.h"

/* a tool name ending in '-' matches every tool it begins ("capture-") */
static const struct {
	const char *tool, *name;
	enum sv_counter c;
} stat_names[] = {
	{ "capture-",	"events_insert",	SVC_EV_INSERT },
	{ "capture-",	"events_update",	SVC_EV_UPDATE },
	{ "capture-",	"events_delete",	SVC_EV_DELETE },
	{ "capture-",	"events_truncate",	SVC_EV_TRUNCATE },
	{ "capture-",	"commits",		SVC_COMMITS },
	{ "capture-",	"drift",		SVC_DRIFT },
	{ "shaper",	"rows_in",		SVC_ROWS_IN },
	{ "shaper",	"ops_out",		SVC_OPS_OUT },
	{ "shaper",	"rows_unmapped",	SVC_ROWS_UNMAPPED },
	{ "writer",	"docs_indexed",		SVC_DOCS_INDEXED },
	{ "writer",	"docs_deleted",		SVC_DOCS_DELETED },
	{ "writer",	"batches",		SVC_BATCHES },
	{ "writer",	"bulk_bytes",		SVC_BULK_BYTES },
	{ "writer",	"sink_errors",		SVC_SINK_ERRORS },
	{ "writer",	"version_conflicts",	SVC_VERSION_CONFLICTS },
	{ "writer",	"toast_completions",	SVC_TOAST_COMPLETIONS },
	{ "writer",	"clears",		SVC_CLEARS },
};

/* upper bounds in seconds, 0.5 ms to 10 s */
static const double lat_bounds[SV_LAT_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10
};

void
sv_metrics_init(struct sv_metrics *m)
{
	memset(m, 0, sizeof(*m));
}

void
sv_metrics_restart(struct sv_metrics *m)
{
	int i;

	for (i = 0; i < SVC_N; i++) {
		m->base[i] += m->last[i];
		m->last[i] = 0;
	}
}

static int
tool_matches(const char *pattern, const char *tool)
{
	size_t n = strlen(pattern);

	if (n > 0 && pattern[n - 1] == '-')
		return strncmp(pattern, tool, n) == 0;
	return strcmp(pattern, tool) == 0;
}

int
sv_metrics_stats(struct sv_metrics *m, const char *tool,
    struct jspan counters)
{
	struct jiter it;
	struct jspan key, val;
	uint64_t v;
	size_t i;

	if (jspan_type(counters) != J_OBJECT ||
	    jiter_init(&it, counters) == -1)
		return -1;
	while (jiter_member(&it, &key, &val) == 1) {
		for (i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
			if (tool_matches(stat_names[i].tool, tool) &&
			    jstr_eq(key, stat_names[i].name))
				break;
		if (i == sizeof(stat_names) / sizeof(stat_names[0]) ||
		    jnum_u64(val, &v) == -1)
			continue;
		m->last[stat_names[i].c] = v;
	}
	return 0;
}

uint64_t
sv_metrics_total(const struct sv_metrics *m, enum sv_counter c)
{
	return m->base[c] + m->last[c];
}

void
sv_hist_observe(struct sv_hist *h, long long us)
{
	double s;
	int i;

	/* clocks of two hosts: a commit "after" its indexing is skew */
	if (us < 0)
		us = 0;
	s = (double)us / 1e6;
	for (i = 0; i < SV_LAT_BUCKETS; i++)
		if (s <= lat_bounds[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum += s;
}

static void
head(struct sbuf *out, const char *name, const char *type, const char *help)
{
	sbuf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
one(struct sbuf *out, const char *name, const char *type, const char *help,
    uint64_t v)
{
	head(out, name, type, help);
	sbuf_addf(out, "%s ", name);
	sbuf_add_u64(out, v);
	sbuf_addc(out, '\n');
}

static void
hist(struct sbuf *out, const char *name, const char *help,
    const struct sv_hist *h)
{
	uint64_t cum = 0;
	int i;

	head(out, name, "histogram", help);
	for (i = 0; i < SV_LAT_BUCKETS; i++) {
		cum += h->bucket[i];
		sbuf_addf(out, "%s_bucket{le=\"%g\"} ", name, lat_bounds[i]);
		sbuf_add_u64(out, cum);
		sbuf_addc(out, '\n');
	}
	sbuf_addf(out, "%s_bucket{le=\"+Inf\"} ", name);
	sbuf_add_u64(out, h->count);
	sbuf_addf(out, "\n%s_sum %.6f\n%s_count ", name, h->sum, name);
	sbuf_add_u64(out, h->count);
	sbuf_addc(out, '\n');
}

static void
labelled(struct sbuf *out, const char *name, const char *label,
    const char *value, uint64_t v)
{
	sbuf_addf(out, "%s{%s=\"%s\"} ", name, label, value);
	sbuf_add_u64(out, v);
	sbuf_addc(out, '\n');
}

void
sv_metrics_render(const struct sv_metrics *m, struct sbuf *out)
{
	head(out, "pg2osync_events_total", "counter",
	    "Change events read from the source, by type.");
	labelled(out, "pg2osync_events_total", "type", "insert",
	    sv_metrics_total(m, SVC_EV_INSERT));
	labelled(out, "pg2osync_events_total", "type", "update",
	    sv_metrics_total(m, SVC_EV_UPDATE));
	labelled(out, "pg2osync_events_total", "type", "delete",
	    sv_metrics_total(m, SVC_EV_DELETE));
	labelled(out, "pg2osync_events_total", "type", "truncate",
	    sv_metrics_total(m, SVC_EV_TRUNCATE));
	one(out, "pg2osync_commits_total", "counter",
	    "Source transactions read.", sv_metrics_total(m, SVC_COMMITS));
	one(out, "pg2osync_position_confirmed", "gauge",
	    "Source position last acknowledged to the capture, after it was "
	    "stored as the checkpoint.", m->position_confirmed);
	one(out, "pg2osync_checkpoint_position", "gauge",
	    "Source position of the last stored checkpoint.",
	    m->checkpoint_position);
	one(out, "pg2osync_batches_total", "counter",
	    "Bulk requests the writer sent to the target.",
	    sv_metrics_total(m, SVC_BATCHES));
	head(out, "pg2osync_documents_total", "counter",
	    "Documents written to the target, by operation.");
	labelled(out, "pg2osync_documents_total", "op", "index",
	    sv_metrics_total(m, SVC_DOCS_INDEXED));
	labelled(out, "pg2osync_documents_total", "op", "delete",
	    sv_metrics_total(m, SVC_DOCS_DELETED));
	one(out, "pg2osync_sink_errors_total", "counter",
	    "Target requests or documents that failed.",
	    sv_metrics_total(m, SVC_SINK_ERRORS));
	one(out, "pg2osync_version_conflicts_total", "counter",
	    "Writes the target skipped because it held a newer version "
	    "(replays after a restart).",
	    sv_metrics_total(m, SVC_VERSION_CONFLICTS));
	one(out, "pg2osync_schema_drift_total", "counter",
	    "Table shape changes seen under the running pipeline.",
	    sv_metrics_total(m, SVC_DRIFT));
	one(out, "pg2osync_reconnects_total", "counter",
	    "Pipeline restarts after a failure.", m->reconnects);

	hist(out, "pg2osync_commit_to_indexed_seconds",
	    "Time from a source commit to the target accepting its last "
	    "write.", &m->indexed);
	hist(out, "pg2osync_commit_to_sent_seconds",
	    "Time from a source commit to the bulk request carrying its last "
	    "write leaving the writer: the pipeline's own share of the "
	    "latency, without the target's.", &m->sent);

	one(out, "pg2osync_up", "gauge",
	    "1 when every stage of the pipeline is up.", m->up ? 1 : 0);
}
