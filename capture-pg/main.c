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
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "capture.h"
#include "capture-pg.h"
#include "config.h"
#include "ctl.h"
#include "log.h"
#include "p2o.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(FILE *f)
{
	fputs(
"usage: capture-pg -c config.yaml [--start-pos X/Y [--start-token N]]\n"
"\n"
"Streams the changes to the tables of the config's sync sections from a\n"
"PostgreSQL logical replication slot and writes event frames to stdout.\n"
"Creates the publication and the slot when they do not exist.\n"
"\n"
"  -c, --config FILE      the pg2osync configuration\n"
"      --start-pos X/Y    resume from this checkpoint position (an LSN);\n"
"                         refused (exit 66) when the slot has confirmed\n"
"                         past it\n"
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
"  66  the checkpoint is behind the slot\n"
"  69  refused: wal_level, missing REPLICATION, a table missing or without\n"
"      a key, a publication or slot that does not match the config\n"
"  75  connection refused or lost (temporary: restart)\n"
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
	const char *path = NULL;
	struct sigaction sa;
	struct config cfg;
	struct ctl ctl;
	struct pgo_decoder dec;
	struct pg_source src;
	struct walstream ws;
	struct capture cap;
	struct slotwatch sw;
	uint64_t start_lsn = 0, token = 0;
	const char *token_arg = NULL;
	char err[512], *end;
	int ch, rc;

	log_init("capture-pg");
	ctl_claim();
	while ((ch = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'L':
			if (lsn_parse(optarg, &start_lsn) == -1 ||
			    start_lsn == 0)
				fatalx(P2O_EXIT_USAGE, "--start-pos '%s' is not "
				    "a position like 0/16B3748", optarg);
			break;
		case 'T':
			token_arg = optarg;
			break;
		case 'h':
			usage(stdout);
			return P2O_EXIT_OK;
		case 'V':
			printf("capture-pg %s\n", P2O_VERSION);
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
	if (token_arg != NULL) {
		errno = 0;
		token = strtoull(token_arg, &end, 10);
		if (start_lsn == 0 || errno || *end || end == token_arg)
			fatalx(P2O_EXIT_USAGE, "--start-token '%s' needs "
			    "--start-pos and must be a number", token_arg);
		if (token != start_lsn)
			fatalx(P2O_EXIT_CHECKPOINT, "--start-token %" PRIu64
			    " is not the position of --start-pos (%" PRIu64
			    "): refusing a checkpoint that disagrees with "
			    "itself", token, start_lsn);
	}

	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (config_load(path, &cfg, err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s", err);
	if (cfg.source_kind != SOURCE_POSTGRES)
		fatalx(P2O_EXIT_CONFIG, "%s: the source is not a postgres "
		    "url; capture-pg reads PostgreSQL only", path);
	pgo_init(&dec);
	slot_init(&src);
	if (slot_connect_sql(&src, &cfg) == -1 ||
	    slot_check_server(&src) == -1 ||
	    slot_check_tables(&src, &cfg, &dec) == -1 ||
	    slot_ensure_publication(&src, &cfg) == -1 ||
	    slot_connect_repl(&src, &cfg) == -1 ||
	    slot_ensure_slot(&src, &cfg) == -1)
		fatalx(src.err.code, "%s", src.err.msg);
	/* the catalogue connection stays, for the slot watch */
	slotwatch_init(&sw, src.sql);
	src.sql = NULL;
	if (slot_start(&src, &cfg, start_lsn) == -1)
		fatalx(src.err.code, "%s", src.err.msg);
	/* hello means ready: only once the slot is streaming, so that a
	 * supervisor reporting healthy means changes are being captured */
	if (ctl_open(&ctl, "capture-pg") == -1)
		fatal(P2O_EXIT_TEMPFAIL, "control fd 3: sending hello");

	walstream_init(&ws, src.repl, &dec, src.start);
	capture_init(&cap, &walstream_ops, &ws, &ctl, &stop);
	cap.side = &sw.side;
	if ((rc = capture_run(&cap)) != 0)
		fatalx(rc, "%s", cap.err.msg);

	capture_release(&cap);
	slotwatch_release(&sw);
	slot_release(&src);
	pgo_release(&dec);
	ctl_close(&ctl);
	config_release(&cfg);
	return P2O_EXIT_OK;
}
