/*
 * loop.c - one pipeline's turn in the process's poll loop (proc.c), and
 * what each move of its state does. An incarnation goes: ask ckpt for the
 * checkpoint, start the stages from it, wait for their hellos, then carry
 * durable -> put -> stored -> ack until something ends. Any stage ending
 * tears the whole pipeline down; once every child is reaped it starts
 * again after a backoff, unless the cause (cause.c) is permanent: then it
 * is done, halted. SIGTERM/SIGINT drain it (framing.md §6 "Shutdown");
 * SIGHUP goes to reload.c.
 *
 * Which event each state allows and where it leads is state.c's table.
 * sv_event here is the only writer of the state, and does what entering a
 * phase means (enter[]: start ckpt, start the stages, drain, stop every
 * child); its turn (sv_step, sv_io, sv_ended) keeps the deadlines and
 * fires the events. Starting children is wire.c's, the frames they send
 * dispatch.c's, the loop around every pipeline proc.c's. It never exits:
 * a pipeline's code is its exit_code once it is done.
 */
#include <sys/wait.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "stage.h"
#include "supervisor.h"
#include "xio.h"

#define KILL_AFTER_MS	5000	/* SIGTERM, then SIGKILL after this */
#define DRAIN_MAX_MS	60000	/* a SIGTERM drain, start to finish */
#define EOF_GRACE_MS	1000	/* a closed control channel, then its exit */
/* a child ended: the others that are ending too get this long to be
 * reaped on their own before the rest are signalled, so the cause is
 * told from its consequences by what the children did, not by the order
 * their exits reached us. A reader of the dead stage's pipe may be
 * blocked writing to a slow writer before it reads the end of its input
 * and says what it found there (a frame cut in half): 200 ms was too
 * short for that on a crowded machine, where its message was lost to the
 * SIGTERM; a second more before a restart costs nothing beside the
 * restart's own backoff */
#define END_GRACE_MS	1200

int
sv_state_is(const struct sv *sv, unsigned plf)
{
	return sv_pl_has(sv->st.pl, plf);
}

const char *
sv_state_name(const struct sv *sv)
{
	return sv_pl_names[sv->st.pl];
}

const char *
sv_kname(const struct sv *sv, int k)
{
	return sv->kidname[k];
}

static void	enter_checkpoint(struct sv *, const struct sv_state *,
		    long long);
static void	enter_starting(struct sv *, const struct sv_state *,
		    long long);
static void	enter_up(struct sv *, const struct sv_state *, long long);
static void	enter_drain(struct sv *, const struct sv_state *, long long);
static void	close_channels(struct sv *, const struct sv_state *,
		    long long);
static void	enter_teardown(struct sv *, const struct sv_state *,
		    long long);

/* what entering a phase does (was: the state before the move) */
static void (*const enter[PL_NSTATES])(struct sv *, const struct sv_state *,
    long long) = {
	[PL_CHECKPOINT] = enter_checkpoint,
	[PL_STARTING] = enter_starting,
	[PL_UP] = enter_up,
	[PL_DRAIN] = enter_drain,
	[PL_DRAINED] = close_channels,
	[PL_DRAIN_FAILED] = close_channels,
	[PL_TEARDOWN] = enter_teardown,
};

int
sv_event(struct sv *sv, enum sv_event ev, long long now)
{
	struct sv_state was = sv->st, to;
	char what[256];

	if (sv_state_next(&was, ev, &to) == -1)
		return -1;
	sv->st = to;
	if (memcmp(&was, &to, sizeof(to)) != 0)
		log_debug("state: %s (%s)", sv_state_diff(&was, &to, what,
		    sizeof(what)), sv_event_names[ev]);
	if (to.pl != was.pl && enter[to.pl] != NULL)
		enter[to.pl](sv, &was, now);
	return 0;
}

/* the loop ends with code once the current step is done */
static void
finish(struct sv *sv, enum sv_event ev, int code, long long now)
{
	sv->exit_code = code;
	sv_event(sv, ev, now);
}

static int
kid_by_pid(struct sv *sv, pid_t pid)
{
	int k;

	for (k = 0; k < SV_NKIDS; k++)
		if (sv->kid[k].pid == pid && !sv->kid[k].exited)
			return k;
	return -1;
}

int
sv_reaped(struct sv *sv, pid_t pid, int status)
{
	int k;

	if ((k = kid_by_pid(sv, pid)) == -1)
		/* a helper of the supervisor's, not a stage */
		return sv_aux_reaped(sv, pid, status);
	sv->kid[k].exited = 1;
	sv->kid[k].wstatus = status;
	sv->kid[k].exit_round = sv->reap_round;
	sv->ended[k] = 1;
	return 1;
}

/* every child of the process reaped, this pipeline's ends taken */
static void
reap(struct sv *sv, long long now)
{
	sv_proc_reap(sv->proc, now);
}

void
sv_ended(struct sv *sv, long long now)
{
	char what[128];
	int k;

	for (k = 0; k < SV_NKIDS; k++) {
		if (!sv->ended[k])
			continue;
		sv->ended[k] = 0;
		sv_child_describe(&sv->kid[k], what, sizeof(what));
		if (k < SV_NSTAGES && sv_stages[k].exit0_done &&
		    sv_child_code(&sv->kid[k]) == 0 &&
		    sv_state_is(sv, PLF_STAGES)) {
			log_status("%s", "");
			log_info("'%s' finished: every table is loaded",
			    sv_kname(sv, k));
			sv_sweep_maybe(sv, now);
			continue;
		}
		/* the tap of a stage whose clean end is done (the loads tap)
		 * ends cleanly with it: the end of the copy, not a failure */
		if (SV_IS_TAP(k) && sv_kid_upstream(k) >= 0 &&
		    sv_kid_upstream(k) < SV_NSTAGES &&
		    sv_stages[sv_kid_upstream(k)].exit0_done &&
		    sv_child_code(&sv->kid[k]) == 0 &&
		    sv_state_is(sv, PLF_STAGES)) {
			log_debug("'%s' %s", sv_kname(sv, k), what);
			continue;
		}
		if (sv->st.pl == PL_TEARDOWN ||
		    (sv_state_is(sv, PLF_DRAIN) &&
		    (sv_child_code(&sv->kid[k]) == 0 ||
		    (sv->kid[k].signalled_ms &&
		    sv_child_code(&sv->kid[k]) == -SIGTERM))))
			log_debug("'%s' %s", sv_kname(sv, k), what);
		else if (sv_state_is(sv, PLF_DRAIN))
			log_warnx("'%s' %s while draining", sv_kname(sv, k),
			    what);
		else if (sv->end_at_ms == 0) {
			log_debug("'%s' %s", sv_kname(sv, k), what);
			snprintf(sv->first_end, sizeof(sv->first_end), "%s %s",
			    sv_kname(sv, k), what);
			sv->end_at_ms = now + END_GRACE_MS;
		}
	}
}

static void flush_logs(struct sv *);

void
sv_teardown(struct sv *sv, long long now, int code, const char *fmt, ...)
{
	va_list ap;

	/* already stopping (or nothing runs): the first reason stands */
	if (!sv_state_allows(&sv->st, EV_FAIL))
		return;
	if (code != 0 && sv->fatal_code == 0)
		sv->fatal_code = code;
	va_start(ap, fmt);
	vsnprintf(sv->reason, sizeof(sv->reason), fmt, ap);
	va_end(ap);
	sv_event(sv, EV_FAIL, now);
}

/* every child stops, for sv->reason */
static void
enter_teardown(struct sv *sv, const struct sv_state *was, long long now)
{
	int k;

	sv->end_at_ms = 0;
	/* what the stages already wrote comes first: a stage that exited
	 * said why on its stderr before it ended, and the operator reads
	 * that before the supervisor's summary of it */
	flush_logs(sv);
	log_status("%s", "");
	log_info("stopping the pipeline: %s", sv->reason);
	sv->m.up = 0;
	/* collect whatever already ended, so it is not taken for a child
	 * that ended because we signalled it */
	reap(sv, now);
	/* no more acks are coming: the end of fd 3 tells a stopping capture
	 * not to wait for one (what is queued is stored, so it still goes) */
	for (k = 0; k < SV_NKIDS; k++) {
		sv_child_kill(&sv->kid[k], SIGTERM, now);
		sv->kid[k].close_after = 1;
		sv_child_flush(&sv->kid[k]);
	}
	sv->kill_at_ms = now + KILL_AFTER_MS;
}

/* every stage that must say hello did, and every other one runs */
static int
all_up(const struct sv *sv)
{
	int s;

	for (s = 0; s < SV_NSTAGES; s++) {
		if (!sv_will_run(sv, s) || sv_stages[s].optional)
			continue;
		if (sv_stages[s].needs_hello ? sv->kid[s].state != SV_UP :
		    !sv_child_running(&sv->kid[s]))
			return 0;
	}
	return 1;
}

void
sv_check_up(struct sv *sv, long long now)
{
	if (!sv_state_allows(&sv->st, EV_UP) || !all_up(sv))
		return;
	sv_event(sv, EV_UP, now);
}

static void
enter_up(struct sv *sv, const struct sv_state *was, long long now)
{
	sv->up_since_ms = now;
	sv->m.up = 1;
	sv_health_reset(&sv->health, now);
	log_info("pipeline up");
	/* a sweep still owed from an incarnation that died in it: with
	 * nothing left to load and an idle source, no loader's end and no
	 * stored checkpoint would ever come to start it */
	sv_sweep_maybe(sv, now);
}

/* an incarnation begins: ckpt asked for the checkpoint */
static void
enter_checkpoint(struct sv *sv, const struct sv_state *was, long long now)
{
	if (was->plan == PLAN_RELOAD)
		log_info("reload: starting the stages on the new configuration "
		    "(the supervisor runs on)");
	else
		log_info("starting the pipeline");
	sv_start_incarnation(sv, now);
}

/* ckpt answered the checkpoint and the load */
static void
enter_starting(struct sv *sv, const struct sv_state *was, long long now)
{
	sv_start_stages(sv, now);
}

/* a load runs now */
static int
loading(const struct sv *sv)
{
	return sv_will_run(sv, SV_LOADER) &&
	    sv_child_running(&sv->kid[SV_LOADER]);
}

void
sv_health_update(struct sv *sv, long long now)
{
	static const enum msg_counter writes[] = { MC_DOCS_INDEXED,
	    MC_DOCS_DELETED, MC_VERSION_CONFLICTS, MC_CLEARS, MC_CASCADES };
	uint64_t written = 0, done = sv->m.position_confirmed;
	size_t i;
	int halted;

	for (i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
		written += sv_metrics_total(&sv->m, writes[i], NULL);
	/* the writer's durable position is progress before its checkpoint
	 * is stored: a long checkpoint interval is not a stall */
	if (sv->bc.have_durable && sv->bc.durable > done)
		done = sv->bc.durable;
	halted = sv_child_running(&sv->kid[SV_WRITER]) &&
	    sv_metrics_total(&sv->m, MC_WRITER_HALTED, NULL) != 0;
	sv->m.state = sv_source_state_of(sv->st.pl,
	    sv->st.plan == PLAN_STOP, loading(sv), halted);
	if (sv->st.pl == PL_UP)
		sv_health_observe(&sv->health, now,
		    sv_metrics_total(&sv->m, MC_RECEIVED_POS, NULL), done,
		    written, loading(sv));
	sv->m.stalled = sv->st.pl == PL_UP &&
	    sv_health_stalled(&sv->health, now);
	sv->m.ready = (sv->m.state == SS_LOADING ||
	    sv->m.state == SS_STREAMING) && !sv->m.stalled;
}

const char *
sv_not_ready(struct sv *sv, long long now, char *buf, size_t len)
{
	long long in;

	sv_health_update(sv, now);
	buf[0] = '\0';
	if (sv->m.ready)
		return buf;
	switch (sv->m.state) {
	case SS_BACKOFF:
		in = sv->st.pl == PL_BACKOFF && sv->restart_at_ms > now ?
		    sv->restart_at_ms - now : 0;
		snprintf(buf, len, "backoff: starting again in %lld.%lld s "
		    "after: %s", in / 1000, in % 1000 / 100, sv->reason);
		break;
	case SS_HALTED:
		if (sv->st.pl == PL_DONE)
			snprintf(buf, len, "halted: %s", sv->halted[0] ?
			    sv->halted : "stopped");
		else
			snprintf(buf, len, "halted: a write the target refuses "
			    "holds the pipeline; nothing after it is "
			    "acknowledged until the target takes it (the "
			    "writer's log says what it refused)");
		break;
	case SS_STARTING:
		snprintf(buf, len, "starting: %s", sv_state_name(sv));
		break;
	case SS_DRAINING:
		snprintf(buf, len, "draining");
		break;
	default:
		snprintf(buf, len, "stalled: changes wait (read up to %llu, "
		    "written up to %llu) and nothing was written or "
		    "confirmed for %lld s (metrics.ready_stall_s: %lld)",
		    (unsigned long long)sv->health.received,
		    (unsigned long long)sv->health.confirmed,
		    sv_health_stalled_ms(&sv->health, now) / 1000,
		    sv->health.stall_ms / 1000);
		break;
	}
	return buf;
}

static int
hello_limit(const struct sv *sv, int s)
{
	return sv->hello_timeout_s > 0 ? sv->hello_timeout_s :
	    sv_stages[s].hello_timeout_s;
}

/* a stage that must say hello and has not yet */
static int
awaits_hello(const struct sv *sv, int s)
{
	return sv_stages[s].needs_hello && sv->kid[s].pid != 0 &&
	    sv->kid[s].state == SV_STARTING;
}

/* a stage that must say hello and has not within its time */
static void
check_hello(struct sv *sv, long long now)
{
	int s;

	if (!sv_state_is(sv, PLF_STAGES))
		return;
	for (s = 0; s < SV_NSTAGES; s++) {
		if (!awaits_hello(sv, s) ||
		    now - sv->started_ms[s] < hello_limit(sv, s) * 1000LL)
			continue;
		sv_teardown(sv, now, 0, "'%s' did not say hello within %d s",
		    sv_kname(sv, s), hello_limit(sv, s));
		return;
	}
}

/* a channel that ended EOF_GRACE_MS ago with its child still running;
 * only a stage whose channel is its purpose (hello, acks, durable) */
static void
check_silent(struct sv *sv, long long now)
{
	int k;

	if (!sv_state_is(sv, PLF_CHANNELS))
		return;
	for (k = 0; k < SV_NSTAGES; k++) {
		if (k != SV_CKPT && !sv_stages[k].needs_hello)
			continue;
		if (sv->kid[k].ctl_eof_ms && sv_child_running(&sv->kid[k]) &&
		    now - sv->kid[k].ctl_eof_ms >= EOF_GRACE_MS) {
			sv_teardown(sv, now, 0, "'%s' closed its %s",
			    sv_kname(sv, k), k == SV_CKPT ? "stdout" :
			    "control fd 3");
			return;
		}
	}
}

/* a last unterminated line is only forwarded at EOF: read until then */
static void
flush_logs(struct sv *sv)
{
	int k;

	for (k = 0; k < SV_NKIDS; k++)
		while (sv_logpipe_read(&sv->kid[k].log) == 2)
			;
}

static int
all_reaped(const struct sv *sv)
{
	int k;

	for (k = 0; k < SV_NKIDS; k++)
		if (sv_child_running(&sv->kid[k]))
			return 0;
	return 1;
}

static void
release_all(struct sv *sv)
{
	int k;

	flush_logs(sv);
	for (k = 0; k < SV_NKIDS; k++) {
		sv_child_release(&sv->kid[k]);
		sv->kid[k].exited = 0;
		if (k < SV_NSTAGES && sv->pending_out[k] != -1) {
			close(sv->pending_out[k]);
			sv->pending_out[k] = -1;
		}
	}
}

/* what each child did, for cause.c */
static void
ends_of(const struct sv *sv, struct sv_end ends[SV_NKIDS])
{
	const struct sv_child *c;
	int k;

	for (k = 0; k < SV_NKIDS; k++) {
		c = &sv->kid[k];
		ends[k].started = c->pid != 0;
		ends[k].exited = c->exited;
		ends[k].code = c->exited ? sv_child_code(c) : 0;
		ends[k].signalled = c->signalled_ms != 0;
		ends[k].round = c->exit_round;
	}
}

/* every child of a failed incarnation is reaped: stop or restart */
static void
incarnation_over(struct sv *sv, long long now)
{
	struct sv_end ends[SV_NKIDS];
	char what[128];
	long long up_ms;
	int k, delay, max;

	ends_of(sv, ends);
	k = sv_cause_permanent(ends);
	/* the table refuses a new stream to a stop, and to a new stream
	 * that loses its position before it stored one (it would reload for
	 * ever): those stop */
	if (k == SV_CAPTURE && ends[k].code == P2O_EXIT_LOST &&
	    config_reload_on_lost(&sv->cf) && sv->fatal_code == 0 &&
	    sv_state_allows(&sv->st, EV_LOST)) {
		release_all(sv);
		/* one loud line: what was lost is in the capture's message
		 * just above; what happens now is here */
		log_error("the stream's position is gone (%s exited with 67, "
		    "see its message above): starting a new stream and "
		    "loading every table again beside it "
		    "(source.on_lost_position: reload)", sv_kname(sv, k));
		sv->m.full_reloads++;
		sv->kill_at_ms = 0;
		sv->restart_at_ms = now;
		sv_event(sv, EV_LOST, now);
		return;
	}
	if (k != -1) {
		sv_child_describe(&sv->kid[k], what, sizeof(what));
		release_all(sv);
		log_error("stopping: %s %s: see its message above",
		    sv_kname(sv, k), what);
		snprintf(sv->halted, sizeof(sv->halted), "%s %s (see its "
		    "message above)", sv_kname(sv, k), what);
		finish(sv, EV_FATAL, ends[k].code, now);
		return;
	}
	if (sv->fatal_code == 0 && sv->st.plan != PLAN_STOP &&
	    (k = sv_cause_first(ends)) != -1) {
		sv_child_describe(&sv->kid[k], what, sizeof(what));
		snprintf(sv->reason, sizeof(sv->reason), "%s %s",
		    sv_kname(sv, k), what);
	}
	release_all(sv);
	if (sv->fatal_code != 0) {
		log_error("stopping: %s", sv->reason);
		snprintf(sv->halted, sizeof(sv->halted), "%s", sv->reason);
		finish(sv, EV_FATAL, sv->fatal_code, now);
		return;
	}
	if (sv->st.plan == PLAN_STOP) {
		log_info("stopped");
		finish(sv, EV_STOPPED, P2O_EXIT_OK, now);
		return;
	}
	up_ms = sv->up_since_ms ? now - sv->up_since_ms : 0;
	delay = sv_backoff_failure(&sv->backoff, up_ms);
	max = sv->cf.reconnect_max > 0 ? sv->cf.reconnect_max : 1;
	if (sv->backoff.failures >= max) {
		log_error("giving up after %d consecutive failures; the last: "
		    "%s", sv->backoff.failures, sv->reason);
		snprintf(sv->halted, sizeof(sv->halted), "gave up after %d "
		    "consecutive failures; the last: %s",
		    sv->backoff.failures, sv->reason);
		finish(sv, EV_FATAL, P2O_EXIT_TEMPFAIL, now);
		return;
	}
	sv->kill_at_ms = 0;
	log_warnx("restarting the pipeline in %d.%d s (failure %d of %d): %s",
	    delay / 1000, delay % 1000 / 100, sv->backoff.failures, max,
	    sv->reason);
	sv->m.reconnects++;
	sv->restart_at_ms = now + delay;
	sv_event(sv, EV_RESTART, now);
}

/* the drain's steps, as far as what the children did allows */
static void
drain_step(struct sv *sv, long long now)
{
	struct sv_child *ck = &sv->kid[SV_CKPT], *wr = &sv->kid[SV_WRITER];
	int failed;

	/* the writer's last durable is in once its channel ended */
	if (sv_state_allows(&sv->st, EV_WRITER_DONE) &&
	    !sv_child_running(wr) && wr->ctl_rfd == -1) {
		log_debug("writer done: storing the last durable position");
		sv_event(sv, EV_WRITER_DONE, now);
	}
	/* the last put answered, or never to be: the channels close */
	if (sv->st.pl == PL_DRAIN_PUT) {
		if (sv_bc_settled(&sv->bc))
			sv_event(sv, EV_SETTLED, now);
		else if (!sv_child_running(ck) || ck->ctl_rfd == -1)
			sv_event(sv, EV_CKPT_GONE, now);
	}
	if ((sv->st.pl != PL_DRAINED && sv->st.pl != PL_DRAIN_FAILED) ||
	    !all_reaped(sv))
		return;
	failed = sv->st.pl == PL_DRAIN_FAILED;
	release_all(sv);
	if (sv->st.plan == PLAN_RELOAD) {
		/* what was read is stored (or, failed, replayed from the
		 * stored checkpoint by the stages to come): start at once */
		if (failed)
			log_warnx("reload: the last durable position %" PRIu64
			    " was not stored; the stages start again from %"
			    PRIu64 " and write what follows it again",
			    sv->bc.durable, sv->bc.stored);
		else
			log_info("reload: the stages drained (checkpoint at %"
			    PRIu64 "); starting them on the new configuration",
			    sv->bc.stored);
		sv->restart_at_ms = now;
		sv_event(sv, EV_CYCLE, now);
		return;
	}
	if (failed) {
		log_error("stopped without storing the last durable position "
		    "%" PRIu64 ": the next start replays from %" PRIu64,
		    sv->bc.durable, sv->bc.stored);
		finish(sv, EV_STOPPED, P2O_EXIT_TEMPFAIL, now);
		return;
	}
	if (sv->bc.have_stored)
		log_info("stopped after draining; checkpoint at %" PRIu64,
		    sv->bc.stored);
	else
		log_info("stopped after draining; no checkpoint stored yet");
	finish(sv, EV_STOPPED, P2O_EXIT_OK, now);
}

/* the capture stops reading, the rest is written and stored; the
 * stages end on their own (drain_step) */
static void
enter_drain(struct sv *sv, const struct sv_state *was, long long now)
{
	if (sv->st.plan == PLAN_RELOAD)
		log_info("reload: draining the stages (the capture stops "
		    "reading, what it read is written and stored), then they "
		    "start again on the new configuration");
	else
		log_info("draining: stopping the capture, flushing the rest");
	sv->m.up = 0;
	sv_child_kill(&sv->kid[SV_CAPTURE], SIGTERM, now);
	/* a load in progress stops at its last recorded range; one
	 * not started yet never will: its reader must see the end */
	sv_child_kill(&sv->kid[SV_LOADER], SIGTERM, now);
	if (sv->pending_out[SV_LOADER] != -1) {
		close(sv->pending_out[SV_LOADER]);
		sv->pending_out[SV_LOADER] = -1;
	}
	sv->kill_at_ms = now + DRAIN_MAX_MS;
}

/* the ack, if any, is queued: flushed, then EOF on the capture's fd 3
 * and ckpt's stdin */
static void
close_channels(struct sv *sv, const struct sv_state *was, long long now)
{
	int s;

	for (s = 0; s < SV_NSTAGES; s++)
		if (s == SV_CKPT || sv_stages[s].gets_ack) {
			sv->kid[s].close_after = 1;
			sv_child_flush(&sv->kid[s]);
		}
}

void
sv_term(struct sv *sv, long long now)
{
	struct sv_state to;

	if (sv_state_next(&sv->st, EV_TERM, &to) == -1)
		return;
	if (to.pl == PL_DONE) {
		log_info("stopped");
		sv->exit_code = P2O_EXIT_OK;
	} else if (to.pl == sv->st.pl)
		log_info("already stopping");
	else if (to.pl == PL_TEARDOWN)
		/* no stage runs yet: nothing to drain */
		snprintf(sv->reason, sizeof(sv->reason), "stop requested");
	sv_event(sv, EV_TERM, now);
}

void
sv_step(struct sv *sv, long long now)
{
	int k;

	if (sv->kill_at_ms && now >= sv->kill_at_ms &&
	    sv_state_is(sv, PLF_STOPPING)) {
		for (k = 0; k < SV_NKIDS; k++)
			if (sv_child_running(&sv->kid[k])) {
				log_warnx("'%s' did not stop: killing it",
				    sv_kname(sv, k));
				sv_child_kill(&sv->kid[k], SIGKILL, now);
			}
		if (sv_state_is(sv, PLF_DRAIN)) {
			log_error("draining took over %d s", DRAIN_MAX_MS /
			    1000);
			sv_event(sv, EV_DRAIN_LATE, now);
		}
		sv->kill_at_ms = 0;
	}
	if (sv->end_at_ms && now >= sv->end_at_ms)
		sv_teardown(sv, now, 0, "%s", sv->first_end);
	check_silent(sv, now);
	check_hello(sv, now);
	switch (sv->st.pl) {
	case PL_WAIT:
	case PL_BACKOFF:
		if (now >= sv->restart_at_ms)
			sv_event(sv, EV_START, now);
		break;
	case PL_STARTING:
	case PL_UP:
		/* a stage that needs no hello is up by running */
		sv_check_up(sv, now);
		/* a reload applied while ckpt read the checkpoint on the file
		 * before it: the stages cycle now that they run */
		if (sv->st.plan == PLAN_RELOAD_DUE)
			sv_event(sv, EV_RELOAD, now);
		break;
	case PL_DRAIN:
	case PL_DRAIN_NOCKPT:
	case PL_DRAIN_PUT:
	case PL_DRAINED:
	case PL_DRAIN_FAILED:
		drain_step(sv, now);
		break;
	case PL_TEARDOWN:
		if (all_reaped(sv))
			incarnation_over(sv, now);
		break;
	case PL_CHECKPOINT:
	case PL_DONE:
	case PL_NSTATES:
		break;
	}
	if (sv->st.pl != PL_DONE)
		sv_pump_checkpoint(sv, now);
}

long long
sv_earliest(long long a, long long b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* when the next hello deadline falls, or -1 */
static long long
hello_deadline(const struct sv *sv)
{
	long long at = -1;
	int s;

	if (!sv_state_is(sv, PLF_STAGES))
		return -1;
	for (s = 0; s < SV_NSTAGES; s++)
		if (awaits_hello(sv, s))
			at = sv_earliest(at, sv->started_ms[s] +
			    hello_limit(sv, s) * 1000LL);
	return at;
}

long long
sv_deadline(struct sv *sv, long long now)
{
	long long at = -1;
	int k;

	(void)now;
	if (sv->st.pl == PL_DONE)
		return -1;
	if (sv_state_allows(&sv->st, EV_START))
		at = sv->restart_at_ms;
	/* a kill deadline matters only while something is stopping: a stale
	 * one in the past would make every poll return at once */
	if (sv->kill_at_ms && sv_state_is(sv, PLF_STOPPING))
		at = sv_earliest(at, sv->kill_at_ms);
	if (sv_state_is(sv, PLF_FLOW))
		at = sv_earliest(at, sv_bc_deadline(&sv->bc));
	at = sv_earliest(at, hello_deadline(sv));
	if (sv->end_at_ms)
		at = sv_earliest(at, sv->end_at_ms);
	at = sv_earliest(at, sv_synced_deadline(sv));
	for (k = 0; k < SV_NKIDS; k++)
		if (sv->kid[k].ctl_eof_ms && sv_child_running(&sv->kid[k]))
			at = sv_earliest(at, sv->kid[k].ctl_eof_ms +
			    EOF_GRACE_MS);
	return at;
}

int
sv_pollfds(struct sv *sv, struct pollfd *pfd, int n)
{
	int k;

	for (k = 0; k < SV_NKIDS; k++) {
		struct sv_child *c = &sv->kid[k];

		sv->pidx[k][0] = sv->pidx[k][1] = sv->pidx[k][2] = -1;
		if (c->ctl_rfd != -1) {
			sv->pidx[k][0] = n;
			pfd[n].fd = c->ctl_rfd;
			pfd[n++].events = POLLIN;
		}
		if (c->ctl_wfd != -1 && c->out.len > 0) {
			if (c->ctl_wfd == c->ctl_rfd) {
				pfd[n - 1].events |= POLLOUT;
				sv->pidx[k][1] = n - 1;
			} else {
				sv->pidx[k][1] = n;
				pfd[n].fd = c->ctl_wfd;
				pfd[n++].events = POLLOUT;
			}
		}
		if (c->log.fd != -1) {
			sv->pidx[k][2] = n;
			pfd[n].fd = c->log.fd;
			pfd[n++].events = POLLIN;
		}
	}
	return sv_aux_pollfds(sv, pfd, n);
}

/* children's fds before their exits: a stage's last log lines and
 * frames come before what its end means */
void
sv_io(struct sv *sv, const struct pollfd *pfd, long long now)
{
	int k;

	for (k = 0; k < SV_NKIDS; k++) {
		struct sv_child *c = &sv->kid[k];
		int *ix = sv->pidx[k];

		if (ix[2] != -1 && pfd[ix[2]].revents)
			sv_logpipe_read(&c->log);
		if (ix[0] != -1 && pfd[ix[0]].revents &&
		    c->ctl_rfd == pfd[ix[0]].fd)
			sv_kid_read(sv, k, now);
		if (ix[1] != -1 && (pfd[ix[1]].revents & (POLLOUT |
		    POLLERR | POLLHUP)) && c->ctl_wfd != -1 &&
		    sv_child_flush(c) == -1)
			log_debug("'%s': its control input is closed",
			    sv_kname(sv, k));
	}
	sv_aux_io(sv, pfd);
}

void
sv_end(struct sv *sv)
{
	release_all(sv);
	sv_aux_release(sv);
	sv->m.up = 0;
}
