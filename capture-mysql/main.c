/*
 * capture-mysql - stream a MySQL or MariaDB binary log as event frames on
 * stdout (framing.md §4).
 *
 * Reads top to bottom: load the configuration, check the server and the
 * tables on a catalogue connection, place the start (a checkpoint's text
 * and token, or the server's current position), start the dump, say hello
 * on fd 3 (ready), run the stream until SIGTERM or a failure.
 * Only this file exits; every exit code is one of framing.md §8.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "config.h"
#include "log.h"
#include "nestread.h"
#include "p2o.h"
#include "source.h"
#include "server.h"
#include "stage.h"
#include "trace.h"
#include "mysql/mynest.h"

static const char usage_text[] =
"usage: capture-mysql -c config.yaml [--start-pos TEXT --start-token N]\n"
"                     [--new-stream]\n"
"\n"
"Streams the changes to the tables of the config's sync sections from a\n"
"MySQL or MariaDB binary log and writes event frames to stdout. Without\n"
"--start-pos it starts at the server's current binlog position.\n"
"\n"
"  -c, --config FILE      the pg2osync configuration\n"
"      --start-pos TEXT   resume from a position this tool wrote\n"
"                         (binlog.000004:1234[;gtid=<set>]); with a GTID\n"
"                         set the server is asked by GTID, so a promoted\n"
"                         replica resumes too\n"
"      --start-token N    the number stored with that text: positions and\n"
"                         versions continue from it (default: the text's\n"
"                         own coordinate)\n"
"      --new-stream       the tables are being loaded again because the\n"
"                         position was lost (accepted; without --start-pos\n"
"                         the stream starts at the current position anyway)\n"
"  -h, --help             this text\n"
"  -V, --version          the version\n"
"\n"
"file descriptors:\n"
"  stdout  event frames (row, truncate, commit, pos, drift)\n"
"  stderr  log lines (P2O_LOG_LEVEL=debug|info|warn|error)\n"
"  fd 3    optional control channel: hello and stats out, acks in (only\n"
"          recorded: the server keeps no consumer position)\n"
"\n"
"SIGTERM/SIGINT: stop reading, flush and close stdout, wait for fd 3 to\n"
"close (up to 30 s), exit 0.\n"
"\n"
"exit codes:\n"
"  0   clean stop\n"
"  1   internal error (temporary)\n"
"  64  bad command line\n"
"  65  malformed data (a control frame, a binlog event)\n"
"  66  the checkpoint is past the end of the server's binlog (a restarted\n"
"      history, or another server without GTIDs): sync into a fresh index\n"
"  69  refused: log_bin off, binlog_format or binlog_row_image not\n"
"      ROW/FULL, binlog_row_value_options=PARTIAL_JSON, a missing\n"
"      privilege, a table missing or without a key (and not\n"
"      append_only), a proxy in front of the server\n"
"  67  the binlog file the checkpoint needs was purged\n"
"  75  connection refused or lost, the server restarted (temporary)\n"
"  77  authentication failed\n"
"  78  invalid configuration\n";

static const struct stage_spec spec =
    CAPTURE_STAGE_SPEC("capture-mysql", usage_text);

static void
on_warn(const char *msg)
{
	log_warnx("%s", msg);
}

/*
 * The start the command line names: *start parsed from --start-pos and
 * *token the number positions continue from (the text's own coordinate
 * without --start-token). A token below the coordinate would make the
 * generation base negative: a checkpoint that disagrees with itself.
 */
static int
check_start(const struct capture_args *a, struct mypos *start, uint64_t *token,
    struct p2o_err *e)
{
	uint64_t coord = 0;
	char err[512];

	memset(start, 0, sizeof(*start));
	if (a->pos != NULL) {
		if (mypos_parse(start, a->pos, err, sizeof(err)) == -1)
			return p2o_fail(e, P2O_EXIT_USAGE, "--start-pos: %s",
			    err);
		coord = mypos_coord((uint64_t)binlog_file_index(start->file,
		    strlen(start->file)), start->offset);
	}
	return capture_start_token(a, coord, 0, token, e);
}

int
main(int argc, char **argv)
{
	struct capture_args a = { 0 };
	struct stage st;
	struct p2o_err e;
	struct config cfg;
	struct server src;
	struct my_table *tables = NULL;
	struct my_catalog cat;
	struct mypos start;
	struct txn txn;
	struct dumpstream ds;
	struct capture cap;
	struct nestread *nr;
	uint64_t token;
	int i, ntables;

	if (stage_begin(&st, &spec, &a, argc, argv, &e) != STAGE_RUN ||
	    check_start(&a, &start, &token, &e) == -1)
		exit(stage_report(&e));
	/* the source's secret only: the target is the writer's */
	if (config_load_with(st.cfgpath, CONFIG_SECRET_SOURCE, &cfg, &e) == -1)
		exit(stage_report(&e));
	if (strcmp(cfg.source->capture, "capture-mysql") != 0)
		fatalx(P2O_EXIT_CONFIG, "%s: the source is a %s url, which %s "
		    "reads; capture-mysql reads MySQL and MariaDB only",
		    st.cfgpath, cfg.source->noun, cfg.source->capture);
	if (config_traces_start(&cfg, "capture-mysql", &e) == -1)
		exit(stage_report(&e));

	server_init(&src);
	if (server_connect(&src, &cfg) == -1 || server_check(&src) == -1 ||
	    server_tables(&src, &cfg, &tables) == -1)
		exit(stage_report(&src.err));
	if (a.pos == NULL) {
		if (server_now(&src) == -1)
			exit(stage_report(&src.err));
		log_info("starting at the server's position %s:%u", src.file,
		    src.offset);
	} else {
		if (server_check_resume(&src, &start) == -1)
			exit(stage_report(&src.err));
		if (start.has_gtid && !src.gtid_mode_on)
			fatalx(P2O_EXIT_REFUSED, "--start-pos resumes by GTID, "
			    "but the server's gtid_mode is not ON");
		log_info("resuming after %s (token %" PRIu64 ")", a.pos,
		    token);
	}

	/* collections: their tables join the binlog's, and a connection of
	 * their own re-reads parents at each commit */
	ntables = cfg.nsyncs;
	if ((nr = mynestread_open(&cfg, src.sql, src.mariadb, &tables,
	    &ntables, &e)) == NULL && e.code != 0)
		exit(stage_report(&e));

	cat.reload = server_reload;
	cat.ctx = &src;
	txn_init(&txn, tables, ntables, cat);
	if (nr != NULL) {
		txn.nest.nsections = cfg.nsyncs;
		txn.nest.row = mynestread_row;
		txn.nest.commit = mynestread_commit;
		txn.nest.truncate = mynestread_truncate;
		txn.nest.ctx = nr;
	}
	txn.warn = on_warn;
	txn.crc_before_fde = src.crc;
	if (a.pos != NULL)
		txn_start(&txn, &start, token, NULL, 0);
	else
		txn_start(&txn, NULL, 0, src.file, src.offset);
	if (server_start_dump(&src, &cfg, a.pos ? &start : NULL) == -1)
		exit(stage_report(&src.err));
	/* hello means ready: only once the server streams */
	if (stage_hello(&st, &e) == -1)
		exit(stage_report(&e));

	dumpstream_init(&ds, &src, &txn);
	capture_init(&cap, &dumpstream_ops, &ds, &st.ctl,
	    stage_flag(STAGE_TERM));
	if (capture_run(&cap) != 0)
		exit(stage_report(&cap.err));

	capture_release(&cap);
	nestread_close(nr);
	txn_release(&txn);
	for (i = 0; i < ntables; i++)
		my_table_release(&tables[i]);
	free(tables);
	server_release(&src);
	mypos_release(&start);
	trace_stop(TRACE_STOP_MS);
	stage_end(&st);
	config_release(&cfg);
	return P2O_EXIT_OK;
}
