/*
 * t-supervisor-metrics - stats counters summed across restarts, the
 * latency histogram, and the Prometheus text format of /metrics.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include "frame.h"
#include "jscan.h"
#include "msg.h"
#include "sbuf.h"
#include "xio.h"
#include "../../supervisor/supervisor.h"
#include "tap.h"

static struct jspan
span(const char *s)
{
	struct jspan j = { s, strlen(s) };
	size_t off;
	const char *why;

	if (jscan_validate(s, j.n, &off, &why) != 0)
		j.p = NULL, j.n = 0;
	return j;
}

/* the sample line "name value" or "name{..} value" exactly, or NULL */
static const char *
sample(const char *text, const char *series, char *val, size_t len)
{
	const char *p = text;
	size_t n = strlen(series);

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ') {
			const char *e = strchr(p + n + 1, '\n');

			snprintf(val, len, "%.*s", (int)(e - p - n - 1),
			    p + n + 1);
			return val;
		}
		p += n;
	}
	return NULL;
}

/* every line: "# HELP name text", "# TYPE name type", or a sample of the
 * family most recently typed; returns the number of bad lines */
static int
check_format(const char *text, int *families)
{
	char family[128] = "", name[128];
	const char *p = text, *e;
	int bad = 0;

	*families = 0;
	for (; *p; p = e + 1) {
		size_t n;

		if ((e = strchr(p, '\n')) == NULL)
			return bad + 1;	/* no final newline */
		n = (size_t)(e - p);
		if (n > 7 && strncmp(p, "# HELP ", 7) == 0)
			continue;
		if (n > 7 && strncmp(p, "# TYPE ", 7) == 0) {
			const char *sp = memchr(p + 7, ' ', n - 7);

			if (sp == NULL)
				bad++;
			else {
				snprintf(family, sizeof(family), "%.*s",
				    (int)(sp - p - 7), p + 7);
				if (strncmp(sp + 1, "counter", 7) &&
				    strncmp(sp + 1, "gauge", 5) &&
				    strncmp(sp + 1, "histogram", 9))
					bad++;
				(*families)++;
			}
			continue;
		}
		{
			size_t i = 0, fl = strlen(family);
			const char *v;

			while (i < n && (isalnum((unsigned char)p[i]) ||
			    p[i] == '_'))
				i++;
			snprintf(name, sizeof(name), "%.*s", (int)i, p);
			if (strncmp(name, family, fl) != 0 || (name[fl] &&
			    strcmp(name + fl, "_bucket") &&
			    strcmp(name + fl, "_sum") &&
			    strcmp(name + fl, "_count")))
				bad++;
			if (i < n && p[i] == '{') {
				const char *rb = memchr(p + i, '}', n - i);

				if (rb == NULL || memchr(p + i, '"', n - i) ==
				    NULL) {
					bad++;
					continue;
				}
				i = (size_t)(rb - p) + 1;
			}
			if (i >= n || p[i] != ' ') {
				bad++;
				continue;
			}
			for (v = p + i + 1; v < e; v++)
				if (!isdigit((unsigned char)*v) && *v != '.')
					break;
			if (v != e || v == p + i + 1)
				bad++;
		}
	}
	return bad;
}

/*
 * Every counter of msg.h's table, reported by a stage, reaches /metrics:
 * a name a stage sends and the supervisor does not export fails here.
 */
static void
test_every_counter(void)
{
	struct sv_metrics m;
	struct sbuf json = SBUF_INIT, frames = SBUF_INIT, out = SBUF_INIT;
	struct frame_reader rd;
	struct frame f;
	struct jspan tool, counters;
	char want[256], v[64], why[128];
	int c, fds[2], missing = 0, n;

	sv_metrics_init(&m);
	for (c = 0; c < MC_N; c++) {
		msg_stats_begin(&json, msg_counters[c].tool);
		if (msg_counters[c].label && !msg_counters[c].label_value) {
			msg_stats_keyed_begin(&json, c);
			msg_stats_keyed_add(&json, "s.t", 3, 100 + c);
			msg_stats_keyed_end(&json);
		} else
			msg_stats_add(&json, c, 100 + c);
		msg_stats_end(&frames, &json);
	}
	/* through the frame reader, as the supervisor gets them */
	if (pipe(fds) == -1 || write_in_full(fds[1], frames.buf, frames.len))
		BAIL_OUT("pipe");
	close(fds[1]);
	frame_reader_init(&rd, fds[0], "test");
	n = 0;
	while (frame_read(&rd, &f) == 1) {
		ok(msg_read_stats(&f, &tool, &counters, why, sizeof(why)) == 0 &&
		    sv_metrics_stats(&m, counters) == 0, "stats frame %d read",
		    n);
		n++;
	}
	frame_reader_release(&rd);
	close(fds[0]);
	is_int(n, MC_N, "one stats frame per counter");
	sv_metrics_render(&m, &out);
	for (c = 0; c < MC_N; c++) {
		const struct msg_counter_def *d = &msg_counters[c];

		if (d->label == NULL)
			snprintf(want, sizeof(want), "%s", d->metric);
		else
			snprintf(want, sizeof(want), "%s{%s=\"%s\"}", d->metric,
			    d->label, d->label_value ? d->label_value : "s.t");
		snprintf(why, sizeof(why), "%d", 100 + c);
		if (sample(out.buf, want, v, sizeof(v)) == NULL ||
		    strcmp(v, why) != 0) {
			diag("counter '%s' is not exported as %s %s", d->name,
			    want, why);
			missing++;
		}
	}
	is_int(missing, 0, "every counter a stage can report is exported");
	sbuf_release(&json);
	sbuf_release(&frames);
	sbuf_release(&out);
	sv_metrics_release(&m);
}

/* the metric names a text lists in backquotes, "_x" as "pg2osync_x" */
static void
listed_names(const char *text, struct sbuf *names)
{
	const char *p = text, *q, *end;
	size_t n;

	while ((p = strchr(p, '`')) != NULL && (q = strchr(p + 1, '`'))) {
		p++;
		end = p + strcspn(p, "{`");
		n = (size_t)(end - p);
		if (n > 1 && p[0] == '_') {
			sbuf_adds(names, "\npg2osync");
			sbuf_add(names, p, n);
		} else if (n > 9 && strncmp(p, "pg2osync_", 9) == 0) {
			sbuf_addc(names, '\n');
			sbuf_add(names, p, n);
		}
		p = q + 1;
	}
	sbuf_addc(names, '\n');
}

/* "\nname\n" is in list */
static int
has_name(const struct sbuf *list, const char *name, size_t n)
{
	char want[256];

	snprintf(want, sizeof(want), "\n%.*s\n", (int)n, name);
	return strstr(list->buf, want) != NULL;
}

/*
 * supervisor/README.md's list of what /metrics exports is the list of
 * what it exports: a metric added to the code and not to the list, or
 * listed and gone, fails here.
 */
static void
test_readme(void)
{
	static char text[1 << 16];
	struct sv_metrics m;
	struct sbuf out = SBUF_INIT, listed = SBUF_INIT, exported = SBUF_INIT;
	char self[4096], path[4200], *slash, *bullet, *stop;
	const char *p, *e;
	ssize_t n;
	int fd, bad = 0;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/../../supervisor/README.md", self);
	if ((fd = open(path, O_RDONLY)) == -1 ||
	    (n = read_in_full(fd, text, sizeof(text) - 1)) <= 0) {
		ok(0, "supervisor/README.md read (%s)", path);
		return;
	}
	close(fd);
	text[n] = '\0';
	bullet = strstr(text, "- `/metrics`:");
	ok(bullet != NULL, "the README has its /metrics list");
	if (bullet == NULL)
		return;
	if ((stop = strstr(bullet, "\n\n")) != NULL)
		*stop = '\0';
	listed_names(bullet, &listed);

	sv_metrics_init(&m);
	sv_metrics_render(&m, &out);
	sbuf_addc(&exported, '\n');
	for (p = out.buf; (p = strstr(p, "# TYPE ")) != NULL; p = e) {
		p += 7;
		e = p + strcspn(p, " ");
		sbuf_add(&exported, p, (size_t)(e - p));
		sbuf_addc(&exported, '\n');
	}
	for (p = exported.buf + 1; *p; p = e + 1) {
		e = strchr(p, '\n');
		if (!has_name(&listed, p, (size_t)(e - p))) {
			diag("exported, not in the README: %.*s", (int)(e - p),
			    p);
			bad++;
		}
	}
	for (p = listed.buf + 1; *p; p = e + 1) {
		e = strchr(p, '\n');
		if (e > p && !has_name(&exported, p, (size_t)(e - p))) {
			diag("in the README, not exported: %.*s", (int)(e - p),
			    p);
			bad++;
		}
	}
	is_int(bad, 0, "the README's /metrics list is every metric exported, "
	    "and only those");
	sbuf_release(&out);
	sbuf_release(&listed);
	sbuf_release(&exported);
	sv_metrics_release(&m);
}

/* a loader's stats frame: four gauges for each of tables n0..n-1 */
static void
load_frame(struct sbuf *j, int n0, int n, int rows)
{
	static const char *const names[] = { "load_rows",
	    "load_rows_estimate", "load_ranges_done", "load_ranges" };
	size_t c;
	int i;

	sbuf_reset(j);
	sbuf_addc(j, '{');
	for (c = 0; c < 4; c++) {
		sbuf_addf(j, "%s\"%s\":{", c ? "," : "", names[c]);
		for (i = n0; i < n; i++)
			sbuf_addf(j, "%s\"public.m%05d\":%d", i > n0 ? "," : "",
			    i, c == 0 ? rows : 1);
		sbuf_addc(j, '}');
	}
	sbuf_addc(j, '}');
}

/* a slot watch's frame: slots n0..n-1 retaining v bytes each */
static void
slot_frame(struct sbuf *j, int n0, int n, int v)
{
	int i;

	sbuf_reset(j);
	sbuf_adds(j, "{\"slot_retained_bytes\":{");
	for (i = n0; i < n; i++)
		sbuf_addf(j, "%s\"s%05d\":%d", i > n0 ? "," : "", i, v);
	sbuf_adds(j, "}}");
}

/*
 * Issue 38: the loader reports four gauges for every table it started,
 * each second. Each key was found by a walk of every series: a frame of
 * ten thousand tables was 8 * 10^8 comparisons, and the supervisor's
 * core went to it. A whole gauge's keys a frame leaves out still go, and
 * the keys left are found again after they moved.
 */
static void
test_many_keys(void)
{
	struct sv_metrics m;
	struct sbuf j = SBUF_INIT;
	double t0, secs;

	sv_metrics_init(&m);
	load_frame(&j, 0, 10000, 1);
	t0 = tap_now_s();
	sv_metrics_stats(&m, (struct jspan){ j.buf, j.len });
	load_frame(&j, 0, 10000, 2);
	sv_metrics_stats(&m, (struct jspan){ j.buf, j.len });
	secs = tap_now_s() - t0;
	is_int(m.nkeyed, 40000, "two frames of 10,000 tables: 40,000 series");
	is_int(sv_metrics_total(&m, MC_LOAD_ROWS, NULL), 20000,
	    "the second replaced the first");
	ok(secs < 2.0, "in under 2 s (%.3f s; 8.6 s of CPU when each key "
	    "walked the series)", secs);
	/* a whole gauge (a slot's) reported for 10,000 keys, then for
	 * half of them: the others go, and the series after them move */
	slot_frame(&j, 0, 10000, 1);
	sv_metrics_stats(&m, (struct jspan){ j.buf, j.len });
	slot_frame(&j, 5000, 10000, 2);
	sv_metrics_stats(&m, (struct jspan){ j.buf, j.len });
	is_int(m.nkeyed, 45000, "a whole gauge's keys the frame left out "
	    "are gone");
	is_int(sv_metrics_total(&m, MC_SLOT_RETAINED, NULL), 5000 * 2,
	    "the others replaced");
	load_frame(&j, 0, 10000, 4);
	sv_metrics_stats(&m, (struct jspan){ j.buf, j.len });
	slot_frame(&j, 5000, 10000, 3);
	sv_metrics_stats(&m, (struct jspan){ j.buf, j.len });
	is_int(m.nkeyed, 45000, "the series that moved are found again, not "
	    "added twice");
	is_int(sv_metrics_total(&m, MC_LOAD_ROWS, NULL), 40000,
	    "their values replaced");
	is_int(sv_metrics_total(&m, MC_SLOT_RETAINED, "s07000"), 3,
	    "one key's value");
	sbuf_release(&j);
	sv_metrics_release(&m);
}

int
main(void)
{
	struct sv_metrics m;
	struct sbuf out = SBUF_INIT;
	char v[64];
	int families, i;

	test_every_counter();
	test_readme();
	test_many_keys();
	sv_metrics_init(&m);
	ok(sv_metrics_stats(&m, span("{\"events_insert\":10,"
	    "\"events_update\":2,\"events_delete\":1,\"commits\":4,"
	    "\"confirmed_pos\":999,\"unknown_thing\":5}")) == 0,
	    "capture stats accepted");
	sv_metrics_stats(&m, span("{\"docs_indexed\":12,"
	    "\"docs_deleted\":1,\"batches\":3,\"sink_errors\":0,"
	    "\"version_conflicts\":2,\"future\":{\"nested\":1}}"));
	sv_metrics_stats(&m, span("{\"drift\":{\"public.items\":1}}"));
	is_int(sv_metrics_total(&m, MC_DOCS_INDEXED, NULL), 12,
	    "writer documents");
	ok(sv_metrics_stats(&m, span("[1]")) == -1,
	    "counters that are not an object are refused");

	/* the same incarnation reports again: cumulative, not added */
	sv_metrics_stats(&m, span("{\"events_insert\":15}"));
	is_int(sv_metrics_total(&m, MC_EVENTS_INSERT, NULL), 15,
	    "a later report replaces the incarnation's value");
	/* restart: the new capture counts from zero */
	sv_metrics_restart(&m);
	sv_metrics_stats(&m, span("{\"events_insert\":3}"));
	is_int(sv_metrics_total(&m, MC_EVENTS_INSERT, NULL), 18,
	    "summed across restarts: 15 + 3");
	is_int(sv_metrics_total(&m, MC_EVENTS_UPDATE, NULL), 2,
	    "a counter not reported since the restart keeps its base");
	sv_metrics_stats(&m, span("{\"events_insert\":4}"));
	is_int(sv_metrics_total(&m, MC_EVENTS_INSERT, NULL), 19,
	    "the latest report of the running incarnation replaces its own");
	is_int(sv_metrics_total(&m, MC_CONFIRMED_POS, NULL), 999,
	    "a gauge keeps its value over a restart, unsummed");
	sv_metrics_stats(&m, span("{\"confirmed_pos\":50}"));
	is_int(sv_metrics_total(&m, MC_CONFIRMED_POS, NULL), 50,
	    "and is replaced, not added");
	sv_metrics_stats(&m, span("{\"toast_missing\":{\"a.x\":2,"
	    "\"a.\\\"y\":1}}"));
	sv_metrics_restart(&m);
	sv_metrics_stats(&m, span("{\"toast_missing\":{\"a.x\":5}}"));
	is_int(sv_metrics_total(&m, MC_TOAST_MISSING, "a.x"), 7,
	    "a keyed counter sums per key across restarts");
	is_int(sv_metrics_total(&m, MC_TOAST_MISSING, NULL), 8,
	    "and over its keys");
	sv_metrics_stats(&m, span("{\"transform_unconverted\":"
	    "{\"public.users\\u001femail\":3}}"));
	/* the slot watch reports every slot each time: a slot left out
	 * was dropped, and its series go */
	sv_metrics_stats(&m, span("{\"slot_retained_bytes\":{\"a\":7,"
	    "\"gone\":9},\"slot_wal_status\":{\"a\\u001freserved\":1,"
	    "\"a\\u001flost\":0}}"));
	sv_metrics_stats(&m, span("{\"slot_retained_bytes\":{\"a\":8}}"));
	is_int(sv_metrics_total(&m, MC_SLOT_RETAINED, "a"), 8,
	    "a slot gauge is replaced, not summed");
	is_int(sv_metrics_total(&m, MC_SLOT_RETAINED, "gone"), 0,
	    "a slot a later frame leaves out is gone");
	is_int(sv_metrics_total(&m, MC_SLOT_WAL_STATUS, "a\x1freserved"), 1,
	    "a frame without a counter leaves that counter's keys alone");

	sv_hist_observe(&m.indexed, 300);		/* 0.0003 s */
	sv_hist_observe(&m.indexed, 500);		/* on the 0.0005 bound */
	sv_hist_observe(&m.indexed, 20000);		/* 0.02 */
	sv_hist_observe(&m.indexed, 20000000);	/* 20 s: only +Inf */
	sv_hist_observe(&m.indexed, -5);		/* skew: 0 */
	sv_hist_observe(&m.sent, 200);		/* the pipeline's share */
	sv_hist_observe(&m.streamed, 900);	/* the breakdown: 0.9 ms */
	sv_hist_observe(&m.received, 1200);	/* 1.2 ms */
	sv_hist_observe(&m.writer, 2500);
	m.reconnects = 2;
	m.checkpoint_position = 22817480;
	m.position_confirmed = 22817400;
	m.up = 1;
	sv_metrics_render(&m, &out);

	is_int(check_format(out.buf, &families), 0,
	    "every line is HELP, TYPE or a sample of the typed family");
	is_int(families, MC_N - 7 + 14, "the families of the counter table (events_total, documents_total and trace_spans_dropped_total hold several), and fourteen of the supervisor's own");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_sent_seconds_bucket{le=\"0.00025\"}", v,
	    sizeof(v)), "1", "commit to sent: its own histogram");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_streamed_seconds_bucket{le=\"0.001\"}", v,
	    sizeof(v)), "1", "commit to streamed: the source's own share");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_received_seconds_bucket{le=\"0.0015\"}", v,
	    sizeof(v)), "1", "commit to received: its own, with a 1.5 ms bound");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_writer_seconds_bucket{le=\"0.002\"}", v,
	    sizeof(v)), "0", "commit to writer: 2.5 ms is above the 2 ms bound");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_writer_seconds_bucket{le=\"0.003\"}", v,
	    sizeof(v)), "1", "commit to writer: and below 3 ms");
	is_str(sample(out.buf, "pg2osync_events_total{type=\"insert\"}", v,
	    sizeof(v)), "19", "events insert");
	is_str(sample(out.buf, "pg2osync_events_total{type=\"truncate\"}", v,
	    sizeof(v)), "0", "events truncate present at 0");
	is_str(sample(out.buf, "pg2osync_commits_total", v, sizeof(v)), "4",
	    "commits");
	is_str(sample(out.buf, "pg2osync_documents_total{op=\"index\"}", v,
	    sizeof(v)), "12", "documents index");
	is_str(sample(out.buf, "pg2osync_documents_total{op=\"delete\"}", v,
	    sizeof(v)), "1", "documents delete");
	is_str(sample(out.buf, "pg2osync_version_conflicts_total", v,
	    sizeof(v)), "2", "version conflicts");
	is_str(sample(out.buf, "pg2osync_schema_drift_total{table=\"public.items\"}",
	    v, sizeof(v)), "1", "schema drift, per table");
	is_str(sample(out.buf, "pg2osync_toast_missing_total{table=\"a.x\"}", v,
	    sizeof(v)), "7", "documents left incomplete, per table");
	is_str(sample(out.buf,
	    "pg2osync_toast_missing_total{table=\"a.\\\"y\"}", v, sizeof(v)),
	    "1", "a label value is escaped");
	is_str(sample(out.buf, "pg2osync_transform_unconverted_total{table="
	    "\"public.users\",column=\"email\"}", v, sizeof(v)), "3",
	    "a counter keyed by table and column has both labels");
	is_str(sample(out.buf, "pg2osync_reconnects_total", v, sizeof(v)),
	    "2", "reconnects");
	is_str(sample(out.buf, "pg2osync_checkpoint_position", v, sizeof(v)),
	    "22817480", "checkpoint position as an integer");
	is_str(sample(out.buf, "pg2osync_position_confirmed", v, sizeof(v)),
	    "22817400", "confirmed position");
	is_str(sample(out.buf, "pg2osync_up", v, sizeof(v)), "1", "up");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_indexed_seconds_bucket{le=\"0.0005\"}", v,
	    sizeof(v)), "3", "le 0.0005: 0, 0.0003 and 0.0005");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_indexed_seconds_bucket{le=\"0.025\"}", v,
	    sizeof(v)), "4", "le 0.025 is cumulative");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_indexed_seconds_bucket{le=\"10\"}", v,
	    sizeof(v)), "4", "le 10 leaves out the 20 s one");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_indexed_seconds_bucket{le=\"+Inf\"}", v,
	    sizeof(v)), "5", "+Inf counts all");
	is_str(sample(out.buf, "pg2osync_commit_to_indexed_seconds_count", v,
	    sizeof(v)), "5", "_count");
	is_str(sample(out.buf, "pg2osync_commit_to_indexed_seconds_sum", v,
	    sizeof(v)), "20.020800", "_sum in seconds");
	ok(strstr(out.buf, "# TYPE pg2osync_commit_to_indexed_seconds "
	    "histogram\n") != NULL, "the latency is a histogram");
	ok(strstr(out.buf, "# HELP pg2osync_events_total ") <
	    strstr(out.buf, "# TYPE pg2osync_events_total counter\n"),
	    "HELP before TYPE");
	i = 0;
	{
		const char *p = out.buf;

		while ((p = strstr(p, "indexed_seconds_bucket{le=")) != NULL) {
			i++;
			p++;
		}
	}
	is_int(i, 22, "21 buckets from 0.1 ms to 10 s, and +Inf");

	/* every state always has a series, the current one at 1 */
	m.state = SS_BACKOFF;
	m.reloads[RL_REFUSED] = 2;
	sbuf_reset(&out);
	sv_metrics_render(&m, &out);
	is_str(sample(out.buf, "pg2osync_source_state{state=\"backoff\"}", v,
	    sizeof(v)), "1", "the current state is 1");
	is_str(sample(out.buf, "pg2osync_source_state{state=\"halted\"}", v,
	    sizeof(v)), "0", "another is there at 0");
	is_str(sample(out.buf, "pg2osync_config_reloads_total{result="
	    "\"refused\"}", v, sizeof(v)), "2", "reloads by result");
	is_str(sample(out.buf, "pg2osync_config_reloads_total{result="
	    "\"applied\"}", v, sizeof(v)), "0", "every result is there");

	/* source.name labels every series, first */
	m.source = "shop-eu";
	sbuf_reset(&out);
	sv_metrics_render(&m, &out);
	is_int(check_format(out.buf, &families), 0,
	    "with a source label: still the text format");
	is_str(sample(out.buf, "pg2osync_events_total{source=\"shop-eu\","
	    "type=\"insert\"}", v, sizeof(v)), "19", "a labelled counter");
	is_str(sample(out.buf, "pg2osync_up{source=\"shop-eu\"}", v,
	    sizeof(v)), "1", "a bare gauge gets the label alone");
	is_str(sample(out.buf, "pg2osync_transform_unconverted_total{source="
	    "\"shop-eu\",table=\"public.users\",column=\"email\"}", v,
	    sizeof(v)), "3", "a two-label counter: source first");
	is_str(sample(out.buf, "pg2osync_commit_to_indexed_seconds_bucket{"
	    "source=\"shop-eu\",le=\"+Inf\"}", v, sizeof(v)), "5",
	    "a histogram's buckets");
	is_str(sample(out.buf, "pg2osync_commit_to_indexed_seconds_sum{"
	    "source=\"shop-eu\"}", v, sizeof(v)), "20.020800", "its sum");
	{
		const char *p = out.buf, *e;
		int unlabelled = 0;

		for (; *p; p = e + 1) {
			e = strchr(p, '\n');
			if (*p != '#' && strncmp(strpbrk(p, "{ "),
			    "{source=\"shop-eu\"", 17) != 0)
				unlabelled++;
		}
		is_int(unlabelled, 0, "every sample carries the source label");
	}

	/* the checker must be able to fail */
	is_int(check_format("# TYPE a counter\nb 1\n", &families), 1,
	    "a sample of an untyped family is caught");
	is_int(check_format("# TYPE a counter\na x\n", &families), 1,
	    "a non-numeric value is caught");
	sbuf_release(&out);
	sv_metrics_release(&m);
	return done_testing();
}
