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
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "config.h"
#include "ctl.h"
#include "log.h"
#include "p2o.h"
#include "server.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
on_warn(const char *msg)
{
	log_warnx("%s", msg);
}

static void
usage(FILE *f)
{
	fputs(
"usage: capture-mysql -c config.yaml [--start-pos TEXT --start-token N]\n"
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
"      append_only), a purged\n"
"      binlog, a proxy in front of the server\n"
"  75  connection refused or lost, the server restarted (temporary)\n"
"  77  authentication failed\n"
"  78  invalid configuration\n", f);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "start-pos", required_argument, NULL, 'L' },
		{ "start-token", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *pos_arg = NULL, *token_arg = NULL;
	struct sigaction sa;
	struct config cfg;
	struct ctl ctl;
	struct server src;
	struct my_table *tables = NULL;
	struct my_catalog cat;
	struct mypos start;
	struct txn txn;
	struct dumpstream ds;
	struct capture cap;
	uint64_t token = 0, coord;
	char err[512], *end;
	int ch, rc, i;

	log_init("capture-mysql");
	ctl_claim();
	while ((ch = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'L':
			pos_arg = optarg;
			break;
		case 'T':
			token_arg = optarg;
			break;
		case 'h':
			usage(stdout);
			return P2O_EXIT_OK;
		case 'V':
			printf("capture-mysql %s\n", P2O_VERSION);
			return P2O_EXIT_OK;
		default:
			usage(stderr);
			return P2O_EXIT_USAGE;
		}
	}
	if (path == NULL || optind != argc) {
		usage(stderr);
		return P2O_EXIT_USAGE;
	}
	memset(&start, 0, sizeof(start));
	if (pos_arg != NULL && mypos_parse(&start, pos_arg, err,
	    sizeof(err)) == -1)
		fatalx(P2O_EXIT_USAGE, "--start-pos: %s", err);
	if (pos_arg != NULL)
		coord = mypos_coord((uint64_t)binlog_file_index(start.file,
		    strlen(start.file)), start.offset);
	else
		coord = 0;
	token = coord;
	if (token_arg != NULL) {
		errno = 0;
		token = strtoull(token_arg, &end, 10);
		if (pos_arg == NULL || errno || *end || end == token_arg ||
		    *token_arg == '-')
			fatalx(P2O_EXIT_USAGE, "--start-token '%s' needs "
			    "--start-pos and must be a number", token_arg);
		/* generation base = token - coordinate: never negative */
		if (token < coord)
			fatalx(P2O_EXIT_CHECKPOINT, "--start-token %" PRIu64
			    " is below the coordinate of --start-pos (%" PRIu64
			    "): refusing a checkpoint that disagrees with "
			    "itself", token, coord);
	}

	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (config_load(path, &cfg, err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s", err);
	if (cfg.source_kind != SOURCE_MYSQL)
		fatalx(P2O_EXIT_CONFIG, "%s: the source is not a mysql:// or "
		    "mariadb:// url; capture-mysql reads MySQL and MariaDB "
		    "only", path);

	server_init(&src);
	if (server_connect(&src, &cfg) == -1 || server_check(&src) == -1 ||
	    server_tables(&src, &cfg, &tables) == -1)
		fatalx(src.err.code, "%s", src.err.msg);
	if (pos_arg == NULL) {
		if (server_now(&src) == -1)
			fatalx(src.err.code, "%s", src.err.msg);
		log_info("starting at the server's position %s:%u", src.file,
		    src.offset);
	} else {
		if (!start.has_gtid && server_check_resume(&src, &start) == -1)
			fatalx(src.err.code, "%s", src.err.msg);
		if (start.has_gtid && !src.gtid_mode_on)
			fatalx(P2O_EXIT_REFUSED, "--start-pos resumes by GTID, "
			    "but the server's gtid_mode is not ON");
		log_info("resuming after %s (token %" PRIu64 ")", pos_arg,
		    token);
	}

	cat.reload = server_reload;
	cat.ctx = &src;
	txn_init(&txn, tables, cfg.nsyncs, cat);
	txn.warn = on_warn;
	txn.crc_before_fde = src.crc;
	if (pos_arg != NULL)
		txn_start(&txn, &start, token, NULL, 0);
	else
		txn_start(&txn, NULL, 0, src.file, src.offset);
	if (server_start_dump(&src, &cfg, pos_arg ? &start : NULL) == -1)
		fatalx(src.err.code, "%s", src.err.msg);
	/* hello means ready: only once the server streams */
	if (ctl_open(&ctl, "capture-mysql") == -1)
		fatal(P2O_EXIT_TEMPFAIL, "control fd 3: sending hello");

	dumpstream_init(&ds, &src, &txn);
	capture_init(&cap, &dumpstream_ops, &ds, &ctl, &stop);
	if ((rc = capture_run(&cap)) != 0)
		fatalx(rc, "%s", cap.err.msg);

	capture_release(&cap);
	txn_release(&txn);
	for (i = 0; i < cfg.nsyncs; i++)
		my_table_release(&tables[i]);
	free(tables);
	server_release(&src);
	mypos_release(&start);
	ctl_close(&ctl);
	config_release(&cfg);
	return P2O_EXIT_OK;
}
