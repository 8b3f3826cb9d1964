/*
 * memtrim.c - an idle process's free heap pages returned (memtrim.h).
 * malloc_trim(0) gives back every whole free page of every arena, not
 * only the top of the heap as free() does past M_TRIM_THRESHOLD; it
 * walks the free lists, so it runs at most once in MEMTRIM_EVERY_MS and
 * only after work was done since the last time.
 */
#include <malloc.h>

#include "memtrim.h"

static long long last_ms;
static int dirty = 1;

void
mem_busy(void)
{
	dirty = 1;
}

long long
mem_idle_trim(long long now)
{
	if (!dirty)
		return -1;
	if (last_ms != 0 && now - last_ms < MEMTRIM_EVERY_MS)
		return last_ms + MEMTRIM_EVERY_MS - now;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	last_ms = now;
	dirty = 0;
	return -1;
}

void
mem_trim(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}
