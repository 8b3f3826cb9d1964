/*
 * metrics.c - what /metrics reports: the stages' stats counters (named
 * once, in msg.h's counter table) summed across pipeline restarts, the
 * supervisor's own gauges and the commit -> indexed latency histograms,
 * rendered in the Prometheus text format (version 0.0.4). Every counter of
 * the table is rendered, so a counter a stage reports cannot go missing
 * here. Never touches a socket.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "supervisor.h"

/* upper bounds in seconds, 0.1 ms to 10 s; fine from 1 to 50 ms, where
 * a streamed change lands and where a p99 is told from a p50 */
static const double lat_bounds[SV_LAT_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075,
	0.01, 0.015, 0.025, 0.035, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
};

/* the name and tag of keyed[pos], for the index */
static const char *
keyed_name(const void *arg, int pos, int *tag)
{
	const struct sv_metrics *m = arg;

	*tag = m->keyed[pos].counter;
	return m->keyed[pos].key;
}

void
sv_metrics_init(struct sv_metrics *m)
{
	memset(m, 0, sizeof(*m));
	strindex_init(&m->kidx, keyed_name);
	sbuf_init(&m->kname);
}

void
sv_metrics_release(struct sv_metrics *m)
{
	int i;

	for (i = 0; i < m->nkeyed; i++)
		free(m->keyed[i].key);
	free(m->keyed);
	strindex_release(&m->kidx);
	sbuf_release(&m->kname);
	memset(m, 0, sizeof(*m));
}

void
sv_metrics_restart(struct sv_metrics *m)
{
	int i;

	for (i = 0; i < MC_N; i++) {
		if (msg_counters[i].gauge)
			continue;
		m->base[i] += m->last[i];
		m->last[i] = 0;
	}
	for (i = 0; i < m->nkeyed; i++) {
		if (msg_counters[m->keyed[i].counter].gauge)
			continue;
		m->keyed[i].base += m->keyed[i].last;
		m->keyed[i].last = 0;
	}
}

static struct sv_keyed *
keyed_slot(struct sv_metrics *m, int c, struct jspan key)
{
	struct sv_keyed *k;
	int i;

	/* the key as the stage meant it (escapes undone), then filed */
	sbuf_reset(&m->kname);
	sbuf_grow(&m->kname, key.n + 1);
	m->kname.len = jstr_unescape(key, m->kname.buf);
	m->kname.buf[m->kname.len] = '\0';
	if ((i = strindex_get(&m->kidx, m, c, m->kname.buf,
	    m->kname.len)) >= 0)
		return &m->keyed[i];
	if (m->nkeyed == m->capkeyed) {
		m->capkeyed = m->capkeyed ? m->capkeyed * 2 : 16;
		m->keyed = xrealloc(m->keyed, (size_t)m->capkeyed *
		    sizeof(*m->keyed));
	}
	k = &m->keyed[m->nkeyed++];
	k->counter = c;
	k->key = xstrndup(m->kname.buf, m->kname.len);
	k->base = k->last = 0;
	strindex_put(&m->kidx, m, m->nkeyed - 1);
	return k;
}

/* a whole counter's keys the frame did not carry are gone */
static void
keyed_prune(struct sv_metrics *m, int c)
{
	int i, gone = 0;

	for (i = 0; i < m->nkeyed; )
		if (m->keyed[i].counter == c && !m->keyed[i].seen) {
			free(m->keyed[i].key);
			m->keyed[i] = m->keyed[--m->nkeyed];
			gone = 1;
		} else
			i++;
	/* entries moved: filed again where they are now */
	if (gone) {
		strindex_clear(&m->kidx);
		for (i = 0; i < m->nkeyed; i++)
			strindex_put(&m->kidx, m, i);
	}
}

int
sv_metrics_stats(struct sv_metrics *m, struct jspan counters)
{
	struct jiter it, kit;
	struct jspan name, val, key, kval;
	struct sv_keyed *k;
	uint64_t v;
	int c, i;

	if (jspan_type(counters) != J_OBJECT ||
	    jiter_init(&it, counters) == -1)
		return -1;
	while (jiter_member(&it, &name, &val) == 1) {
		if ((c = msg_counter_lookup(name)) == -1)
			continue;
		if (msg_counters[c].label != NULL &&
		    msg_counters[c].label_value == NULL) {
			if (jspan_type(val) != J_OBJECT ||
			    jiter_init(&kit, val) == -1)
				continue;
			for (i = 0; i < m->nkeyed; i++)
				if (m->keyed[i].counter == c)
					m->keyed[i].seen = 0;
			while (jiter_member(&kit, &key, &kval) == 1)
				if (jnum_u64(kval, &v) == 0) {
					k = keyed_slot(m, c, key);
					k->last = v;
					k->seen = 1;
				}
			if (msg_counters[c].whole)
				keyed_prune(m, c);
			continue;
		}
		if (jspan_type(val) == J_NUMBER && jnum_u64(val, &v) == 0)
			m->last[c] = v;
	}
	return 0;
}

uint64_t
sv_metrics_total(const struct sv_metrics *m, enum msg_counter c,
    const char *key)
{
	uint64_t t = 0;
	int i;

	if (msg_counters[c].label == NULL || msg_counters[c].label_value)
		return m->base[c] + m->last[c];
	for (i = 0; i < m->nkeyed; i++)
		if (m->keyed[i].counter == (int)c &&
		    (key == NULL || strcmp(key, m->keyed[i].key) == 0))
			t += m->keyed[i].base + m->keyed[i].last;
	return t;
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

/* a label value: backslash, quote and newline escaped (text format) */
static void
label_value(struct sbuf *out, const char *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i] == '\\' || v[i] == '"')
			sbuf_addc(out, '\\');
		if (v[i] == '\n') {
			sbuf_adds(out, "\\n");
			continue;
		}
		sbuf_addc(out, v[i]);
	}
}

/* the labels of one sample, source first: name{source="s",a="x"} */
struct labels {
	struct sbuf *out;
	int	 open;
};

static void
labels_begin(struct labels *l, struct sbuf *out, const struct sv_metrics *m,
    const char *name)
{
	l->out = out;
	l->open = 0;
	sbuf_adds(out, name);
	if (m->source != NULL && m->source[0] != '\0') {
		sbuf_adds(out, "{source=\"");
		label_value(out, m->source, strlen(m->source));
		sbuf_addc(out, '"');
		l->open = 1;
	}
}

static void
label(struct labels *l, const char *name, const char *v, size_t n)
{
	sbuf_addf(l->out, "%s%s=\"", l->open ? "," : "{", name);
	label_value(l->out, v, n);
	sbuf_addc(l->out, '"');
	l->open = 1;
}

static void
labels_end(struct labels *l, uint64_t v)
{
	if (l->open)
		sbuf_addc(l->out, '}');
	sbuf_addc(l->out, ' ');
	sbuf_add_u64(l->out, v);
	sbuf_addc(l->out, '\n');
}

/* a gauge or counter of one value a source, of every source: the value
 * at off in struct sv_metrics, an int when isint, else a uint64_t */
static void
one(struct sbuf *out, const struct sv_metrics *const *ms, int n,
    const char *name, const char *type, const char *help, size_t off,
    int isint)
{
	struct labels l;
	const char *base;
	uint64_t v;
	int j;

	head(out, name, type, help);
	for (j = 0; j < n; j++) {
		base = (const char *)ms[j];
		v = isint ? (uint64_t)(*(const int *)(base + off) != 0) :
		    *(const uint64_t *)(base + off);
		labels_begin(&l, out, ms[j], name);
		labels_end(&l, v);
	}
}

static void
hist1(struct sbuf *out, const struct sv_metrics *m, const char *name,
    const struct sv_hist *h)
{
	struct sbuf series = SBUF_INIT;
	struct labels l;
	uint64_t cum = 0;
	char le[32];
	int i;

	sbuf_addf(&series, "%s_bucket", name);
	for (i = 0; i <= SV_LAT_BUCKETS; i++) {
		if (i < SV_LAT_BUCKETS) {
			cum += h->bucket[i];
			snprintf(le, sizeof(le), "%g", lat_bounds[i]);
		} else
			snprintf(le, sizeof(le), "+Inf");
		labels_begin(&l, out, m, series.buf);
		label(&l, "le", le, strlen(le));
		labels_end(&l, i < SV_LAT_BUCKETS ? cum : h->count);
	}
	sbuf_reset(&series);
	sbuf_addf(&series, "%s_sum", name);
	labels_begin(&l, out, m, series.buf);
	if (l.open)
		sbuf_addc(out, '}');
	sbuf_addf(out, " %.6f\n", h->sum);
	sbuf_reset(&series);
	sbuf_addf(&series, "%s_count", name);
	labels_begin(&l, out, m, series.buf);
	labels_end(&l, h->count);
	sbuf_release(&series);
}

/* a histogram of every source: the one at off in struct sv_metrics */
static void
hist(struct sbuf *out, const struct sv_metrics *const *ms, int n,
    const char *name, const char *help, size_t off)
{
	int j;

	head(out, name, "histogram", help);
	for (j = 0; j < n; j++)
		hist1(out, ms[j], name, (const struct sv_hist *)
		    ((const char *)ms[j] + off));
}

/* a keyed counter with two labels has keys "first<US>second" */
static void
sample(struct sbuf *out, const struct sv_metrics *m, const char *name,
    const char *label1, const char *label2, const char *value, uint64_t v)
{
	struct labels l;
	const char *sep;

	labels_begin(&l, out, m, name);
	if (label1 != NULL && label2 != NULL &&
	    (sep = strchr(value, MSG_KEY_SEP)) != NULL) {
		label(&l, label1, value, (size_t)(sep - value));
		label(&l, label2, sep + 1, strlen(sep + 1));
	} else if (label1 != NULL)
		label(&l, label1, value, strlen(value));
	labels_end(&l, v);
}

/* every sample of the counters that share def's metric name, of every
 * source */
static void
render_metric(const struct sv_metrics *const *ms, int n, struct sbuf *out,
    int first)
{
	const struct msg_counter_def *d = &msg_counters[first], *e;
	const struct sv_metrics *m;
	int c, i, j;

	head(out, d->metric, d->gauge ? "gauge" : "counter", d->help);
	for (j = 0; j < n; j++) {
		m = ms[j];
		for (c = first; c < MC_N; c++) {
			e = &msg_counters[c];
			if (strcmp(e->metric, d->metric) != 0)
				continue;
			if (e->label == NULL || e->label_value != NULL) {
				sample(out, m, e->metric, e->label, NULL,
				    e->label_value, sv_metrics_total(m, c,
				    NULL));
				continue;
			}
			for (i = 0; i < m->nkeyed; i++)
				if (m->keyed[i].counter == c)
					sample(out, m, e->metric, e->label,
					    e->label2, m->keyed[i].key,
					    m->keyed[i].base +
					    m->keyed[i].last);
		}
	}
}

/* one sample per value of a label, 1 for the current one: every value is
 * always there, so a query for one that is 0 finds a series */
static void
each_of(struct sbuf *out, const struct sv_metrics *m, const char *name,
    const char *lname, const char *const *values, int n, int current)
{
	struct labels l;
	int i;

	for (i = 0; i < n; i++) {
		labels_begin(&l, out, m, name);
		label(&l, lname, values[i], strlen(values[i]));
		labels_end(&l, i == current);
	}
}

static void
count_of(struct sbuf *out, const struct sv_metrics *m, const char *name,
    const char *lname, const char *const *values, int n,
    const uint64_t *counts)
{
	struct labels l;
	int i;

	for (i = 0; i < n; i++) {
		labels_begin(&l, out, m, name);
		label(&l, lname, values[i], strlen(values[i]));
		labels_end(&l, counts[i]);
	}
}

#define OFF(f)	offsetof(struct sv_metrics, f)

void
sv_metrics_render_all(const struct sv_metrics *const *ms, int n,
    struct sbuf *out)
{
	int c, k, j, seen;

	/* the table lists a metric's samples one after another; each
	 * metric is rendered once, from its first entry, which has the
	 * help text */
	for (c = 0; c < MC_N; c++) {
		for (seen = 0, k = 0; k < c && !seen; k++)
			seen = strcmp(msg_counters[k].metric,
			    msg_counters[c].metric) == 0;
		if (!seen)
			render_metric(ms, n, out, c);
	}
	one(out, ms, n, "pg2osync_position_confirmed", "gauge",
	    "Source position last acknowledged to the capture, after it was "
	    "stored as the checkpoint.", OFF(position_confirmed), 0);
	one(out, ms, n, "pg2osync_checkpoint_position", "gauge",
	    "Source position of the last stored checkpoint.",
	    OFF(checkpoint_position), 0);
	one(out, ms, n, "pg2osync_reconnects_total", "counter",
	    "Pipeline restarts after a failure.", OFF(reconnects), 0);
	one(out, ms, n, "pg2osync_full_reloads_total", "counter",
	    "Full loads of every table because the stream's position was "
	    "gone (a lost slot, a purged binlog).", OFF(full_reloads), 0);
	hist(out, ms, n, "pg2osync_commit_to_streamed_seconds",
	    "Time from a source commit to the source sending it to the "
	    "capture (PostgreSQL: the walsender's send time, after the "
	    "commit's WAL flush).", OFF(streamed));
	hist(out, ms, n, "pg2osync_commit_to_received_seconds",
	    "Time from a source commit to the capture reading it from the "
	    "source.", OFF(received));
	hist(out, ms, n, "pg2osync_commit_to_writer_seconds",
	    "Time from a source commit to the writer reading it (the capture, "
	    "the shaper and the pipes between).", OFF(writer));
	hist(out, ms, n, "pg2osync_commit_to_indexed_seconds",
	    "Time from a source commit to the target accepting its last "
	    "write.", OFF(indexed));
	hist(out, ms, n, "pg2osync_commit_to_sent_seconds",
	    "Time from a source commit to the bulk request carrying its last "
	    "write leaving the writer: the pipeline's own share of the "
	    "latency, without the target's.", OFF(sent));
	one(out, ms, n, "pg2osync_up", "gauge",
	    "1 when every stage of the pipeline is up.", OFF(up), 1);
	head(out, "pg2osync_source_state", "gauge", "1 for what the stream is "
	    "doing now (starting, loading, streaming, backoff: waiting to "
	    "start again after a failure, halted: a write the target refuses "
	    "holds it, or it stopped for good while the process runs on, "
	    "draining), 0 for the others.");
	for (j = 0; j < n; j++)
		each_of(out, ms[j], "pg2osync_source_state", "state",
		    sv_source_states, SS_N, ms[j]->state);
	one(out, ms, n, "pg2osync_ready", "gauge", "1 when /ready answers 200: "
	    "loading or streaming, and making progress.", OFF(ready), 1);
	one(out, ms, n, "pg2osync_stalled", "gauge", "1 while changes wait and "
	    "nothing has been confirmed or written for metrics.ready_stall_s.",
	    OFF(stalled), 1);
	head(out, "pg2osync_config_reloads_total", "counter", "SIGHUP reloads "
	    "of the configuration, by what became of them (applied, "
	    "unchanged: the file said nothing new, refused: nothing changed "
	    "and the pipeline went on).");
	for (j = 0; j < n; j++)
		count_of(out, ms[j], "pg2osync_config_reloads_total", "result",
		    sv_reload_results, RL_N, ms[j]->reloads);
}

void
sv_metrics_render(const struct sv_metrics *m, struct sbuf *out)
{
	sv_metrics_render_all(&m, 1, out);
}
