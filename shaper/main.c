/*
 * shaper - event frames in on stdin, operation frames out on stdout
 * (framing.md §4 → §5), with copy rows from the loader on a second fd.
 *
 * The change stream has strict priority: the load fd is read only when
 * stdin has nothing ready. Output is gathered and written when the input
 * has no complete frame left, so a quiet stream is never held back, or
 * when it passes OUT_FLUSH bytes. The tool ends once both inputs ended.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ctl.h"
#include "frame.h"
#include "log.h"
#include "memtrim.h"
#include "msg.h"
#include "p2o.h"
#include "stage.h"
#include "trace.h"
#include "xio.h"
#include "shaper.h"

#define OUT_FLUSH	(256 * 1024)
/* copy rows handled between two looks at stdin while the loader has
 * frames already buffered: bounds how long the stream can wait */
#define LOAD_BATCH	64

static const char usage_text[] =
"usage: shaper -c config.yaml [--load-fd N]\n"
"\n"
"Turns event frames on stdin into operation frames on stdout, using the\n"
"sync sections of the configuration (framing.md). It connects to nothing\n"
"and reads no secret from the environment: a captured stream replays\n"
"anywhere.\n"
"\n"
"  -c, --config FILE  the pg2osync configuration (required)\n"
"      --load-fd N    read the loader's copy rows and marks from fd N; it is\n"
"                     read only when stdin has nothing ready\n"
"  -h, --help         this text\n"
"  -V, --version      the version\n"
"\n"
"fds: 0 event frames in; 1 operation frames out; 2 log lines;\n"
"     3 control channel (optional: hello, stats); N copy rows (--load-fd)\n"
"\n"
"The shaper ends at EOF on stdin and on the load fd: it writes what it\n"
"has and exits 0. It does not catch SIGTERM; in the shutdown order the\n"
"capture closes the stream, the loader stops, and the shaper drains to\n"
"those ends.\n"
"\n"
"exit codes: 0 both inputs ended; 1 internal error; 64 bad command line;\n"
"  65 malformed frame or event (a NULL key, an unknown kind...), or a gap\n"
"  where the tap that wrote a replayed file dropped frames (framing.md\n"
"  section 9): output from the frames before it is written, nothing after\n"
"  (a gap is passed on); 75 stdout or the control channel closed; 78\n"
"  invalid configuration\n";

struct shaperd {
	struct stage st;
	struct shaper sh;
	struct sbuf out;
	struct shape_counters sent;	/* counters in the last stats frame */
	int	 load_fd;		/* --load-fd, or -1 */
	/* traced: when the stream's batch began (its first frame after the
	 * last commit), and the counters then */
	long long batch_ns;
	struct shape_counters batch_n;
};

static int parse_fd(const char *);

static int
option(void *arg, int ch, const char *val, struct p2o_err *e)
{
	struct shaperd *d = arg;

	/* the only option of its own: --load-fd */
	d->load_fd = parse_fd(val);
	if (d->load_fd <= P2O_FD_CTL)
		return p2o_fail(e, P2O_EXIT_USAGE, "--load-fd '%s' is not a "
		    "descriptor above 3", val);
	return 0;
}

static const struct option longopts[] = {
	{ "load-fd", required_argument, NULL, 'L' },
	{ NULL, 0, NULL, 0 }
};

static const struct stage_spec spec = {
	.tool = "shaper",
	.usage = usage_text,
	.longopts = longopts,
	.option = option,
	/* no signal of its own: it ends with its inputs (see usage) */
	.control = 1,
	.stats_ms = 1000,
};

static void
flush_out(struct shaperd *d)
{
	if (d->out.len > 0 && frame_flush(P2O_FD_OUT, &d->out) == -1)
		fatal(P2O_EXIT_TEMPFAIL, "could not write to stdout");
}

static int
stats_changed(const struct shaperd *d)
{
	return d->sh.drift.changed || d->sh.truncates_skipped.changed ||
	    d->sh.unconverted.changed || d->sh.lookup_misses.changed ||
	    memcmp(&d->sent, &d->sh.n, sizeof(d->sent)) != 0;
}

/* the counters, when they changed and a second has passed */
static void
send_stats(struct shaperd *d, long long now)
{
	struct sbuf j = SBUF_INIT;

	if (!stage_stats_due(&d->st, now) || !stats_changed(d))
		return;
	msg_stats_begin(&j, "shaper");
	msg_stats_add(&j, MC_ROWS_IN, d->sh.n.rows_in);
	msg_stats_add(&j, MC_OPS_OUT, d->sh.n.ops_out);
	msg_stats_add(&j, MC_ROWS_UNMAPPED, d->sh.n.rows_unmapped);
	msg_stats_add(&j, MC_COPIES_DROPPED, d->sh.n.copies_dropped);
	kcount_put_stats(&d->sh.drift, &j, MC_DRIFT);
	kcount_put_stats(&d->sh.truncates_skipped, &j, MC_TRUNCATES_SKIPPED);
	kcount_put_stats(&d->sh.unconverted, &j, MC_TRANSFORM_UNCONVERTED);
	kcount_put_stats(&d->sh.lookup_misses, &j, MC_LOOKUP_MISSES);
	if (trace_on())
		msg_stats_add(&j, MC_TRACE_DROPPED_SHAPER, trace_dropped());
	msg_stats_end(&d->st.ctl.out, &j);
	sbuf_release(&j);
	if (ctl_flush(&d->st.ctl) == -1)
		fatal(P2O_EXIT_TEMPFAIL, "could not write to the control "
		    "channel");
	d->sent = d->sh.n;
	stage_stats_sent(&d->st, now);
}

/* a traced commit passed: the shape span of its batch, from its first
 * row or truncate to the commit */
static void
trace_commit(struct shaperd *d, const struct frame *f)
{
	char tp[TRACE_PARENT_LEN];
	struct trace_ctx c;
	struct trace_span sp;

	long long now = trace_now_ns();

	msg_get_trace(f->obj, tp);
	if (tp[0] && trace_ctx_parse(tp, strlen(tp), &c) == 0 && c.sampled &&
	    trace_span_child(&sp, &c, "shape", d->batch_ns ? d->batch_ns :
	    now) == 0) {
		trace_attr_int(&sp, "rows",
		    (long long)(d->sh.n.rows_in - d->batch_n.rows_in));
		trace_attr_int(&sp, "operations",
		    (long long)(d->sh.n.ops_out - d->batch_n.ops_out));
		trace_emit(&sp, now);
	}
	d->batch_ns = 0;
}

/* shape one buffered frame of rd: 1 done, 0 none complete. A bad frame
 * writes what the frames before it produced, then ends the tool. */
static int
next_frame(struct shaperd *d, struct frame_reader *rd,
    enum shape_source src)
{
	struct frame f;
	enum msg_kind k = MSG_UNKNOWN;
	char err[512];
	int r;

	if ((r = frame_next(rd, &f)) == 0)
		return 0;
	if (r == -1) {
		flush_out(d);
		fatalx(P2O_EXIT_DATA, "%s", rd->err);
	}
	if (src == SHAPE_STREAM && trace_on())
		k = msg_kind(&f);
	/* a batch begins at its first change (not at a keepalive) */
	if ((k == MSG_ROW || k == MSG_TRUNCATE) && d->batch_ns == 0) {
		d->batch_ns = trace_now_ns();
		d->batch_n = d->sh.n;
	}
	if (shape_event(&d->sh, src, f.obj, f.kind, &f.top, &d->out, err,
	    sizeof(err)) == -1) {
		flush_out(d);
		fatalx(P2O_EXIT_DATA, "%s: offset %llu: %s", rd->name,
		    (unsigned long long)f.offset, err);
	}
	if (k == MSG_COMMIT)
		trace_commit(d, &f);
	if (d->out.len >= OUT_FLUSH)
		flush_out(d);
	return 1;
}

static void
fill(struct frame_reader *rd)
{
	if (frame_fill(rd) == -1 && errno != EAGAIN && errno != EINTR)
		fatal(P2O_EXIT_INTERNAL, "could not read %s", rd->name);
}

static int
parse_fd(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || n < 0 || n > 65535)
		return -1;
	return (int)n;
}

int
main(int argc, char **argv)
{
	static struct shaperd d;
	struct config cfg;
	struct p2o_err e;
	struct frame_reader in, ld;
	struct pollfd pfd[2];
	char loadname[32];
	int load_open, load_pending = 0, n, timeout;
	long long idle;
	long long now;

	d.load_fd = -1;
	if (stage_begin(&d.st, &spec, &d, argc, argv, &e) != STAGE_RUN)
		exit(stage_report(&e));
	if (d.load_fd != -1 && !fd_is_open(d.load_fd)) {
		log_error("--load-fd %d is not open", d.load_fd);
		return P2O_EXIT_USAGE;
	}
	/* the shaper connects to nothing: it needs no secret, so a captured
	 * stream replays at a desk without the production credentials */
	if (config_load_with(d.st.cfgpath, CONFIG_SECRET_TRANSFORM, &cfg, &e) == -1 ||
	    config_traces_start(&cfg, "shaper", &e) == -1 ||
	    stage_hello(&d.st, &e) == -1)
		exit(stage_report(&e));

	shaper_init(&d.sh, &cfg);
	sbuf_init(&d.out);
	frame_reader_init(&in, P2O_FD_IN, "stdin");
	load_open = d.load_fd != -1;
	shaper_load(&d.sh, load_open);
	if (load_open) {
		snprintf(loadname, sizeof(loadname), "load fd %d", d.load_fd);
		frame_reader_init(&ld, d.load_fd, loadname);
	}

	for (;;) {
		/* stdin first: every frame it already has */
		while (next_frame(&d, &in, SHAPE_STREAM))
			;
		/* the end: both inputs ended (a load still being read is
		 * finished first; its rows are safe after the stream's end) */
		if (in.eof && !load_open)
			break;
		flush_out(&d);

		now = now_ms();
		send_stats(&d, now);
		timeout = load_pending ? 0 : stage_stats_wait(&d.st, now,
		    stats_changed(&d));
		/* about to wait with every frame shaped: what a load or a
		 * burst grew goes back (72 kB of 232 after a load) */
		if (!load_pending && (idle = mem_idle_trim(now)) >= 0 &&
		    (timeout < 0 || idle < timeout))
			timeout = (int)idle;
		pfd[0] = (struct pollfd){ .fd = in.eof ? -1 : P2O_FD_IN,
		    .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = load_open ? d.load_fd : -1,
		    .events = POLLIN };
		if ((n = poll(pfd, 2, timeout)) == -1) {
			if (errno == EINTR)
				continue;
			fatal(P2O_EXIT_INTERNAL, "poll");
		}
		if (pfd[0].revents & POLLNVAL)
			fatalx(P2O_EXIT_INTERNAL, "stdin is not open");
		if (pfd[0].revents) {
			fill(&in);
			mem_busy();
			continue;
		}
		if (!load_open || (!load_pending && pfd[1].revents == 0))
			continue;

		/*
		 * Copy rows, only while stdin is quiet: the stream has
		 * strict priority, and shape_event drops a copy the stream
		 * removed since the last mark (tombstone.c).
		 */
		if (!load_pending)
			fill(&ld);
		mem_busy();
		for (n = 0; n < LOAD_BATCH; n++)
			if (!next_frame(&d, &ld, SHAPE_LOAD))
				break;
		load_pending = n == LOAD_BATCH;
		if (!load_pending && ld.eof) {
			frame_reader_release(&ld);
			load_open = 0;
			shaper_load(&d.sh, 0);
		}
	}

	flush_out(&d);
	/* the last counts go out even inside the once-a-second spacing: the
	 * supervisor keeps a finished stage's final report */
	stage_stats_now(&d.st);
	send_stats(&d, now_ms());
	log_debug("end of stdin: %llu rows in, %llu operations out",
	    (unsigned long long)d.sh.n.rows_in,
	    (unsigned long long)d.sh.n.ops_out);
	trace_stop(TRACE_STOP_MS);
	stage_end(&d.st);
	if (load_open)
		frame_reader_release(&ld);
	frame_reader_release(&in);
	sbuf_release(&d.out);
	shaper_release(&d.sh);
	config_release(&cfg);
	return P2O_EXIT_OK;
}
