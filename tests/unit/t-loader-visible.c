/*
 * t-loader-visible.c - the transactions a wave waits for before its COPY
 * (visible.c): every id the snapshot lists as running, and every id from
 * its xmax up to the fresh one, which a snapshot counts as running
 * without listing.
 */
#include <stdlib.h>

#include "tap.h"
#include "../../loader/loader.h"

static void
wait_set(const char *snap, uint64_t next, const uint64_t *want, size_t nwant)
{
	uint64_t *x;
	size_t n, i;
	int same;

	same = visible_wait_set(snap, next, &x, &n) == 0 && n == nwant;
	for (i = 0; same && i < n; i++)
		same = x[i] == want[i];
	ok(same, "snapshot '%s', next %llu: waits for %zu", snap,
	    (unsigned long long)next, nwant);
	free(x);
}

static void
waits(void)
{
	static const uint64_t a[] = { 100, 102, 104, 105 }, b[] = { 10, 11 },
	    c[] = { 5000000000ULL };
	static const char *const malformed[] = { "", "1:2", "a:b:", "10:5:",
	    "1:5:7", "1:5:0", "1:5:3,", "1:5:,3", "1:5:3;4", "1:5:3 ",
	    "-1:5:", "99999999999999999999:1:" };
	uint64_t *x;
	size_t n, i;

	wait_set("100:104:100,102", 106, a, 4);
	wait_set("100:100:", 100, NULL, 0);
	wait_set("100:100:", 101, (const uint64_t[]){ 100 }, 1);
	wait_set("5:10:", 12, b, 2);
	wait_set("4999999990:5000000000:", 5000000001ULL, c, 1);
	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
		ok(visible_wait_set(malformed[i], 10, &x, &n) == -1 &&
		    x == NULL && n == 0, "snapshot '%s' refused",
		    malformed[i]);
}

int
main(void)
{
	waits();
	return done_testing();
}
