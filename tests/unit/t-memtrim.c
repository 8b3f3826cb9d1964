/*
 * t-memtrim.c - lib/memtrim.c: an idle program's heap is trimmed once
 * after work, at most once in MEMTRIM_EVERY_MS, and a caller about to
 * wait learns when the next trim is due; the pages a freed block held go
 * back to the system.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "memtrim.h"

/* the process's resident pages, in kB */
static long
resident_kb(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res * 4;
}

int
main(void)
{
	char *keep, *blocks[64];
	long before;
	int i;

	/* work was done before the first call: a trim, then none due */
	is_int(mem_idle_trim(100000), -1, "the first idle moment trims");
	is_int(mem_idle_trim(100010), -1, "nothing done since: none due");
	mem_busy();
	is_int(mem_idle_trim(100400), 600, "work 400 ms after a trim: "
	    "due in 600 ms");
	is_int(mem_idle_trim(100999), 1, "... and 1 ms before it");
	is_int(mem_idle_trim(101000), -1, "a second after: trims");
	is_int(mem_idle_trim(105000), -1, "then none due while idle");

	/* 64 blocks of 16 kB below one still in use: free() keeps their
	 * pages resident (the heap's top is not free), the trim hands
	 * them back */
	for (i = 0; i < 64; i++)
		memset(blocks[i] = malloc(16384), 1, 16384);
	keep = malloc(64);
	strcpy(keep, "in use");
	for (i = 0; i < 64; i++)
		free(blocks[i]);
	before = resident_kb();
	mem_busy();
	is_int(mem_idle_trim(200000), -1, "after work an hour on: trims");
#ifdef __SANITIZE_ADDRESS__
	/* AddressSanitizer's allocator keeps freed blocks in quarantine and
	 * has no malloc_trim of its own */
	(void)before;
	ok(1, "# skip the sanitizer's allocator trims nothing");
#else
	ok(resident_kb() <= before - 512, "the freed 1 MB below a block in "
	    "use left the resident pages (%ld kB, were %ld)", resident_kb(),
	    before);
#endif
	is_str(keep, "in use", "a block in use is untouched");
	free(keep);
	return done_testing();
}
