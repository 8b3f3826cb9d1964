/*
 * loader - copy the rows PostgreSQL, MySQL or MariaDB tables already hold,
 * as copy rows and load marks on stdout for the shaper's load descriptor
 * (framing.md §4), beside the change stream.
 *
 * Reads top to bottom: load the configuration, take the operations of
 * its kind of source, say hello on fd 3 and read the load frame
 * (supervised) or take every configured table (stand-alone), open the
 * source's connections, load the tables one after the other, send the
 * last stats, exit 0 - which the supervisor reads as "the load is
 * finished". Only this file exits; every exit code is one of framing.md
 * §8.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "stage.h"
#include "where.h"
#include "xio.h"
#include "loader.h"

static const char usage_text[] =
"usage: loader -c config.yaml [--range-rows N]\n"
"       loader -c config.yaml --table T [--where P] [--checkpoint POS:TEXT]\n"
"       loader -c config.yaml --table T --count\n"
"\n"
"Reads the rows the configured tables hold now and writes them as copy\n"
"rows, with load marks, for the shaper's --load-fd. PostgreSQL tables\n"
"are read in ranges of their key sampled in advance, a mark after each\n"
"wave of ranges; MySQL and MariaDB tables in chunks of their key, one\n"
"statement and one mark each.\n"
"\n"
"  -c, --config FILE    the pg2osync configuration; PostgreSQL reads\n"
"                       source.load_workers ranges at once (one\n"
"                       connection each); MySQL reads one chunk at a\n"
"                       time (the configuration refuses\n"
"                       load_workers above 1 there)\n"
"      --range-rows N   PostgreSQL: cut tables into ranges of about N\n"
"                       rows (default 250000); a table no larger is read\n"
"                       as one range. Only a table without stored\n"
"                       progress is cut. MySQL: N rows a chunk (default\n"
"                       50000).\n"
"      --table T        stand-alone: only sync section T (its name or its\n"
"                       table), for pg2osync resnapshot\n"
"      --where P        stand-alone, with --table: only the rows matching\n"
"                       P (the syntax of a section's where) are read; it\n"
"                       is added to the read's SQL, never given to the\n"
"                       shaper (MySQL: refused when the server cannot run\n"
"                       it exactly as the shaper would)\n"
"      --checkpoint POS:TEXT\n"
"                       stand-alone, MySQL: the stored checkpoint (its\n"
"                       position and text), whose generation base the\n"
"                       copies' versions are counted from, as a\n"
"                       supervised load's are\n"
"      --count          with --table: print the number of rows a load of\n"
"                       it would copy now (its filters applied, counted\n"
"                       by the server) and read none\n"
"  -h, --help           this text\n"
"  -V, --version        the version\n"
"\n"
"file descriptors:\n"
"  stdout  copy rows and marks (for shaper --load-fd)\n"
"  stderr  log lines (P2O_LOG_LEVEL=debug|info|warn|error); on a terminal,\n"
"          stand-alone, one progress line per table\n"
"  fd 3    optional control channel: hello and stats out; one load frame\n"
"          (the tables, each with the progress an earlier run's mark\n"
"          carried) and a confirmation of each mark in. A mark is\n"
"          written only after the previous one is confirmed (the next\n"
"          PostgreSQL wave is read meanwhile; a MySQL chunk waits), and\n"
"          a table ends with its last mark confirmed. Without fd 3\n"
"          every configured table is loaded from the start and nothing\n"
"          is waited for.\n"
"\n"
"PostgreSQL: between waves the load pauses while the replication slot's\n"
"wal_status is not 'reserved'; supervised, the slot must exist.\n"
"\n"
"exit codes:\n"
"  0   every table loaded (supervised: every mark confirmed)\n"
"  1   internal error (temporary)\n"
"  64  bad command line\n"
"  65  a malformed or unexpected frame on fd 3\n"
"  66  the checkpoint in the load frame disagrees with itself (MySQL)\n"
"  69  refused: a table missing, without a key or not readable, the slot\n"
"      missing (supervised) or lost, a server older than 12; MySQL: a\n"
"      key column that cannot be read in order (float, enum, set, bit)\n"
"  75  the server unreachable or lost, fd 3 or stdout closed (temporary)\n"
"  77  authentication failed\n"
"  78  invalid configuration\n";

static int
option(void *arg, int ch, const char *val, struct p2o_err *e)
{
	struct loader *ld = arg;
	char *end, why[512];

	switch (ch) {
	case 'T':
		ld->only = val;
		return 0;
	case 'W':
		free(ld->scope_text);
		where_free(ld->scope);
		ld->scope_text = xstrdup(val);
		if ((ld->scope = where_parse(val, why, sizeof(why))) == NULL)
			return p2o_fail(e, P2O_EXIT_USAGE, "--where: %s", why);
		return 0;
	case 'N':
		ld->count_only = 1;
		return 0;
	case 'K':
		/* POS:TEXT - the position is digits, the text is the rest */
		errno = 0;
		ld->cp_pos = strtoull(val, &end, 10);
		if (errno || end == val || *end != ':' || *val == '-')
			return p2o_fail(e, P2O_EXIT_USAGE, "--checkpoint '%s' "
			    "is not POS:TEXT", val);
		free(ld->cp_text);
		ld->cp_text = xstrdup(end + 1);
		ld->cp_present = 1;
		return 0;
	}
	errno = 0;
	ld->range_rows = strtoull(val, &end, 10);
	if (errno || *end || end == val || *val == '-' ||
	    ld->range_rows == 0)
		return p2o_fail(e, P2O_EXIT_USAGE, "--range-rows '%s' is not a "
		    "number of rows", val);
	return 0;
}

static const struct option longopts[] = {
	{ "range-rows", required_argument, NULL, 'R' },
	{ "table", required_argument, NULL, 'T' },
	{ "where", required_argument, NULL, 'W' },
	{ "checkpoint", required_argument, NULL, 'K' },
	{ "count", no_argument, NULL, 'N' },
	{ NULL, 0, NULL, 0 }
};

static const struct stage_spec spec = {
	.tool = "loader",
	.usage = usage_text,
	.longopts = longopts,
	.option = option,
	/* no signal of its own: SIGTERM ends it where it is, and what it
	 * read but did not see confirmed is read again */
	.control = 1,
	/* no stats timer of the skeleton's: the load paces its stats
	 * between its own waits (control.c) */
	.stats_ms = 0,
};

/* --count: the rows a load of the table would copy, on stdout */
static int
count_table(struct loader *ld, const struct sync_section *sec)
{
	struct load_view *v = NULL;
	uint64_t n;
	int rc = -1;

	if (ld->ops->describe(ld, sec, &v) == 0 &&
	    ld->ops->exact(ld, v, &n) == 0) {
		printf("%llu\n", (unsigned long long)n);
		rc = fflush(stdout) == 0 ? 0 : p2o_fail(&ld->err,
		    P2O_EXIT_TEMPFAIL, "stdout: %s", strerror(errno));
	}
	ld->ops->release(v);
	return rc;
}

static void
jobs_release(struct ld_job *jobs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(jobs[i].table);
		free(jobs[i].progress);
	}
	free(jobs);
}

int
main(int argc, char **argv)
{
	static struct loader ld;
	const struct sync_section *sec;
	struct stage st;
	struct p2o_err e;
	struct config cfg;
	struct ld_job *jobs = NULL;
	int i, njobs = 0;

	if (stage_begin(&st, &spec, &ld, argc, argv, &e) != STAGE_RUN)
		exit(stage_report(&e));
	/* the source's secret only: the target is the writer's */
	if (config_load_with(st.cfgpath, CONFIG_SECRET_SOURCE, &cfg, &e) == -1)
		exit(stage_report(&e));
	if ((ld.ops = load_ops_for(cfg.source)) == NULL)
		fatalx(P2O_EXIT_CONFIG, "%s: the loader reads no source of "
		    "this kind", st.cfgpath);
	if (ld.range_rows == 0)
		ld.range_rows = ld.ops->rows_default;
	ld.cfg = &cfg;
	ld.ctl = &st.ctl;
	ld.out_fd = P2O_FD_OUT;
	if (stage_hello(&st, &e) == -1)
		exit(stage_report(&e));
	ld.supervised = ctl_active(&st.ctl);
	ld.meter.tty = !ld.supervised && isatty(P2O_FD_LOG);
	ld.meter.unit = ld.ops->unit;
	ld.meter.cap = cfg.load_max_rows_per_sec;
	pace_init(&ld.pace, cfg.load_max_rows_per_sec, now_us_mono());

	if (ld.supervised && (ld.only || ld.scope || ld.cp_present ||
	    ld.count_only))
		fatalx(P2O_EXIT_USAGE, "--table, --where and --checkpoint are "
		    "for a stand-alone load: the load frame on fd 3 says what "
		    "to load");
	if ((ld.scope || ld.cp_present || ld.count_only) && ld.only == NULL)
		fatalx(P2O_EXIT_USAGE, "--where, --checkpoint and --count are "
		    "about one table: give it with --table");
	if (ld.cp_present && !cfg.source->start_held)
		fatalx(P2O_EXIT_USAGE, "--checkpoint: a %s copy is versioned "
		    "by the source's position alone", cfg.source->title);
	if (ld.supervised) {
		if (control_read_load(&ld, &jobs, &njobs) == -1)
			exit(stage_report(&ld.err));
		for (i = 0; i < njobs; i++)
			if (config_find_rel(&cfg, jobs[i].table) == NULL)
				fatalx(P2O_EXIT_DATA, "control fd 3: the load "
				    "names table '%s', which no sync section "
				    "configures", jobs[i].table);
	} else if (ld.only != NULL) {
		if ((sec = config_find_named(&cfg, ld.only)) == NULL)
			fatalx(P2O_EXIT_USAGE, "--table '%s': no sync section "
			    "is named so or reads that table", ld.only);
		jobs = xcalloc(1, sizeof(*jobs));
		jobs[njobs++].table = xstrdup(sec->rel);
	} else {
		jobs = xcalloc(cfg.nsyncs, sizeof(*jobs));
		for (njobs = 0; njobs < cfg.nsyncs; njobs++)
			jobs[njobs].table = xstrdup(cfg.syncs[njobs].rel);
	}

	if (njobs > 0 && ld.ops->open(&ld) == -1)
		exit(stage_report(&ld.err));
	ld.ahead = xcalloc((size_t)njobs + 1, sizeof(*ld.ahead));
	for (i = 0; i < njobs; i++)
		ld.ahead[ld.nahead++] = config_find_rel(&cfg, jobs[i].table);
	if (ld.count_only) {
		if (count_table(&ld, config_find_rel(&cfg, jobs[0].table)) ==
		    -1)
			exit(stage_report(&ld.err));
	}
	for (i = 0; i < njobs && !ld.count_only; i++) {
		sec = config_find_rel(&cfg, jobs[i].table);
		if (load_table(&ld, sec, jobs[i].progress) == -1) {
			meter_break(&ld.meter);
			exit(stage_report(&ld.err));
		}
	}
	/* every table is loaded once its last mark is stored */
	if (control_wait_confirm(&ld) == -1 || control_stats(&ld, 1) == -1)
		exit(stage_report(&ld.err));

	ld.ops->close(&ld);
	free(ld.cp_text);
	free(ld.scope_text);
	where_free(ld.scope);
	for (i = 0; i < ld.nstats; i++)
		free(ld.stats[i].rel);
	free(ld.stats);
	strindex_release(&ld.statidx);
	jobs_release(jobs, njobs);
	free(ld.ahead);
	sbuf_release(&ld.out);
	sbuf_release(&ld.json);
	stage_end(&st);
	config_release(&cfg);
	return P2O_EXIT_OK;
}
