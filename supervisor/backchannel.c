/*
 * backchannel.c - the invariant the pipeline rests on (docs/architecture.md,
 * "The back-channel"): a position reaches the capture as an ack only after ckpt
 * reported it stored, and ckpt is asked to store only what the writer
 * reported durable. Also the restart backoff. Pure: no I/O, no clock of its
 * own, so both are tested as arithmetic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "supervisor.h"

void
sv_bc_init(struct sv_backchannel *bc, int interval_ms, int have_stored,
    uint64_t stored, const char *stored_text)
{
	memset(bc, 0, sizeof(*bc));
	bc->interval_ms = interval_ms > 0 ? interval_ms : 0;
	bc->have_stored = have_stored;
	bc->stored = stored;
	if (have_stored && stored_text != NULL)
		bc->stored_text = xstrdup(stored_text);
}

void
sv_bc_release(struct sv_backchannel *bc)
{
	free(bc->durable_text);
	free(bc->inflight_text);
	free(bc->stored_text);
	memset(bc, 0, sizeof(*bc));
}

int
sv_bc_durable(struct sv_backchannel *bc, uint64_t pos, const char *text)
{
	if (bc->have_durable && pos < bc->durable)
		return -1;
	bc->have_durable = 1;
	bc->durable = pos;
	free(bc->durable_text);
	bc->durable_text = xstrdup(text ? text : "");
	return 0;
}

/* a durable position the checkpoint does not hold yet */
static int
pending(const struct sv_backchannel *bc)
{
	if (!bc->have_durable)
		return 0;
	return !bc->have_stored || bc->durable > bc->stored;
}

int
sv_bc_next_put(struct sv_backchannel *bc, long long now_ms, int force,
    uint64_t *pos, const char **text)
{
	/* one put at a time: ckpt answers in order, and a second put
	 * could only carry a position the first one does not cover yet */
	if (bc->have_inflight || !pending(bc))
		return 0;
	if (!force && now_ms < bc->next_put_ms)
		return 0;
	bc->have_inflight = 1;
	bc->inflight = bc->durable;
	bc->next_put_ms = now_ms + bc->interval_ms;
	free(bc->inflight_text);
	bc->inflight_text = xstrdup(bc->durable_text);
	*pos = bc->durable;
	*text = bc->inflight_text;
	return 1;
}

long long
sv_bc_deadline(const struct sv_backchannel *bc)
{
	if (bc->have_inflight || !pending(bc))
		return -1;
	return bc->next_put_ms;
}

int
sv_bc_stored(struct sv_backchannel *bc, uint64_t pos, uint64_t *ack)
{
	if (!bc->have_inflight || pos != bc->inflight)
		return -1;
	bc->have_inflight = 0;
	if (!bc->have_stored || pos > bc->stored) {
		bc->have_stored = 1;
		bc->stored = pos;
		/* /synced compares the stored position by its text: only
		 * the source orders its positions (synced.c) */
		free(bc->stored_text);
		bc->stored_text = bc->inflight_text;
		bc->inflight_text = NULL;
	}
	if (bc->have_acked && bc->acked >= bc->stored)
		return 0;
	bc->have_acked = 1;
	bc->acked = bc->stored;
	*ack = bc->acked;
	return 1;
}

int
sv_bc_settled(const struct sv_backchannel *bc)
{
	return !bc->have_inflight && !pending(bc);
}

int
sv_backoff_failure(struct sv_backoff *b, long long up_ms)
{
	int first = b->first_ms > 0 ? b->first_ms : SV_BACKOFF_MIN_MS;
	int cap = first > SV_BACKOFF_MAX_MS ? first : SV_BACKOFF_MAX_MS;

	if (up_ms >= SV_HEALTHY_MS) {
		b->failures = 0;
		b->delay_ms = 0;
	}
	b->failures++;
	if (b->delay_ms < first)
		b->delay_ms = first;
	else if (b->delay_ms >= cap / 2)
		b->delay_ms = cap;
	else
		b->delay_ms *= 2;
	return b->delay_ms;
}
