/*
 * pace.c - engine.load_max_rows_per_sec: a token bucket on the rows a
 * load reads, so that an initial load, a resnapshot, a reindex or the
 * load of a table a reload added does not take a production database's
 * whole read capacity. The stream is never paced: it reads what the
 * server already wrote.
 *
 * The bucket starts empty and holds at most one second of rows, so a
 * load of N rows takes at least N / rate seconds from its first row and
 * a pause (a mark waiting, a wave starting) banks no more than a second.
 * Pure arithmetic on the caller's clock: control.c sleeps what it says.
 */
#include <sys/types.h>

#include "loader.h"

void
pace_init(struct pace *p, int rate, long long now_us)
{
	p->rate = rate;
	p->tokens = 0;
	p->at_us = now_us;
}

long long
pace_take(struct pace *p, uint64_t n, long long now_us)
{
	double cap = p->rate;

	if (p->rate <= 0)
		return 0;
	if (now_us > p->at_us) {
		p->tokens += (double)(now_us - p->at_us) * p->rate / 1e6;
		if (p->tokens > cap)
			p->tokens = cap;
		p->at_us = now_us;
	}
	p->tokens -= (double)n;
	if (p->tokens >= 0)
		return 0;
	/* what is owed, paid by waiting: the time the rows took on credit */
	return (long long)(-p->tokens * 1e6 / p->rate) + 1;
}
