/*
 * t-supervisor-metrics - stats counters summed across restarts, the
 * latency histogram, and the Prometheus text format of /metrics.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
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

int
main(void)
{
	struct sv_metrics m;
	struct sbuf out = SBUF_INIT;
	char v[64];
	int families, i;

	sv_metrics_init(&m);
	ok(sv_metrics_stats(&m, "capture-pg", span("{\"events_insert\":10,"
	    "\"events_update\":2,\"events_delete\":1,\"commits\":4,"
	    "\"drift\":1,\"confirmed_pos\":999,\"unknown_thing\":5}")) == 0,
	    "capture stats accepted");
	sv_metrics_stats(&m, "writer", span("{\"docs_indexed\":12,"
	    "\"docs_deleted\":1,\"batches\":3,\"sink_errors\":0,"
	    "\"version_conflicts\":2,\"future\":{\"nested\":1}}"));
	sv_metrics_stats(&m, "shaper", span("{\"docs_indexed\":1000}"));
	is_int(sv_metrics_total(&m, SVC_DOCS_INDEXED), 12,
	    "a writer counter name from the shaper is not the writer's");
	ok(sv_metrics_stats(&m, "writer", span("[1]")) == -1,
	    "counters that are not an object are refused");

	/* the same incarnation reports again: cumulative, not added */
	sv_metrics_stats(&m, "capture-pg", span("{\"events_insert\":15}"));
	is_int(sv_metrics_total(&m, SVC_EV_INSERT), 15,
	    "a later report replaces the incarnation's value");
	/* restart: the new capture counts from zero */
	sv_metrics_restart(&m);
	sv_metrics_stats(&m, "capture-pg", span("{\"events_insert\":3}"));
	is_int(sv_metrics_total(&m, SVC_EV_INSERT), 18,
	    "summed across restarts: 15 + 3");
	is_int(sv_metrics_total(&m, SVC_EV_UPDATE), 2,
	    "a counter not reported since the restart keeps its base");
	sv_metrics_stats(&m, "capture-mysql", span("{\"events_insert\":4}"));
	is_int(sv_metrics_total(&m, SVC_EV_INSERT), 19,
	    "capture-mysql feeds the same counters");

	sv_hist_observe(&m.indexed, 300);		/* 0.0003 s */
	sv_hist_observe(&m.indexed, 500);		/* on the 0.0005 bound */
	sv_hist_observe(&m.indexed, 20000);		/* 0.02 */
	sv_hist_observe(&m.indexed, 20000000);	/* 20 s: only +Inf */
	sv_hist_observe(&m.indexed, -5);		/* skew: 0 */
	sv_hist_observe(&m.sent, 200);		/* the pipeline's share */
	m.reconnects = 2;
	m.checkpoint_position = 22817480;
	m.position_confirmed = 22817400;
	m.up = 1;
	sv_metrics_render(&m, &out);

	is_int(check_format(out.buf, &families), 0,
	    "every line is HELP, TYPE or a sample of the typed family");
	is_int(families, 13, "13 metric families");
	is_str(sample(out.buf,
	    "pg2osync_commit_to_sent_seconds_bucket{le=\"0.00025\"}", v,
	    sizeof(v)), "1", "commit to sent: its own histogram");
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
	is_str(sample(out.buf, "pg2osync_schema_drift_total", v, sizeof(v)),
	    "1", "schema drift");
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
	is_int(i, 17, "16 buckets from 0.1 ms to 10 s, and +Inf");

	/* the checker must be able to fail */
	is_int(check_format("# TYPE a counter\nb 1\n", &families), 1,
	    "a sample of an untyped family is caught");
	is_int(check_format("# TYPE a counter\na x\n", &families), 1,
	    "a non-numeric value is caught");
	sbuf_release(&out);
	return done_testing();
}
