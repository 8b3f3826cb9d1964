/*
 * pg2osync-supervise - run one pg2osync stream: 'ckpt serve' for the
 * checkpoint and the pipeline of stages the stage table (stages.c)
 * describes, each with fd 3 back to us.
 *
 * One poll loop. An incarnation of the pipeline goes: ask ckpt for the
 * checkpoint, start the stages from it, wait for their hellos, then carry
 * durable -> put -> stored -> ack until something ends. Any stage ending
 * tears the whole pipeline down and starts it again after a backoff,
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
#include "source.h"
#include "supervisor.h"
#include "xio.h"

#define KILL_AFTER_MS	5000	/* SIGTERM, then SIGKILL after this */
#define DRAIN_MAX_MS	60000	/* a SIGTERM drain, start to finish */
#define EOF_GRACE_MS	1000	/* a closed control channel, then its exit */
/* a child ended: the others that are ending too get this long to be
 * reaped on their own before the rest are signalled, so the cause is
 * told from its consequences by what the children did, not by the order
 * their exits reached us */
#define END_GRACE_MS	200

/* children: the stages, then the tap on each stage's stdin boundary,
 * then the tap on each stage's fd 4 boundary */
#define NKIDS		(3 * SV_NSTAGES)
#define TAP_OF(s)	(SV_NSTAGES + (s))
#define TAP4_OF(s)	(2 * SV_NSTAGES + (s))
#define IS_TAP(k)	((k) >= SV_NSTAGES)
#define TAPPED(k)	((k) % SV_NSTAGES)

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
	struct sv_child	 kid[NKIDS];
	char		 kidname[NKIDS][48];
	struct sv_tap	 tap[SV_NSTAGES];	/* stdin boundary; path NULL: none */
	struct sv_tap	 tap4[SV_NSTAGES];	/* fd 4 boundary */
	enum pl_state	 state;
	struct sv_backchannel bc;
	struct sv_backoff backoff;
	struct sv_metrics m;
	struct sv_httpd	 httpd;
	int		 hello_timeout_s;	/* > 0 overrides the table */

	long long	 restart_at_ms;
	long long	 started_ms[SV_NSTAGES];	/* when each was started */
	int		 pending_out[SV_NSTAGES];	/* the stdout of a stage that
					 * starts later, held open until then */
	/* the checkpoint ckpt answered, until its load frame comes */
	int		 cp_have;
	uint64_t	 cp_pos;
	char		*cp_text;
	char		*load_frame;	/* the load frame for the loader */
	int		 load_tables;	/* how many tables it lists */
	uint64_t	 load_rows_at;	/* rows loaded at load_rows_ms */
	long long	 load_rows_ms;
	double		 load_rate;	/* rows a second, smoothed */
	long long	 up_since_ms;	/* 0 unless the pipeline reached up */
	long long	 kill_at_ms;	/* SIGKILL what still runs; 0 none */
	long long	 end_at_ms;	/* tear down then: a child ended; 0 none */
	char		 first_end[256];	/* what that child did */
	unsigned	 reap_round;
	char		 reason[512];	/* what ended this incarnation first */
	int		 fatal_code;	/* a permanent failure we found */
	int		 stopping;	/* SIGTERM or SIGINT arrived */
	int		 drain_final_put;	/* the writer is done */
	int		 drain_closed;	/* capture fd 3 and ckpt stdin closed */
	int		 drain_failed;	/* the last checkpoint may be missing */
	int		 pidx[NKIDS][3];	/* pollfd indexes: ctl r, ctl w, log */
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
"usage: pg2osync-supervise -c config.yaml [--stage STAGE=PROGRAM]...\n"
"                          [--tap POINT=FILE]... [--tap-max BYTES]\n"
"\n"
"Runs the stream the configuration describes: 'ckpt serve' for the\n"
"checkpoint and the pipeline capture | shaper | writer (capture-pg or\n"
"capture-mysql by the source url), found next to this program or else on\n"
"$PATH. Children inherit the environment, which is how the *_env secrets\n"
"reach them; their argv carries the configuration path and the start\n"
"position only.\n"
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
"  -c, --config FILE      the pg2osync configuration (required)\n"
"  --stage STAGE=PROGRAM  run PROGRAM in place of a stage (capture,\n"
"                         loader, shaper, writer, ckpt); it gets the same\n"
"                         argv and descriptors. A replaced shaper need\n"
"                         not speak the control channel.\n"
"  --tap POINT=FILE       copy the frames crossing a boundary to FILE:\n"
"                         events (capture -> shaper), loads (loader ->\n"
"                         shaper) or ops (shaper -> writer). The copy\n"
"                         never holds the pipeline up; FILE is rotated to\n"
"                         FILE.1 at frame boundaries.\n"
"  --tap-max BYTES        rotate a tap file at this size (default 64M;\n"
"                         K, M, G suffixes)\n"
"  -h, --help             this text\n"
"  -V, --version          print the version\n"
"\n"
"environment: P2O_HELLO_TIMEOUT_S, seconds a stage may take to say hello\n"
"(default: 600 for the capture, 60 for the writer).\n"
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

static const char *
kname(const struct sv *sv, int k)
{
	return sv->kidname[k];
}

/* a stage this incarnation runs: every one but an optional stage with no
 * work (the loader when every table is loaded) */
static int
will_run(const struct sv *sv, int s)
{
	if (s == SV_CKPT)
		return 0;
	if (!sv_stages[s].optional)
		return 1;
	return s == SV_LOADER && sv->load_tables > 0;
}

static int
kid_by_pid(struct sv *sv, pid_t pid)
{
	int k;

	for (k = 0; k < NKIDS; k++)
		if (sv->kid[k].pid == pid && !sv->kid[k].exited)
			return k;
	return -1;
}

static void teardown(struct sv *, long long, int, const char *, ...)
	__attribute__((format(printf, 4, 5)));
static int upstream(int);

static void
reap(struct sv *sv, long long now)
{
	char what[128];
	pid_t pid;
	int status, k, ended[NKIDS] = { 0 };

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
	for (k = 0; k < NKIDS; k++) {
		if (!ended[k])
			continue;
		sv_child_describe(&sv->kid[k], what, sizeof(what));
		if (k < SV_NSTAGES && sv_stages[k].exit0_done &&
		    sv_child_code(&sv->kid[k]) == 0 &&
		    (sv->state == PL_STARTING || sv->state == PL_UP)) {
			log_status("%s", "");
			log_info("'%s' finished: every table is loaded",
			    kname(sv, k));
			continue;
		}
		/* the tap of a stage whose clean end is done (the loads tap)
		 * ends cleanly with it: the end of the copy, not a failure */
		if (IS_TAP(k) && upstream(k) >= 0 &&
		    sv_stages[upstream(k)].exit0_done &&
		    sv_child_code(&sv->kid[k]) == 0 &&
		    (sv->state == PL_STARTING || sv->state == PL_UP)) {
			log_debug("'%s' %s", kname(sv, k), what);
			continue;
		}
		if (sv->state == PL_TEARDOWN ||
		    (sv->state == PL_DRAIN && (sv_child_code(&sv->kid[k]) == 0 ||
		    (sv->kid[k].signalled_ms &&
		    sv_child_code(&sv->kid[k]) == -SIGTERM))))
			log_debug("'%s' %s", kname(sv, k), what);
		else if (sv->state == PL_DRAIN)
			log_warnx("'%s' %s while draining", kname(sv, k), what);
		else if (sv->end_at_ms == 0) {
			log_debug("'%s' %s", kname(sv, k), what);
			snprintf(sv->first_end, sizeof(sv->first_end), "%s %s",
			    kname(sv, k), what);
			sv->end_at_ms = now + END_GRACE_MS;
		}
	}
}

/*
 * Stop every child. The first reason is kept for the log line; which end
 * caused the failure is decided once every child is reaped (cause()).
 * code != 0 marks a permanent failure found by the supervisor itself (a
 * protocol error).
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
	sv->end_at_ms = 0;
	va_start(ap, fmt);
	vsnprintf(sv->reason, sizeof(sv->reason), fmt, ap);
	va_end(ap);
	log_status("%s", "");
	log_info("stopping the pipeline: %s", sv->reason);
	sv->state = PL_TEARDOWN;
	sv->m.up = 0;
	/* collect whatever already ended, so it is not taken for a child
	 * that ended because we signalled it */
	reap(sv, now);
	/* no more acks are coming: the end of fd 3 tells a stopping capture
	 * not to wait for one (what is queued is stored, so it still goes) */
	for (k = 0; k < NKIDS; k++) {
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
	struct sv_child *ck = &sv->kid[SV_CKPT];
	char **argv = sv_stage_argv(SV_CKPT, ck->path, sv->cfgpath, NULL,
	    NULL, 0);
	char err[512];
	int r;

	sv_metrics_restart(&sv->m);
	sv->reason[0] = '\0';
	sv->fatal_code = 0;
	sv->up_since_ms = 0;
	sv->kill_at_ms = sv->end_at_ms = 0;
	sv->drain_final_put = sv->drain_closed = sv->drain_failed = 0;
	sv->cp_have = 0;
	free(sv->cp_text);
	free(sv->load_frame);
	sv->cp_text = sv->load_frame = NULL;
	sv->load_tables = 0;
	sv->state = PL_CHECKPOINT;
	log_info("starting the pipeline");
	r = sv_child_spawn(ck, argv, SV_CTL_STDIO, -1, -1, -1, P2O_FD_LOG, err,
	    sizeof(err));
	sv_argv_free(argv);
	if (r == -1) {
		spawn_failed(sv, now, err);
		return;
	}
	msg_put_get(sv_child_out(ck));
}

static void
close_pair(int p[2])
{
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	p[0] = p[1] = -1;
}

/* spawn stage s with its fds (-1: /dev/null, or closed for fd 4) */
static int
spawn_stage(struct sv *sv, int s, int in, int out, int fd4, int null,
    long long now, char *err, size_t errlen)
{
	char token[24], **argv;
	int rc;

	if (sv->kid[s].path == NULL) {
		snprintf(err, errlen, "could not find '%s' next to this "
		    "program or on $PATH", kname(sv, s));
		return -1;
	}
	snprintf(token, sizeof(token), "%" PRIu64, sv->cp_pos);
	argv = sv_stage_argv(s, sv->kid[s].path, sv->cfgpath,
	    sv->cp_have ? sv->cp_text : NULL, token, fd4 != -1);
	rc = sv_child_spawn(&sv->kid[s], argv, sv_stages[s].ctl,
	    in != -1 ? in : null, out != -1 ? out : null, fd4, P2O_FD_LOG, err,
	    errlen);
	sv_argv_free(argv);
	if (rc == 0) {
		sv->started_ms[s] = now;
		log_debug("started '%s' (pid %d)", kname(sv, s),
		    (int)sv->kid[s].pid);
	}
	return rc;
}

/*
 * Wire and start the pipeline the stage table describes: a pipe for each
 * boundary between two stages that run, a tap process in the middle of a
 * tapped one, /dev/null where nothing feeds a stage or reads it. A stage
 * that starts after another one's hello gets its stdout pipe now (its
 * reader must have it from the start) and is spawned later.
 */
static void
start_stages(struct sv *sv, long long now)
{
	int edge[SV_NSTAGES][2][2][2];	/* [to][stdin, fd4][up, down][r, w] */
	int in[SV_NSTAGES], out[SV_NSTAGES], fd4[SV_NSTAGES];
	int null = -1, s, e, from, tapk, rc = 0;
	struct sv_tap *t;
	char err[512];

	sv_bc_release(&sv->bc);
	sv_bc_init(&sv->bc, sv->cf.checkpoint_interval_ms, sv->cp_have,
	    sv->cp_pos);
	if (sv->cp_have) {
		sv->m.checkpoint_position = sv->cp_pos;
		if (sv->cp_pos > sv->m.position_confirmed)
			sv->m.position_confirmed = sv->cp_pos;
		log_info("checkpoint at %s (%" PRIu64 "): the capture starts "
		    "there", sv->cp_text, sv->cp_pos);
	} else
		log_info("no checkpoint stored: the capture starts where the "
		    "source keeps its position");
	if (sv->load_tables > 0)
		log_info("%d table%s to load beside the stream",
		    sv->load_tables, sv->load_tables == 1 ? "" : "s");
	sv->state = PL_STARTING;
	memset(edge, -1, sizeof(edge));
	for (s = 0; s < SV_NSTAGES; s++)
		in[s] = out[s] = fd4[s] = -1;
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, sizeof(err), "/dev/null: %s", strerror(errno));
		goto fail;
	}
	for (s = 0; s < SV_NSTAGES; s++) {
		if (!will_run(sv, s))
			continue;
		for (e = 0; e < 2; e++) {
			from = e == 0 ? sv_stages[s].stdin_from :
			    sv_stages[s].fd4_from;
			t = e == 0 ? &sv->tap[s] : &sv->tap4[s];
			if (from < 0 || !will_run(sv, from))
				continue;
			if (pipe2(edge[s][e][0], O_CLOEXEC) == -1 ||
			    (t->path && pipe2(edge[s][e][1], O_CLOEXEC) == -1)) {
				snprintf(err, sizeof(err), "could not create the "
				    "pipeline's pipes: %s", strerror(errno));
				goto fail;
			}
			out[from] = edge[s][e][0][1];
			*(e == 0 ? &in[s] : &fd4[s]) = t->path ?
			    edge[s][e][1][0] : edge[s][e][0][0];
			tapk = e == 0 ? TAP_OF(s) : TAP4_OF(s);
			if (t->path && sv_child_fork(&sv->kid[tapk], sv_tap_run,
			    t, edge[s][e][0][0], edge[s][e][1][1], P2O_FD_LOG,
			    err, sizeof(err)) == -1)
				goto fail;
		}
	}
	for (s = 0; s < SV_NSTAGES; s++) {
		if (!will_run(sv, s))
			continue;
		if (sv_stages[s].after >= 0) {
			/* its reader holds the other end from the start; the
			 * copy kept until then must not leak into any child
			 * but this one, or the reader never sees its end */
			if (out[s] != -1)
				sv->pending_out[s] = fcntl(out[s], F_DUPFD_CLOEXEC, 3);
			continue;
		}
		if (spawn_stage(sv, s, in[s], out[s], fd4[s], null, now, err,
		    sizeof(err)) == -1)
			goto fail;
	}
	rc = 1;
fail:
	for (s = 0; s < SV_NSTAGES; s++)
		for (e = 0; e < 2; e++) {
			close_pair(edge[s][e][0]);
			close_pair(edge[s][e][1]);
		}
	if (null != -1)
		close(null);
	if (!rc)
		spawn_failed(sv, now, err);
}

/*
 * A MySQL server keeps no position for its readers, as a replication slot
 * does: until a checkpoint is stored, a restarted capture starts at the
 * server's position of that moment, and whatever changed in between is
 * never streamed. A copy written before that would then keep a row the
 * source deleted meanwhile, and a load resumed after a chunk would miss
 * the changes to the chunk's rows. So on MySQL the loader starts once the
 * capture's first position is stored (it sends its start at once).
 */
static int
loader_may_start(const struct sv *sv)
{
	return sv->cf.source_kind != SOURCE_MYSQL || sv->bc.have_stored;
}

/* the stages waiting for k's hello */
static void
start_after(struct sv *sv, int k, long long now)
{
	char err[512];
	int s, null;

	for (s = 0; s < SV_NSTAGES; s++) {
		if (sv_stages[s].after != k || !will_run(sv, s) ||
		    sv->kid[s].pid != 0 ||
		    (s == SV_LOADER && !loader_may_start(sv)))
			continue;
		if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
			spawn_failed(sv, now, "/dev/null");
			return;
		}
		if (spawn_stage(sv, s, -1, sv->pending_out[s], -1, null, now,
		    err, sizeof(err)) == -1) {
			close(null);
			spawn_failed(sv, now, err);
			return;
		}
		close(null);
		if (sv->pending_out[s] != -1)
			close(sv->pending_out[s]);
		sv->pending_out[s] = -1;
	}
}

/* every stage that must say hello did, and every other one runs */
static int
all_up(const struct sv *sv)
{
	int s;

	for (s = 0; s < SV_NSTAGES; s++) {
		if (!will_run(sv, s) || sv_stages[s].optional)
			continue;
		if (sv_stages[s].needs_hello ? sv->kid[s].state != SV_UP :
		    !sv_child_running(&sv->kid[s]))
			return 0;
	}
	return 1;
}

static void
check_up(struct sv *sv, long long now)
{
	if (sv->state != PL_STARTING || !all_up(sv))
		return;
	sv->state = PL_UP;
	sv->up_since_ms = now;
	sv->m.up = 1;
	log_info("pipeline up");
}

static void
on_hello(struct sv *sv, int k, const struct frame *f, long long now)
{
	struct sv_child *c = &sv->kid[k];
	struct msg_hello h;
	char why[128];

	if (msg_read_hello(f, &h, why, sizeof(why)) == -1 ||
	    h.proto != P2O_PROTO) {
		teardown(sv, now, P2O_EXIT_DATA, "'%s' speaks control protocol "
		    "%d, this supervisor %d: mixed installations?",
		    kname(sv, k), h.proto, P2O_PROTO);
		return;
	}
	if (c->state != SV_STARTING)
		return;
	c->state = SV_UP;
	log_debug("'%s' is up (pid %d)", kname(sv, k), (int)c->pid);
	/* the loader learns what to load, and where each table was left */
	if (k == SV_LOADER && sv->load_frame != NULL)
		frame_put(sv_child_out(c), sv->load_frame,
		    strlen(sv->load_frame));
	start_after(sv, k, now);
	check_up(sv, now);
}

/* a stage that must say hello and has not within its time */
static void
check_hello(struct sv *sv, long long now)
{
	int s, limit;

	if (sv->state != PL_STARTING && sv->state != PL_UP)
		return;
	for (s = 0; s < SV_NSTAGES; s++) {
		limit = sv->hello_timeout_s > 0 ? sv->hello_timeout_s :
		    sv_stages[s].hello_timeout_s;
		if (!sv_stages[s].needs_hello || sv->kid[s].pid == 0 ||
		    sv->kid[s].state != SV_STARTING ||
		    now - sv->started_ms[s] < (long long)limit * 1000)
			continue;
		teardown(sv, now, 0, "'%s' did not say hello within %d s",
		    kname(sv, s), limit);
		return;
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
	int r, s;

	if (msg_read_pos(f, &st, why, sizeof(why)) == -1 ||
	    (r = sv_bc_stored(&sv->bc, st.pos, &ack)) == -1) {
		msg_pos_release(&st);
		teardown(sv, now, P2O_EXIT_DATA, "ckpt answered 'stored' for "
		    "a checkpoint it was not given");
		return;
	}
	sv->m.checkpoint_position = sv->bc.stored;
	log_debug("checkpoint stored at %" PRIu64, st.pos);
	msg_pos_release(&st);
	/* a loader held back for the first checkpoint */
	if ((sv->state == PL_STARTING || sv->state == PL_UP) &&
	    sv->kid[SV_CAPTURE].state == SV_UP)
		start_after(sv, SV_CAPTURE, now);
	if (r != 1)
		return;
	for (s = 0; s < SV_NSTAGES; s++)
		if (sv_stages[s].gets_ack && sv->kid[s].ctl_wfd != -1)
			msg_put_ack(sv_child_out(&sv->kid[s]), ack);
	sv->m.position_confirmed = ack;
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
	/* the load frame follows: the stages start with both */
	sv->cp_have = cp.present;
	sv->cp_pos = cp.pos;
	free(sv->cp_text);
	sv->cp_text = cp.text;
	cp.text = NULL;
	msg_pos_release(&cp);
}

static void
on_load(struct sv *sv, const struct frame *f, long long now)
{
	struct jspan tables, progress;
	struct msg_pos cp;
	struct jiter it;
	char why[256], *table;
	int r;

	memset(&cp, 0, sizeof(cp));
	if (sv->state != PL_CHECKPOINT || sv->load_frame != NULL ||
	    msg_read_load(f, &tables, &cp, why, sizeof(why)) == -1) {
		msg_pos_release(&cp);
		teardown(sv, now, P2O_EXIT_DATA, "ckpt sent an unusable or "
		    "unasked-for load frame");
		return;
	}
	msg_pos_release(&cp);
	sv->load_tables = 0;
	jiter_init(&it, tables);
	while ((r = msg_load_next(&it, &table, &progress, why,
	    sizeof(why))) == 1) {
		log_info("'%s' %s", table, progress.p ? "resumes its initial "
		    "load" : "needs its initial load");
		sv->load_tables++;
		free(table);
	}
	if (r == -1) {
		teardown(sv, now, P2O_EXIT_DATA, "ckpt: %s", why);
		return;
	}
	sv->load_frame = xstrndup(f->obj.p, f->obj.n);
	start_stages(sv, now);
}

/* the load's progress, as a line kept under the log on a terminal */
static void
load_status(struct sv *sv, long long now)
{
	uint64_t rows = sv_metrics_total(&sv->m, MC_LOAD_ROWS, NULL);
	uint64_t est = sv_metrics_total(&sv->m, MC_LOAD_ROWS_ESTIMATE, NULL);
	uint64_t done = sv_metrics_total(&sv->m, MC_LOAD_RANGES_DONE, NULL);
	uint64_t ranges = sv_metrics_total(&sv->m, MC_LOAD_RANGES, NULL);
	double r;
	long eta;

	if (sv->load_rows_ms && now > sv->load_rows_ms &&
	    rows >= sv->load_rows_at) {
		r = (double)(rows - sv->load_rows_at) * 1000.0 /
		    (double)(now - sv->load_rows_ms);
		sv->load_rate = sv->load_rate > 0 ? 0.7 * sv->load_rate +
		    0.3 * r : r;
	}
	sv->load_rows_at = rows;
	sv->load_rows_ms = now;
	eta = sv->load_rate > 1 && est > rows ?
	    (long)((double)(est - rows) / sv->load_rate) : 0;
	log_status("loading: %" PRIu64 " of about %" PRIu64 " rows (%d%%), "
	    "ranges %" PRIu64 "/%" PRIu64 ", %.0f rows/s, about %ld:%02ld "
	    "left", rows, est, est ? (int)(rows * 100 / (est > rows ? est :
	    rows)) : 0, done, ranges, sv->load_rate, eta / 60, eta % 60);
}

static void
on_frame(struct sv *sv, int k, const struct frame *f, long long now)
{
	struct jspan tool, counters;
	struct msg_mark mk;
	char why[128];
	enum msg_kind kind = msg_kind(f);

	if (k == SV_CKPT) {
		if (kind == MSG_STORED)
			on_stored(sv, f, now);
		else if (kind == MSG_CHECKPOINT)
			on_checkpoint(sv, f, now);
		else if (kind == MSG_LOAD)
			on_load(sv, f, now);
		else if (kind == MSG_MARK_CONFIRM) {
			/* the progress is stored: the next wave may start */
			if (will_run(sv, SV_LOADER) &&
			    sv_child_running(&sv->kid[SV_LOADER]))
				frame_put(sv_child_out(&sv->kid[SV_LOADER]),
				    f->obj.p, f->obj.n);
		} else
			log_debug("ckpt: ignoring a frame of kind %.*s",
			    (int)f->kind.n, f->kind.p);
		return;
	}
	switch (kind) {
	case MSG_HELLO:
		on_hello(sv, k, f, now);
		break;
	case MSG_STATS:
		if (msg_read_stats(f, &tool, &counters, why, sizeof(why)) == 0)
			sv_metrics_stats(&sv->m, counters);
		if (k == SV_LOADER)
			load_status(sv, now);
		break;
	case MSG_DURABLE:
		if (k == SV_WRITER)
			on_durable(sv, f, now);
		break;
	case MSG_MARKED:
		/* every copy row before it is durable: ckpt stores the
		 * loader's progress and answers confirm */
		if (k != SV_WRITER)
			break;
		if (msg_read_mark(f, &mk, why, sizeof(why)) == -1) {
			teardown(sv, now, P2O_EXIT_DATA, "writer: %s", why);
			break;
		}
		log_debug("load mark '%s' is durable", mk.id);
		msg_mark_release(&mk);
		frame_put(sv_child_out(&sv->kid[SV_CKPT]), f->obj.p, f->obj.n);
		break;
	default:
		log_debug("'%s': ignoring a control frame of kind %.*s",
		    kname(sv, k), (int)f->kind.n, f->kind.p);
		break;
	}
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
	if (sv->state == PL_DRAIN && k == SV_CKPT && !sv->drain_closed) {
		log_error("ckpt ended before the last checkpoint was stored");
		sv->drain_failed = 1;
	}
}

/* a channel that ended EOF_GRACE_MS ago with its child still running;
 * only a stage whose channel is its purpose (hello, acks, durable) */
static void
check_silent(struct sv *sv, long long now)
{
	int k;

	if (sv->state != PL_CHECKPOINT && sv->state != PL_STARTING &&
	    sv->state != PL_UP)
		return;
	for (k = 0; k < SV_NSTAGES; k++) {
		if (k != SV_CKPT && !sv_stages[k].needs_hello)
			continue;
		if (sv->kid[k].ctl_eof_ms && sv_child_running(&sv->kid[k]) &&
		    now - sv->kid[k].ctl_eof_ms >= EOF_GRACE_MS) {
			teardown(sv, now, 0, "'%s' closed its %s", kname(sv, k),
			    k == SV_CKPT ? "stdout" : "control fd 3");
			return;
		}
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
			    kname(sv, k), c->rd.err);
			sv_child_close_ctl(c);
			return;
		}
		/* a frame cut short by the child's end: the end matters,
		 * not the fragment */
		log_warnx("'%s': %s", kname(sv, k), c->rd.err);
	}
	if (c->rd.eof && c->ctl_rfd != -1)
		ctl_eof(sv, k, now);
}

/* queue a put when the back-channel says so */
static void
pump_checkpoint(struct sv *sv, long long now)
{
	struct sv_child *ck = &sv->kid[SV_CKPT];
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
		sv_child_kill(&sv->kid[SV_CAPTURE], SIGTERM, now);
		/* a load in progress stops at its last recorded range; one
		 * not started yet never will: its reader must see the end */
		sv_child_kill(&sv->kid[SV_LOADER], SIGTERM, now);
		if (sv->pending_out[SV_LOADER] != -1) {
			close(sv->pending_out[SV_LOADER]);
			sv->pending_out[SV_LOADER] = -1;
		}
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

	for (k = 0; k < NKIDS; k++)
		while (sv_logpipe_read(&sv->kid[k].log) == 2)
			;
}

static int
all_reaped(const struct sv *sv)
{
	int k;

	for (k = 0; k < NKIDS; k++)
		if (sv_child_running(&sv->kid[k]))
			return 0;
	return 1;
}

static void
release_all(struct sv *sv)
{
	int k;

	flush_logs(sv);
	for (k = 0; k < NKIDS; k++) {
		sv_child_release(&sv->kid[k]);
		sv->kid[k].exited = 0;
		if (k < SV_NSTAGES && sv->pending_out[k] != -1) {
			close(sv->pending_out[k]);
			sv->pending_out[k] = -1;
		}
	}
}

/* the stage feeding k's stdin (or, for a tap, its input) */
static int
upstream(int k)
{
	if (k >= TAP4_OF(0))
		return sv_stages[TAPPED(k)].fd4_from;
	if (IS_TAP(k))
		return sv_stages[TAPPED(k)].stdin_from;
	return sv_stages[k].stdin_from;
}

/* pipeline order for choosing a cause: the source end first */
static int
depth(int k)
{
	int d = 0;

	while ((k = upstream(k)) >= 0)
		d++;
	return d;
}

/* ended by itself: exited with a code, or killed by a signal we did not
 * send (a kill -9 from outside, a crash) */
static int
ended_on_its_own(const struct sv_child *c)
{
	int code = sv_child_code(c);

	return c->pid != 0 && c->exited &&
	    (code >= 0 || c->signalled_ms == 0);
}

/*
 * Whether u's end explains c's 65, c's input from u ending inside a
 * frame. Reaping order is no proof: a process killed by a signal closes
 * its pipes before its parent can reap it, so its reader may be reaped
 * first. So a signal no one here sent (a kill -9 from outside, a crash;
 * not SIGPIPE, which c's own end would cause) explains it whenever it
 * was reaped; any other end only when reaped no later than c, and for
 * the load descriptor only a failed one (a loader that exited 0 wrote
 * whole frames).
 */
static int
cut_input(const struct sv *sv, int u, const struct sv_child *c, int fd4)
{
	const struct sv_child *uc;
	int code;

	if (u == -1)
		return 0;
	uc = &sv->kid[u];
	if (uc->pid == 0 || !uc->exited)
		return 0;
	code = sv_child_code(uc);
	if (code < 0 && code != -SIGPIPE && uc->signalled_ms == 0)
		return 1;
	return uc->exit_round <= c->exit_round && (!fd4 || code != 0);
}

/*
 * The child whose exit code stops the supervisor, or -1. A stage whose
 * input (stdin, or the load descriptor) ended inside a frame exits 65
 * because its upstream died: that 65 is a consequence (cut_input).
 */
static int
permanent_cause(const struct sv *sv)
{
	const struct sv_child *c;
	int k, code;

	for (k = 0; k < NKIDS; k++) {
		c = &sv->kid[k];
		if (c->pid == 0 || !c->exited)
			continue;
		code = sv_child_code(c);
		if (code <= 0 || !p2o_exit_permanent(code))
			continue;
		if (code == P2O_EXIT_DATA &&
		    (cut_input(sv, upstream(k), c, 0) ||
		    cut_input(sv, IS_TAP(k) ? -1 : sv_stages[k].fd4_from, c,
		    1)))
			continue;
		return k;
	}
	return -1;
}

/*
 * What ended this incarnation, for the restart message: of the children
 * that ended on their own, a failure before a clean end, and the one
 * nearest the source before those downstream of it. A downstream stage
 * can see its input end, and exit, before its upstream's exit status
 * reaches us; it is the consequence even when it is reaped first.
 */
static void
cause(struct sv *sv)
{
	char what[128];
	int k, best = -1, bfail = 0, fail, code;

	for (k = 0; k < NKIDS; k++) {
		if (!ended_on_its_own(&sv->kid[k]))
			continue;
		/* a death by a signal no one here sent (a kill -9 from
		 * outside, a crash) before an exit code: the stages around
		 * it exit because of it (a broken pipe, a cut frame) */
		code = sv_child_code(&sv->kid[k]);
		fail = code == 0 ? 0 : code < 0 && code != -SIGPIPE ? 2 : 1;
		/* a loader that finished is not what stopped the pipeline */
		if (!fail && k < SV_NSTAGES && sv_stages[k].exit0_done)
			continue;
		if (best == -1 || fail > bfail ||
		    (fail == bfail && depth(k) < depth(best))) {
			best = k;
			bfail = fail;
		}
	}
	if (best == -1)
		return;
	sv_child_describe(&sv->kid[best], what, sizeof(what));
	snprintf(sv->reason, sizeof(sv->reason), "%s %s", kname(sv, best),
	    what);
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
		    kname(sv, k), what);
		exit(code);
	}
	if (sv->fatal_code == 0 && !sv->stopping)
		cause(sv);
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
	struct sv_child *ck = &sv->kid[SV_CKPT], *wr = &sv->kid[SV_WRITER];
	int s;

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
		for (s = 0; s < SV_NSTAGES; s++)
			if (s == SV_CKPT || sv_stages[s].gets_ack) {
				sv->kid[s].close_after = 1;
				sv_child_flush(&sv->kid[s]);
			}
		sv->drain_closed = 1;
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
		for (k = 0; k < NKIDS; k++)
			if (sv_child_running(&sv->kid[k])) {
				log_warnx("'%s' did not stop: killing it",
				    kname(sv, k));
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
	if (sv->end_at_ms && now >= sv->end_at_ms)
		teardown(sv, now, 0, "%s", sv->first_end);
	check_silent(sv, now);
	check_hello(sv, now);
	switch (sv->state) {
	case PL_WAIT:
		if (now >= sv->restart_at_ms)
			start_incarnation(sv, now);
		break;
	case PL_STARTING:
		/* a stage that needs no hello is up by running */
		check_up(sv, now);
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

/* when the next hello deadline falls, or -1 */
static long long
hello_deadline(const struct sv *sv)
{
	long long at = -1;
	int s, limit;

	if (sv->state != PL_STARTING && sv->state != PL_UP)
		return -1;
	for (s = 0; s < SV_NSTAGES; s++) {
		limit = sv->hello_timeout_s > 0 ? sv->hello_timeout_s :
		    sv_stages[s].hello_timeout_s;
		if (sv_stages[s].needs_hello && sv->kid[s].pid != 0 &&
		    sv->kid[s].state == SV_STARTING)
			at = earliest(at, sv->started_ms[s] + limit * 1000LL);
	}
	return at;
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
	at = earliest(at, hello_deadline(sv));
	if (sv->end_at_ms)
		at = earliest(at, sv->end_at_ms);
	at = earliest(at, sv_httpd_deadline(&sv->httpd));
	for (k = 0; k < NKIDS; k++)
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
	struct pollfd pfd[1 + NKIDS * 3 + SV_HTTPD_POLLFDS];
	char drain[64];
	long long now;
	int n, k, h0, nh;

	for (;;) {
		now = now_ms();
		step(sv, now);
		n = 0;
		pfd[n].fd = sig_pipe[0];
		pfd[n++].events = POLLIN;
		for (k = 0; k < NKIDS; k++) {
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
		for (k = 0; k < NKIDS; k++) {
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
				    kname(sv, k));
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
		for (k = 0; k < NKIDS; k++)
			if (sv->kid[k].out.len > 0 || sv->kid[k].close_after)
				sv_child_flush(&sv->kid[k]);
	}
}

/* "1048576", "64M", "2G" */
static int
parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	}
	if (*end != '\0' || v == 0)
		return -1;
	*out = v;
	return 0;
}

/* "NAME=VALUE": *value points past the '=' in arg (which is cut there) */
static int
split_assign(char *arg, char **value)
{
	char *eq = strchr(arg, '=');

	if (eq == NULL || eq == arg || eq[1] == '\0')
		return -1;
	*eq = '\0';
	*value = eq + 1;
	return 0;
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",	required_argument,	NULL, 'c' },
		{ "stage",	required_argument,	NULL, 'S' },
		{ "tap",	required_argument,	NULL, 'T' },
		{ "tap-max",	required_argument,	NULL, 'M' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static struct sv sv;
	const char *program[SV_NSTAGES] = { NULL }, *env;
	uint64_t tap_max = SV_TAP_MAX_DEFAULT;
	struct sv_tap *t;
	char err[1024], *path, *value;
	int ch, k, s, fd4;

	log_init("pg2osync-supervise");
	while ((ch = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			sv.cfgpath = optarg;
			break;
		case 'S':
			if (split_assign(optarg, &value) == -1 ||
			    (s = sv_stage_lookup(optarg)) == -1)
				fatalx(P2O_EXIT_USAGE, "--stage takes STAGE="
				    "PROGRAM with a stage of ckpt, capture, "
				    "loader, shaper, writer");
			program[s] = value;
			break;
		case 'T':
			if (split_assign(optarg, &value) == -1 ||
			    (s = sv_stage_by_tap(optarg, &fd4)) == -1)
				fatalx(P2O_EXIT_USAGE, "--tap takes POINT=FILE "
				    "with a point of events, loads, ops");
			t = fd4 ? &sv.tap4[s] : &sv.tap[s];
			t->point = fd4 ? sv_stages[s].fd4_tap : sv_stages[s].tap;
			free(t->path);
			t->path = xstrdup(value);
			break;
		case 'M':
			if (parse_bytes(optarg, &tap_max) == -1)
				fatalx(P2O_EXIT_USAGE, "--tap-max '%s' is not a "
				    "size like 1048576, 64M or 1G", optarg);
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
	if ((env = getenv("P2O_HELLO_TIMEOUT_S")) != NULL &&
	    (sv.hello_timeout_s = atoi(env)) <= 0)
		fatalx(P2O_EXIT_USAGE, "P2O_HELLO_TIMEOUT_S='%s' is not a "
		    "number of seconds", env);
	sanitize_fds();
	if (config_load(sv.cfgpath, &sv.cf, err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s", err);
	for (s = 0; s < SV_NSTAGES; s++) {
		sv.tap[s].max = sv.tap4[s].max = tap_max;
		sv.pending_out[s] = -1;
		if (program[s] != NULL) {
			/* a path the user named is run as named */
			path = strchr(program[s], '/') ? xstrdup(program[s]) :
			    sv_find_exe(program[s]);
			if (path == NULL || access(path, X_OK) == -1)
				fatalx(P2O_EXIT_USAGE, "--stage %s: '%s' is not "
				    "an executable", sv_stages[s].role,
				    program[s]);
			log_info("stage '%s' runs '%s'", sv_stages[s].role,
			    path);
		} else if ((path = sv_find_exe(sv_stage_program(s,
		    sv.cf.source_kind))) == NULL) {
			/* an optional stage is looked for when it is needed */
			if (!sv_stages[s].optional)
				fatalx(P2O_EXIT_INTERNAL, "could not find '%s' "
				    "next to this program or on $PATH",
				    sv_stage_program(s, sv.cf.source_kind));
			path = NULL;
		}
		snprintf(sv.kidname[s], sizeof(sv.kidname[s]), "%s",
		    base_name(path ? path : sv_stage_program(s,
		    sv.cf.source_kind)));
		sv_child_init(&sv.kid[s], sv.kidname[s], path);
		snprintf(sv.kidname[TAP_OF(s)], sizeof(sv.kidname[0]),
		    "tap %s", sv_stages[s].tap ? sv_stages[s].tap : "-");
		sv_child_init(&sv.kid[TAP_OF(s)], sv.kidname[TAP_OF(s)], NULL);
		snprintf(sv.kidname[TAP4_OF(s)], sizeof(sv.kidname[0]),
		    "tap %s", sv_stages[s].fd4_tap ? sv_stages[s].fd4_tap : "-");
		sv_child_init(&sv.kid[TAP4_OF(s)], sv.kidname[TAP4_OF(s)], NULL);
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
