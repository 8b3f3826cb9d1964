/*
 * t-supervisor-health - the source state /ready and /metrics report, and
 * the arithmetic that tells a stuck pipeline from a quiet one.
 */
#include "../../supervisor/supervisor.h"
#include "tap.h"

static void
test_states(void)
{
	static const enum sv_pl_state drains[] = { PL_DRAIN, PL_DRAIN_NOCKPT,
	    PL_DRAIN_PUT, PL_DRAINED, PL_DRAIN_FAILED };
	size_t i;

	is_str(sv_source_states[sv_source_state_of(PL_WAIT, 0, 0, 0)],
	    "starting", "before a start (the first, a reload's): starting");
	is_str(sv_source_states[sv_source_state_of(PL_BACKOFF, 0, 0, 0)],
	    "backoff", "waiting after a failure: backoff");
	is_str(sv_source_states[sv_source_state_of(PL_CHECKPOINT, 0, 0, 0)],
	    "starting", "reading the checkpoint: starting");
	is_str(sv_source_states[sv_source_state_of(PL_STARTING, 0, 1, 0)],
	    "starting", "stages saying hello: starting");
	is_str(sv_source_states[sv_source_state_of(PL_UP, 0, 0, 0)],
	    "streaming", "up: streaming");
	is_str(sv_source_states[sv_source_state_of(PL_UP, 0, 1, 0)],
	    "loading", "up with a load: loading");
	is_str(sv_source_states[sv_source_state_of(PL_UP, 0, 1, 1)],
	    "halted", "a refusal holding the writer: halted, load or not");
	for (i = 0; i < sizeof(drains) / sizeof(drains[0]); i++)
		is_str(sv_source_states[sv_source_state_of(drains[i], 0, 0,
		    0)], "draining", "'%s': draining, for a reload's cycle as "
		    "for a stop", sv_pl_names[drains[i]]);
	is_str(sv_source_states[sv_source_state_of(PL_TEARDOWN, 0, 0, 0)],
	    "backoff", "stopping after a failure: on the way to the backoff");
	is_str(sv_source_states[sv_source_state_of(PL_TEARDOWN, 1, 0, 0)],
	    "draining", "stopping for SIGTERM: draining");
}

static void
test_stall(void)
{
	struct sv_health h;
	long long t = 1000000;

	sv_health_init(&h, 60);
	sv_health_reset(&h, t);
	sv_health_observe(&h, t, 100, 100, 5, 0);
	ok(!sv_health_stalled(&h, t + 3600000), "quiet: nothing waits, an "
	    "hour later it is not stalled");
	/* a change arrives and nothing moves */
	sv_health_observe(&h, t + 10000, 200, 100, 5, 0);
	ok(!sv_health_stalled(&h, t + 69999), "waiting 59.999 s: not yet");
	ok(sv_health_stalled(&h, t + 70000), "waiting 60 s from when it "
	    "began (not from the last quiet look): stalled");
	is_int(sv_health_stalled_ms(&h, t + 75000), 65000, "for 65 s");
	/* the writer writes (a long transaction): progress */
	sv_health_observe(&h, t + 80000, 300, 100, 6, 0);
	ok(!sv_health_stalled(&h, t + 139999), "a write is progress though "
	    "nothing is confirmed");
	ok(sv_health_stalled(&h, t + 140000), "and a minute without one is "
	    "not");
	/* confirmed catches up: nothing waits */
	sv_health_observe(&h, t + 141000, 300, 300, 6, 0);
	ok(!sv_health_stalled(&h, t + 999999), "caught up: not stalled");
	/* a load waits with the stream quiet */
	sv_health_observe(&h, t + 200000, 300, 300, 6, 1);
	ok(sv_health_stalled(&h, t + 260000), "a load writing nothing for "
	    "a minute: stalled");
	sv_health_observe(&h, t + 261000, 300, 300, 900, 1);
	ok(!sv_health_stalled(&h, t + 262000), "a load writing: not");
	/* a restart forgets what waited before */
	sv_health_reset(&h, t + 300000);
	sv_health_observe(&h, t + 300000, 400, 300, 900, 0);
	ok(!sv_health_stalled(&h, t + 359999), "up again: the wait starts "
	    "from then");
	ok(sv_health_stalled(&h, t + 360000), "and is a stall a minute on");
}

int
main(void)
{
	test_states();
	test_stall();
	return done_testing();
}
