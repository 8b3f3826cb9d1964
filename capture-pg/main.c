/*
 * capture-pg - stream a PostgreSQL logical replication slot (pgoutput) as
 * event frames on stdout (framing.md §4).
 *
 * Reads top to bottom: load the configuration, check
 * the server and the tables, make sure the publication and the slot
 * exist, start replication, say hello on fd 3 (ready), run the stream
 * until SIGTERM or a failure.
 * Only this file exits; every exit code is one of framing.md §8.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "capture.h"
#include "capture-pg.h"
#include "config.h"
#include "log.h"
#include "memtrim.h"
#include "nestread.h"
#include "p2o.h"
#include "source.h"
#include "stage.h"
#include "trace.h"
#include "pg/pgnest.h"

static const char usage_text[] =
"usage: capture-pg -c config.yaml [--start-pos X/Y [--start-token N]]\n"
"                  [--new-stream]\n"
"\n"
"Streams the changes to the tables of the config's sync sections from a\n"
"PostgreSQL logical replication slot and writes event frames to stdout.\n"
"Creates the publication and the slot when they do not exist. In poll\n"
"mode (source.mode: poll) it reads each table again a page at a time\n"
"after its cursor, with plain queries: no slot, no publication.\n"
"\n"
"  -c, --config FILE      the pg2osync configuration\n"
"      --start-pos X/Y    resume from this checkpoint position (an LSN);\n"
"                         refused (exit 67) when the slot has confirmed\n"
"                         past it. In poll mode (source.mode: poll) the\n"
"                         checkpoint's cursors, {\"poll\":N,\"at\":{...}}\n"
"      --new-stream       the tables are being loaded again because the\n"
"                         position was lost: a slot that lost its WAL is\n"
"                         dropped and created anew instead of refused\n"
"      --start-token N    the checkpoint's position as a number: must be\n"
"                         the LSN's (a checkpoint that disagrees with\n"
"                         itself is refused, exit 66)\n"
"  -h, --help           this text\n"
"  -V, --version        the version\n"
"\n"
"file descriptors:\n"
"  stdout  event frames (row, truncate, commit, pos, drift)\n"
"  stderr  log lines (P2O_LOG_LEVEL=debug|info|warn|error)\n"
"  fd 3    optional control channel: hello and stats out, acks in; the\n"
"          server is confirmed only what was acked. Without fd 3 the\n"
"          slot is never confirmed past the start position.\n"
"\n"
"SIGTERM/SIGINT: stop reading, flush and close stdout, confirm the last\n"
"ack arriving on fd 3 (up to 30 s), exit 0.\n"
"\n"
"exit codes:\n"
"  0   clean stop\n"
"  1   internal error (temporary)\n"
"  64  bad command line\n"
"  65  malformed data (a control frame, a pgoutput message)\n"
"  66  a checkpoint that disagrees with itself\n"
"  67  the position is gone: the slot lost its WAL (wal_status lost), or\n"
"      the checkpoint is behind the slot\n"
"  69  refused: wal_level, missing REPLICATION, a table missing or without\n"
"      a key, a publication or slot that does not match the config\n"
"  75  connection refused or lost (temporary: restart)\n"
"  77  authentication failed\n"
"  78  invalid configuration\n";

static const struct stage_spec spec =
    CAPTURE_STAGE_SPEC("capture-pg", usage_text);

/*
 * The start the command line names, *start_lsn (0: the slot's own). An
 * LSN is its own number: a checkpoint's token must be exactly it.
 */
static int
check_start(const struct capture_args *a, uint64_t *start_lsn,
    struct p2o_err *e)
{
	uint64_t token;

	*start_lsn = 0;
	if (a->pos != NULL && (lsn_parse(a->pos, start_lsn) == -1 ||
	    *start_lsn == 0))
		return p2o_fail(e, P2O_EXIT_USAGE, "--start-pos '%s' is not a "
		    "position like 0/16B3748", a->pos);
	return capture_start_token(a, *start_lsn, 1, &token, e);
}

/* poll mode: no slot, no publication, no replication connection */
static int
run_poll(struct stage *st, struct config *cfg, const struct capture_args *a)
{
	struct p2o_err e;
	struct poller p;
	struct capture cap;

	if (poller_init(&p, cfg, a) == -1)
		return stage_report(&p.err);
	if (stage_hello(st, &e) == -1)
		return stage_report(&e);
	capture_init(&cap, &poll_ops, &p, &st->ctl, stage_flag(STAGE_TERM));
	if (capture_run(&cap) != 0)
		return stage_report(&cap.err);
	capture_release(&cap);
	sbuf_release(&p.json);
	poller_release(&p);
	stage_end(st);
	config_release(cfg);
	return P2O_EXIT_OK;
}

int
main(int argc, char **argv)
{
	struct capture_args a = { 0 };
	struct stage st;
	struct p2o_err e;
	struct config cfg;
	struct pgo_decoder dec;
	struct pg_source src;
	struct walstream ws;
	struct capture cap;
	struct slotwatch sw;
	uint64_t start_lsn;

	if (stage_begin(&st, &spec, &a, argc, argv, &e) != STAGE_RUN)
		exit(stage_report(&e));
	/* the source's secret only: the target is the writer's */
	if (config_load_with(st.cfgpath, CONFIG_SECRET_SOURCE, &cfg, &e) == -1)
		exit(stage_report(&e));
	if (strcmp(cfg.source->capture, "capture-pg") != 0)
		fatalx(P2O_EXIT_CONFIG, "%s: the source is a %s url, which %s "
		    "reads; capture-pg reads PostgreSQL only", st.cfgpath,
		    cfg.source->noun, cfg.source->capture);
	if (config_traces_start(&cfg, "capture-pg", &e) == -1)
		exit(stage_report(&e));
	if (cfg.poll)
		exit(run_poll(&st, &cfg, &a));
	if (check_start(&a, &start_lsn, &e) == -1)
		exit(stage_report(&e));
	pgo_init(&dec);
	slot_init(&src);
	if (slot_connect_sql(&src, &cfg) == -1 ||
	    slot_check_server(&src) == -1 ||
	    slot_check_tables(&src, &cfg, &dec) == -1 ||
	    slot_ensure_publication(&src, &cfg) == -1 ||
	    slot_connect_repl(&src, &cfg) == -1 ||
	    slot_ensure_slot(&src, &cfg, a.new_stream) == -1)
		exit(stage_report(&src.err));
	p2o_err_clear(&e);
	if ((dec.nest = pgnestread_open(&cfg, src.tables, &e)) == NULL &&
	    e.code != 0)
		exit(stage_report(&e));
	/* the catalogue connection stays, for the slot watch */
	slotwatch_init(&sw, src.sql);
	src.sql = NULL;
	if (slot_start(&src, &cfg, start_lsn) == -1)
		exit(stage_report(&src.err));
	/* hello means ready: only once the slot is streaming, so that a
	 * supervisor reporting healthy means changes are being captured */
	if (stage_hello(&st, &e) == -1)
		exit(stage_report(&e));
	/* the catalogue's answers for every table were read and let go,
	 * and without collections to read its descriptions are not needed
	 * any more: with ten thousand tables the holes they leave are
	 * megabytes the stream never reuses */
	if (dec.nest == NULL)
		slot_forget_tables(&src);
	mem_trim();

	walstream_init(&ws, src.repl, &dec, src.start);
	capture_init(&cap, &walstream_ops, &ws, &st.ctl,
	    stage_flag(STAGE_TERM));
	cap.side = &sw.side;
	if (capture_run(&cap) != 0)
		exit(stage_report(&cap.err));

	capture_release(&cap);
	slotwatch_release(&sw);
	slot_release(&src);
	nestread_close(dec.nest);
	pgo_release(&dec);
	trace_stop(TRACE_STOP_MS);
	stage_end(&st);
	config_release(&cfg);
	return P2O_EXIT_OK;
}
