/*
 * pg2osync-supervise - run one pg2osync stream:
 *
 *   ckpt serve                 the checkpoint, on its stdin/stdout
 *   capture-pg | shaper | writer   each with fd 3 back to us
 *
 * One poll loop. An incarnation of the pipeline goes: ask ckpt for the
 * checkpoint, start the three stages from it, wait for their hellos, then
 * carry durable -> put -> stored -> ack until something ends. Any stage
 * ending tears the whole pipeline down and starts it again after a backoff,
 * unless the exit code says the failure is permanent. SIGTERM/SIGINT drain
 * it (framing.md §6 "Shutdown") and exit 0.
 */
#include <sys/wait.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "frame.h"
#include "jscan.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "sbuf.h"
#include "supervisor.h"
#include "xio.h"

#define KILL_AFTER_MS	5000	/* SIGTERM, then SIGKILL after this */
#define DRAIN_MAX_MS	60000	/* a SIGTERM drain, start to finish */
#define EOF_GRACE_MS	1000	/* a closed control channel, then its exit */

enum kid { K_CKPT, K_CAPTURE, K_SHAPER, K_WRITER, K_N };

static const char *const kid_names[K_N] = {
	"ckpt", "capture-pg", "shaper", "writer"
};

enum pl_state {
	PL_WAIT,	/* between incarnations, until restart_at_ms */
	PL_CHECKPOINT,	/* ckpt asked for the checkpoint */
	PL_STARTING,	/* stages running, not all said hello */
	PL_UP,
	PL_DRAIN,	/* SIGTERM: the capture stops, the rest flush */
	PL_TEARDOWN,	/* everything stopping after a failure */
};

static const char *const state_names[] = {
	"waiting", "reading checkpoint", "starting", "up", "draining",
	"stopping"
};

struct sv {
	const char	*cfgpath;
	struct config	 cf;
	struct sv_child	 kid[K_N];
	enum pl_state	 state;
	struct sv_backchannel bc;
	struct sv_backoff backoff;
	struct sv_metrics m;
	struct sv_httpd	 httpd;

	long long	 restart_at_ms;
	long long	 up_since_ms;	/* 0 unless the pipeline reached up */
	long long	 kill_at_ms;	/* SIGKILL what still runs; 0 none */
	unsigned	 reap_round;
	char		 reason[512];	/* what ended this incarnation */
	int		 fatal_code;	/* a permanent failure we found */
	int		 stopping;	/* SIGTERM or SIGINT arrived */
	int		 drain_final_put;	/* the writer is done */
	int		 drain_closed;	/* capture fd 3 and ckpt stdin closed */
	int		 drain_failed;	/* the last checkpoint may be missing */
	int		 pidx[K_N][3];	/* pollfd indexes: ctl r, ctl w, log */
};

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_term, got_chld;

static void
on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGCHLD)
		got_chld = 1;
	else
		got_term = 1;
	(void)!write(sig_pipe[1], "", 1);
	errno = saved;
}

static void
usage(FILE *f)
{
	fprintf(f,
"usage: pg2osync-supervise -c config.yaml\n"
"\n"
"Runs the stream the configuration describes: 'ckpt serve' for the\n"
"checkpoint and 'capture-pg | shaper | writer', found next to this\n"
"program or else on $PATH. Children inherit the environment, which is how\n"
"the *_env secrets reach them; their argv carries the configuration path\n"
"and the start LSN only.\n"
"\n"
"A position is acknowledged to the capture only after ckpt stored it.\n"
"Any stage ending stops the whole pipeline; it restarts from the stored\n"
"checkpoint after 1 s, doubling to 30 s, reset once it ran 60 s, and\n"
"gives up after source.reconnect_max consecutive failures. SIGTERM or\n"
"SIGINT: the capture stops, the rest drain, the last durable position is\n"
"stored and acknowledged, exit 0.\n"
"\n"
"With metrics.bind: GET /metrics (Prometheus text) and GET /healthz\n"
"(200 when every stage is up, else 503).\n"
"\n"
"options:\n"
"  -c, --config FILE   the pg2osync configuration (required)\n"
"  -h, --help          this text\n"
"  -V, --version       print the version\n"
"\n"
"exit codes: 0 stopped by a signal after draining; 1 internal error or a\n"
"tool's executable not found; 64 usage; 75 gave up after reconnect_max\n"
"failures, or a drain that could not store its checkpoint; 78 invalid\n"
"configuration; a stage's permanent exit code (65, 66, 69, 77, 78) when\n"
"it stopped the pipeline.\n");
}

/* stdin, stdout and stderr open, everything else closed on exec */
static void
sanitize_fds(void)
{
	struct dirent *de;
	DIR *d;
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (!fd_is_open(fd) && open("/dev/null", O_RDWR) != fd)
			fatal(P2O_EXIT_INTERNAL, "/dev/null");
	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (fd > 2 && fd != dirfd(d))
			set_cloexec(fd, 1);
	}
	closedir(d);
}

static int
kid_by_pid(struct sv *sv, pid_t pid)
{
	int k;

	for (k = 0; k < K_N; k++)
		if (sv->kid[k].pid == pid && !sv->kid[k].exited)
			return k;
	return -1;
}

static void teardown(struct sv *, long long, int, const char *, ...)
	__attribute__((format(printf, 4, 5)));

static void
reap(struct sv *sv, long long now)
{
	/* upstream first: of several ends seen at once, the first named is
	 * the likelier cause */
	static const enum kid order[K_N] = { K_CAPTURE, K_SHAPER, K_WRITER,
	    K_CKPT };
	char what[128];
	pid_t pid;
	int status, i, k, ended[K_N] = { 0 };

	got_chld = 0;
	sv->reap_round++;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((k = kid_by_pid(sv, pid)) == -1)
			continue;
		sv->kid[k].exited = 1;
		sv->kid[k].wstatus = status;
		sv->kid[k].exit_round = sv->reap_round;
		ended[k] = 1;
	}
	for (i = 0; i < K_N; i++) {
		k = order[i];
		if (!ended[k])
			continue;
		sv_child_describe(&sv->kid[k], what, sizeof(what));
		if (sv->state == PL_TEARDOWN ||
		    (sv->state == PL_DRAIN && sv_child_code(&sv->kid[k]) == 0))
			log_debug("'%s' %s", kid_names[k], what);
		else if (sv->state == PL_DRAIN)
			log_warnx("'%s' %s while draining", kid_names[k], what);
		else
			teardown(sv, now, 0, "%s %s", kid_names[k], what);
	}
}

/*
 * Stop every child. The first reason is kept: what comes after it is
 * usually its consequence. code != 0 marks a permanent failure found by
 * the supervisor itself (a protocol error).
 */
static void
teardown(struct sv *sv, long long now, int code, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (code != 0 && sv->fatal_code == 0 && sv->state != PL_TEARDOWN)
		sv->fatal_code = code;
	if (sv->state == PL_TEARDOWN)
		return;
	va_start(ap, fmt);
	vsnprintf(sv->reason, sizeof(sv->reason), fmt, ap);
	va_end(ap);
	log_info("stopping the pipeline: %s", sv->reason);
	sv->state = PL_TEARDOWN;
	sv->m.up = 0;
	/* collect whatever already ended, so it is not taken for a child
	 * that ended because we signalled it */
	reap(sv, now);
	/* no more acks are coming: the end of fd 3 tells a stopping capture
	 * not to wait for one (what is queued is stored, so it still goes) */
	for (k = 0; k < K_N; k++) {
		sv_child_kill(&sv->kid[k], SIGTERM, now);
		sv->kid[k].close_after = 1;
		sv_child_flush(&sv->kid[k]);
	}
	sv->kill_at_ms = now + KILL_AFTER_MS;
}


static void
spawn_failed(struct sv *sv, long long now, const char *err)
{
	log_error("%s", err);
	teardown(sv, now, 0, "%s", err);
}

static void
start_incarnation(struct sv *sv, long long now)
{
	struct sv_child *ck = &sv->kid[K_CKPT];
	char *argv[] = { ck->path, "-c", (char *)sv->cfgpath, "serve", NULL };
	char err[512];

	sv_metrics_restart(&sv->m);
	sv->reason[0] = '\0';
	sv->fatal_code = 0;
	sv->up_since_ms = 0;
	sv->kill_at_ms = 0;
	sv->drain_final_put = sv->drain_closed = sv->drain_failed = 0;
	sv->state = PL_CHECKPOINT;
	log_info("starting the pipeline");
	if (sv_child_spawn(ck, argv, SV_CTL_STDIO, -1, -1, P2O_FD_LOG, err,
	    sizeof(err)) == -1) {
		spawn_failed(sv, now, err);
		return;
	}
	msg_put_get(sv_child_out(ck));
}

static void
start_stages(struct sv *sv, long long now, int have, uint64_t pos,
    const char *text)
{
	struct sv_child *cap = &sv->kid[K_CAPTURE], *sh = &sv->kid[K_SHAPER];
	struct sv_child *wr = &sv->kid[K_WRITER];
	char *cfg = (char *)sv->cfgpath, token[24];
	char *cap_argv[] = { cap->path, "-c", cfg, NULL, NULL, NULL, NULL,
	    NULL };
	char *sh_argv[] = { sh->path, "-c", cfg, NULL };
	char *wr_argv[] = { wr->path, "-c", cfg, NULL };
	int a[2] = { -1, -1 }, b[2] = { -1, -1 }, null = -1;
	char err[512];

	sv_bc_release(&sv->bc);
	sv_bc_init(&sv->bc, sv->cf.checkpoint_interval_ms, have, pos);
	if (have) {
		sv->m.checkpoint_position = pos;
		if (pos > sv->m.position_confirmed)
			sv->m.position_confirmed = pos;
		snprintf(token, sizeof(token), "%" PRIu64, pos);
		cap_argv[3] = "--start-pos";
		cap_argv[4] = (char *)text;
		cap_argv[5] = "--start-token";
		cap_argv[6] = token;
		log_info("checkpoint at %s (%" PRIu64 "): the capture starts "
		    "there", text, pos);
	} else
		log_info("no checkpoint stored: the capture starts where the "
		    "slot is");
	sv->state = PL_STARTING;
	if (pipe2(a, O_CLOEXEC) == -1 || pipe2(b, O_CLOEXEC) == -1 ||
	    (null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, sizeof(err), "could not create the pipeline's "
		    "pipes: %s", strerror(errno));
		goto fail;
	}
	if (sv_child_spawn(cap, cap_argv, SV_CTL_FD3, null, a[1], P2O_FD_LOG,
	    err, sizeof(err)) == -1 ||
	    sv_child_spawn(sh, sh_argv, SV_CTL_FD3, a[0], b[1], P2O_FD_LOG,
	    err, sizeof(err)) == -1 ||
	    sv_child_spawn(wr, wr_argv, SV_CTL_FD3, b[0], null, P2O_FD_LOG,
	    err, sizeof(err)) == -1)
		goto fail;
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	close(null);
	log_debug("started capture-pg %d, shaper %d, writer %d", (int)cap->pid,
	    (int)sh->pid, (int)wr->pid);
	return;
fail:
	if (a[0] != -1) {
		close(a[0]);
		close(a[1]);
	}
	if (b[0] != -1) {
		close(b[0]);
		close(b[1]);
	}
	if (null != -1)
		close(null);
	spawn_failed(sv, now, err);
}

static int
all_up(const struct sv *sv)
{
	return sv->kid[K_CAPTURE].state == SV_UP &&
	    sv->kid[K_SHAPER].state == SV_UP && sv->kid[K_WRITER].state == SV_UP;
}

static void
on_hello(struct sv *sv, int k, const struct frame *f, long long now)
{
	struct sv_child *c = &sv->kid[k];
	struct jspan v;
	int64_t proto = -1;

	if (!jobj_get(f->obj, "proto", &v) || jnum_i64(v, &proto) == -1 ||
	    proto != P2O_PROTO) {
		teardown(sv, now, P2O_EXIT_DATA, "'%s' speaks control protocol "
		    "%" PRId64 ", this supervisor %d: mixed installations?",
		    kid_names[k], proto, P2O_PROTO);
		return;
	}
	if (c->state != SV_STARTING)
		return;
	c->state = SV_UP;
	log_debug("'%s' is up (pid %d)", kid_names[k], (int)c->pid);
	if (sv->state == PL_STARTING && all_up(sv)) {
		sv->state = PL_UP;
		sv->up_since_ms = now;
		sv->m.up = 1;
		log_info("pipeline up");
	}
}

static void
on_durable(struct sv *sv, const struct frame *f, long long now)
{
	struct msg_pos d;
	char why[256];

	if (msg_read_pos(f, &d, why, sizeof(why)) == -1) {
		teardown(sv, now, P2O_EXIT_DATA, "writer: control fd 3: offset "
		    "%" PRIu64 ": %s", f->offset, why);
		return;
	}
	if (sv_bc_durable(&sv->bc, d.pos, d.text) == -1)
		log_warnx("writer reported durable %" PRIu64 " after %" PRIu64
		    ": ignored", d.pos, sv->bc.durable);
	/* a bare pos has no commit time, and so no latency */
	if (d.ts > 0 && d.at > 0)
		sv_hist_observe(&sv->m.indexed, d.at - d.ts);
	if (d.ts > 0 && d.sent > 0)
		sv_hist_observe(&sv->m.sent, d.sent - d.ts);
	msg_pos_release(&d);
}

static void
on_stored(struct sv *sv, const struct frame *f, long long now)
{
	struct msg_pos st;
	uint64_t ack;
	char why[256];
	int r;

	if (msg_read_pos(f, &st, why, sizeof(why)) == -1 ||
	    (r = sv_bc_stored(&sv->bc, st.pos, &ack)) == -1) {
		msg_pos_release(&st);
		teardown(sv, now, P2O_EXIT_DATA, "ckpt answered 'stored' for "
		    "a checkpoint it was not given");
		return;
	}
	sv->m.checkpoint_position = sv->bc.stored;
	log_debug("checkpoint stored at %" PRIu64, st.pos);
	if (r == 1 && sv->kid[K_CAPTURE].ctl_wfd != -1) {
		msg_put_ack(sv_child_out(&sv->kid[K_CAPTURE]), ack);
		sv->m.position_confirmed = ack;
	}
	msg_pos_release(&st);
}

static void
on_checkpoint(struct sv *sv, const struct frame *f, long long now)
{
	struct msg_pos cp;
	char why[256];

	if (sv->state != PL_CHECKPOINT) {
		teardown(sv, now, P2O_EXIT_DATA, "ckpt sent a checkpoint "
		    "nobody asked for");
		return;
	}
	if (msg_read_pos(f, &cp, why, sizeof(why)) == -1) {
		teardown(sv, now, P2O_EXIT_DATA, "ckpt sent an unusable "
		    "checkpoint: %s", why);
		return;
	}
	start_stages(sv, now, cp.present, cp.pos, cp.text);
	msg_pos_release(&cp);
}

static void
on_frame(struct sv *sv, int k, const struct frame *f, long long now)
{
	struct jspan v;
	char id[256];

	if (k == K_CKPT) {
		if (frame_is(f, "stored"))
			on_stored(sv, f, now);
		else if (frame_is(f, "checkpoint"))
			on_checkpoint(sv, f, now);
		else
			log_debug("ckpt: ignoring a frame of kind %.*s",
			    (int)f->kind.n, f->kind.p);
		return;
	}
	if (frame_is(f, "hello"))
		on_hello(sv, k, f, now);
	else if (frame_is(f, "stats")) {
		if (jobj_get(f->obj, "counters", &v))
			sv_metrics_stats(&sv->m, kid_names[k], v);
	} else if (frame_is(f, "durable") && k == K_WRITER)
		on_durable(sv, f, now);
	else if (frame_is(f, "marked") && k == K_WRITER) {
		/* no loader runs yet: nobody waits for this confirmation */
		if (jobj_get(f->obj, "id", &v) && jspan_type(v) == J_STRING &&
		    jstr_copy(v, id, sizeof(id)) == 0)
			log_debug("load mark '%s' is durable; no loader to "
			    "confirm it to", id);
	} else
		log_debug("'%s': ignoring a control frame of kind %.*s",
		    kid_names[k], (int)f->kind.n, f->kind.p);
}

/*
 * The end of a child's control channel. A child that ends closes it just
 * before its exit status arrives; waiting a moment for that status lets
 * the failure be named by its exit code rather than by its symptom.
 */
static void
ctl_eof(struct sv *sv, int k, long long now)
{
	sv_child_close_ctl(&sv->kid[k]);
	sv->kid[k].ctl_eof_ms = now;
	if (sv->state == PL_DRAIN && k == K_CKPT && !sv->drain_closed) {
		log_error("ckpt ended before the last checkpoint was stored");
		sv->drain_failed = 1;
	}
}

/* a channel that ended EOF_GRACE_MS ago with its child still running */
static void
check_silent(struct sv *sv, long long now)
{
	int k;

	if (sv->state != PL_CHECKPOINT && sv->state != PL_STARTING &&
	    sv->state != PL_UP)
		return;
	for (k = 0; k < K_N; k++)
		if (sv->kid[k].ctl_eof_ms && sv_child_running(&sv->kid[k]) &&
		    now - sv->kid[k].ctl_eof_ms >= EOF_GRACE_MS) {
			teardown(sv, now, 0, "'%s' closed its %s", kid_names[k],
			    k == K_CKPT ? "stdout" : "control fd 3");
			return;
		}
}

static void
kid_read(struct sv *sv, int k, long long now)
{
	struct sv_child *c = &sv->kid[k];
	struct frame f;
	ssize_t n;
	int r;

	n = frame_fill(&c->rd);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n == -1)
		c->rd.eof = 1;	/* a reset socket is an end like any other */
	while ((r = frame_next(&c->rd, &f)) == 1 && c->ctl_rfd != -1)
		on_frame(sv, k, &f, now);
	if (r == -1) {
		if (!c->rd.eof) {
			teardown(sv, now, P2O_EXIT_DATA, "'%s': %s",
			    kid_names[k], c->rd.err);
			sv_child_close_ctl(c);
			return;
		}
		/* a frame cut short by the child's end: the end matters,
		 * not the fragment */
		log_warnx("'%s': %s", kid_names[k], c->rd.err);
	}
	if (c->rd.eof && c->ctl_rfd != -1)
		ctl_eof(sv, k, now);
}

/* queue a put when the back-channel says so */
static void
pump_checkpoint(struct sv *sv, long long now)
{
	struct sv_child *ck = &sv->kid[K_CKPT];
	const char *text;
	uint64_t pos;

	if (ck->ctl_wfd == -1 || !sv_child_running(ck) ||
	    (sv->state != PL_STARTING && sv->state != PL_UP &&
	    sv->state != PL_DRAIN))
		return;
	if (!sv_bc_next_put(&sv->bc, now, sv->drain_final_put, &pos, &text))
		return;
	msg_put_put(sv_child_out(ck), pos, text);
}

static void
begin_drain(struct sv *sv, long long now)
{
	sv->stopping = 1;
	switch (sv->state) {
	case PL_WAIT:
		log_info("stopped");
		exit(P2O_EXIT_OK);
	case PL_CHECKPOINT:
		/* no stage runs: nothing to drain */
		teardown(sv, now, 0, "stop requested");
		break;
	case PL_STARTING:
	case PL_UP:
		log_info("draining: stopping the capture, flushing the rest");
		sv->state = PL_DRAIN;
		sv->m.up = 0;
		sv_child_kill(&sv->kid[K_CAPTURE], SIGTERM, now);
		sv->kill_at_ms = now + DRAIN_MAX_MS;
		break;
	case PL_DRAIN:
	case PL_TEARDOWN:
		log_info("already stopping");
		break;
	}
}

/* a last unterminated line is only forwarded at EOF: read until then */
static void
flush_logs(struct sv *sv)
{
	int k;

	for (k = 0; k < K_N; k++)
		while (sv_logpipe_read(&sv->kid[k].log) == 2)
			;
}

static int
all_reaped(const struct sv *sv)
{
	int k;

	for (k = 0; k < K_N; k++)
		if (sv_child_running(&sv->kid[k]))
			return 0;
	return 1;
}

static void
release_all(struct sv *sv)
{
	int k;

	flush_logs(sv);
	for (k = 0; k < K_N; k++) {
		sv_child_release(&sv->kid[k]);
		sv->kid[k].exited = 0;
	}
}

static int
upstream(int k)
{
	return k == K_SHAPER ? K_CAPTURE : k == K_WRITER ? K_SHAPER : -1;
}

/*
 * The child whose exit code stops the supervisor, or -1. A stage whose
 * input ended inside a frame exits 65 because its upstream died: that 65
 * is a consequence, unless the upstream ended in a later reaping round.
 */
static int
permanent_cause(const struct sv *sv)
{
	const struct sv_child *c, *u;
	int k, code;

	for (k = 0; k < K_N; k++) {
		c = &sv->kid[k];
		if (c->pid == 0 || !c->exited)
			continue;
		code = sv_child_code(c);
		if (code <= 0 || !p2o_exit_permanent(code))
			continue;
		if (code == P2O_EXIT_DATA && upstream(k) != -1) {
			u = &sv->kid[upstream(k)];
			if (u->pid != 0 && u->exited &&
			    u->exit_round <= c->exit_round)
				continue;
		}
		return k;
	}
	return -1;
}

/* every child of a failed incarnation is reaped: stop or restart */
static void
incarnation_over(struct sv *sv, long long now)
{
	char what[128];
	long long up_ms;
	int k, delay, max, code;

	if ((k = permanent_cause(sv)) != -1) {
		code = sv_child_code(&sv->kid[k]);
		sv_child_describe(&sv->kid[k], what, sizeof(what));
		release_all(sv);
		log_error("stopping: %s %s: see its message above",
		    kid_names[k], what);
		exit(code);
	}
	release_all(sv);
	if (sv->fatal_code != 0) {
		log_error("stopping: %s", sv->reason);
		exit(sv->fatal_code);
	}
	if (sv->stopping) {
		log_info("stopped");
		exit(P2O_EXIT_OK);
	}
	up_ms = sv->up_since_ms ? now - sv->up_since_ms : 0;
	delay = sv_backoff_failure(&sv->backoff, up_ms);
	max = sv->cf.reconnect_max > 0 ? sv->cf.reconnect_max : 1;
	if (sv->backoff.failures >= max) {
		log_error("giving up after %d consecutive failures; the last: "
		    "%s", sv->backoff.failures, sv->reason);
		exit(P2O_EXIT_TEMPFAIL);
	}
	sv->kill_at_ms = 0;
	log_warnx("restarting the pipeline in %d.%d s (failure %d of %d): %s",
	    delay / 1000, delay % 1000 / 100, sv->backoff.failures, max,
	    sv->reason);
	sv->m.reconnects++;
	sv->state = PL_WAIT;
	sv->restart_at_ms = now + delay;
}

static void
drain_step(struct sv *sv, long long now)
{
	struct sv_child *cap = &sv->kid[K_CAPTURE], *ck = &sv->kid[K_CKPT];
	struct sv_child *wr = &sv->kid[K_WRITER];

	/* the writer's last durable is in once its channel ended */
	if (!sv->drain_final_put && !sv_child_running(wr) && wr->ctl_rfd == -1) {
		sv->drain_final_put = 1;
		log_debug("writer done: storing the last durable position");
	}
	if (!sv->drain_final_put)
		return;
	if (!sv->drain_closed) {
		if (!sv_bc_settled(&sv->bc) && sv_child_running(ck) &&
		    ck->ctl_rfd != -1)
			return;		/* waiting for 'stored' */
		if (!sv_bc_settled(&sv->bc))
			sv->drain_failed = 1;
		/* the ack, if any, is queued: flushed, then EOF on fd 3 */
		cap->close_after = 1;
		ck->close_after = 1;
		sv->drain_closed = 1;
		sv_child_flush(cap);
		sv_child_flush(ck);
	}
	if (!all_reaped(sv))
		return;
	release_all(sv);
	if (sv->drain_failed) {
		log_error("stopped without storing the last durable position "
		    "%" PRIu64 ": the next start replays from %" PRIu64,
		    sv->bc.durable, sv->bc.stored);
		exit(P2O_EXIT_TEMPFAIL);
	}
	if (sv->bc.have_stored)
		log_info("stopped after draining; checkpoint at %" PRIu64,
		    sv->bc.stored);
	else
		log_info("stopped after draining; no checkpoint stored yet");
	exit(P2O_EXIT_OK);
}

/* what the state says to do without waiting for I/O */
static void
step(struct sv *sv, long long now)
{
	int k;

	if (sv->kill_at_ms && now >= sv->kill_at_ms &&
	    (sv->state == PL_TEARDOWN || sv->state == PL_DRAIN)) {
		for (k = 0; k < K_N; k++)
			if (sv_child_running(&sv->kid[k])) {
				log_warnx("'%s' did not stop: killing it",
				    kid_names[k]);
				sv_child_kill(&sv->kid[k], SIGKILL, now);
			}
		if (sv->state == PL_DRAIN) {
			log_error("draining took over %d s", DRAIN_MAX_MS /
			    1000);
			sv->drain_failed = 1;
			sv->drain_final_put = sv->drain_closed = 1;
		}
		sv->kill_at_ms = 0;
	}
	check_silent(sv, now);
	switch (sv->state) {
	case PL_WAIT:
		if (now >= sv->restart_at_ms)
			start_incarnation(sv, now);
		break;
	case PL_DRAIN:
		drain_step(sv, now);
		break;
	case PL_TEARDOWN:
		if (all_reaped(sv))
			incarnation_over(sv, now);
		break;
	default:
		break;
	}
	pump_checkpoint(sv, now);
}

static long long
earliest(long long a, long long b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static int
poll_timeout(struct sv *sv, long long now)
{
	long long at = -1;
	int k;

	if (sv->state == PL_WAIT)
		at = sv->restart_at_ms;
	/* a kill deadline matters only while something is stopping: a stale
	 * one in the past would make every poll return at once */
	if (sv->kill_at_ms && (sv->state == PL_TEARDOWN ||
	    sv->state == PL_DRAIN))
		at = earliest(at, sv->kill_at_ms);
	if (sv->state == PL_STARTING || sv->state == PL_UP ||
	    sv->state == PL_DRAIN)
		at = earliest(at, sv_bc_deadline(&sv->bc));
	at = earliest(at, sv_httpd_deadline(&sv->httpd));
	for (k = 0; k < K_N; k++)
		if (sv->kid[k].ctl_eof_ms && sv_child_running(&sv->kid[k]))
			at = earliest(at, sv->kid[k].ctl_eof_ms + EOF_GRACE_MS);
	if (at < 0)
		return -1;
	return at <= now ? 0 : at - now > 60000 ? 60000 : (int)(at - now);
}

static void
http_handler(void *arg, const struct sv_http_req *req,
    struct sv_http_resp *resp)
{
	struct sv *sv = arg;

	if (strcmp(req->path, "/metrics") == 0) {
		resp->status = 200;
		resp->ctype = "text/plain; version=0.0.4; charset=utf-8";
		sv_metrics_render(&sv->m, &resp->body);
	} else if (strcmp(req->path, "/healthz") == 0) {
		resp->status = sv->state == PL_UP ? 200 : 503;
		sbuf_addf(&resp->body, "%s\n", sv->state == PL_UP ? "ok" :
		    state_names[sv->state]);
	} else {
		resp->status = 404;
		sbuf_adds(&resp->body, "not found\n");
	}
}

static void
install_signals(void)
{
	struct sigaction sa;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal(P2O_EXIT_INTERNAL, "self-pipe");
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

static void
run(struct sv *sv)
{
	struct pollfd pfd[1 + K_N * 3 + SV_HTTPD_POLLFDS];
	char drain[64];
	long long now;
	int n, k, h0, nh;

	for (;;) {
		now = now_ms();
		step(sv, now);
		n = 0;
		pfd[n].fd = sig_pipe[0];
		pfd[n++].events = POLLIN;
		for (k = 0; k < K_N; k++) {
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
		h0 = n;
		nh = sv_httpd_pollfds(&sv->httpd, pfd + h0);
		n += nh;
		for (k = 0; k < n; k++)
			pfd[k].revents = 0;
		if (poll(pfd, (nfds_t)n, poll_timeout(sv, now)) == -1) {
			if (errno != EINTR)
				fatal(P2O_EXIT_INTERNAL, "poll");
			continue;
		}
		now = now_ms();
		/* children's fds before their exits: a stage's last log
		 * lines and frames come before what its end means */
		for (k = 0; k < K_N; k++) {
			struct sv_child *c = &sv->kid[k];
			int *ix = sv->pidx[k];

			if (ix[2] != -1 && pfd[ix[2]].revents)
				sv_logpipe_read(&c->log);
			if (ix[0] != -1 && pfd[ix[0]].revents &&
			    c->ctl_rfd == pfd[ix[0]].fd)
				kid_read(sv, k, now);
			if (ix[1] != -1 && (pfd[ix[1]].revents & (POLLOUT |
			    POLLERR | POLLHUP)) && c->ctl_wfd != -1 &&
			    sv_child_flush(c) == -1)
				log_debug("'%s': its control input is closed",
				    kid_names[k]);
		}
		if (pfd[0].revents)
			while (read(sig_pipe[0], drain, sizeof(drain)) > 0)
				;
		if (got_chld)
			reap(sv, now);
		if (got_term) {
			got_term = 0;
			begin_drain(sv, now);
		}
		sv_httpd_handle(&sv->httpd, pfd + h0, now);
		/* frames queued by the handlers above go out now when they
		 * can, without waiting a round for POLLOUT */
		for (k = 0; k < K_N; k++)
			if (sv->kid[k].out.len > 0 || sv->kid[k].close_after)
				sv_child_flush(&sv->kid[k]);
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",	required_argument,	NULL, 'c' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static struct sv sv;
	char err[1024], *path;
	int ch, k;

	log_init("pg2osync-supervise");
	while ((ch = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			sv.cfgpath = optarg;
			break;
		case 'h':
			usage(stdout);
			return P2O_EXIT_OK;
		case 'V':
			printf("pg2osync-supervise %s\n", P2O_VERSION);
			return P2O_EXIT_OK;
		default:
			usage(stderr);
			return P2O_EXIT_USAGE;
		}
	}
	if (optind != argc || sv.cfgpath == NULL) {
		usage(stderr);
		return P2O_EXIT_USAGE;
	}
	sanitize_fds();
	if (config_load(sv.cfgpath, &sv.cf, err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s", err);
	if (sv.cf.source_kind != SOURCE_POSTGRES)
		fatalx(P2O_EXIT_CONFIG, "%s: source.url: only a PostgreSQL "
		    "source can be supervised so far", sv.cfgpath);
	for (k = 0; k < K_N; k++) {
		if ((path = sv_find_exe(kid_names[k])) == NULL)
			fatalx(P2O_EXIT_INTERNAL, "could not find '%s' next to "
			    "this program or on $PATH", kid_names[k]);
		sv_child_init(&sv.kid[k], kid_names[k], path);
	}
	install_signals();
	sv_metrics_init(&sv.m);
	sv.httpd.fd = -1;
	for (k = 0; k < SV_HTTP_CONNS; k++)
		sv.httpd.conns[k].fd = -1;
	if (sv.cf.metrics_bind != NULL &&
	    sv_httpd_open(&sv.httpd, sv.cf.metrics_bind, http_handler, &sv,
	    err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s: metrics.bind: %s", sv.cfgpath,
		    err);
	sv.state = PL_WAIT;
	sv.restart_at_ms = now_ms();
	run(&sv);
	return P2O_EXIT_INTERNAL;
}
