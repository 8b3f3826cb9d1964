/*
 * t-loader-pace.c - engine.load_max_rows_per_sec's bucket (pace.c): no
 * cap waits nothing; a capped load owes rows / rate from its first row
 * (the bucket starts empty); time refills it, at most a second's worth,
 * so a pause banks no burst beyond that.
 */
#include "tap.h"
#include "../../loader/loader.h"

#define S	1000000LL

int
main(void)
{
	struct pace p;
	long long w;

	pace_init(&p, 0, 0);
	is_int(pace_take(&p, 1000000, 0), 0, "no cap: nothing to wait");

	pace_init(&p, 1000, 0);
	w = pace_take(&p, 3000, 0);
	ok(w >= 3 * S && w <= 3 * S + 10, "3000 rows at once at 1000/s owe "
	    "3 s from the start (%lld us)", w);
	/* paid: three seconds later the debt is gone */
	is_int(pace_take(&p, 0, 3 * S + 10), 0, "after waiting it, nothing");
	w = pace_take(&p, 500, 3 * S + 10);
	ok(w >= S / 2 - 20 && w <= S / 2 + 10, "500 more right away owe 0.5 s "
	    "(%lld us)", w);

	/* a long pause banks one second, not ten */
	pace_init(&p, 1000, 0);
	is_int(pace_take(&p, 1000, 10 * S), 0, "after a 10 s pause a second's "
	    "worth is free");
	w = pace_take(&p, 1000, 10 * S);
	ok(w >= S && w <= S + 10, "and no more: the next 1000 owe 1 s "
	    "(%lld us)", w);

	/* taken in small pieces, the pace is the same */
	pace_init(&p, 100, 0);
	for (w = 0; w < 50; w++)
		(void)pace_take(&p, 2, 0);
	w = pace_take(&p, 0, 0);
	ok(w >= S && w <= S + 10, "100 rows in 50 takes at 100/s owe 1 s "
	    "(%lld us)", w);
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
