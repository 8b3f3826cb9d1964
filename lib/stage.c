/*
 * stage.c - the skeleton of a pg2osync program (stage.h): the command line
 * every tool reads the same way, its signals as flags and a self-pipe, the
 * hello and the stats timer. Owns the process's signal handlers, which
 * only set a flag and write a byte; what a signal means is the program's.
 * Never exits: main.c exits with what stage_report gives it. It exits
 * rather than returns from main, so that what main still holds stays
 * reachable and LeakSanitizer does not call it leaked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "log.h"
#include "p2o.h"
#include "stage.h"
#include "xio.h"

/* one set per process: signal dispositions are per process too */
static volatile sig_atomic_t flags[STAGE_NSIG];
static int self_pipe[2] = { -1, -1 };

static const int signos[STAGE_NSIG][2] = {
	[STAGE_TERM] = { SIGTERM, SIGINT },
	[STAGE_HUP] = { SIGHUP, 0 },
	[STAGE_CHLD] = { SIGCHLD, 0 },
};

static void
on_signal(int sig)
{
	int saved = errno, s, i;

	for (s = 0; s < STAGE_NSIG; s++)
		for (i = 0; i < 2; i++)
			if (signos[s][i] == sig)
				flags[s] = 1;
	/* a full pipe already wakes the poll: the byte may be dropped */
	if (self_pipe[1] != -1)
		(void)!write(self_pipe[1], "", 1);
	errno = saved;
}

static int
install(unsigned mask, struct p2o_err *e)
{
	struct sigaction sa;
	int s, i;

	if (mask == 0)
		return 0;
	if (self_pipe[0] == -1 &&
	    pipe2(self_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		return p2o_fail(e, P2O_EXIT_INTERNAL, "could not create the "
		    "self-pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (s = 0; s < STAGE_NSIG; s++) {
		if (!(mask & STAGE_SIG(s)))
			continue;
		/* no SA_RESTART: a read blocked in a client library returns
		 * EINTR, so the program sees the signal there too */
		sa.sa_flags = s == STAGE_CHLD ? SA_NOCLDSTOP : 0;
		for (i = 0; i < 2; i++)
			if (signos[s][i] != 0 &&
			    sigaction(signos[s][i], &sa, NULL) == -1)
				return p2o_fail(e, P2O_EXIT_INTERNAL, "could not "
				    "catch signal %d: %s", signos[s][i],
				    strerror(errno));
	}
	return 0;
}

static void
usage_to(const struct stage_spec *spec, FILE *f)
{
	fputs(spec->usage, f);
	fflush(f);
}

/* --config-dir's key: beyond any short option */
#define STAGE_OPT_CONFIG_DIR	0x7f10

/* the common options first, then the program's own, in one table */
static struct option *
options(const struct stage_spec *spec, char *shortopts, size_t len)
{
	static const struct option common[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
	};
	static const struct option dir = { "config-dir", required_argument,
	    NULL, STAGE_OPT_CONFIG_DIR };
	struct option *all;
	size_t n = 0, i, k = 3;

	while (spec->longopts && spec->longopts[n].name)
		n++;
	all = xcalloc(n + 5, sizeof(*all));
	memcpy(all, common, sizeof(common));
	if (spec->config_dir)
		all[k++] = dir;
	for (i = 0; i < n; i++)
		all[k + i] = spec->longopts[i];
	snprintf(shortopts, len, "c:hV%s", spec->shortopts ?
	    spec->shortopts : "");
	return all;
}

int
stage_begin(struct stage *st, const struct stage_spec *spec, void *arg,
    int argc, char **argv, struct p2o_err *e)
{
	struct option *longopts;
	char shortopts[64];
	int ch, rc = STAGE_RUN;

	memset(st, 0, sizeof(*st));
	st->spec = spec;
	st->ctl.fd = -1;
	p2o_err_clear(e);
	log_init(spec->tool);
	/* before any descriptor is opened, or a connection could land on
	 * fd 3 and be taken for the supervisor's channel */
	if (spec->control)
		ctl_claim();
	/* a reader gone is EPIPE on the write, handled where it happens */
	signal(SIGPIPE, SIG_IGN);

	longopts = options(spec, shortopts, sizeof(shortopts));
	opterr = 1;
	optind = 1;
	while (rc == STAGE_RUN &&
	    (ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			st->cfgpath = optarg;
			break;
		case STAGE_OPT_CONFIG_DIR:
			st->cfgdir = optarg;
			break;
		case 'h':
			usage_to(spec, stdout);
			rc = STAGE_EXIT;
			break;
		case 'V':
			printf("%s %s\n", spec->tool, P2O_VERSION);
			fflush(stdout);
			rc = STAGE_EXIT;
			break;
		case '?':
		case ':':
			/* getopt said what was wrong */
			usage_to(spec, stderr);
			e->code = P2O_EXIT_USAGE;
			rc = STAGE_EXIT;
			break;
		default:
			if (spec->option == NULL ||
			    spec->option(arg, ch, optarg, e) == -1) {
				if (e->code == 0)
					p2o_fail(e, P2O_EXIT_USAGE, "-%c: not "
					    "an option of %s", ch, spec->tool);
				rc = STAGE_EXIT;
			}
			break;
		}
	}
	free(longopts);
	if (rc != STAGE_RUN)
		return rc;
	st->operands = argv + optind;
	st->noperands = argc - optind;
	if (st->cfgpath != NULL && st->cfgdir != NULL) {
		p2o_fail(e, P2O_EXIT_USAGE, "-c and --config-dir both name the "
		    "configuration: give one");
		return STAGE_EXIT;
	}
	if ((st->cfgpath == NULL && st->cfgdir == NULL) ||
	    st->noperands > spec->operands) {
		usage_to(spec, stderr);
		e->code = P2O_EXIT_USAGE;
		return STAGE_EXIT;
	}
	if (install(spec->signals, e) == -1)
		return STAGE_EXIT;
	st->stats_at = now_ms();
	return STAGE_RUN;
}

int
stage_report(const struct p2o_err *e)
{
	if (e->msg[0] != '\0')
		log_error("%s", e->msg);
	return e->code;
}

int
stage_sigfd(void)
{
	return self_pipe[0];
}

void
stage_sigfd_drain(void)
{
	char buf[64];

	if (self_pipe[0] == -1)
		return;
	while (read(self_pipe[0], buf, sizeof(buf)) > 0)
		;
}

int
stage_signalled(enum stage_sig s)
{
	if (!flags[s])
		return 0;
	flags[s] = 0;
	return 1;
}

volatile sig_atomic_t *
stage_flag(enum stage_sig s)
{
	return &flags[s];
}

int
stage_hello(struct stage *st, struct p2o_err *e)
{
	if (!st->spec->control)
		return 0;
	if (ctl_open(&st->ctl, st->spec->tool) == -1)
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "control fd 3: could not "
		    "say hello: %s", strerror(errno));
	return 0;
}

int
stage_stats_due(const struct stage *st, long long now)
{
	return st->spec->stats_ms > 0 && ctl_active(&st->ctl) &&
	    now >= st->stats_at;
}

void
stage_stats_sent(struct stage *st, long long now)
{
	st->stats_at = now + st->spec->stats_ms;
}

int
stage_stats_wait(const struct stage *st, long long now, int changed)
{
	if (st->spec->stats_ms <= 0 || !ctl_active(&st->ctl) || !changed)
		return -1;
	return st->stats_at > now ? (int)(st->stats_at - now) : 0;
}

void
stage_stats_now(struct stage *st)
{
	st->stats_at = 0;
}

void
stage_end(struct stage *st)
{
	if (st->spec && st->spec->control)
		ctl_close(&st->ctl);
}
