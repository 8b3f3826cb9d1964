/*
 * state.c - the supervisor's states and the events that move them, as
 * data. A state is four parts: the pipeline's phase (waiting, backoff,
 * reading the checkpoint, starting, up, the steps of a drain, stopping,
 * done) and three that outlive an incarnation and decide what the next one
 * does: the plan (run on, a reload due or under way, stop), the stream
 * (kept, or new after a lost position until it stores a checkpoint) and
 * the sweep a full reload owes. One table of moves says which event each
 * state allows and where it leads; what no row allows is refused.
 *
 * Pure: no I/O, no clock, no process. loop.c's sv_event is the only
 * writer of a running supervisor's state and does what a move means
 * (starting, signalling, logging); this file never does.
 */
#include <stdio.h>
#include <string.h>

#include "supervisor.h"

const char *const sv_pl_names[PL_NSTATES] = {
	[PL_WAIT] = "waiting",
	[PL_BACKOFF] = "backoff",
	[PL_CHECKPOINT] = "reading checkpoint",
	[PL_STARTING] = "starting",
	[PL_UP] = "up",
	[PL_DRAIN] = "draining",
	[PL_DRAIN_NOCKPT] = "draining without ckpt",
	[PL_DRAIN_PUT] = "storing the last position",
	[PL_DRAINED] = "drained",
	[PL_DRAIN_FAILED] = "drained without the last position",
	[PL_TEARDOWN] = "stopping",
	[PL_DONE] = "done",
};

const char *const sv_plan_names[PLAN_N] = {
	[PLAN_RUN] = "run on",
	[PLAN_RELOAD_DUE] = "reload due",
	[PLAN_RELOAD] = "reload",
	[PLAN_STOP] = "stop",
};

const char *const sv_stream_names[STREAM_N] = {
	[STREAM_KEPT] = "kept",
	[STREAM_NEW] = "new",
};

const char *const sv_sweep_names[SWEEP_N] = {
	[SWEEP_NONE] = "none",
	[SWEEP_OWED] = "owed",
	[SWEEP_RUNNING] = "running",
};

const char *const sv_event_names[EV_N] = {
	[EV_START] = "start",
	[EV_LOADED] = "checkpoint and load read",
	[EV_UP] = "every stage up",
	[EV_FAIL] = "failure",
	[EV_TERM] = "SIGTERM",
	[EV_RELOAD] = "reload",
	[EV_WRITER_DONE] = "writer done",
	[EV_CKPT_GONE] = "ckpt gone",
	[EV_SETTLED] = "last position stored",
	[EV_DRAIN_LATE] = "drain timed out",
	[EV_CYCLE] = "drained for the reload",
	[EV_STOPPED] = "stopped",
	[EV_RESTART] = "restart",
	[EV_LOST] = "position lost",
	[EV_FATAL] = "fatal",
	[EV_ABORT] = "loop failed",
	[EV_STORED] = "checkpoint stored",
	[EV_SWEEP_OWED] = "sweep owed",
	[EV_SWEEP_CLEAR] = "no sweep owed",
	[EV_SWEEP_START] = "sweep started",
	[EV_SWEEP_DONE] = "sweep recorded",
	[EV_SWEEP_FAILED] = "sweep not recorded",
};

/* what each phase allows the modules that act on it (PLF_*) */
static const unsigned pl_flags[PL_NSTATES] = {
	[PL_CHECKPOINT] = PLF_CHANNELS,
	[PL_STARTING] = PLF_STAGES | PLF_CHANNELS | PLF_FLOW,
	[PL_UP] = PLF_STAGES | PLF_CHANNELS | PLF_FLOW,
	[PL_DRAIN] = PLF_FLOW | PLF_STOPPING | PLF_DRAIN,
	[PL_DRAIN_NOCKPT] = PLF_FLOW | PLF_STOPPING | PLF_DRAIN,
	[PL_DRAIN_PUT] = PLF_FLOW | PLF_STOPPING | PLF_DRAIN | PLF_FINAL,
	[PL_DRAINED] = PLF_FLOW | PLF_STOPPING | PLF_DRAIN | PLF_FINAL,
	[PL_DRAIN_FAILED] = PLF_FLOW | PLF_STOPPING | PLF_DRAIN | PLF_FINAL,
	[PL_TEARDOWN] = PLF_STOPPING,
};

/*
 * A move: in a state whose every part is in the row's sets (an empty set
 * is any value), the event leads to the row's values (an unset one keeps
 * its part). The first row that matches is taken; the rows of one event
 * are written not to overlap, so their order does not matter.
 */
struct sv_move {
	enum sv_event ev;
	unsigned pl, plan, stream, sweep;	/* from: IN() sets, 0 any */
	/* to: TO() values, 0 kept */
	unsigned char to_pl, to_plan, to_stream, to_sweep;
};

#define IN(x)	(1u << (x))
#define TO(x)	((x) + 1)

#define P_IDLE	(IN(PL_WAIT) | IN(PL_BACKOFF))
#define P_RUNNING	(IN(PL_STARTING) | IN(PL_UP))
#define P_DRAINED	(IN(PL_DRAINED) | IN(PL_DRAIN_FAILED))
#define P_DRAINS	(IN(PL_DRAIN) | IN(PL_DRAIN_NOCKPT) | \
		 IN(PL_DRAIN_PUT) | P_DRAINED)
#define P_LIVE	(IN(PL_DONE) - 1)	/* every phase but done */
#define GOES_ON	(IN(PLAN_RUN) | IN(PLAN_RELOAD_DUE))

static const struct sv_move moves[] = {
	/* an incarnation: ckpt reads the checkpoint, the stages start
	 * from it and say hello. A reload's start is the reload done */
	{ EV_START, .pl = P_IDLE, .plan = IN(PLAN_RUN),
	    .to_pl = TO(PL_CHECKPOINT) },
	{ EV_START, .pl = IN(PL_WAIT), .plan = IN(PLAN_RELOAD),
	    .to_pl = TO(PL_CHECKPOINT), .to_plan = TO(PLAN_RUN) },
	{ EV_LOADED, .pl = IN(PL_CHECKPOINT), .to_pl = TO(PL_STARTING) },
	{ EV_UP, .pl = IN(PL_STARTING), .to_pl = TO(PL_UP) },

	/* a child ended, broke the protocol or never said hello: every
	 * child stops. A reload's cycle, due or under way, ends with the
	 * incarnation: the restart starts ckpt and every stage on the new
	 * file (each reads it at its start) */
	{ EV_FAIL, .pl = IN(PL_CHECKPOINT) | P_RUNNING | P_DRAINS,
	    .plan = GOES_ON | IN(PLAN_RELOAD), .to_pl = TO(PL_TEARDOWN),
	    .to_plan = TO(PLAN_RUN) },
	{ EV_FAIL, .pl = P_DRAINS, .plan = IN(PLAN_STOP),
	    .to_pl = TO(PL_TEARDOWN) },

	/* SIGTERM: nothing runs, the supervisor ends; ckpt alone runs,
	 * nothing to drain; stages run, they drain; already stopping, it
	 * ends there */
	{ EV_TERM, .pl = P_IDLE, .to_pl = TO(PL_DONE),
	    .to_plan = TO(PLAN_STOP) },
	{ EV_TERM, .pl = IN(PL_CHECKPOINT), .to_pl = TO(PL_TEARDOWN),
	    .to_plan = TO(PLAN_STOP) },
	{ EV_TERM, .pl = P_RUNNING, .to_pl = TO(PL_DRAIN),
	    .to_plan = TO(PLAN_STOP) },
	{ EV_TERM, .pl = P_DRAINS | IN(PL_TEARDOWN), .to_plan = TO(PLAN_STOP) },

	/* a reload applied: ckpt read the checkpoint on the old file, so
	 * the stages cycle once they run; running, they drain now. No
	 * stage running (the next start reads the file), a drain under way
	 * (it serves) or a stop: nothing to do */
	{ EV_RELOAD, .pl = IN(PL_CHECKPOINT), .plan = GOES_ON,
	    .to_plan = TO(PLAN_RELOAD_DUE) },
	{ EV_RELOAD, .pl = P_RUNNING, .plan = GOES_ON, .to_pl = TO(PL_DRAIN),
	    .to_plan = TO(PLAN_RELOAD) },

	/* the drain: the writer's last durable position, its put, then
	 * the exits. ckpt gone or the time up: that position is not
	 * stored */
	{ EV_WRITER_DONE, .pl = IN(PL_DRAIN), .to_pl = TO(PL_DRAIN_PUT) },
	{ EV_WRITER_DONE, .pl = IN(PL_DRAIN_NOCKPT),
	    .to_pl = TO(PL_DRAIN_FAILED) },
	{ EV_CKPT_GONE, .pl = IN(PL_DRAIN), .to_pl = TO(PL_DRAIN_NOCKPT) },
	{ EV_CKPT_GONE, .pl = IN(PL_DRAIN_PUT), .to_pl = TO(PL_DRAIN_FAILED) },
	{ EV_SETTLED, .pl = IN(PL_DRAIN_PUT), .to_pl = TO(PL_DRAINED) },
	{ EV_DRAIN_LATE, .pl = P_DRAINS, .to_pl = TO(PL_DRAIN_FAILED) },
	{ EV_CYCLE, .pl = P_DRAINED, .plan = IN(PLAN_RELOAD),
	    .to_pl = TO(PL_WAIT) },
	{ EV_STOPPED, .pl = P_DRAINED | IN(PL_TEARDOWN), .plan = IN(PLAN_STOP),
	    .to_pl = TO(PL_DONE) },

	/* every child of a failed incarnation reaped: restart after a
	 * backoff; or, the position gone, a new stream at once (not a
	 * second time before it stored a checkpoint: that would reload for
	 * ever); or stop on a permanent failure */
	{ EV_RESTART, .pl = IN(PL_TEARDOWN), .plan = IN(PLAN_RUN),
	    .to_pl = TO(PL_BACKOFF) },
	{ EV_LOST, .pl = IN(PL_TEARDOWN), .plan = IN(PLAN_RUN),
	    .stream = IN(STREAM_KEPT), .to_pl = TO(PL_WAIT),
	    .to_stream = TO(STREAM_NEW) },
	{ EV_FATAL, .pl = IN(PL_TEARDOWN), .to_pl = TO(PL_DONE) },
	/* the supervisor's own loop cannot go on */
	{ EV_ABORT, .pl = P_LIVE, .to_pl = TO(PL_DONE) },

	/* a stored checkpoint is the new stream's own: a restart resumes
	 * from it */
	{ EV_STORED, .pl = P_LIVE, .to_stream = TO(STREAM_KEPT) },

	/* the sweep: owed as ckpt's load frame says, run once the stream
	 * is kept (its checkpoint stored) and the stages run (sweep.c adds
	 * the loads' end), owed again when its end was not recorded */
	{ EV_SWEEP_OWED, .pl = P_LIVE,
	    .sweep = IN(SWEEP_NONE) | IN(SWEEP_OWED),
	    .to_sweep = TO(SWEEP_OWED) },
	{ EV_SWEEP_OWED, .pl = P_LIVE, .sweep = IN(SWEEP_RUNNING) },
	{ EV_SWEEP_CLEAR, .pl = P_LIVE,
	    .sweep = IN(SWEEP_NONE) | IN(SWEEP_OWED),
	    .to_sweep = TO(SWEEP_NONE) },
	{ EV_SWEEP_CLEAR, .pl = P_LIVE, .sweep = IN(SWEEP_RUNNING) },
	{ EV_SWEEP_START, .pl = P_RUNNING, .stream = IN(STREAM_KEPT),
	    .sweep = IN(SWEEP_OWED), .to_sweep = TO(SWEEP_RUNNING) },
	{ EV_SWEEP_DONE, .pl = P_LIVE, .sweep = IN(SWEEP_RUNNING),
	    .to_sweep = TO(SWEEP_NONE) },
	{ EV_SWEEP_FAILED, .pl = P_LIVE, .sweep = IN(SWEEP_RUNNING),
	    .to_sweep = TO(SWEEP_OWED) },
};

static int
in(unsigned set, unsigned v)
{
	return set == 0 || (set & IN(v)) != 0;
}

int
sv_state_next(const struct sv_state *st, enum sv_event ev,
    struct sv_state *to)
{
	const struct sv_move *m;
	size_t i;

	for (i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		m = &moves[i];
		if (m->ev != ev || !in(m->pl, st->pl) ||
		    !in(m->plan, st->plan) || !in(m->stream, st->stream) ||
		    !in(m->sweep, st->sweep))
			continue;
		*to = *st;
		if (m->to_pl)
			to->pl = (enum sv_pl_state)(m->to_pl - 1);
		if (m->to_plan)
			to->plan = (enum sv_plan)(m->to_plan - 1);
		if (m->to_stream)
			to->stream = (enum sv_stream)(m->to_stream - 1);
		if (m->to_sweep)
			to->sweep = (enum sv_sweep)(m->to_sweep - 1);
		return 0;
	}
	return -1;
}

int
sv_state_allows(const struct sv_state *st, enum sv_event ev)
{
	struct sv_state to;

	return sv_state_next(st, ev, &to) == 0;
}

int
sv_pl_has(enum sv_pl_state pl, unsigned plf)
{
	return (pl_flags[pl] & plf) != 0;
}

const char *
sv_state_diff(const struct sv_state *a, const struct sv_state *b,
    char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (a->pl != b->pl)
		n += (size_t)snprintf(buf + n, len - n, "%s -> %s",
		    sv_pl_names[a->pl], sv_pl_names[b->pl]);
	if (a->plan != b->plan && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%splan %s -> %s",
		    n ? ", " : "", sv_plan_names[a->plan],
		    sv_plan_names[b->plan]);
	if (a->stream != b->stream && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%sstream %s -> %s",
		    n ? ", " : "", sv_stream_names[a->stream],
		    sv_stream_names[b->stream]);
	if (a->sweep != b->sweep && n < len)
		snprintf(buf + n, len - n, "%ssweep %s -> %s", n ? ", " : "",
		    sv_sweep_names[a->sweep], sv_sweep_names[b->sweep]);
	return buf;
}
