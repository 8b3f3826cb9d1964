/*
 * t-supervisor-state - the supervisor's states and the events that move
 * them (supervisor/state.c): every move of the pipeline's phase and every
 * refusal, phase by phase; the paths through a drain and a reload's cycle;
 * a SIGTERM while ckpt reads the checkpoint, in a backoff and during a
 * load; a stage crashing during a drain; a lost position and the sweep it
 * owes; and, over every state reachable from the first, what must always
 * hold (a stop is never forgotten, every drain has an end, SIGTERM always
 * does something, the end is always reachable).
 */
#include <string.h>

#include "../../supervisor/supervisor.h"
#include "tap.h"

static struct sv_state
S(enum sv_pl_state pl, enum sv_plan plan, enum sv_stream stream,
    enum sv_sweep sweep)
{
	struct sv_state s;

	memset(&s, 0, sizeof(s));
	s.pl = pl;
	s.plan = plan;
	s.stream = stream;
	s.sweep = sweep;
	return s;
}

static int
same(const struct sv_state *a, const struct sv_state *b)
{
	return a->pl == b->pl && a->plan == b->plan &&
	    a->stream == b->stream && a->sweep == b->sweep;
}

static const char *
show(const struct sv_state *s)
{
	static char buf[4][160];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s, plan %s, stream %s, sweep %s",
	    sv_pl_names[s->pl], sv_plan_names[s->plan],
	    sv_stream_names[s->stream], sv_sweep_names[s->sweep]);
	return buf[i];
}

/* ev moves *st to want (and *st follows) */
static void
moves(struct sv_state *st, enum sv_event ev, struct sv_state want,
    const char *what)
{
	struct sv_state to;
	int r = sv_state_next(st, ev, &to);

	if (!ok(r == 0 && same(&to, &want), "%s", what)) {
		diag("from %s on %s", show(st), sv_event_names[ev]);
		diag("got  %s", r == 0 ? show(&to) : "refused");
		diag("want %s", show(&want));
	}
	if (r == 0)
		*st = to;
}

static void
refused(const struct sv_state *st, enum sv_event ev, const char *what)
{
	struct sv_state to;

	if (!ok(sv_state_next(st, ev, &to) == -1, "%s", what))
		diag("%s on %s led to %s", show(st), sv_event_names[ev],
		    show(&to));
}

/*
 * Every phase, in the plan it runs under (a drain's and the end's a stop),
 * on every event: where it leads, or 0 when refused. The facts about the
 * stream and the sweep (EV_STORED, EV_SWEEP_OWED, EV_SWEEP_CLEAR) leave
 * the phase alone in every phase but done.
 */
#define G(pl)	((int)(pl) + 1)
#define FACTS(pl) [EV_STORED] = G(pl), [EV_SWEEP_OWED] = G(pl), \
	[EV_SWEEP_CLEAR] = G(pl), [EV_ABORT] = G(PL_DONE)

static const int grid[PL_NSTATES][EV_N] = {
	[PL_WAIT] = { FACTS(PL_WAIT), [EV_START] = G(PL_CHECKPOINT),
	    [EV_TERM] = G(PL_DONE) },
	[PL_BACKOFF] = { FACTS(PL_BACKOFF), [EV_START] = G(PL_CHECKPOINT),
	    [EV_TERM] = G(PL_DONE) },
	[PL_CHECKPOINT] = { FACTS(PL_CHECKPOINT),
	    [EV_LOADED] = G(PL_STARTING), [EV_FAIL] = G(PL_TEARDOWN),
	    [EV_TERM] = G(PL_TEARDOWN), [EV_RELOAD] = G(PL_CHECKPOINT) },
	[PL_STARTING] = { FACTS(PL_STARTING), [EV_UP] = G(PL_UP),
	    [EV_FAIL] = G(PL_TEARDOWN), [EV_TERM] = G(PL_DRAIN),
	    [EV_RELOAD] = G(PL_DRAIN) },
	[PL_UP] = { FACTS(PL_UP), [EV_FAIL] = G(PL_TEARDOWN),
	    [EV_TERM] = G(PL_DRAIN), [EV_RELOAD] = G(PL_DRAIN) },
	[PL_DRAIN] = { FACTS(PL_DRAIN), [EV_FAIL] = G(PL_TEARDOWN),
	    [EV_TERM] = G(PL_DRAIN), [EV_WRITER_DONE] = G(PL_DRAIN_PUT),
	    [EV_CKPT_GONE] = G(PL_DRAIN_NOCKPT),
	    [EV_DRAIN_LATE] = G(PL_DRAIN_FAILED) },
	[PL_DRAIN_NOCKPT] = { FACTS(PL_DRAIN_NOCKPT),
	    [EV_FAIL] = G(PL_TEARDOWN), [EV_TERM] = G(PL_DRAIN_NOCKPT),
	    [EV_WRITER_DONE] = G(PL_DRAIN_FAILED),
	    [EV_DRAIN_LATE] = G(PL_DRAIN_FAILED) },
	[PL_DRAIN_PUT] = { FACTS(PL_DRAIN_PUT), [EV_FAIL] = G(PL_TEARDOWN),
	    [EV_TERM] = G(PL_DRAIN_PUT), [EV_CKPT_GONE] = G(PL_DRAIN_FAILED),
	    [EV_SETTLED] = G(PL_DRAINED),
	    [EV_DRAIN_LATE] = G(PL_DRAIN_FAILED) },
	[PL_DRAINED] = { FACTS(PL_DRAINED), [EV_FAIL] = G(PL_TEARDOWN),
	    [EV_TERM] = G(PL_DRAINED), [EV_DRAIN_LATE] = G(PL_DRAIN_FAILED),
	    [EV_STOPPED] = G(PL_DONE) },
	[PL_DRAIN_FAILED] = { FACTS(PL_DRAIN_FAILED),
	    [EV_FAIL] = G(PL_TEARDOWN), [EV_TERM] = G(PL_DRAIN_FAILED),
	    [EV_DRAIN_LATE] = G(PL_DRAIN_FAILED), [EV_STOPPED] = G(PL_DONE) },
	[PL_TEARDOWN] = { FACTS(PL_TEARDOWN), [EV_TERM] = G(PL_TEARDOWN),
	    [EV_RESTART] = G(PL_BACKOFF), [EV_LOST] = G(PL_WAIT),
	    [EV_FATAL] = G(PL_DONE) },
	[PL_DONE] = { 0 },
};

static void
test_grid(void)
{
	struct sv_state st, to;
	int pl, ev, r, bad, allowed = 0;

	for (pl = 0; pl < PL_NSTATES; pl++) {
		st = S((enum sv_pl_state)pl, sv_pl_has((enum sv_pl_state)pl,
		    PLF_DRAIN) || pl == PL_DONE ? PLAN_STOP : PLAN_RUN,
		    STREAM_KEPT, SWEEP_NONE);
		bad = 0;
		for (ev = 0; ev < EV_N; ev++) {
			r = sv_state_next(&st, (enum sv_event)ev, &to);
			if ((r == 0 ? G(to.pl) : 0) == grid[pl][ev]) {
				allowed += r == 0;
				continue;
			}
			bad++;
			diag("%s on %s: got %s, want %s", sv_pl_names[pl],
			    sv_event_names[ev], r == 0 ? sv_pl_names[to.pl] :
			    "refused", grid[pl][ev] ?
			    sv_pl_names[grid[pl][ev] - 1] : "refused");
		}
		ok(bad == 0, "'%s': every event leads where the grid says, "
		    "or is refused", sv_pl_names[pl]);
	}
	diag("%d moves allowed in the grid's states", allowed);
}

static void
test_start(void)
{
	struct sv_state st, zero;

	memset(&zero, 0, sizeof(zero));
	ok(same(&zero, &(struct sv_state){ PL_WAIT, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE }), "all zero: waiting for the first start, a kept "
	    "stream, no sweep owed");
	st = zero;
	moves(&st, EV_START, S(PL_CHECKPOINT, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "the first start: ckpt reads the checkpoint");
	refused(&st, EV_UP, "no stage is up before the load frame");
	moves(&st, EV_SWEEP_CLEAR, st, "ckpt owes no sweep");
	moves(&st, EV_LOADED, S(PL_STARTING, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "the load frame: the stages start");
	refused(&st, EV_LOADED, "a second load frame is no one's");
	moves(&st, EV_UP, S(PL_UP, PLAN_RUN, STREAM_KEPT, SWEEP_NONE),
	    "every hello: up");
	refused(&st, EV_START, "nothing starts over a running pipeline");
	refused(&st, EV_WRITER_DONE, "a writer's end outside a drain is no "
	    "step of one");
	refused(&st, EV_STOPPED, "no stop without a SIGTERM");
	refused(&st, EV_RESTART, "no restart before every child is reaped");
	ok(sv_pl_has(PL_UP, PLF_STAGES | PLF_CHANNELS | PLF_FLOW) &&
	    !sv_pl_has(PL_UP, PLF_STOPPING | PLF_DRAIN | PLF_FINAL),
	    "up: stages, channels and the flow; nothing stopping");
	ok(!sv_pl_has(PL_CHECKPOINT, PLF_STAGES | PLF_FLOW) &&
	    sv_pl_has(PL_CHECKPOINT, PLF_CHANNELS), "reading the "
	    "checkpoint: ckpt's channel counts, no stage yet");
}

static void
test_drain(void)
{
	struct sv_state st = S(PL_UP, PLAN_RUN, STREAM_KEPT, SWEEP_NONE);
	char buf[160];

	moves(&st, EV_TERM, S(PL_DRAIN, PLAN_STOP, STREAM_KEPT, SWEEP_NONE),
	    "SIGTERM while up: the drain, to stop");
	is_str(sv_state_diff(&(struct sv_state){ PL_UP, PLAN_RUN,
	    STREAM_KEPT, SWEEP_NONE }, &st, buf, sizeof(buf)),
	    "up -> draining, plan run on -> stop", "the debug line names "
	    "what changed");
	moves(&st, EV_TERM, st, "a second SIGTERM: already stopping");
	refused(&st, EV_SETTLED, "nothing is settled before the writer's "
	    "last durable position");
	ok(!sv_pl_has(st.pl, PLF_FINAL), "puts keep their interval while "
	    "the writer writes");
	moves(&st, EV_WRITER_DONE, S(PL_DRAIN_PUT, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "the writer done: its last position is put");
	ok(sv_pl_has(st.pl, PLF_FINAL | PLF_FLOW), "that put goes at once");
	moves(&st, EV_SETTLED, S(PL_DRAINED, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "stored: the channels close, the exits awaited");
	refused(&st, EV_CYCLE, "a stop's drain does not start again");
	moves(&st, EV_STOPPED, S(PL_DONE, PLAN_STOP, STREAM_KEPT, SWEEP_NONE),
	    "every child reaped: done");
	refused(&st, EV_TERM, "done: SIGTERM does nothing more");

	/* ckpt gone before the last position was stored */
	st = S(PL_DRAIN, PLAN_STOP, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_CKPT_GONE, S(PL_DRAIN_NOCKPT, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "ckpt gone while the writer writes: remembered");
	moves(&st, EV_WRITER_DONE, S(PL_DRAIN_FAILED, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "then the writer's end: no put, a failed drain");
	moves(&st, EV_STOPPED, S(PL_DONE, PLAN_STOP, STREAM_KEPT, SWEEP_NONE),
	    "which still ends (exit 75 is the loop's)");
	st = S(PL_DRAIN_PUT, PLAN_STOP, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_CKPT_GONE, S(PL_DRAIN_FAILED, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "ckpt gone with the put out: failed");
	refused(&st, EV_CKPT_GONE, "ckpt's end after the failure: nothing "
	    "more");
	st = S(PL_DRAINED, PLAN_STOP, STREAM_KEPT, SWEEP_NONE);
	refused(&st, EV_CKPT_GONE, "ckpt's end once everything is stored: "
	    "no failure");
	moves(&st, EV_DRAIN_LATE, S(PL_DRAIN_FAILED, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "out of time waiting for the exits: failed");

	/* a stage crashing during the drain */
	st = S(PL_DRAIN, PLAN_STOP, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_FAIL, S(PL_TEARDOWN, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "a crash while draining: every child stops");
	refused(&st, EV_RESTART, "and no restart follows a stop");
	refused(&st, EV_LOST, "nor a new stream");
	refused(&st, EV_FAIL, "a second failure adds nothing");
	moves(&st, EV_STOPPED, S(PL_DONE, PLAN_STOP, STREAM_KEPT, SWEEP_NONE),
	    "the stop ends it");
	st = S(PL_DRAIN_PUT, PLAN_STOP, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_FAIL, S(PL_TEARDOWN, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "a protocol error with the last put out: teardown");
	st = S(PL_TEARDOWN, PLAN_STOP, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_FATAL, S(PL_DONE, PLAN_STOP, STREAM_KEPT, SWEEP_NONE),
	    "a permanent exit found then still stops with its code");
}

static void
test_sigterm(void)
{
	struct sv_state st;

	st = S(PL_CHECKPOINT, PLAN_RUN, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_TERM, S(PL_TEARDOWN, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "SIGTERM while ckpt reads the checkpoint: no stage "
	    "to drain, ckpt stopped");
	refused(&st, EV_LOADED, "a load frame after it starts nothing");
	moves(&st, EV_STOPPED, S(PL_DONE, PLAN_STOP, STREAM_KEPT, SWEEP_NONE),
	    "stopped");

	st = S(PL_BACKOFF, PLAN_RUN, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_TERM, S(PL_DONE, PLAN_STOP, STREAM_KEPT, SWEEP_NONE),
	    "SIGTERM in a backoff: done at once");
	refused(&st, EV_START, "and nothing starts after it");

	/* a SIGTERM during the load a lost position set off: the load's
	 * progress and the owed sweep stay ckpt's for the next start */
	st = S(PL_UP, PLAN_RUN, STREAM_NEW, SWEEP_OWED);
	refused(&st, EV_SWEEP_START, "the new stream has no checkpoint: no "
	    "sweep yet");
	moves(&st, EV_TERM, S(PL_DRAIN, PLAN_STOP, STREAM_NEW, SWEEP_OWED),
	    "SIGTERM during the load: the drain (the loader stops with the "
	    "capture)");
	moves(&st, EV_STORED, S(PL_DRAIN, PLAN_STOP, STREAM_KEPT, SWEEP_OWED),
	    "the drain's checkpoint is the new stream's first");
	refused(&st, EV_SWEEP_START, "no sweep starts while draining");
	moves(&st, EV_WRITER_DONE, S(PL_DRAIN_PUT, PLAN_STOP, STREAM_KEPT,
	    SWEEP_OWED), "the writer done");
	moves(&st, EV_SETTLED, S(PL_DRAINED, PLAN_STOP, STREAM_KEPT,
	    SWEEP_OWED), "its position stored");
	moves(&st, EV_STOPPED, S(PL_DONE, PLAN_STOP, STREAM_KEPT, SWEEP_OWED),
	    "done, the sweep still owed");
	refused(&st, EV_SWEEP_START, "and never run once done");
}

static void
test_reload(void)
{
	struct sv_state st;

	st = S(PL_UP, PLAN_RUN, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_RELOAD, S(PL_DRAIN, PLAN_RELOAD, STREAM_KEPT,
	    SWEEP_NONE), "a reload while up: the stages drain for it");
	refused(&st, EV_RELOAD, "another reload: the drain under way serves");
	moves(&st, EV_WRITER_DONE, S(PL_DRAIN_PUT, PLAN_RELOAD, STREAM_KEPT,
	    SWEEP_NONE), "the writer done");
	moves(&st, EV_SETTLED, S(PL_DRAINED, PLAN_RELOAD, STREAM_KEPT,
	    SWEEP_NONE), "its position stored");
	refused(&st, EV_STOPPED, "a reload's drain does not stop the "
	    "supervisor");
	moves(&st, EV_CYCLE, S(PL_WAIT, PLAN_RELOAD, STREAM_KEPT, SWEEP_NONE),
	    "every child reaped: a start due at once, a reload's");
	refused(&st, EV_RELOAD, "a reload now: the start reads the file");
	moves(&st, EV_START, S(PL_CHECKPOINT, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "started: the reload is done");

	/* applied while ckpt reads the checkpoint on the old file */
	st = S(PL_CHECKPOINT, PLAN_RUN, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_RELOAD, S(PL_CHECKPOINT, PLAN_RELOAD_DUE, STREAM_KEPT,
	    SWEEP_NONE), "a reload while ckpt reads the checkpoint: due");
	moves(&st, EV_RELOAD, st, "a second one: still due");
	moves(&st, EV_LOADED, S(PL_STARTING, PLAN_RELOAD_DUE, STREAM_KEPT,
	    SWEEP_NONE), "the stages start");
	moves(&st, EV_RELOAD, S(PL_DRAIN, PLAN_RELOAD, STREAM_KEPT,
	    SWEEP_NONE), "running: the due cycle drains them");

	/* due, and the incarnation fails first: the restart starts ckpt
	 * and every stage on the new file, nothing is left to cycle */
	st = S(PL_CHECKPOINT, PLAN_RELOAD_DUE, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_FAIL, S(PL_TEARDOWN, PLAN_RUN, STREAM_KEPT, SWEEP_NONE),
	    "a failure while a reload is due: the due cycle is dropped");
	moves(&st, EV_RESTART, S(PL_BACKOFF, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "the backoff");
	moves(&st, EV_START, S(PL_CHECKPOINT, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "the restart reads the new file once");
	st = S(PL_UP, PLAN_RELOAD_DUE, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_FAIL, S(PL_TEARDOWN, PLAN_RUN, STREAM_KEPT, SWEEP_NONE),
	    "a failure up before the due cycle drained: the same");

	/* SIGTERM during a reload's drain: the stop wins */
	st = S(PL_DRAIN_PUT, PLAN_RELOAD, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_TERM, S(PL_DRAIN_PUT, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "SIGTERM during a reload's drain: it stops instead");
	moves(&st, EV_SETTLED, S(PL_DRAINED, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE), "stored");
	refused(&st, EV_CYCLE, "no cycle");
	refused(&st, EV_RELOAD, "a reload after the stop: nothing");

	/* a reload's drain that fails restarts as any failure */
	st = S(PL_DRAIN, PLAN_RELOAD, STREAM_KEPT, SWEEP_NONE);
	moves(&st, EV_FAIL, S(PL_TEARDOWN, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "a crash during a reload's drain: teardown");
	moves(&st, EV_RESTART, S(PL_BACKOFF, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "then the backoff (the new file is read at the "
	    "start)");

	st = S(PL_WAIT, PLAN_RUN, STREAM_KEPT, SWEEP_NONE);
	refused(&st, EV_RELOAD, "nothing runs: the next start reads it");
	st = S(PL_TEARDOWN, PLAN_RUN, STREAM_KEPT, SWEEP_NONE);
	refused(&st, EV_RELOAD, "stopping after a failure: the restart "
	    "reads it");
	st = S(PL_DRAIN, PLAN_STOP, STREAM_KEPT, SWEEP_NONE);
	refused(&st, EV_RELOAD, "draining to stop: nothing");
}

static void
test_lost(void)
{
	struct sv_state st = S(PL_TEARDOWN, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE);

	moves(&st, EV_LOST, S(PL_WAIT, PLAN_RUN, STREAM_NEW, SWEEP_NONE),
	    "the capture's 67: a new stream, at once");
	moves(&st, EV_START, S(PL_CHECKPOINT, PLAN_RUN, STREAM_NEW,
	    SWEEP_NONE), "its start forgets the checkpoint");
	moves(&st, EV_SWEEP_OWED, S(PL_CHECKPOINT, PLAN_RUN, STREAM_NEW,
	    SWEEP_OWED), "ckpt records the sweep owed");
	moves(&st, EV_LOADED, S(PL_STARTING, PLAN_RUN, STREAM_NEW,
	    SWEEP_OWED), "every table to load again");
	moves(&st, EV_UP, S(PL_UP, PLAN_RUN, STREAM_NEW, SWEEP_OWED), "up");
	refused(&st, EV_SWEEP_START, "no sweep before the new stream's "
	    "checkpoint");
	moves(&st, EV_FAIL, S(PL_TEARDOWN, PLAN_RUN, STREAM_NEW, SWEEP_OWED),
	    "a failure before that checkpoint");
	refused(&st, EV_LOST, "a second 67 before it: no new stream again "
	    "(it would reload for ever)");
	moves(&st, EV_RESTART, S(PL_BACKOFF, PLAN_RUN, STREAM_NEW,
	    SWEEP_OWED), "a temporary failure restarts, still new");

	st = S(PL_UP, PLAN_RUN, STREAM_NEW, SWEEP_OWED);
	moves(&st, EV_STORED, S(PL_UP, PLAN_RUN, STREAM_KEPT, SWEEP_OWED),
	    "the new stream's first checkpoint: kept");
	moves(&st, EV_SWEEP_START, S(PL_UP, PLAN_RUN, STREAM_KEPT,
	    SWEEP_RUNNING), "the sweep starts");
	refused(&st, EV_SWEEP_START, "once");
	moves(&st, EV_SWEEP_OWED, st, "a load frame saying it is owed while "
	    "it runs changes nothing");
	moves(&st, EV_FAIL, S(PL_TEARDOWN, PLAN_RUN, STREAM_KEPT,
	    SWEEP_RUNNING), "a failure: the sweep's helper runs on");
	moves(&st, EV_SWEEP_FAILED, S(PL_TEARDOWN, PLAN_RUN, STREAM_KEPT,
	    SWEEP_OWED), "its end not recorded: owed again");
	moves(&st, EV_LOST, S(PL_WAIT, PLAN_RUN, STREAM_NEW, SWEEP_OWED),
	    "kept again, a later loss is a new stream again");

	st = S(PL_STARTING, PLAN_RUN, STREAM_KEPT, SWEEP_OWED);
	moves(&st, EV_SWEEP_START, S(PL_STARTING, PLAN_RUN, STREAM_KEPT,
	    SWEEP_RUNNING), "owed from an earlier incarnation: it may run "
	    "as the stages start");
	moves(&st, EV_SWEEP_DONE, S(PL_STARTING, PLAN_RUN, STREAM_KEPT,
	    SWEEP_NONE), "recorded: none owed");
	refused(&st, EV_SWEEP_DONE, "and it ends once");
	st = S(PL_WAIT, PLAN_RUN, STREAM_KEPT, SWEEP_OWED);
	refused(&st, EV_SWEEP_START, "no sweep while nothing runs");
}

/* ---- what holds in every reachable state ---- */

#define NSTATES	(PL_NSTATES * PLAN_N * STREAM_N * SWEEP_N)

static int
ix(const struct sv_state *s)
{
	return ((s->pl * PLAN_N + s->plan) * STREAM_N + s->stream) *
	    SWEEP_N + s->sweep;
}

static struct sv_state
of(int i)
{
	return S((enum sv_pl_state)(i / (SWEEP_N * STREAM_N * PLAN_N)),
	    (enum sv_plan)(i / (SWEEP_N * STREAM_N) % PLAN_N),
	    (enum sv_stream)(i / SWEEP_N % STREAM_N),
	    (enum sv_sweep)(i % SWEEP_N));
}

/* the states reachable from from, into seen */
static int
reach(struct sv_state from, char seen[NSTATES])
{
	int queue[NSTATES], head = 0, tail = 0, n = 0, ev;
	struct sv_state s, to;

	memset(seen, 0, NSTATES);
	seen[ix(&from)] = 1;
	queue[tail++] = ix(&from);
	while (head < tail) {
		s = of(queue[head++]);
		n++;
		for (ev = 0; ev < EV_N; ev++) {
			if (sv_state_next(&s, (enum sv_event)ev, &to) == -1 ||
			    seen[ix(&to)])
				continue;
			seen[ix(&to)] = 1;
			queue[tail++] = ix(&to);
		}
	}
	return n;
}

static void
test_reachable(void)
{
	static char seen[NSTATES], after[NSTATES];
	struct sv_state zero, s;
	int i, n, bad_stop = 0, bad_reload = 0, bad_due = 0, bad_drain = 0,
	    bad_term = 0, bad_done = 0, bad_end = 0, ends;

	memset(&zero, 0, sizeof(zero));
	n = reach(zero, seen);
	diag("%d states reachable from the first of %d", n, NSTATES);
	for (i = 0; i < NSTATES; i++) {
		if (!seen[i])
			continue;
		s = of(i);
		if (s.plan == PLAN_STOP && !sv_pl_has(s.pl, PLF_STOPPING) &&
		    s.pl != PL_DONE) {
			bad_stop++;
			diag("a stop forgotten: %s", show(&s));
		}
		if (s.plan == PLAN_RELOAD && !sv_pl_has(s.pl, PLF_DRAIN) &&
		    s.pl != PL_WAIT && s.pl != PL_DONE) {
			bad_reload++;
			diag("a reload outside its cycle: %s", show(&s));
		}
		if (s.plan == PLAN_RELOAD_DUE && s.pl != PL_CHECKPOINT &&
		    !sv_pl_has(s.pl, PLF_STAGES) && s.pl != PL_DONE) {
			bad_due++;
			diag("a due reload outlives its incarnation: %s",
			    show(&s));
		}
		if (sv_pl_has(s.pl, PLF_DRAIN) && s.plan != PLAN_STOP &&
		    s.plan != PLAN_RELOAD) {
			bad_drain++;
			diag("a drain for nothing: %s", show(&s));
		}
		if (s.pl != PL_DONE && (!sv_state_allows(&s, EV_TERM) ||
		    !sv_state_allows(&s, EV_ABORT))) {
			bad_term++;
			diag("SIGTERM or an abort refused: %s", show(&s));
		}
		if (s.pl == PL_DONE) {
			int ev;

			for (ev = 0; ev < EV_N; ev++)
				if (sv_state_allows(&s, (enum sv_event)ev)) {
					bad_done++;
					diag("done moves on %s: %s",
					    sv_event_names[ev], show(&s));
				}
			continue;
		}
		reach(s, after);
		for (ends = 0; ends < NSTATES; ends++)
			if (after[ends] && of(ends).pl == PL_DONE)
				break;
		if (ends == NSTATES) {
			bad_end++;
			diag("no way to the end from %s", show(&s));
		}
	}
	ok(n > 20 && n < NSTATES, "the first state reaches some states, not "
	    "all");
	ok(!seen[ix(&(struct sv_state){ PL_UP, PLAN_STOP, STREAM_KEPT,
	    SWEEP_NONE })], "up with a stop planned is unreachable");
	is_int(bad_stop, 0, "a SIGTERM is never forgotten: a stop's plan "
	    "only while stopping or done");
	is_int(bad_reload, 0, "a reload's plan only in its drain and the "
	    "start after it (or an abort's end)");
	is_int(bad_due, 0, "a reload due only while the incarnation that "
	    "started on the file before it runs (reading the checkpoint, "
	    "starting, up): the next one reads the new file anyway");
	is_int(bad_drain, 0, "every drain is a stop's or a reload's, so its "
	    "end has a move (stopped or cycle)");
	is_int(bad_term, 0, "SIGTERM and an abort are allowed in every state "
	    "but done");
	is_int(bad_done, 0, "done refuses every event");
	is_int(bad_end, 0, "the end is reachable from every state");
}

int
main(void)
{
	test_grid();
	test_start();
	test_drain();
	test_sigterm();
	test_reload();
	test_lost();
	test_reachable();
	return done_testing();
}
