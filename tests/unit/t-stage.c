/*
 * t-stage - the stage skeleton (lib/stage.c): the common options beside a
 * program's own, what a bad command line returns, --help and --version on
 * stdout, operands, signals as flags and a byte on the self-pipe (SIGINT
 * counting as SIGTERM), the hello and the stats timer stand-alone.
 */
#include <sys/wait.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2o.h"
#include "stage.h"
#include "xio.h"
#include "tap.h"

/* a program with one option of its own, --depth 1..9 */
struct args {
	int	 depth;
	int	 seen;	/* how many times option() was called */
};

static int
option(void *arg, int ch, const char *val, struct p2o_err *e)
{
	struct args *a = arg;

	a->seen++;
	a->depth = ch == 'D' && val[0] >= '1' && val[0] <= '9' &&
	    val[1] == '\0' ? val[0] - '0' : 0;
	return a->depth ? 0 : p2o_fail(e, P2O_EXIT_USAGE, "--depth takes "
	    "1 to 9, not '%s'", val);
}

static const struct option longopts[] = {
	{ "depth", required_argument, NULL, 'D' },
	{ NULL, 0, NULL, 0 }
};

static const struct stage_spec spec = {
	.tool = "t-stage",
	.usage = "usage: t-stage -c FILE [--depth N] [get]\n",
	.longopts = longopts,
	.option = option,
	.operands = 1,
	.signals = STAGE_SIG(STAGE_TERM) | STAGE_SIG(STAGE_HUP),
	.control = 0,
	.stats_ms = 1000,
};

/* stage_begin on a command line; its return, the code, what it printed */
static int
begin(struct stage *st, struct args *a, struct p2o_err *e, char *out,
    size_t outlen, ...)
{
	char *argv[16];
	va_list ap;
	int argc = 0, p[2], saved, r;
	ssize_t n;

	argv[argc++] = "t-stage";
	va_start(ap, outlen);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	memset(a, 0, sizeof(*a));
	/* what it writes to stdout is caught, not mixed into the TAP */
	fflush(stdout);
	if (pipe(p) == -1 || (saved = dup(1)) == -1)
		BAIL_OUT("pipe");
	dup2(p[1], 1);
	close(p[1]);
	r = stage_begin(st, &spec, a, argc, argv, e);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = read(p[0], out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	close(p[0]);
	return r;
}

static void
test_command_line(void)
{
	struct stage st;
	struct args a;
	struct p2o_err e;
	char out[512];

	ok(begin(&st, &a, &e, out, sizeof(out), "-c", "f.yaml", NULL) ==
	    STAGE_RUN && strcmp(st.cfgpath, "f.yaml") == 0 &&
	    st.noperands == 0, "-c FILE: run, with the configuration's path");
	ok(begin(&st, &a, &e, out, sizeof(out), "--config=g.yaml",
	    "--depth", "7", "get", NULL) == STAGE_RUN &&
	    strcmp(st.cfgpath, "g.yaml") == 0 && a.depth == 7 && a.seen == 1 &&
	    st.noperands == 1 && strcmp(st.operands[0], "get") == 0,
	    "--config, the program's own option and an operand");
	ok(begin(&st, &a, &e, out, sizeof(out), "--help", NULL) == STAGE_EXIT &&
	    e.code == 0 && e.msg[0] == '\0' && strcmp(out, spec.usage) == 0,
	    "--help: the usage on stdout, exit 0");
	ok(begin(&st, &a, &e, out, sizeof(out), "-V", NULL) == STAGE_EXIT &&
	    e.code == 0 && strcmp(out, "t-stage " P2O_VERSION "\n") == 0,
	    "-V: the version on stdout, exit 0: %s", out);
	ok(begin(&st, &a, &e, out, sizeof(out), NULL) == STAGE_EXIT &&
	    e.code == P2O_EXIT_USAGE && out[0] == '\0',
	    "no -c: a bad command line, 64 (the usage goes to stderr)");
	ok(begin(&st, &a, &e, out, sizeof(out), "-c", "f", "--nope",
	    NULL) == STAGE_EXIT && e.code == P2O_EXIT_USAGE,
	    "an unknown option: 64");
	ok(begin(&st, &a, &e, out, sizeof(out), "-c", "f", "--depth", "12",
	    NULL) == STAGE_EXIT && e.code == P2O_EXIT_USAGE &&
	    strcmp(e.msg, "--depth takes 1 to 9, not '12'") == 0,
	    "the program's option refused: its code and message");
	ok(begin(&st, &a, &e, out, sizeof(out), "-c", "f", "get", "put",
	    NULL) == STAGE_EXIT && e.code == P2O_EXIT_USAGE,
	    "more operands than the program takes: 64");
}

static int
readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void
test_signals(void)
{
	struct stage st;
	struct args a;
	struct p2o_err e;
	char out[64];

	begin(&st, &a, &e, out, sizeof(out), "-c", "f", NULL);
	ok(stage_sigfd() >= 0 && !readable(stage_sigfd()),
	    "a self-pipe, empty");
	raise(SIGHUP);
	ok(readable(stage_sigfd()), "SIGHUP writes a byte to it");
	stage_sigfd_drain();
	ok(!readable(stage_sigfd()), "drained");
	ok(stage_signalled(STAGE_HUP) == 1 && stage_signalled(STAGE_HUP) == 0,
	    "its flag is taken once");
	ok(stage_signalled(STAGE_TERM) == 0, "no other flag set");
	raise(SIGINT);
	ok(stage_signalled(STAGE_TERM) == 1, "SIGINT counts as SIGTERM");
	raise(SIGTERM);
	ok(*stage_flag(STAGE_TERM) == 1, "the flag itself, for a module's loop");
	stage_sigfd_drain();
	ok(stage_signalled(STAGE_TERM) == 1, "and SIGTERM sets it");
	ok(stage_hello(&st, &e) == 0 && !ctl_active(&st.ctl),
	    "stand-alone: the hello is nothing, and succeeds");
	is_int(stage_stats_wait(&st, now_ms(), 1), -1,
	    "no stats timer without a channel");
	ok(!stage_stats_due(&st, now_ms()), "nor any stats due");
	is_int(stage_report(&e), 0, "stage_report of no error: 0");
	p2o_fail(&e, P2O_EXIT_CONFIG, "cfg.yaml:1: the configuration is empty");
	is_int(stage_report(&e), P2O_EXIT_CONFIG, "of an error: its code");
	stage_end(&st);
}

int
main(void)
{
	test_command_line();
	test_signals();
	return done_testing();
}
