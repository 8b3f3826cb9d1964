/*
 * order.c - the in-order rule of the back-channel with several requests
 * open: flushes are numbered in the order they were cut, may be written in
 * any order, and are reported in the order they were cut, so a position is
 * reported only when every flush before it is written. A flush that fails
 * or retries holds back every one behind it, and at most cap are open, so a
 * stuck one stops the window (and through it the input) once the cap - 1
 * after it are written, rather than letting it run further ahead. Pure: no
 * I/O, no clock, no knowledge of what a flush holds.
 */
#include <stdlib.h>
#include <string.h>

#include "writer.h"

void
order_init(struct order *o, int cap)
{
	memset(o, 0, sizeof(*o));
	o->cap = cap > 0 ? cap : 1;
	o->done = xcalloc(o->cap, 1);
}

void
order_release(struct order *o)
{
	free(o->done);
	memset(o, 0, sizeof(*o));
}

int
order_full(const struct order *o)
{
	return o->next - o->head >= (uint64_t)o->cap;
}

int
order_empty(const struct order *o)
{
	return o->next == o->head;
}

uint64_t
order_open(struct order *o)
{
	o->done[o->next % o->cap] = 0;
	return o->next++;
}

int
order_pending(const struct order *o, uint64_t seq)
{
	return seq >= o->head && seq < o->next && !o->done[seq % o->cap];
}

void
order_finish(struct order *o, uint64_t seq)
{
	if (seq >= o->head && seq < o->next)
		o->done[seq % o->cap] = 1;
}

int
order_pop(struct order *o, uint64_t *seq)
{
	if (order_empty(o) || !o->done[o->head % o->cap])
		return 0;
	*seq = o->head++;
	return 1;
}
