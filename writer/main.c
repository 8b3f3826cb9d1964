/*
 * writer - operation frames on stdin become bulk requests to the target;
 * the positions they cover go back to the supervisor on fd 3 once the
 * target holds every operation before them.
 *
 * One poll loop, no threads, in three states:
 *
 *   PROBE  GET / until the target answers, and with a quarantine its
 *          rejects store made ready and counted; nothing is read yet.
 *   RUN    read frames into the batch, cut it into flushes, write them.
 *   DRAIN  no more input will be taken (end of input, a malformed frame,
 *          SIGTERM): write what may still go, then exit.
 *
 * Each pass of the loop applies the rules below in this order, each in one
 * function: answers (collect), reports in cut order (report), the state's
 * own step (probe, or take_input then cut), requests (send), the exit rule
 * (maybe_exit), and the wait (wait_for_work). Up to write_concurrency
 * flushes are being written at once (window.c), and stdin is read into
 * the batch meanwhile, so the next request is ready when one is answered;
 * once that batch is full nothing more is read, so a slow or absent target
 * fills the pipe and stops everything upstream instead of growing a buffer
 * here.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "frame.h"
#include "http.h"
#include "log.h"
#include "memtrim.h"
#include "msg.h"
#include "p2o.h"
#include "stage.h"
#include "trace.h"
#include "xio.h"
#include "writer.h"

enum wstate { W_PROBE, W_RUN, W_DRAIN };

/* why the writer drains, which decides what is still cut and the exit */
enum drain_why { D_EOF, D_BAD, D_TERM };

struct writer {
	enum wstate st;
	enum drain_why why;
	int	 stopping;	/* SIGTERM seen: nothing is retried */
	struct http_pool pool;
	struct sink sink;
	struct window w;
	struct batch b;		/* read, not cut yet */
	struct frame_reader in;
	int	 in_more;	/* the reader may hold a complete frame */
	int	 in_idle;	/* stdin had nothing to read, last look */
	int	 in_eof;
	int	 probe_open;
	int	 probed;	/* the target answered the probe */
	struct sbuf probe_path;	/* the start-up request's path */
	long long probe_at;	/* no probe before (a backoff) */
	long long probe_backoff;
	uint64_t durable_pos;	/* the last reported, for the log */
};

/* the skeleton's: fd 3 (st.ctl), the SIGTERM flag, the stats timer */
static struct stage st;
static struct writer_stats stats;
/* kept for the writer's life: the sink creates indices from it */
static struct config cfg;

static const char usage_text[] =
"usage: writer -c config.yaml\n"
"\n"
"Reads operation frames (index, delete, clear, commit, pos, mark) on stdin\n"
"and writes them to the target with bulk requests, in order, with\n"
"external versions. Uses target.url (or target.urls), target.username,\n"
"target.password(_env), engine.batch_size, engine.batch_max_bytes,\n"
"engine.write_concurrency, engine.on_permanent_rejection and\n"
"engine.max_rejects.\n"
"\n"
"  -c, --config FILE  configuration file (required)\n"
"  -h, --help         this text\n"
"  -V, --version      the version\n"
"\n"
"file descriptors:\n"
"  0  operation frames in (framing.md section 5)\n"
"  1  unused\n"
"  2  log lines\n"
"  3  control channel, optional: hello, durable, marked, stats out\n"
"     (without it the writer reports nothing)\n"
"\n"
"A batch ends at a commit or pos boundary, when batch_size operations or\n"
"batch_max_bytes bytes are buffered or when no more input is ready; a\n"
"transaction larger than the limits is split. Up to write_concurrency\n"
"bulk requests are open at once (a written one does not wait for those\n"
"before it to free its place); a position is reported only when every\n"
"request before it is written. A target whose writes are tasks\n"
"(Meilisearch) gets a batch's documents and deletes as one task each per\n"
"index, each document in its last state, and up to 32 batches' tasks in its\n"
"queue (within the bytes of two), sent in order, each batch's once the\n"
"last one's are all enqueued; a position is reported only once every task\n"
"before it succeeded. A failed request is retried with backoff\n"
"(engine.retry_backoff_ms, 100 ms, doubling to 30 s); a refused document\n"
"halts progress (it is retried, nothing past it is reported durable)\n"
"until the target accepts it; with on_permanent_rejection: quarantine it\n"
"is recorded in the target's rejects store first, then counts as\n"
"written, up to max_rejects records (then it halts). engine.retry_max\n"
"and engine.retry_max_elapsed_ms end the retries of one request (exit\n"
"75, the log names the limit); by default there is no limit.\n"
"With several nodes (target.urls) each request goes to the next healthy\n"
"node in turn; a node that refuses the connection, fails on the way or\n"
"answers 5xx is left for the next at once and tried again after a rest\n"
"(1 s, doubling to 30 s while it keeps failing).\n"
"\n"
"exit codes:\n"
"  0   end of input, or SIGTERM, after everything complete was written\n"
"  1   internal error (temporary)\n"
"  64  bad command line (permanent)\n"
"  65  malformed input frame or operation, or a gap where the tap that\n"
"      wrote a replayed file dropped frames (framing.md section 9)\n"
"      (permanent); complete transactions before it were written and\n"
"      reported\n"
"  75  SIGTERM while the target was unavailable or refusing, control\n"
"      channel or stdin lost (temporary: nothing unwritten was reported)\n"
"  77  the target refused the credentials, HTTP 401/403 (permanent)\n"
"  78  invalid configuration (permanent)\n";

static const struct stage_spec spec = {
	.tool = "writer",
	.usage = usage_text,
	/* SIGTERM drains: what is complete is written, then it exits */
	.signals = STAGE_SIG(STAGE_TERM),
	.control = 1,
	.stats_ms = 1000,
};

static void
ctl_send(void)
{
	if (ctl_flush(&st.ctl) == -1)
		fatal(P2O_EXIT_TEMPFAIL, "control fd 3");
}

static const enum msg_counter stat_ids[] = { MC_DOCS_INDEXED,
    MC_DOCS_DELETED, MC_BATCHES, MC_BULK_BYTES, MC_SINK_ERRORS,
    MC_VERSION_CONFLICTS, MC_TOAST_COMPLETIONS, MC_CLEARS, MC_CASCADES,
    MC_INDICES_CREATED, MC_WRITER_HALTED, MC_DOC_REFUSALS };
#define NSTATS	(sizeof(stat_ids) / sizeof(stat_ids[0]))

static struct {
	uint64_t v[NSTATS];
} stats_sent;

/* the counters, in stat_ids' order */
static void
stats_values(uint64_t v[NSTATS])
{
	const uint64_t now[NSTATS] = { stats.docs_indexed,
	    stats.docs_deleted, stats.batches, stats.bulk_bytes,
	    stats.sink_errors, stats.version_conflicts,
	    stats.toast_completions, stats.clears, stats.cascades,
	    stats.indices_created, stats.halted > 0, stats.doc_refusals };

	memcpy(v, now, sizeof(now));
}

/* something to say since the last stats frame */
static int
stats_changed(void)
{
	uint64_t v[NSTATS];

	stats_values(v);
	return memcmp(v, stats_sent.v, sizeof(v)) != 0 ||
	    stats.toast_missing.changed || stats.rejected.changed;
}

static void
send_stats(void)
{
	uint64_t v[NSTATS];
	struct sbuf j = SBUF_INIT;
	size_t i;

	if (!stats_changed())
		return;
	stats_values(v);
	msg_stats_begin(&j, "writer");
	for (i = 0; i < NSTATS; i++)
		msg_stats_add(&j, stat_ids[i], v[i]);
	kcount_put_stats(&stats.toast_missing, &j, MC_TOAST_MISSING);
	kcount_put_stats(&stats.rejected, &j, MC_REJECTED);
	if (trace_on())
		msg_stats_add(&j, MC_TRACE_DROPPED_WRITER, trace_dropped());
	msg_stats_end(&st.ctl.out, &j);
	sbuf_release(&j);
	ctl_send();
	memcpy(stats_sent.v, v, sizeof(v));
}

static void __attribute__((noreturn))
finish(struct writer *wr, int code, const char *why)
{
	send_stats();
	if (code == P2O_EXIT_OK)
		log_info("%s: %llu indexed, %llu deleted, %llu conflicts, "
		    "durable up to %llu", why,
		    (unsigned long long)stats.docs_indexed,
		    (unsigned long long)stats.docs_deleted,
		    (unsigned long long)stats.version_conflicts,
		    (unsigned long long)wr->durable_pos);
	trace_stop(TRACE_STOP_MS);
	stage_end(&st);
	exit(code);
}

static void
drain(struct writer *wr, enum drain_why why)
{
	wr->st = W_DRAIN;
	wr->why = why;
}

/* reading: while the batch has room and no barrier waits in it to be
 * cut, also with every request open, so that the next one is ready to go
 * when one is answered (the batch is the + 1 of write_concurrency + 1
 * bodies) */
static int
may_read(const struct writer *wr)
{
	return wr->st == W_RUN && !batch_full(&wr->b) &&
	    wr->b.first_barrier < 0;
}

/* the rule for cutting, by state */
static enum cut_reason
cut_reason(const struct writer *wr)
{
	if (wr->st == W_DRAIN)
		return wr->why == D_EOF ? CUT_EOF : CUT_STOP;
	if (wr->in_more)
		return CUT_NONE;
	return wr->in_idle ? CUT_IDLE : CUT_NONE;
}

/* the answers that arrived: to the probe, or to a flush */
static int
collect(struct writer *wr)
{
	struct http_done d;
	enum step_result r;
	int n = 0;

	while (http_pool_done(&wr->pool, &d)) {
		n++;
		/* a certificate no retry makes valid: before any write, as
		 * the probe is the first request */
		if (d.tls)
			fatalx(P2O_EXIT_REFUSED, "target '%s': TLS: %s",
			    wr->sink.target, d.err);
		if (wr->st == W_PROBE) {
			wr->probe_open = 0;
			if (!wr->probed) {
				r = sink_probe_answer(&wr->sink, d.err,
				    d.status);
				wr->probed = r == STEP_DONE;
			} else
				r = sink_start_answer(&wr->sink, d.err,
				    d.status);
			if (r == STEP_DONE &&
			    wr->sink.q_step == Q_READY)
				wr->st = W_RUN;
			else if (r == STEP_DONE || r == STEP_NEXT)
				wr->probe_at = 0;
			else if (r == STEP_WAIT)
				wr->probe_at = now_ms() +
				    sink_backoff(&wr->probe_backoff);
		} else
			r = window_answer(&wr->w, d.slot, d.err, d.status,
			    now_ms());
		if (r == STEP_END)
			fatalx(wr->sink.err.code, "%s", wr->sink.err.msg);
	}
	return n > 0;
}

/* a written flush's traced commits: each one's write span, from when
 * the writer read the commit to now, when all before it is durable */
static void
trace_flush(const struct flush *fl)
{
	const struct batch *b = &fl->b;
	struct trace_ctx c;
	struct trace_span sp;
	long long now = 0;
	int i, refused = 0;

	for (i = 0; i < b->nops; i++)
		refused += b->ops[i].refusal != NULL;
	for (i = 0; i < b->nops; i++) {
		const struct op *op = &b->ops[i];

		if (op->trace == NULL || trace_ctx_parse(op->trace,
		    strlen(op->trace), &c) == -1 ||
		    trace_span_child(&sp, &c, "write", op->in * 1000) == -1)
			continue;
		trace_attr_int(&sp, "documents", b->ndocs);
		trace_attr_int(&sp, "refused", refused);
		trace_attr_str(&sp, "outcome", refused ? "quarantined" :
		    "written", refused ? 11 : 7);
		if (op->text)
			trace_attr_str(&sp, "position", op->text,
			    strlen(op->text));
		if (now == 0)
			now = trace_now_ns();
		trace_emit(&sp, now);
	}
}

/* every flush written, in the order cut: its position and its mark */
static int
report(struct writer *wr)
{
	struct msg_pos d;
	struct jspan mark;
	int n = 0;

	while (window_report(&wr->w, &d, &mark)) {
		if (trace_on())
			trace_flush(window_head(&wr->w));
		if (d.present) {
			d.at = now_us_wall();
			msg_put_durable(&st.ctl.out, &d);
			wr->durable_pos = d.pos;
		}
		if (mark.p)
			msg_put_marked_from(&st.ctl.out, mark);
		window_retire(&wr->w);
		n++;
	}
	if (n)
		ctl_send();
	return n > 0;
}

static int
probe(struct writer *wr, long long now)
{
	struct http_call call;

	if (wr->probe_open || now < wr->probe_at || wr->stopping)
		return 0;
	if (!wr->probed ||
	    !quarantine_start_call(&wr->sink, &wr->probe_path, &call))
		sink_probe_call(&wr->sink, &call);
	if (http_pool_start(&wr->pool, 0, call.method, call.path, call.ctype,
	    call.body, call.len, &wr->sink.probe_resp, 0) == -1)
		fatalx(P2O_EXIT_INTERNAL, "target request: %s",
		    wr->pool.slot[0].err);
	wr->probe_open = 1;
	return 1;
}

/*
 * A replayed tap file where the tap dropped frames (framing.md §9): what
 * follows is not the stream (a delete in the gap would leave its document
 * in the index), so the writer stops there as at a malformed operation,
 * after the complete transactions before it, and says how much is missing.
 */
static void
refuse_gap(struct writer *wr, const struct frame *f)
{
	struct msg_gap g;
	char why[256];

	if (msg_read_gap(f, &g, why, sizeof(why)) == 0)
		msg_gap_describe(&g, why, sizeof(why));
	log_error("%s: offset %llu: %s", wr->in.name,
	    (unsigned long long)f->offset, why);
	drain(wr, D_BAD);
}

/* every complete frame already read, while reading is allowed */
static int
take_input(struct writer *wr)
{
	struct frame f;
	struct p2o_err err;
	int r, n = 0;

	while (may_read(wr) && wr->in_more) {
		r = frame_next(&wr->in, &f);
		if (r == 0) {
			wr->in_more = 0;
			if (wr->in_eof)
				drain(wr, D_EOF);
			break;
		}
		if (r == -1) {
			log_error("%s", wr->in.err);
			drain(wr, D_BAD);
			break;
		}
		if (msg_kind(&f) == MSG_GAP) {
			refuse_gap(wr, &f);
			break;
		}
		if (batch_add(&wr->b, &f, &err) == -1) {
			/* nothing after a bad frame is presented: only the
			 * complete transactions before it are written */
			log_error("%s: offset %llu: %s", wr->in.name,
			    (unsigned long long)f.offset, err.msg);
			drain(wr, D_BAD);
			break;
		}
		n++;
	}
	return n > 0;
}

/* the batch into flushes, while the rule gives a cut and a slot takes it */
static int
cut(struct writer *wr)
{
	int n, cuts = 0;

	/* stopping with a flush backing off: it will not be retried, so
	 * nothing behind it could be reported */
	if (wr->stopping && window_backing_off(&wr->w))
		return 0;
	while ((n = batch_cut(&wr->b, cut_reason(wr))) > 0 &&
	    window_may_open(&wr->w, &wr->b, n)) {
		window_open(&wr->w, &wr->b, n);
		/* look at stdin again before the next idle cut */
		wr->in_idle = 0;
		cuts++;
	}
	return cuts > 0;
}

/* every request that is due, on its slot */
static int
send_requests(struct writer *wr, long long now)
{
	struct http_call call;
	struct sbuf *resp;
	int slot, n = 0;

	while (window_next(&wr->w, now, !wr->stopping, &slot, &call, &resp)) {
		if (http_pool_start(&wr->pool, slot, call.method, call.path,
		    call.ctype, call.body, call.len, resp,
		    call.timeout_ms) == -1)
			fatalx(P2O_EXIT_INTERNAL, "target request: %s",
			    wr->pool.slot[slot].err);
		n++;
	}
	return n > 0;
}

/* the shutdown rule: whether the writer is done, and with which code */
static void
maybe_exit(struct writer *wr)
{
	if (wr->st == W_PROBE) {
		/* nothing read yet: nothing to lose */
		if (wr->stopping && !wr->probe_open)
			finish(wr, P2O_EXIT_OK, "stopped");
		return;
	}
	if (wr->st != W_DRAIN)
		return;
	if (wr->stopping && window_backing_off(&wr->w)) {
		if (window_inflight(&wr->w))
			return;
		log_error("stopping with %d operations unwritten: %s",
		    window_unwritten(&wr->w) + wr->b.ndocs, wr->sink.err.msg);
		finish(wr, P2O_EXIT_TEMPFAIL, "stopped");
	}
	if (!window_empty(&wr->w) || batch_cut(&wr->b, cut_reason(wr)) > 0)
		return;
	switch (wr->why) {
	case D_EOF:
		finish(wr, P2O_EXIT_OK, "end of input");
	case D_BAD:
		finish(wr, P2O_EXIT_DATA, "malformed input");
	case D_TERM:
		finish(wr, P2O_EXIT_OK, "stopped");
	}
}

/*
 * The input idle and nothing open: what the busiest moment grew is let go.
 * After a load the input batch's array of operations (1,024 of them, 208
 * bytes each) and the sink's verdicts (one an entry, 428 bytes) were
 * 620 kB of a writer's 2.2 MB kept for as long as it ran; they grow again
 * from nothing at the next cut, which is rare next to the idle moments
 * of a quiet source.
 */
static void
idle_trim(struct writer *wr)
{
	window_trim(&wr->w);
	sink_trim(&wr->sink);
	if (wr->b.nops == 0 && wr->b.arena.len == 0)
		batch_release(&wr->b);
	(void)mem_idle_trim(now_ms());
}

/*
 * The wait: until a transfer needs curl, a backoff or the stats are due,
 * a signal arrives (its byte on the self-pipe), or stdin is readable when
 * reading is allowed. Right after the batch ran dry the look at stdin is
 * a quick one: if nothing is there the input is idle, and what the batch
 * holds may go.
 */
static void
wait_for_work(struct writer *wr, int busy)
{
	long long now = now_ms(), until, t;
	int fds[2] = { -1, stage_sigfd() }, stats_in;
	unsigned ready;
	ssize_t r;

	/* nothing due: a minute, which curl shortens to its own timers */
	until = now + 60000;
	if ((stats_in = stage_stats_wait(&st, now, stats_changed())) >= 0)
		until = now + stats_in;
	/* stopping, a backoff is not waited out but ends the writer */
	if (!wr->stopping && (t = window_retry_at(&wr->w)) != 0 && t < until)
		until = t;
	if ((t = window_poll_at(&wr->w)) != 0 && t < until)
		until = t;
	if (wr->st == W_PROBE && !wr->probe_open && wr->probe_at < until)
		until = wr->probe_at;
	if (may_read(wr) && !wr->in_more && !wr->in_eof) {
		fds[0] = P2O_FD_IN;
		if (!wr->in_idle)
			until = now;
	}
	/* something changed, or a flush waits to be reported */
	if (busy || window_head(&wr->w))
		until = now;
	if (http_pool_wait(&wr->pool, fds, 2, &ready, until > now ? until -
	    now : 0) == -1)
		fatalx(P2O_EXIT_INTERNAL, "waiting on the target's "
		    "connections failed");
	/* the flag says what arrived; the loop reads it next */
	if (ready & 2)
		stage_sigfd_drain();
	if (fds[0] == -1)
		return;
	if (!(ready & 1)) {
		wr->in_idle = 1;
		if (window_empty(&wr->w))
			idle_trim(wr);
		return;
	}
	wr->in_idle = 0;
	mem_busy();
	r = frame_fill(&wr->in);
	if (r == 0) {
		wr->in_eof = 1;
		wr->in_more = 1;
	} else if (r > 0)
		wr->in_more = 1;
	else if (errno != EAGAIN && errno != EINTR)
		fatal(P2O_EXIT_TEMPFAIL, "%s", wr->in.name);
}

static void
setup(struct writer *wr, const char *cfgpath)
{
	const char *const *urls;
	struct http_opts hopts;
	struct p2o_err perr;
	int nurls, depth;

	/* the target's secret only: an ops file replays at a desk without
	 * the source database's credentials */
	if (config_load_with(cfgpath, CONFIG_SECRET_TARGET, &cfg, &perr) == -1)
		exit(stage_report(&perr));
	urls = config_target_urls(&cfg, &nurls);
	if (nurls == 0)
		fatalx(P2O_EXIT_CONFIG, "%s: target.url is required", cfgpath);
	if (http_global_init() == -1)
		fatalx(P2O_EXIT_INTERNAL, "could not initialise libcurl");
	if (config_traces_start(&cfg, "writer", &perr) == -1)
		exit(stage_report(&perr));
	target_http_opts(&cfg, &hopts);
	if (!cfg.target_tls_verify)
		log_warnx("target.tls_verify is false: the target's "
		    "certificate is not checked, anyone on the path can read "
		    "and change what is written");
	depth = window_depth(cfg.target_module, cfg.write_concurrency);
	if (http_pool_init(&wr->pool, WINDOW_SLOTS(depth), urls, nurls, &hopts,
	    &perr) == -1)
		fatalx(perr.code, "target: %s", perr.msg);
	if (stage_hello(&st, &perr) == -1)
		exit(stage_report(&perr));
	frame_reader_init(&wr->in, P2O_FD_IN, "stdin");
	batch_init(&wr->b, cfg.target_module, cfg.batch_size,
	    cfg.batch_max_bytes);
	if (cfg.target_require_alias)
		wr->b.aliases = &cfg;
	if (sink_init(&wr->sink, cfg.target_module, wr->pool.nodes.names,
	    &stats, &cfg, &perr) == -1)
		fatalx(perr.code, "%s", perr.msg);
	window_init(&wr->w, depth, &wr->sink);
	log_debug("writing to '%s', batches of %d operations or %zu bytes, "
	    "%d open at once", wr->pool.nodes.names, cfg.batch_size,
	    cfg.batch_max_bytes, depth);
	wr->st = W_PROBE;
}

int
main(int argc, char **argv)
{
	static struct writer wr;
	struct p2o_err e;
	long long now;
	int busy;

	if (stage_begin(&st, &spec, NULL, argc, argv, &e) != STAGE_RUN)
		exit(stage_report(&e));
#ifdef M_MMAP_THRESHOLD
	/* a body is its own mapping, unmapped when its flush is retired: glibc
	 * would otherwise raise the threshold past the body size after the
	 * first free and keep freed bodies in a heap it cannot shrink */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	srandom((unsigned)(now_us_wall() ^ getpid()));
	setup(&wr, st.cfgpath);

	for (;;) {
		now = now_ms();
		if (stage_stats_due(&st, now)) {
			send_stats();
			stage_stats_sent(&st, now);
		}
		if (stage_signalled(STAGE_TERM) && !wr.stopping) {
			wr.stopping = 1;
			/* a malformed frame keeps its exit code */
			if (wr.st == W_RUN || (wr.st == W_DRAIN &&
			    wr.why == D_EOF))
				drain(&wr, D_TERM);
		}
		busy = collect(&wr);
		busy |= report(&wr);
		if (wr.st == W_PROBE)
			busy |= probe(&wr, now);
		if (wr.st == W_RUN)
			busy |= take_input(&wr);
		if (wr.st != W_PROBE)
			busy |= cut(&wr);
		busy |= send_requests(&wr, now_ms());
		maybe_exit(&wr);
		wait_for_work(&wr, busy);
	}
}
