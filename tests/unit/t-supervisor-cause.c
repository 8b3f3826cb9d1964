/*
 * t-supervisor-cause - which child's end caused a failed incarnation
 * (supervisor/cause.c), for each ordering of exits it decides between:
 * the end nearest the source before the ends downstream of it, a failure
 * before a clean end, a 65 that is the consequence of a frame its
 * upstream cut short (signal, same reaping round, earlier round) or the
 * cause itself (its upstream reaped later), the load descriptor, the
 * ends the supervisor caused by signalling, a loader that finished.
 */
#include <signal.h>
#include <string.h>

#include "p2o.h"
#include "../../supervisor/supervisor.h"
#include "tap.h"

static struct sv_end e[SV_NKIDS];

static void
reset(void)
{
	memset(e, 0, sizeof(e));
}

/* child k exited with code (-signo for a signal) in reaping round r */
static void
ended(int k, int code, unsigned r)
{
	e[k].started = 1;
	e[k].exited = 1;
	e[k].code = code;
	e[k].round = r;
}

/* child k ran, and the supervisor signalled it before it ended */
static void
stopped(int k, int code, unsigned r)
{
	ended(k, code, r);
	e[k].signalled = 1;
}

static void
running(int k)
{
	e[k].started = 1;
}

static void
test_order(void)
{
	/* the capture ended, the shaper saw its input end and exited 0:
	 * whichever was reaped first, the capture is what happened */
	reset();
	ended(SV_SHAPER, 0, 1);
	ended(SV_CAPTURE, 75, 2);
	stopped(SV_WRITER, -SIGTERM, 3);
	is_int(sv_cause_first(e), SV_CAPTURE, "capture 75 reaped after the "
	    "shaper's clean end: the capture");
	is_int(sv_cause_permanent(e), -1, "and nothing permanent: restart");
	reset();
	ended(SV_CAPTURE, 75, 1);
	ended(SV_SHAPER, 0, 2);
	is_int(sv_cause_first(e), SV_CAPTURE, "capture reaped first: the "
	    "capture");

	/* a failure before a clean end, even downstream */
	reset();
	ended(SV_SHAPER, 0, 1);
	ended(SV_WRITER, 75, 1);
	is_int(sv_cause_first(e), SV_WRITER, "shaper 0, writer 75: the "
	    "writer's failure, though the shaper is nearer the source");

	/* a stage killed from outside: the capture upstream of it exits 75
	 * on its broken pipe, but the kill is what happened */
	reset();
	ended(SV_SHAPER, -SIGKILL, 2);
	ended(SV_CAPTURE, 75, 1);
	is_int(sv_cause_first(e), SV_SHAPER, "shaper killed by a signal from "
	    "outside, capture 75 on its pipe: the shaper");
	reset();
	ended(SV_SHAPER, -SIGPIPE, 1);
	ended(SV_CAPTURE, 75, 1);
	is_int(sv_cause_first(e), SV_CAPTURE, "but a SIGPIPE is a consequence: "
	    "the capture");
	reset();
	ended(SV_SHAPER, -SIGPIPE, 1);
	ended(SV_WRITER, 75, 2);
	is_int(sv_cause_first(e), SV_WRITER, "writer 75, the shaper writing to "
	    "it dead of SIGPIPE and reaped first: the writer, downstream");

	/* two failures: the one nearest the source */
	reset();
	ended(SV_WRITER, 75, 1);
	ended(SV_SHAPER, 1, 2);
	is_int(sv_cause_first(e), SV_SHAPER, "writer 75 then shaper 1: the "
	    "shaper, upstream of the writer");

	/* a tie in depth goes to the first in the table */
	reset();
	ended(SV_CAPTURE, 75, 2);
	ended(SV_CKPT, 75, 1);
	is_int(sv_cause_first(e), SV_CKPT, "ckpt and capture both 75: ckpt, "
	    "first in the table");

	/* ends the supervisor caused are no cause */
	reset();
	ended(SV_SHAPER, 1, 1);
	stopped(SV_CAPTURE, -SIGTERM, 2);
	stopped(SV_WRITER, -SIGKILL, 2);
	is_int(sv_cause_first(e), SV_SHAPER, "the capture killed by our "
	    "SIGTERM is not the cause: the shaper that ended by itself is");
	reset();
	stopped(SV_CAPTURE, 0, 2);
	ended(SV_WRITER, 1, 1);
	is_int(sv_cause_first(e), SV_WRITER, "a clean exit after our SIGTERM "
	    "loses to a failure");

	/* a kill from outside counts as the child's own end */
	reset();
	ended(SV_CAPTURE, -SIGKILL, 2);
	ended(SV_SHAPER, 65, 1);
	is_int(sv_cause_first(e), SV_CAPTURE, "capture killed from outside, "
	    "shaper 65 reaped first: the capture");

	/* nothing ended on its own (a hello timeout, a protocol error) */
	reset();
	stopped(SV_CAPTURE, -SIGTERM, 1);
	stopped(SV_SHAPER, -SIGTERM, 1);
	running(SV_WRITER);
	is_int(sv_cause_first(e), -1, "every end caused by our signals: none "
	    "(the teardown's own reason stands)");
	stopped(SV_SHAPER, 0, 1);
	is_int(sv_cause_first(e), SV_SHAPER, "but an exit code is the child's "
	    "own word, signalled or not");
}

static void
test_permanent(void)
{
	reset();
	ended(SV_CAPTURE, 69, 1);
	stopped(SV_SHAPER, 0, 2);
	is_int(sv_cause_permanent(e), SV_CAPTURE, "capture 69: it stops the "
	    "supervisor");
	reset();
	ended(SV_WRITER, 77, 1);
	stopped(SV_CAPTURE, 0, 2);
	is_int(sv_cause_permanent(e), SV_WRITER, "writer 77 with the capture "
	    "stopped cleanly after it: the writer's 77");
	reset();
	ended(SV_CAPTURE, 75, 1);
	ended(SV_WRITER, 1, 1);
	is_int(sv_cause_permanent(e), -1, "75 and 1 are temporary");

	/* the shaper's 65: a frame its upstream cut short, or its own? */
	reset();
	ended(SV_CAPTURE, -SIGKILL, 2);
	ended(SV_SHAPER, 65, 1);
	is_int(sv_cause_permanent(e), -1, "shaper 65 reaped before a capture "
	    "killed from outside: the kill explains it, restart");
	reset();
	ended(SV_CAPTURE, -SIGSEGV, 1);
	ended(SV_SHAPER, 65, 1);
	is_int(sv_cause_permanent(e), -1, "the same round: a crash upstream "
	    "explains it");
	reset();
	ended(SV_CAPTURE, 75, 1);
	ended(SV_SHAPER, 65, 1);
	is_int(sv_cause_permanent(e), -1, "capture 75 in the same round: the "
	    "65 is its consequence");
	reset();
	ended(SV_CAPTURE, 75, 1);
	ended(SV_SHAPER, 65, 2);
	is_int(sv_cause_permanent(e), -1, "capture 75 a round earlier: the "
	    "65 is its consequence");
	reset();
	ended(SV_SHAPER, 65, 1);
	ended(SV_CAPTURE, 75, 2);
	is_int(sv_cause_permanent(e), SV_SHAPER, "capture 75 reaped a round "
	    "after the shaper's 65: the 65 came first, it is the cause");
	reset();
	ended(SV_SHAPER, 65, 1);
	ended(SV_CAPTURE, -SIGPIPE, 2);
	is_int(sv_cause_permanent(e), SV_SHAPER, "a capture dead of SIGPIPE "
	    "(its reader gone) reaped later explains nothing");
	reset();
	ended(SV_SHAPER, 65, 1);
	running(SV_CAPTURE);
	is_int(sv_cause_permanent(e), SV_SHAPER, "the capture still running: "
	    "the shaper's 65 is its own");
	reset();
	ended(SV_SHAPER, 65, 1);
	stopped(SV_CAPTURE, -SIGTERM, 2);
	is_int(sv_cause_permanent(e), SV_SHAPER, "a capture our SIGTERM ended, "
	    "reaped after the shaper: no excuse");
	e[SV_CAPTURE].round = 1;
	is_int(sv_cause_permanent(e), -1, "reaped in the same round: the "
	    "shaper's input ended with it");
	reset();
	ended(SV_WRITER, 65, 2);
	ended(SV_SHAPER, 0, 1);
	is_int(sv_cause_permanent(e), -1, "writer 65 after the shaper ended "
	    "(a frame cut short): consequence");
}

static void
test_load(void)
{
	/* the shaper's fd 4 from the loader */
	reset();
	running(SV_CAPTURE);
	ended(SV_LOADER, 75, 1);
	ended(SV_SHAPER, 65, 1);
	is_int(sv_cause_permanent(e), -1, "loader 75 and shaper 65 in one "
	    "round: a copy row cut short, restart");
	is_int(sv_cause_first(e), SV_LOADER, "named by the loader");
	reset();
	running(SV_CAPTURE);
	ended(SV_LOADER, 0, 1);
	ended(SV_SHAPER, 65, 1);
	is_int(sv_cause_permanent(e), SV_SHAPER, "a loader that exited 0 "
	    "wrote whole frames: the shaper's 65 is its own");
	reset();
	ended(SV_LOADER, 0, 1);
	running(SV_CAPTURE);
	is_int(sv_cause_first(e), -1, "a loader that finished is not a "
	    "failure");
	reset();
	ended(SV_LOADER, 0, 1);
	ended(SV_WRITER, 75, 2);
	is_int(sv_cause_first(e), SV_WRITER, "nor does it hide one");
	reset();
	ended(SV_LOADER, 69, 1);
	stopped(SV_SHAPER, 0, 2);
	is_int(sv_cause_permanent(e), SV_LOADER, "loader 69: permanent");
}

static void
test_taps(void)
{
	is_int(sv_kid_upstream(SV_TAP_OF(SV_SHAPER)), SV_CAPTURE,
	    "the events tap reads the capture");
	is_int(sv_kid_upstream(SV_TAP4_OF(SV_SHAPER)), SV_LOADER,
	    "the loads tap reads the loader");
	is_int(sv_kid_depth(SV_TAP_OF(SV_WRITER)), 2, "the ops tap is two "
	    "stages from the source");
	reset();
	ended(SV_TAP_OF(SV_SHAPER), 0, 1);
	ended(SV_CAPTURE, 75, 2);
	ended(SV_SHAPER, 0, 2);
	is_int(sv_cause_first(e), SV_CAPTURE, "events tap and shaper ended "
	    "cleanly around the capture's 75: the capture");
	reset();
	ended(SV_TAP_OF(SV_WRITER), 75, 1);
	ended(SV_WRITER, 0, 1);
	running(SV_CAPTURE);
	is_int(sv_cause_first(e), SV_TAP_OF(SV_WRITER), "a tap that failed "
	    "is named");
	reset();
	ended(SV_TAP_OF(SV_SHAPER), 65, 1);
	running(SV_CAPTURE);
	is_int(sv_cause_permanent(e), SV_TAP_OF(SV_SHAPER), "a tap's own 65 "
	    "stops the supervisor as a stage's does");
	reset();
	ended(SV_CAPTURE, -SIGKILL, 2);
	ended(SV_TAP_OF(SV_SHAPER), 65, 1);
	is_int(sv_cause_permanent(e), -1, "and is explained by its input's "
	    "end like a stage's");
}

int
main(void)
{
	test_order();
	test_permanent();
	test_load();
	test_taps();
	return done_testing();
}
