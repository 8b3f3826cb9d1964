/*
 * t-supervisor-backchannel - durable -> put -> stored -> ack: nothing is
 * acked that ckpt did not report stored, puts are coalesced to the
 * interval, and the restart backoff's arithmetic.
 */
#include <stdint.h>
#include <string.h>

#include "../../supervisor/supervisor.h"
#include "tap.h"

static void
test_ack_only_after_stored(void)
{
	struct sv_backchannel bc;
	uint64_t pos = 0, ack = 0;
	const char *text = NULL;

	sv_bc_init(&bc, 1000, 0, 0, NULL);
	ok(!sv_bc_next_put(&bc, 0, 0, &pos, &text),
	    "nothing durable: no put");
	ok(sv_bc_durable(&bc, 100, "0/64") == 0, "durable 100");
	ok(sv_bc_next_put(&bc, 0, 0, &pos, &text), "put goes out");
	is_int(pos, 100, "put carries the durable position");
	is_str(text, "0/64", "and its text");
	ok(!sv_bc_settled(&bc), "a put in flight is not settled");
	sv_bc_durable(&bc, 200, "0/C8");
	ok(!sv_bc_next_put(&bc, 5000, 1, &pos, &text),
	    "one put at a time, even forced");
	is_int(sv_bc_stored(&bc, 200, &ack), -1,
	    "stored for a position never put is refused");
	is_int(sv_bc_stored(&bc, 100, &ack), 1, "stored 100 -> ack");
	is_int(ack, 100, "the ack is the stored position, not the durable 200");
	is_str(bc.stored_text, "0/64", "the stored position's text is the "
	    "one put with it (what /synced compares)");
	is_int(bc.acked, 100, "acked stays at 100");
	is_int(sv_bc_stored(&bc, 100, &ack), -1, "a second stored is refused");
	ok(!sv_bc_settled(&bc), "200 is still waiting");
	sv_bc_release(&bc);
}

static void
test_interval_coalescing(void)
{
	struct sv_backchannel bc;
	uint64_t pos = 0, ack = 0;
	const char *text = NULL;
	int puts = 0;
	long long t;

	sv_bc_init(&bc, 1000, 1, 50, "0/32");
	is_str(bc.stored_text, "0/32", "a restart's stored text is the "
	    "checkpoint's");
	sv_bc_durable(&bc, 40, "0/28");
	ok(!sv_bc_next_put(&bc, 0, 0, &pos, &text),
	    "durable behind the stored checkpoint: no put (replay)");
	is_int(sv_bc_deadline(&bc), -1, "and no deadline");
	ok(sv_bc_settled(&bc), "settled");

	/* 100 durables over 3 s, each stored at once */
	for (t = 0; t < 3000; t += 30) {
		sv_bc_durable(&bc, 100 + (uint64_t)t, "");
		if (sv_bc_next_put(&bc, t, 0, &pos, &text)) {
			puts++;
			ok(sv_bc_stored(&bc, pos, &ack) == 1 && ack == pos,
			    "put %d at %lld ms acked at its own position",
			    puts, t);
		}
	}
	is_int(puts, 3, "three puts in three seconds at a 1 s interval");
	is_int(sv_bc_deadline(&bc), 2040 + 1000,
	    "the next put waits an interval after the last (at 2040 ms)");
	ok(sv_bc_next_put(&bc, 2990, 1, &pos, &text),
	    "forced (draining): the put goes out before the interval");
	is_int(pos, 100 + 2970, "with the newest durable");
	is_int(sv_bc_stored(&bc, pos, &ack), 1, "stored");
	ok(sv_bc_settled(&bc), "settled after the last one");
	is_int(sv_bc_durable(&bc, 5, ""), -1, "a durable going back is refused");
	is_int(bc.durable, 3070, "and changes nothing");
	sv_bc_release(&bc);
}

static void
test_never_beyond_stored(void)
{
	struct sv_backchannel bc;
	uint64_t pos, ack, maxack = 0, putmax = 0;
	const char *text = NULL;
	unsigned seed = 7;
	int i, bad = 0;

	/* random interleavings: the ack never passes what was stored */
	sv_bc_init(&bc, 10, 0, 0, NULL);
	for (i = 0; i < 10000; i++) {
		seed = seed * 1103515245 + 12345;
		switch ((seed >> 16) % 3) {
		case 0:
			sv_bc_durable(&bc, bc.durable + (seed >> 20) % 5, "");
			break;
		case 1:
			if (sv_bc_next_put(&bc, i, 0, &pos, &text) &&
			    pos > putmax)
				putmax = pos;
			break;
		case 2:
			if (bc.have_inflight &&
			    sv_bc_stored(&bc, bc.inflight, &ack) == 1) {
				if (ack < maxack || ack > bc.stored ||
				    ack > putmax)
					bad++;
				maxack = ack;
			}
			break;
		}
	}
	is_int(bad, 0, "10000 random steps: acks monotonic, never past stored");
	ok(maxack > 0, "and some acks happened (%llu)",
	    (unsigned long long)maxack);
	sv_bc_release(&bc);
}

static void
test_backoff(void)
{
	struct sv_backoff b;
	static const int want[] = { 1000, 2000, 4000, 8000, 16000, 30000,
	    30000 };
	int i;

	memset(&b, 0, sizeof(b));
	for (i = 0; i < 7; i++)
		is_int(sv_backoff_failure(&b, 0), want[i],
		    "failure %d waits %d ms", i + 1, want[i]);
	is_int(b.failures, 7, "seven consecutive failures");
	is_int(sv_backoff_failure(&b, 59999), 30000,
	    "up 59.999 s is not healthy: still 30 s");
	is_int(b.failures, 8, "and counted");
	is_int(sv_backoff_failure(&b, 60000), 1000,
	    "up 60 s: back to 1 s");
	is_int(b.failures, 1, "and the count restarts at 1");
	is_int(sv_backoff_failure(&b, 0), 2000, "then doubles again");

	/* source.reconnect_backoff_ms: the first delay, then the same rule */
	memset(&b, 0, sizeof(b));
	b.first_ms = 3000;
	is_int(sv_backoff_failure(&b, 0), 3000, "reconnect_backoff_ms 3000: "
	    "the first delay");
	is_int(sv_backoff_failure(&b, 0), 6000, "doubled");
	is_int(sv_backoff_failure(&b, 0), 12000, "doubled");
	is_int(sv_backoff_failure(&b, 0), 24000, "doubled");
	is_int(sv_backoff_failure(&b, 0), 30000, "capped at 30 s");
	is_int(sv_backoff_failure(&b, 60000), 3000, "after a healthy run, the "
	    "first delay again");
	memset(&b, 0, sizeof(b));
	b.first_ms = 120000;
	is_int(sv_backoff_failure(&b, 0), 120000, "a first delay above 30 s");
	is_int(sv_backoff_failure(&b, 0), 120000, "is its own cap");
}

int
main(void)
{
	test_ack_only_after_stored();
	test_interval_coalescing();
	test_never_beyond_stored();
	test_backoff();
	return done_testing();
}
