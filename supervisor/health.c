/*
 * health.c - what the pipeline's health is, as arithmetic: the source
 * state /metrics and /ready report (starting, loading, streaming,
 * backoff, halted - a write the target refuses holds it, or it stopped
 * for good while the process runs on -, draining) from the loop's state
 * and what the stages said, and whether a running pipeline is making
 * progress.
 *
 * A quiet pipeline and a stuck one both confirm nothing new; what tells
 * them apart is whether there is work waiting. There is when the capture
 * has read past the confirmed position (a change is in the pipeline) or
 * a load runs. Progress is the confirmed position moving or the writer
 * writing anything (a long transaction or a load writes long before a
 * position is confirmed). Work waiting with no progress for ready_stall_s
 * is a stall.
 *
 * No I/O, no clock of its own: the caller hands in the time.
 */
#include <string.h>

#include "supervisor.h"

const char *const sv_source_states[SS_N] = {
	[SS_STARTING] = "starting",
	[SS_LOADING] = "loading",
	[SS_STREAMING] = "streaming",
	[SS_BACKOFF] = "backoff",
	[SS_HALTED] = "halted",
	[SS_DRAINING] = "draining",
};

enum sv_source_state
sv_source_state_of(enum sv_pl_state pl, int stopping, int loading,
    int halted)
{
	switch (pl) {
	case PL_WAIT:
	case PL_CHECKPOINT:
	case PL_STARTING:
		return SS_STARTING;
	case PL_BACKOFF:
		return SS_BACKOFF;
	case PL_UP:
		if (halted)
			return SS_HALTED;
		return loading ? SS_LOADING : SS_STREAMING;
	case PL_DRAIN:
	case PL_DRAIN_NOCKPT:
	case PL_DRAIN_PUT:
	case PL_DRAINED:
	case PL_DRAIN_FAILED:
		return SS_DRAINING;
	case PL_DONE:
		/* stopped for good without being asked to: halted (the
		 * others of the process go on) */
		return stopping ? SS_DRAINING : SS_HALTED;
	case PL_TEARDOWN:
	default:
		/* a failure stops the pipeline on its way to the backoff */
		return stopping ? SS_DRAINING : SS_BACKOFF;
	}
}

void
sv_health_init(struct sv_health *h, int stall_s)
{
	memset(h, 0, sizeof(*h));
	h->stall_ms = (long long)(stall_s > 0 ? stall_s : 60) * 1000;
}

void
sv_health_reset(struct sv_health *h, long long now)
{
	h->have = 0;
	h->moved_ms = now;
	h->waiting = 0;
}

void
sv_health_observe(struct sv_health *h, long long now, uint64_t received,
    uint64_t confirmed, uint64_t written, int loading)
{
	int waiting = received > confirmed || loading;
	int moved = h->have && (confirmed != h->confirmed ||
	    written != h->written);

	/* a wait is timed from when it began, not from the last quiet
	 * moment before it */
	if (moved || (waiting && !h->waiting) || !h->have)
		h->moved_ms = now;
	h->have = 1;
	h->received = received;
	h->confirmed = confirmed;
	h->written = written;
	h->waiting = waiting;
}

long long
sv_health_stalled_ms(const struct sv_health *h, long long now)
{
	if (!h->waiting || now < h->moved_ms)
		return 0;
	return now - h->moved_ms;
}

int
sv_health_stalled(const struct sv_health *h, long long now)
{
	return h->waiting && sv_health_stalled_ms(h, now) >= h->stall_ms;
}
