/*
 * writer - operation frames on stdin become _bulk requests to OpenSearch;
 * the positions they cover go back to the supervisor on fd 3 once the
 * target holds every operation before them.
 *
 * One loop: read frames while no flush is open, flush a batch one request
 * at a time, wait out backoffs, send stats. stdin is not read while a
 * request is open or retrying, so a slow or absent target fills the pipe
 * and stops everything upstream instead of growing a buffer here.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "frame.h"
#include "http.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "xio.h"
#include "writer.h"

#define STATS_EVERY_MS	1000

static volatile sig_atomic_t terminating;

static struct ctl ctl;
static struct writer_stats stats;
static struct {
	uint64_t v[8];
} stats_sent;
static uint64_t durable_pos;
static int durable_any;

static void
on_term(int sig)
{
	(void)sig;
	terminating = 1;
}

static void
usage(FILE *to)
{
	fprintf(to,
"usage: writer -c config.yaml\n"
"\n"
"Reads operation frames (index, delete, clear, commit, pos, mark) on stdin\n"
"and writes them to the target with _bulk requests, in order, with\n"
"external_gte versions. Uses target.url, target.username,\n"
"target.password(_env), engine.batch_size and engine.batch_max_bytes.\n"
"\n"
"  -c FILE     configuration file (required)\n"
"  -h, --help  this text\n"
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
"transaction larger than the limits is split. A failed request is retried\n"
"with backoff (100 ms doubling to 30 s) for ever; a refused document halts\n"
"progress (it is retried, nothing past it is reported durable) until the\n"
"target accepts it.\n"
"\n"
"exit codes:\n"
"  0   end of input, or SIGTERM, after everything complete was written\n"
"  1   internal error (temporary)\n"
"  64  bad command line (permanent)\n"
"  65  malformed input frame or operation (permanent); complete\n"
"      transactions before it were written and reported\n"
"  75  SIGTERM while the target was unavailable or refusing, control\n"
"      channel or stdin lost (temporary: nothing unwritten was reported)\n"
"  77  the target refused the credentials, HTTP 401/403 (permanent)\n"
"  78  invalid configuration (permanent)\n");
}

static void
send_stats(void)
{
	static const enum msg_counter ids[] = { MC_DOCS_INDEXED,
	    MC_DOCS_DELETED, MC_BATCHES, MC_BULK_BYTES, MC_SINK_ERRORS,
	    MC_VERSION_CONFLICTS, MC_TOAST_COMPLETIONS, MC_CLEARS };
	uint64_t v[] = { stats.docs_indexed, stats.docs_deleted,
	    stats.batches, stats.bulk_bytes, stats.sink_errors,
	    stats.version_conflicts, stats.toast_completions, stats.clears };
	struct sbuf j = SBUF_INIT;
	size_t i;

	if (memcmp(v, stats_sent.v, sizeof(v)) == 0 &&
	    !stats.toast_missing.changed)
		return;
	msg_stats_begin(&j, "writer");
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		msg_stats_add(&j, ids[i], v[i]);
	kcount_put_stats(&stats.toast_missing, &j, MC_TOAST_MISSING);
	msg_stats_end(&ctl.out, &j);
	sbuf_release(&j);
	if (ctl_flush(&ctl) == -1)
		fatal(P2O_EXIT_TEMPFAIL, "control fd 3");
	memcpy(stats_sent.v, v, sizeof(v));
}

/* a flush is complete: everything up to its last boundary is written */
static void
report(const struct batch *b, int n, long long sent_us)
{
	const struct op *bound, *last;
	struct msg_pos d;
	struct jspan mark;

	bound = batch_boundary(b, n);
	if (bound && (!durable_any || bound->pos > durable_pos)) {
		memset(&d, 0, sizeof(d));
		d.pos = bound->pos;
		d.text = bound->text;
		d.ts = bound->ts;
		d.sent = sent_us;
		d.at = now_us_wall();
		msg_put_durable(&ctl.out, &d);
		durable_pos = bound->pos;
		durable_any = 1;
	}
	last = &b->ops[n - 1];
	if (last->kind == OP_MARK) {
		mark.p = last->text;
		mark.n = strlen(last->text);
		msg_put_marked_from(&ctl.out, mark);
	}
	if (ctl_flush(&ctl) == -1)
		fatal(P2O_EXIT_TEMPFAIL, "control fd 3");
}

static void
finish(int code, const char *why)
{
	send_stats();
	if (code == P2O_EXIT_OK)
		log_info("%s: %llu indexed, %llu deleted, %llu conflicts, "
		    "durable up to %llu", why,
		    (unsigned long long)stats.docs_indexed,
		    (unsigned long long)stats.docs_deleted,
		    (unsigned long long)stats.version_conflicts,
		    (unsigned long long)durable_pos);
	ctl_close(&ctl);
	exit(code);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	enum { ST_PROBE, ST_READ, ST_FLUSH } st = ST_PROBE;
	struct config cfg;
	struct http_client http;
	struct frame_reader in;
	struct frame f;
	struct batch b;
	struct sink sink;
	struct flush fl;
	struct sigaction sa;
	struct pollfd pfd;
	enum step_result step;
	const char *cfgpath = NULL;
	char err[512], redacted[512];
	long long now, retry_at = 0, stats_at, wait;
	int ch, n, r, eof = 0, drained = 0, idle = 0, bad = 0, stopping = 0;

	log_init("writer");
	ctl_claim();
	while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			cfgpath = optarg;
			break;
		case 'h':
			usage(stdout);
			return P2O_EXIT_OK;
		default:
			usage(stderr);
			return P2O_EXIT_USAGE;
		}
	}
	if (!cfgpath || optind != argc) {
		usage(stderr);
		return P2O_EXIT_USAGE;
	}

	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a signal must wake poll(2) */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	srandom((unsigned)(now_us_wall() ^ getpid()));

	if (config_load(cfgpath, &cfg, err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s", err);
	if (!cfg.target_url)
		fatalx(P2O_EXIT_CONFIG, "%s: target.url is required", cfgpath);
	if (http_global_init() == -1)
		fatalx(P2O_EXIT_INTERNAL, "could not initialise libcurl");
	if (http_init(&http, cfg.target_url, cfg.target_username,
	    cfg.target_password) == -1)
		fatalx(P2O_EXIT_CONFIG, "target '%s': %s",
		    log_redact_url(cfg.target_url, redacted, sizeof(redacted)),
		    http.err);
	if (ctl_open(&ctl, "writer") == -1)
		fatal(P2O_EXIT_INTERNAL, "control fd 3");
	frame_reader_init(&in, P2O_FD_IN, "stdin");
	batch_init(&b, cfg.batch_size, cfg.batch_max_bytes);
	sink_init(&sink, &http, &stats);
	log_debug("writing to '%s', batches of %d operations or %zu bytes",
	    log_redact_url(cfg.target_url, redacted, sizeof(redacted)),
	    cfg.batch_size, cfg.batch_max_bytes);
	stats_at = now_ms() + STATS_EVERY_MS;

	for (;;) {
		now = now_ms();
		if (now >= stats_at) {
			send_stats();
			stats_at = now + STATS_EVERY_MS;
		}
		if (terminating)
			stopping = 1;

		/* a request to make, or a backoff to wait out */
		if (st != ST_READ) {
			if (now < retry_at) {
				if (stopping) {
					if (b.nops == 0)
						finish(P2O_EXIT_OK, "stopped");
					log_error("stopping with %d operations "
					    "unwritten: %s", b.ndocs, sink.err);
					finish(P2O_EXIT_TEMPFAIL, "stopped");
				}
				wait = (retry_at < stats_at ? retry_at :
				    stats_at) - now;
				poll(NULL, 0, (int)wait);
				continue;
			}
			step = st == ST_PROBE ? sink_probe(&sink) :
			    flush_step(&sink, &fl);
			switch (step) {
			case STEP_AUTH:
				fatalx(P2O_EXIT_AUTH, "%s", sink.err);
			case STEP_WAIT:
				retry_at = now_ms() +
				    sink_backoff(&sink.backoff_ms);
				break;
			case STEP_NEXT:
				sink.backoff_ms = 0;
				break;
			case STEP_DONE:
				sink.backoff_ms = 0;
				if (st == ST_FLUSH) {
					report(&b, fl.n, fl.started_us);
					batch_consume(&b, fl.n);
					flush_release(&fl);
				}
				st = ST_READ;
				break;
			}
			continue;
		}

		/* every complete frame already read, up to a full batch */
		while (!bad && !stopping && !batch_full(&b) &&
		    b.first_barrier < 0) {
			r = frame_next(&in, &f);
			if (r == 1) {
				if (batch_add(&b, &f, err, sizeof(err)) == -1) {
					log_error("%s: offset %llu: %s", in.name,
					    (unsigned long long)f.offset, err);
					bad = 1;
				}
				drained = 0;
				continue;
			}
			if (r == -1) {
				log_error("%s", in.err);
				bad = 1;
			} else
				drained = 1;
			break;
		}

		/* nothing after a bad frame or a SIGTERM is presented: only
		 * the complete transactions before it are written */
		if (bad || stopping) {
			n = b.last_boundary + 1;
			if (n > 0 && b.first_barrier >= 0 &&
			    b.first_barrier < n)
				n = b.first_barrier + 1;
			if (n > 0) {
				flush_begin(&fl, &b, n);
				st = ST_FLUSH;
				continue;
			}
			if (bad)
				finish(P2O_EXIT_DATA, "malformed input");
			finish(P2O_EXIT_OK, "stopped");
		}

		n = batch_cut(&b, eof && drained ? CUT_EOF :
		    idle && drained ? CUT_IDLE : CUT_NONE);
		if (n > 0) {
			flush_begin(&fl, &b, n);
			st = ST_FLUSH;
			idle = 0;
			continue;
		}
		if (eof && drained) {
			if (b.nops == 0)
				finish(P2O_EXIT_OK, "end of input");
			continue;
		}
		if (!drained)
			continue;

		/* is more input ready now? if not, what we hold goes out */
		pfd.fd = P2O_FD_IN;
		pfd.events = POLLIN;
		pfd.revents = 0;
		r = poll(&pfd, 1, idle ? (int)(stats_at - now) : 0);
		if (r == -1) {
			if (errno == EINTR)
				continue;
			fatal(P2O_EXIT_INTERNAL, "poll");
		}
		if (r == 0) {
			idle = 1;
			continue;
		}
		idle = 0;
		r = (int)frame_fill(&in);
		if (r == 0)
			eof = 1;
		else if (r == -1 && errno != EAGAIN && errno != EINTR)
			fatal(P2O_EXIT_TEMPFAIL, "%s", in.name);
		else if (r > 0)
			drained = 0;
	}
}
