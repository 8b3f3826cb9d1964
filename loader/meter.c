/*
 * meter.c - how far a table's load is, for the people watching: on a
 * terminal (stand-alone) one line per table rewritten in place, rows done
 * of the estimate, the rate and the time left; otherwise one log line per
 * range or chunk. It only reports: the numbers that matter to the pipeline
 * travel in marks and stats.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "p2o.h"
#include "xio.h"
#include "loader.h"

#define METER_DRAW_MS	250

/* "1h02m", "4m10s", "9s" */
static void
duration(char *buf, size_t len, double s)
{
	long long t = s < 0 ? 0 : (long long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%lldh%02lldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
	else
		snprintf(buf, len, "%llds", t);
}

/* rows/s of this run, and the time left at that rate */
static double
rate(const struct meter *m, char *eta, size_t len)
{
	double secs = (now_ms() - m->t0) / 1000.0, r;
	uint64_t total = m->before + m->rows;

	r = secs > 0 ? m->rows / secs : 0;
	if (r > 0 && m->estimate > total)
		duration(eta, len, (m->estimate - total) / r);
	else
		snprintf(eta, len, "?");
	return r;
}

/* the line, rewritten in place; the last one says the table is done */
static void
draw(struct meter *m, int last)
{
	char line[256], eta[32];
	uint64_t total = m->before + m->rows;
	double r = rate(m, eta, sizeof(eta));
	int n, pct;

	/* an estimate is only that: never claim 100 % before the end */
	pct = m->estimate ? (int)(100.0 * total / m->estimate) : 0;
	if (pct > 99)
		pct = 99;
	if (last)
		n = snprintf(line, sizeof(line), "\rloader: %s: %llu rows "
		    "(100 %%), %.0f rows/s, done\033[K", m->rel,
		    (unsigned long long)total, r);
	else
		n = snprintf(line, sizeof(line), "\rloader: %s: %llu of about "
		    "%llu rows (%d %%), %.0f rows/s, eta %s\033[K", m->rel,
		    (unsigned long long)total, (unsigned long long)m->estimate,
		    pct, r, eta);
	if (n > 0 && write(P2O_FD_LOG, line, (size_t)n < sizeof(line) ?
	    (size_t)n : sizeof(line) - 1) < 0) {
		/* nowhere to report it */
	}
	m->drawn = now_ms();
}

void
meter_start(struct meter *m, const char *rel, uint64_t estimate,
    uint64_t before, int of)
{
	int tty = m->tty, cap = m->cap;
	const char *unit = m->unit;

	memset(m, 0, sizeof(*m));
	m->tty = tty;
	m->unit = unit;
	m->cap = cap;
	m->rel = rel;
	m->estimate = estimate;
	m->before = before;
	m->of = of;
	m->t0 = now_ms();
}

void
meter_rows(struct meter *m, uint64_t n)
{
	m->rows += n;
	if (m->tty && now_ms() - m->drawn >= METER_DRAW_MS)
		draw(m, 0);
}

void
meter_range(struct meter *m, int r, uint64_t rows, long long ms)
{
	char eta[32];
	double rt;

	if (m->tty) {
		draw(m, 0);
		return;
	}
	rt = rate(m, eta, sizeof(eta));
	log_info("table '%s': %s %d of %d read, %llu rows in %.1f s; "
	    "%llu of about %llu rows, %.0f rows/s, eta %s", m->rel,
	    m->unit ? m->unit : "range", r + 1, m->of,
	    (unsigned long long)rows, ms / 1000.0,
	    (unsigned long long)(m->before + m->rows),
	    (unsigned long long)m->estimate, rt, eta);
}

void
meter_break(struct meter *m)
{
	if (m->tty && m->drawn != 0) {
		if (write(P2O_FD_LOG, "\n", 1) < 0) {
			/* nowhere to report it */
		}
		m->drawn = 0;
	}
}

void
meter_end(struct meter *m)
{
	double secs = (now_ms() - m->t0) / 1000.0;
	char cap[96] = "";

	if (m->tty) {
		draw(m, 1);
		meter_break(m);
	}
	if (m->cap > 0)
		snprintf(cap, sizeof(cap), ", capped at %d rows/s "
		    "(engine.load_max_rows_per_sec)", m->cap);
	log_info("table '%s': loaded, %llu rows read in %.1f s (%.0f rows/s%s)",
	    m->rel, (unsigned long long)m->rows, secs,
	    secs > 0 ? m->rows / secs : 0.0, cap);
}
