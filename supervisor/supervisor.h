/*
 * supervisor.h - pg2osync-supervise: runs, for each source of its
 * configuration (one file, or a directory of them), ckpt and the pipeline
 * of stages its stage table describes, carries the back-channel (durable
 * -> stored checkpoint -> ack), restarts on failure, drains on SIGTERM and
 * serves /metrics, /healthz and /ready. It never sits on the data path.
 *
 * Modules, in the order of their sections below:
 *   main.c         the command line: options, the stage programs, the
 *                  configuration, the listener; then the loop
 *   logpipe.c      forwarding a child's stderr line by line; log.format
 *                  and log.level
 *   child.c        spawning, signalling and describing one child process
 *   stages.c       the stage table: programs, pipes, control frames,
 *                  secrets; the children's topology
 *   tap.c          the copying process a --tap puts on one boundary
 *   backchannel.c  durable -> put -> stored -> ack, and the restart backoff
 *                  (pure: no I/O, no clock of its own)
 *   reload.c       what a SIGHUP does
 *   metrics.c      counters from stats frames and the Prometheus text
 *   cause.c        which child's end caused a failure (pure)
 *   state.c        the states and the events that move them (a table,
 *                  pure)
 *   health.c       the source state and whether the pipeline makes
 *                  progress (pure)
 *   httpd.c        the tiny non-blocking HTTP/1.1 server and its parser
 *   aux.c          the supervisor's own helper processes
 *   helper.c       what /synced asks of the servers, in a helper
 *   synced.c       GET /synced: the waiters and their answers
 *   routes.c       what each HTTP path answers
 *   proc.c         the process: its sources' pipelines under one poll
 *                  loop, the signals, a directory's reload, the exit
 *   loop.c         one pipeline's turn in the loop and what each move
 *                  of its state does (sv_event): reaping, teardown,
 *                  restart or stop, the drain
 *   wire.c         wiring and spawning an incarnation's children
 *   dispatch.c     the control frames the children send, and the puts
 *   sweep.c        the deletes a full reload owes, in a helper
 */
#ifndef SUPERVISOR_H
#define SUPERVISOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "frame.h"
#include "msg.h"
#include "sbuf.h"
#include "strindex.h"
#include "trace.h"

struct pollfd;
struct sv;

/* logpipe.c */

#define SV_LOGLINE_MAX	4096	/* PIPE_BUF: one line, one atomic write */

struct sv_logpipe {
	int	 fd;		/* read end of the child's stderr, -1 at EOF */
	int	 out;		/* where lines go (the supervisor's stderr) */
	char	 name[200];	/* prefixed to lines that lack "name: " */
	char	 buf[SV_LOGLINE_MAX];
	size_t	 len;
	int	 cut;		/* dropping the rest of an over-long line */
};

void	sv_logpipe_init(struct sv_logpipe *, int fd, int out, const char *name);
/* read what is there and forward every complete line: 1 open and
 * drained for now, 2 open with more waiting (a read budget ran out), 0 at
 * EOF (a last unterminated line is forwarded then, and fd closed) */
int	sv_logpipe_read(struct sv_logpipe *);
void	sv_logpipe_close(struct sv_logpipe *);

/* log.format and log.level, for the supervisor and its stages */
void	sv_apply_log(const struct config *);

/* child.c */

#define SV_CTL_FRAME_MAX	(1024 * 1024)

enum sv_child_state { SV_DOWN, SV_STARTING, SV_UP, SV_STOPPING };

enum sv_ctl {
	SV_CTL_FD3,	/* a socketpair end as the child's fd 3 */
	SV_CTL_STDIO,	/* pipes on the child's stdin and stdout (ckpt) */
};

struct sv_child {
	const char *name;	/* for log lines: the program's base name */
	const char *tag;	/* the source, when the process runs several:
				 * its P2O_LOG_SOURCE and its lines' label
				 * "name[tag]"; NULL none */
	char	*path;		/* resolved executable */
	enum sv_child_state state;
	pid_t	 pid;		/* 0 when none */
	int	 ctl_rfd;	/* control frames from the child, or -1 */
	int	 ctl_wfd;	/* control frames to the child, or -1 */
	struct frame_reader rd;
	struct sbuf out;	/* frames queued for ctl_wfd */
	int	 close_after;	/* close ctl_wfd once out is written */
	struct sv_logpipe log;
	long long signalled_ms;	/* when we first signalled it, 0 never */
	int	 exited;	/* reaped: wstatus is valid */
	int	 wstatus;
	unsigned exit_round;	/* which reaping round collected it */
	long long ctl_eof_ms;	/* when its control channel ended, 0 not */
};

/* an executable next to this program's own, else on $PATH (heap) or NULL */
char	*sv_find_exe(const char *name);
void	sv_child_init(struct sv_child *, const char *name, char *path);
/* descriptors a child is given: stdin, stdout, stderr, fd 3, fd 4 */
#define SV_CHILD_FDS	5
/* what a data pipe between stages holds (wire.c) */
#define SV_PIPE_BYTES	(1024 * 1024)

/* fork and exec argv with in_fd/out_fd as stdin/stdout (SV_CTL_FD3) or
 * with control pipes there (SV_CTL_STDIO), fd4 as fd 4 (-1: closed);
 * stderr goes to a pipe read by the child's logpipe. Exec failure is
 * reported through a close-on-exec pipe: -1 with err set and nothing
 * left running. */
int	sv_child_spawn(struct sv_child *, char *const argv[], enum sv_ctl,
	    int in_fd, int out_fd, int fd4, int log_out, char *err,
	    size_t errlen);
/* signal it if it is running and not reaped; records the first time */
void	sv_child_kill(struct sv_child *, int sig, long long now_ms);
/* where frames for its control fd are queued (msg_put_*): flushed by
 * sv_child_flush; a scratch buffer nothing reads once the channel is
 * closed or closing */
struct sbuf *sv_child_out(struct sv_child *);
/* write what is queued: 0, or -1 when the peer is gone (EPIPE etc.) */
int	sv_child_flush(struct sv_child *);
void	sv_child_close_ctl(struct sv_child *);
/* fork without exec: the child runs fn(arg) with in_fd/out_fd as its
 * stdin/stdout, its stderr on a logpipe, every other descriptor closed,
 * and exits with what fn returns; no control channel */
int	sv_child_fork(struct sv_child *, int (*fn)(void *), void *arg,
	    int in_fd, int out_fd, int log_out, char *err, size_t errlen);
/* all fds closed and the state reset to down; the process must be reaped */
void	sv_child_release(struct sv_child *);
/* 1 while the process has not been reaped */
int	sv_child_running(const struct sv_child *);
/* exit code of a reaped child; a signal death maps to -signo */
int	sv_child_code(const struct sv_child *);
/* "exited with 69 (refused)" / "was killed by signal 9" into buf */
const char *sv_child_describe(const struct sv_child *, char *buf, size_t len);

/* stages.c */

enum sv_stage { SV_CKPT, SV_CAPTURE, SV_LOADER, SV_SHAPER, SV_WRITER,
	SV_NSTAGES };

struct sv_stage_def {
	const char *role;	/* its name in --stage, --tap and messages */
	const char *program;	/* default executable; NULL: by source kind */
	enum sv_ctl ctl;	/* control channel: fd 3, or ckpt's stdio */
	int	 stdin_from;	/* the stage whose stdout is our stdin, -1 */
	const char *tap;	/* the tap point on that boundary, or NULL */
	int	 fd4_from;	/* the stage whose stdout is our fd 4, -1 */
	const char *fd4_tap;	/* the tap point on that boundary, or NULL */
	int	 needs_hello;	/* it must say hello ... */
	int	 hello_timeout_s;	/* ... within this */
	int	 gets_ack;	/* receives ack frames */
	int	 gets_confirm;	/* receives confirm frames */
	int	 optional;	/* runs only when there is work for it, and the
				 * pipeline is up without it */
	int	 after;		/* starts once this stage said hello, or -1 */
	int	 exit0_done;	/* its exit 0 means its work is done */
	unsigned secrets;	/* CONFIG_SECRET_* it reads from the environment */
};

extern const struct sv_stage_def sv_stages[SV_NSTAGES];

/* the children of an incarnation: the stages, then the tap on each
 * stage's stdin boundary, then the tap on each stage's fd 4 boundary */
#define SV_NKIDS	(3 * SV_NSTAGES)
#define SV_TAP_OF(s)	(SV_NSTAGES + (s))
#define SV_TAP4_OF(s)	(2 * SV_NSTAGES + (s))
#define SV_IS_TAP(k)	((k) >= SV_NSTAGES)
#define SV_TAPPED(k)	((k) % SV_NSTAGES)

/* the stage feeding child k's stdin (for a tap, its input), or -1 */
int	sv_kid_upstream(int k);
/* how many stages lie between child k and the source end */
int	sv_kid_depth(int k);

/* the stage a role names, or -1 */
int	sv_stage_lookup(const char *role);
/* the stage whose input the tap point names ("events", "loads", "ops"),
 * or -1; *fd4 says whether it is that stage's fd 4 */
int	sv_stage_by_tap(const char *point, int *fd4);
/* the secrets the stages need, every one (CONFIG_SECRET_*): checked
 * before any starts */
unsigned sv_stage_secrets(void);
/* the program a stage runs by default, for a configuration */
const char *sv_stage_program(enum sv_stage, const struct config *);
/* the argv of a stage, heap strings in a NULL-terminated heap array;
 * start_text/start_token: the checkpoint the capture resumes from, or
 * NULL; load_fd: the shaper reads copy rows on fd 4 */
char	**sv_stage_argv(enum sv_stage, const char *path, const char *cfgpath,
	    const char *start_text, const char *start_token, int new_stream,
    int load_fd);
void	sv_argv_free(char **);

/* tap.c */

#define SV_TAP_MAX_DEFAULT	(64ULL << 20)
/* frames waiting for the tap's file, beyond the pipe to it: past this the
 * copy drops frames and marks the gap in the file */
#define SV_TAP_QUEUE		(4u << 20)

/*
 * Where one frame ends in a stream of frames, without validating them:
 * only the length prefixes are read. Fed chunk by chunk.
 */
struct sv_framepos {
	int	 in_body;	/* reading a frame's body (after the space) */
	uint64_t left;		/* body bytes still to come */
	uint64_t len;		/* length digits so far */
	int	 digits;
	int	 bad;		/* not a frame stream: boundaries unknown */
};

/* read buf[0..n) up to the first frame that ends at an offset >= from
 * and return that offset (the bytes after it are not consumed yet), or
 * consume it all and return -1 (and -1 with bad set for a stream that is
 * not frames) */
long	sv_framepos_next(struct sv_framepos *, const char *buf, size_t n,
	    size_t from);

struct sv_tap {
	const char *point;	/* "events", "ops" */
	char	*path;		/* the file; rotated to path.1 at max */
	uint64_t max;
};

/* copy stdin to stdout until EOF, and every frame also to the tap file
 * (written by a process of its own), rotated at frame boundaries once it
 * holds max bytes. The pipeline never waits for the file: frames the file
 * falls SV_TAP_QUEUE behind on are dropped and a gap frame marks where;
 * a file that cannot be written is given up (logged once) and the copying
 * goes on. Returns an exit code. */
int	sv_tap_run(void *tap);

/* backchannel.c */

struct sv_backchannel {
	int	 interval_ms;
	int	 have_durable, have_stored, have_inflight, have_acked;
	uint64_t durable;	/* newest position the writer reported */
	char	*durable_text;	/* its source text (heap) */
	char	*inflight_text;	/* the text of the put in flight (heap) */
	uint64_t stored;	/* newest position ckpt reported stored */
	char	*stored_text;	/* its source text (heap), NULL unknown */
	uint64_t inflight;	/* the put ckpt has not answered yet */
	uint64_t acked;		/* newest position acked to the capture */
	long long next_put_ms;	/* no put before this (coalescing) */
};

/* start afresh (release a used one first) */
void	sv_bc_init(struct sv_backchannel *, int interval_ms, int have_stored,
	    uint64_t stored, const char *stored_text);
void	sv_bc_release(struct sv_backchannel *);
/* 0, or -1 when pos went backwards (ignored) */
int	sv_bc_durable(struct sv_backchannel *, uint64_t pos, const char *text);
/* 1 when a put should go out now: *pos and *text (valid until the next
 * call) are filled and the put is in flight until sv_bc_stored. force
 * skips the interval (draining). */
int	sv_bc_next_put(struct sv_backchannel *, long long now_ms, int force,
	    uint64_t *pos, const char **text);
/* when sv_bc_next_put would next say yes, or -1 (nothing waiting) */
long long sv_bc_deadline(const struct sv_backchannel *);
/* ckpt stored pos: 1 with *ack to send to the capture, 0 nothing new to
 * ack, -1 ckpt answered a put it was not given */
int	sv_bc_stored(struct sv_backchannel *, uint64_t pos, uint64_t *ack);
/* 1 when everything durable is stored and nothing is in flight */
int	sv_bc_settled(const struct sv_backchannel *);

#define SV_BACKOFF_MIN_MS	1000
#define SV_BACKOFF_MAX_MS	30000
#define SV_HEALTHY_MS		60000	/* up this long: the failures reset */

struct sv_backoff {
	int	 first_ms;	/* source.reconnect_backoff_ms; 0: the
				 * default, SV_BACKOFF_MIN_MS */
	int	 failures;	/* consecutive */
	int	 delay_ms;	/* the last delay handed out */
};

/* a failure after the pipeline had been up for up_ms (0: never up):
 * returns the delay before the next start: first_ms doubling up to
 * SV_BACKOFF_MAX_MS (or first_ms when that is more) */
int	sv_backoff_failure(struct sv_backoff *, long long up_ms);

/* reload.c */

/* what became of a SIGHUP: pg2osync_config_reloads_total's result label */
enum sv_reload_result { RL_APPLIED, RL_UNCHANGED, RL_REFUSED, RL_N };
extern const char *const sv_reload_results[RL_N];

/* SIGHUP arrived */
void	sv_reload(struct sv *, long long now);
/* the file as it is now is the running one (what "unchanged" compares) */
void	sv_reload_remember(struct sv *);

/* metrics.c */

#define SV_LAT_BUCKETS	21

/* a latency histogram (Prometheus buckets, seconds) */
struct sv_hist {
	uint64_t bucket[SV_LAT_BUCKETS];	/* cumulative at render */
	uint64_t count;
	double	 sum;		/* seconds */
};

/* one key of a keyed counter (msg.h): its value summed over restarts */
struct sv_keyed {
	uint64_t base, last;
	char	*key;
	int	 counter;	/* enum msg_counter */
	int	 seen;		/* in the last frame carrying its counter */
};	/* 32 bytes, no hole: the loader reports four per table */

struct sv_metrics {
	uint64_t base[MC_N];	/* sums of earlier incarnations */
	uint64_t last[MC_N];	/* the running incarnation's last report */
	struct sv_keyed *keyed;
	int	 nkeyed, capkeyed;
	/* keyed[] by (counter, key): the loader reports four gauges per
	 * table every second, and a walk of the list for each of them made
	 * a frame of ten thousand tables cost 8 * 10^8 comparisons */
	struct strindex kidx;
	struct sbuf kname;	/* a key unescaped, for the look-up */
	uint64_t reconnects;
	uint64_t full_reloads;	/* position lost: every table loaded again */
	uint64_t position_confirmed;
	uint64_t checkpoint_position;
	int	 up;
	struct sv_hist indexed;	/* source commit -> target accepted it */
	struct sv_hist sent;	/* source commit -> its bulk request left the
				 * writer: the pipeline's own share */
	struct sv_hist streamed;	/* source commit -> the source sent it */
	struct sv_hist received;	/* source commit -> the capture read it */
	struct sv_hist writer;	/* source commit -> the writer read it */
	/* the supervisor's own view, set before each render */
	const char *source;	/* every series' source label; NULL: none */
	int	 state;		/* enum sv_source_state */
	int	 ready, stalled;
	uint64_t reloads[RL_N];	/* by enum sv_reload_result */
};

void	sv_metrics_init(struct sv_metrics *);
void	sv_metrics_release(struct sv_metrics *);
/* a new incarnation of the pipeline: fold the last values into the base
 * (gauges keep their last value) */
void	sv_metrics_restart(struct sv_metrics *);
/* a stats frame's "counters" object; names msg.h does not know are
 * ignored. 0, or -1 when the object is not one */
int	sv_metrics_stats(struct sv_metrics *, struct jspan counters);
/* a counter's total; for a keyed one, key NULL sums every key */
uint64_t sv_metrics_total(const struct sv_metrics *, enum msg_counter,
	    const char *key);
/* one latency observation, in microseconds */
void	sv_hist_observe(struct sv_hist *, long long us);
/* the Prometheus text exposition */
void	sv_metrics_render(const struct sv_metrics *, struct sbuf *out);
/* the same for n sources: each metric's HELP and TYPE once, then every
 * source's samples */
void	sv_metrics_render_all(const struct sv_metrics *const *, int n,
	    struct sbuf *out);

/* cause.c */

/* what one child did in an incarnation, as far as its cause goes */
struct sv_end {
	int	 started;	/* it ran in this incarnation */
	int	 exited;	/* reaped */
	int	 code;		/* its exit code, or -signo for a signal */
	int	 signalled;	/* the supervisor had signalled it */
	unsigned round;		/* the reaping round that collected it */
};

/* the child whose permanent exit code stops the supervisor, or -1: a 65
 * from a stage whose input its upstream's end explains is no cause */
int	sv_cause_permanent(const struct sv_end ends[SV_NKIDS]);
/* the child that ended the incarnation, for the restart message, or -1:
 * of those that ended on their own, a failure before a clean end, and
 * the one nearest the source before those downstream of it */
int	sv_cause_first(const struct sv_end ends[SV_NKIDS]);

/* state.c: the supervisor's states and the events that move them, a
 * table (pure); loop.c's sv_event is the only writer of sv->st */

/* the pipeline's phase */
enum sv_pl_state {
	PL_WAIT,	/* nothing runs; a start is due at restart_at_ms (the
			 * first, a reload's, a new stream's) */
	PL_BACKOFF,	/* nothing runs; a failure's restart waits until
			 * restart_at_ms */
	PL_CHECKPOINT,	/* ckpt asked for the checkpoint */
	PL_STARTING,	/* stages running, not all said hello */
	PL_UP,
	PL_DRAIN,	/* the capture stops, the rest flush: the writer's
			 * last durable position is awaited */
	PL_DRAIN_NOCKPT,	/* the same with ckpt gone: that position
				 * cannot be stored */
	PL_DRAIN_PUT,	/* the put of the last durable position awaited */
	PL_DRAINED,	/* it is stored and acked, the control channels
			 * closed: the exits awaited */
	PL_DRAIN_FAILED,	/* the same, the last position not stored */
	PL_TEARDOWN,	/* every child stopping after a failure */
	PL_DONE,	/* the loop ends with exit_code */
	PL_NSTATES
};

/* what comes after this incarnation */
enum sv_plan {
	PLAN_RUN,	/* restart after a failure */
	PLAN_RELOAD_DUE,	/* ckpt read the checkpoint on the file before
				 * a reload: the stages cycle once they run */
	PLAN_RELOAD,	/* the stages drain for a reload, then start at
			 * once on the new file */
	PLAN_STOP,	/* SIGTERM or SIGINT: the supervisor ends */
	PLAN_N
};

enum sv_stream {
	STREAM_KEPT,	/* a restart resumes from the stored checkpoint */
	STREAM_NEW,	/* the position was gone: the next start forgets
			 * the load progress and the checkpoint, until the
			 * new stream stores one */
	STREAM_N
};

/* the deletes a full reload owes (sweep.c) */
enum sv_sweep { SWEEP_NONE, SWEEP_OWED, SWEEP_RUNNING, SWEEP_N };

/* all zero: the state before the first start */
struct sv_state {
	enum sv_pl_state pl;
	enum sv_plan	 plan;
	enum sv_stream	 stream;
	enum sv_sweep	 sweep;
};

enum sv_event {
	EV_START,	/* the start is due: ckpt starts */
	EV_LOADED,	/* ckpt sent the checkpoint and the load frame */
	EV_UP,		/* every stage that must said hello */
	EV_FAIL,	/* a child ended, a protocol error, a missing hello */
	EV_TERM,	/* SIGTERM or SIGINT */
	EV_RELOAD,	/* a reload was applied: the stages cycle onto it */
	EV_WRITER_DONE,	/* the writer ended and its channel with it */
	EV_CKPT_GONE,	/* ckpt or its channel ended while draining */
	EV_SETTLED,	/* the last durable position is stored */
	EV_DRAIN_LATE,	/* the drain ran out of time: all killed */
	EV_CYCLE,	/* every child reaped after a reload's drain */
	EV_STOPPED,	/* every child reaped, as the stop asked */
	EV_RESTART,	/* every child of a failure reaped: back off */
	EV_LOST,	/* the same, the position gone: a new stream */
	EV_FATAL,	/* the same, a permanent failure: the end */
	EV_ABORT,	/* the supervisor's own loop failed */
	EV_STORED,	/* ckpt stored a checkpoint */
	EV_SWEEP_OWED,	/* ckpt's load frame: a sweep is owed */
	EV_SWEEP_CLEAR,	/* ckpt's load frame: none is */
	EV_SWEEP_START,	/* its helper started */
	EV_SWEEP_DONE,	/* it ended and ckpt was told */
	EV_SWEEP_FAILED,	/* it ended, not recorded: owed again */
	EV_N
};

extern const char *const sv_pl_names[PL_NSTATES];
extern const char *const sv_plan_names[PLAN_N];
extern const char *const sv_stream_names[STREAM_N];
extern const char *const sv_sweep_names[SWEEP_N];
extern const char *const sv_event_names[EV_N];

/* what a phase allows, for the modules that act on it */
#define PLF_STAGES	0x01u	/* stages run, not stopping: hellos are
				 * awaited, a waiting stage may start */
#define PLF_CHANNELS	0x02u	/* a control channel that ends early is a
				 * failure */
#define PLF_FLOW	0x04u	/* durable -> put -> stored -> ack runs */
#define PLF_STOPPING	0x08u	/* children are being stopped: the kill
				 * deadline holds */
#define PLF_DRAIN	0x10u	/* one of the drain's steps */
#define PLF_FINAL	0x20u	/* the last durable position goes to ckpt
				 * at once, not at the interval */

/* where ev leads from st: 0 with *to, or -1 when the table refuses it */
int	sv_state_next(const struct sv_state *st, enum sv_event ev,
	    struct sv_state *to);
int	sv_state_allows(const struct sv_state *, enum sv_event);
/* whether phase pl allows what PLF_* flags say */
int	sv_pl_has(enum sv_pl_state pl, unsigned plf);
/* what changed from a to b ("up -> draining, plan run on -> stop") */
const char *sv_state_diff(const struct sv_state *a, const struct sv_state *b,
	    char *buf, size_t len);

/* health.c */

/* what pg2osync_source_state and /ready say the stream is doing */
enum sv_source_state { SS_STARTING, SS_LOADING, SS_STREAMING, SS_BACKOFF,
	SS_HALTED, SS_DRAINING, SS_N };
extern const char *const sv_source_states[SS_N];
/* the source state in a pipeline phase. stopping: SIGTERM arrived */
enum sv_source_state sv_source_state_of(enum sv_pl_state, int stopping,
	    int loading, int halted);

/* whether a running pipeline makes progress (see health.c) */
struct sv_health {
	long long stall_ms;	/* metrics.ready_stall_s */
	int	 have;		/* an observation was made */
	uint64_t received;	/* what the capture has read */
	uint64_t confirmed;	/* what is acknowledged */
	uint64_t written;	/* anything the writer counts as written */
	int	 waiting;	/* work waited at the last observation */
	long long moved_ms;	/* the last progress, or when work began
				 * to wait */
};

void	sv_health_init(struct sv_health *, int stall_s);
/* the pipeline is up again at now: whatever waited before is forgotten */
void	sv_health_reset(struct sv_health *, long long now);
void	sv_health_observe(struct sv_health *, long long now,
	    uint64_t received, uint64_t confirmed, uint64_t written,
	    int loading);
/* how long work has waited without progress (0: none waits) */
long long sv_health_stalled_ms(const struct sv_health *, long long now);
/* that for ready_stall_s or longer */
int	sv_health_stalled(const struct sv_health *, long long now);

/* httpd.c */

#define SV_HTTP_REQ_MAX		8192	/* request line + headers */
#define SV_HTTP_TIMEOUT_MS	5000
#define SV_HTTP_CONNS		16

enum sv_http_method { SV_HTTP_GET, SV_HTTP_HEAD, SV_HTTP_OTHER };

struct sv_http_req {
	enum sv_http_method method;
	char	 path[256];	/* the target without its query */
	char	 query[512];	/* after '?' (before any '#'), or "" */
	int	 query_cut;	/* the query was longer than query holds */
	char	 auth[512];	/* the Authorization header's value, or "" */
	char	 traceparent[56];	/* a traceparent header of the
				 * length of one, or "" */
	/* the connection it came on, for an answer given later */
	int	 conn;
	unsigned gen;
};

/* 1 a complete request head in buf (parsed into *req), 0 need more bytes,
 * -1 malformed (400), -2 too large (431) */
int	sv_http_parse(const char *buf, size_t len, struct sv_http_req *req);

struct sv_http_resp {
	int	 status;
	const char *ctype;
	struct sbuf body;
	/* a bearer token is required and was not given (401) */
	int	 challenge;
	/* the handler answers later, with sv_httpd_answer, by deadline_ms
	 * (the connection is dropped after it) */
	int	 deferred;
	long long deadline_ms;
};

typedef void (*sv_http_handler)(void *arg, const struct sv_http_req *,
	    struct sv_http_resp *);

struct sv_http_conn {
	int	 fd;		/* -1: slot free */
	unsigned gen;		/* which use of the slot: a late answer for an
				 * earlier client goes nowhere */
	int	 deferred;	/* waiting for its handler's answer */
	int	 head_only;	/* the deferred request was a HEAD */
	char	 in[SV_HTTP_REQ_MAX];
	size_t	 inlen;
	struct sbuf out;
	size_t	 outoff;
	int	 responded;
	long long deadline_ms;
};

struct sv_httpd {
	int	 fd;		/* listening socket, -1 when off */
	sv_http_handler handler;
	void	*arg;
	struct sv_http_conn conns[SV_HTTP_CONNS];
	int	 polled[SV_HTTP_CONNS + 1];	/* pollfd i -> conn, -1 listener */
	int	 npolled;
};

/* listen on "host:port" / "[v6]:port"; 0 or -1 with err */
int	sv_httpd_open(struct sv_httpd *, const char *bind, sv_http_handler,
	    void *arg, char *err, size_t errlen);
void	sv_httpd_close(struct sv_httpd *);
/* fill at most SV_HTTPD_POLLFDS pollfds from pfd; returns how many */
#define SV_HTTPD_POLLFDS	(SV_HTTP_CONNS + 1)
int	sv_httpd_pollfds(struct sv_httpd *, struct pollfd *pfd);
/* after poll: serve the fds the last sv_httpd_pollfds call listed, and
 * drop connections past their deadline */
void	sv_httpd_handle(struct sv_httpd *, const struct pollfd *pfd,
	    long long now_ms);
/* earliest connection deadline, or -1 */
long long sv_httpd_deadline(const struct sv_httpd *);
/* the answer to a request whose handler deferred it: 0, or -1 when that
 * client is gone (its connection closed or timed out) */
int	sv_httpd_answer(struct sv_httpd *, int conn, unsigned gen,
	    const struct sv_http_resp *);
/* 1 when a listener address is a loopback one (127.0.0.0/8, ::1,
 * localhost), where no other host can reach it */
int	sv_bind_is_loopback(const char *bind);
/* the Authorization header carries exactly "Bearer <token>" (compared in
 * time independent of where they differ) */
int	sv_http_bearer_ok(const struct sv_http_req *, const char *token);

/* aux.c: the supervisor's own helper processes */

enum sv_aux_kind { SV_AUX_HELPER, SV_AUX_RELOAD, SV_AUX_SWEEP, SV_NAUX };

struct sv_aux_ops {
	const char *name;	/* in log lines */
	/* a frame it sent; its end (after its last frames), code as
	 * sv_child_code says */
	void	(*on_frame)(struct sv *, const struct frame *);
	void	(*on_end)(struct sv *, int code);
};

struct sv_aux {
	struct sv_child c;	/* ctl_wfd: its stdin, ctl_rfd: its stdout */
	const struct sv_aux_ops *ops;
	int	 pidx[3];	/* pollfd indexes: frames in, out, log */
};

/* fork fn(arg) as helper a with a frame channel: 0, or -1 with err */
int	sv_aux_start(struct sv *, int a, const struct sv_aux_ops *,
	    int (*fn)(void *), void *arg, char *err, size_t errlen);
int	sv_aux_running(const struct sv *, int a);
/* where frames for it are queued */
struct sbuf *sv_aux_out(struct sv *, int a);
/* SIGTERM: its end comes through on_end */
void	sv_aux_stop(struct sv *, int a);
/* for the poll loop: the fds to poll from n on (the new count), their
 * I/O after poll, a write of what is queued, and a reaped pid (1 if it
 * was one) */
int	sv_aux_pollfds(struct sv *, struct pollfd *, int n);
void	sv_aux_io(struct sv *, const struct pollfd *);
void	sv_aux_flush(struct sv *);
int	sv_aux_reaped(struct sv *, pid_t, int status);
/* the supervisor ends: each one killed and collected */
void	sv_aux_release(struct sv *);

/* helper.c: what /synced asks of the servers, in a helper process */

enum sv_ask { ASK_SOURCE_NOW, ASK_REFRESH };
#define SV_HELPER_ASKS	64	/* asks out at once */

/* an ask sent (the helper started when it does not run): its sequence
 * number, answered through sv_synced_answered; 0 with err when it cannot
 * be sent */
uint64_t sv_helper_ask(struct sv *, enum sv_ask, char *err, size_t errlen);
/* the configuration changed: the next ask starts a helper reading it */
void	sv_helper_forget(struct sv *);

/* synced.c: GET /synced on api.bind */

struct sv_waiter {
	int	 used;
	int	 conn;		/* its request on the api listener */
	unsigned gen;
	long long started_ms, deadline_ms;
	int	 have_req;	/* the position it waits for is known */
	uint64_t requested;	/* in the source's order (synced.c) */
	char	 req_text[128];	/* as the source writes it */
	int	 refresh;	/* refresh=true */
	uint64_t need_seq;	/* the helper's answer it waits for, or 0 */
	int	 refreshing;	/* reached: the refresh is out */
	/* traced: the span of the wait, under the caller's traceparent */
	int	 traced;
	struct trace_ctx trace;
	long long trace_ns;
};

/* the answer to a request on api.bind (an sv_http_handler; arg: the sv) */
void	sv_route_api(void *arg, const struct sv_http_req *,
	    struct sv_http_resp *);
/* the helper answered ask seq (text, or error) */
void	sv_synced_answered(struct sv *, enum sv_ask, uint64_t seq,
	    const char *text, const char *error);
/* the waiters whose position is reached, or whose time is up, answered */
void	sv_synced_step(struct sv *, long long now);
/* the earliest waiter's deadline, or -1 */
long long sv_synced_deadline(const struct sv *);

/* routes.c */

/* the answer to one HTTP request on metrics.bind (an sv_http_handler;
 * arg: the sv) */
void	sv_route(void *arg, const struct sv_http_req *, struct sv_http_resp *);

/* one source's pipeline: its configuration, children, back-channel,
 * checkpoint stream and state (proc.c makes it, loop.c runs its turn in
 * the process's loop) */
struct sv {
	struct sv_proc	*proc;		/* the process it runs in */
	char		*cfgpath;	/* its file (heap) */
	struct config	 cf;
	const char	*tag;		/* its name in log lines when the process
					 * runs several, else NULL */
	int		 removed;	/* its file left the directory: it
					 * drains, then goes */
	char		 halted[640];	/* why it stopped for good, "" */
	int		 finished;	/* done, and its helpers gone */
	int		 is_halted;	/* done without a stop asked for */
	struct sv_child	 kid[SV_NKIDS];
	char		 kidname[SV_NKIDS][48];
	struct sv_tap	 tap[SV_NSTAGES];	/* stdin boundary; path NULL: none */
	struct sv_tap	 tap4[SV_NSTAGES];	/* fd 4 boundary */
	struct sv_state	 st;		/* written by sv_event alone */
	struct sv_backchannel bc;
	struct sv_backoff backoff;
	struct sv_metrics m;
	struct sv_health health;
	char		 source_name[160];	/* every series' source label */
	struct sv_aux	 aux[SV_NAUX];
	/* helper.c: the asks out, oldest first */
	uint64_t	 helper_seq;
	int		 helper_ask;
	uint64_t	 helper_seq_out[SV_HELPER_ASKS];
	enum sv_ask	 helper_what_out[SV_HELPER_ASKS];
	struct sv_waiter waiters[SV_HTTP_CONNS];	/* /synced */
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
	int		 ended[SV_NKIDS];	/* reaped, not yet looked at */
	char		 reason[512];	/* what ended this incarnation first */
	int		 fatal_code;	/* a permanent failure we found */
	/* reload.c: the running file's bytes; the checks answered; a
	 * SIGHUP came during them */
	char		*cfg_text;
	size_t		 cfg_len;
	int		 reload_answered, reload_again;
	int		 exit_code;	/* once st.pl is PL_DONE */
	int		 pidx[SV_NKIDS][3];	/* pollfd indexes: ctl r, ctl w, log */
};

/* proc.c: the process, the pipelines of its sources under one loop */

struct sv_proc {
	const char	*cfgdir;	/* --config-dir, NULL: one file */
	struct sv	**pipes;	/* one per source, by file name */
	int		 npipes;
	struct sv_httpd	 httpd;		/* metrics.bind: /metrics, /healthz,
					 * /ready */
	struct sv_httpd	 api;		/* api.bind: /synced */
	/* the listeners' binds and tokens, as the set said at the start
	 * (a bind cannot change while it listens; a token follows a
	 * reload of the file holding it) */
	char		*metrics_bind, *api_bind;
	char		*metrics_token, *api_token;
	/* what every pipeline is started with (main.c) */
	const char	*program[SV_NSTAGES];	/* --stage, or NULL */
	struct sv_tap	 tap[SV_NSTAGES], tap4[SV_NSTAGES];	/* --tap */
	uint64_t	 tap_max;
	int		 hello_timeout_s;
	int		 stopping;	/* SIGTERM came: every pipeline drains */
	/* a directory's reload: a file added is started once the checks
	 * of the directory passed (pg2osync_config_reloads_total counts
	 * refused ones on every source) */
	struct pollfd	*pfd;		/* the loop's, grown as pipelines are */
	int		 npfd;
};

/* a pipeline for the file at path, cf loaded from it (taken over): its
 * programs, children and name; NULL with err (64 a --stage program that
 * is not one, 1 a program not found, 78 no name) */
struct sv *sv_pipe_new(struct sv_proc *, const char *path, struct config *cf,
	    struct p2o_err *);
void	sv_pipe_free(struct sv *);
/* the pipeline a name (source.name, or the stream's identity) names */
struct sv *sv_proc_find(struct sv_proc *, const char *name);
/* every pipeline's children reaped (waitpid), each marked where it
 * belongs, and what their ends mean taken by each pipeline */
void	sv_proc_reap(struct sv_proc *, long long now);
/* the tokens of the listeners, from the file that holds each bind */
void	sv_proc_tokens(struct sv_proc *);
/* run until every pipeline is done: the process's exit code */
int	sv_proc_run(struct sv_proc *);
void	sv_proc_release(struct sv_proc *);

/* loop.c: one pipeline's turn in the process's loop */

/* what its state says to do now */
void	sv_step(struct sv *, long long now);
/* its fds into pfd from n on (the new count), their I/O after poll */
int	sv_pollfds(struct sv *, struct pollfd *, int n);
void	sv_io(struct sv *, const struct pollfd *, long long now);
/* when it next needs the loop, or -1 */
long long sv_deadline(struct sv *, long long now);
/* the earlier of two deadlines, -1 standing for none */
long long sv_earliest(long long a, long long b);
/* a reaped pid: 1 when it was one of its children or helpers */
int	sv_reaped(struct sv *, pid_t, int status);
/* what the children reaped since the last call did */
void	sv_ended(struct sv *, long long now);
/* SIGTERM or SIGINT: it drains and stops */
void	sv_term(struct sv *, long long now);
/* done: every child and helper gone */
void	sv_end(struct sv *);
/* the only writer of sv->st: ev's move (state.c's table) made, logged at
 * debug, and what entering the new phase means done (ckpt started, the
 * stages started, drained or stopped); 0, or -1 when the table refuses
 * ev (nothing changes) */
int	sv_event(struct sv *, enum sv_event, long long now);
/* whether the current state allows what PLF_* flags say */
int	sv_state_is(const struct sv *, unsigned plf);
/* the phase's name (/ready says 'starting: <it>' before up) */
const char *sv_state_name(const struct sv *);
/* a child's name in log lines */
const char *sv_kname(const struct sv *, int k);
/*
 * Stop every child. The first reason is kept for the log line; which end
 * caused the failure is decided once every child is reaped (cause.c).
 * code != 0 marks a permanent failure found by the supervisor itself (a
 * protocol error).
 */
void	sv_teardown(struct sv *, long long now, int code, const char *fmt,
	    ...) __attribute__((format(printf, 4, 5)));
/* up once every stage that must say hello did and the others run */
void	sv_check_up(struct sv *, long long now);
/* what the stages said so far, into the health arithmetic and the
 * gauges /metrics and /ready report */
void	sv_health_update(struct sv *, long long now);
/* why /ready says no, into buf ("" when it says yes) */
const char *sv_not_ready(struct sv *, long long now, char *buf, size_t len);

/* wire.c */

/* a stage this incarnation runs: every one but an optional stage with no
 * work (the loader when every table is loaded); ckpt is started apart */
int	sv_will_run(const struct sv *, int s);
/* a new incarnation: ckpt started and asked for the checkpoint */
void	sv_start_incarnation(struct sv *, long long now);
/* the stages the table starts at once, wired by pipes and taps */
void	sv_start_stages(struct sv *, long long now);
/* the stages waiting for child k's hello, now that it came */
void	sv_start_after(struct sv *, int k, long long now);

/* dispatch.c */

/* read what child k's control channel holds and act on every frame */
void	sv_kid_read(struct sv *, int k, long long now);
/* queue a put to ckpt when the back-channel says so */
void	sv_pump_checkpoint(struct sv *, long long now);

/* sweep.c: once a reload's loads are done and the new stream has a
 * checkpoint, the documents of rows deleted meanwhile are removed */
void	sv_sweep_maybe(struct sv *, long long now);

#endif
