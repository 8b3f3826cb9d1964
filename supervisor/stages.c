/*
 * stages.c - the stages of a pipeline as data: which program each runs,
 * which stage feeds its stdin, what a tap on that boundary is called,
 * whether it must say hello, which control frames it receives, which
 * secrets it reads from the environment, and the argv it is started with. main.c wires and runs whatever this table
 * says; adding a stage is a row here, not a new branch in the loop.
 * Never starts a process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "supervisor.h"

const struct sv_stage_def sv_stages[SV_NSTAGES] = {
	/* the checkpoint store: answers on its stdout, started first */
	[SV_CKPT] = { .role = "ckpt", .program = "ckpt", .ctl = SV_CTL_STDIO,
	    .stdin_from = -1, .fd4_from = -1, .after = -1,
	    .secrets = CONFIG_SECRET_TARGET },
	/* slot creation can wait for every running transaction on the
	 * source: its hello may take long and that is not a failure */
	[SV_CAPTURE] = { .role = "capture", .ctl = SV_CTL_FD3,
	    .stdin_from = -1, .fd4_from = -1, .needs_hello = 1,
	    .hello_timeout_s = 600, .gets_ack = 1, .after = -1,
	    .secrets = CONFIG_SECRET_SOURCE },
	/* only for tables whose load is not finished, and only once the
	 * capture streams: the slot must exist before the first range */
	[SV_LOADER] = { .role = "loader", .program = "loader",
	    .ctl = SV_CTL_FD3, .stdin_from = -1, .fd4_from = -1,
	    .needs_hello = 1, .hello_timeout_s = 600, .gets_confirm = 1,
	    .optional = 1, .after = SV_CAPTURE, .exit0_done = 1,
	    .secrets = CONFIG_SECRET_SOURCE },
	/* the shaper's channel carries only its counters: a replacement
	 * that never speaks it (a jq filter) is up once it runs */
	[SV_SHAPER] = { .role = "shaper", .program = "shaper",
	    .ctl = SV_CTL_FD3, .stdin_from = SV_CAPTURE, .tap = "events",
	    .fd4_from = SV_LOADER, .fd4_tap = "loads", .after = -1,
	    .secrets = CONFIG_SECRET_TRANSFORM },
	[SV_WRITER] = { .role = "writer", .program = "writer",
	    .ctl = SV_CTL_FD3, .stdin_from = SV_SHAPER, .tap = "ops",
	    .fd4_from = -1, .needs_hello = 1, .hello_timeout_s = 60,
	    .after = -1, .secrets = CONFIG_SECRET_TARGET },
};

int
sv_stage_lookup(const char *role)
{
	int s;

	for (s = 0; s < SV_NSTAGES; s++)
		if (strcmp(sv_stages[s].role, role) == 0)
			return s;
	return -1;
}

int
sv_stage_by_tap(const char *point, int *fd4)
{
	int s;

	for (s = 0; s < SV_NSTAGES; s++) {
		*fd4 = 0;
		if (sv_stages[s].tap && strcmp(sv_stages[s].tap, point) == 0)
			return s;
		*fd4 = 1;
		if (sv_stages[s].fd4_tap &&
		    strcmp(sv_stages[s].fd4_tap, point) == 0)
			return s;
	}
	return -1;
}

int
sv_kid_upstream(int k)
{
	if (k >= SV_TAP4_OF(0))
		return sv_stages[SV_TAPPED(k)].fd4_from;
	if (SV_IS_TAP(k))
		return sv_stages[SV_TAPPED(k)].stdin_from;
	return sv_stages[k].stdin_from;
}

int
sv_kid_depth(int k)
{
	int d = 0;

	while ((k = sv_kid_upstream(k)) >= 0)
		d++;
	return d;
}

unsigned
sv_stage_secrets(void)
{
	unsigned need = 0;
	int s;

	for (s = 0; s < SV_NSTAGES; s++)
		need |= sv_stages[s].secrets;
	return need;
}

const char *
sv_stage_program(enum sv_stage s, const struct config *cf)
{
	return sv_stages[s].program ? sv_stages[s].program :
	    cf->source->capture;
}

char **
sv_stage_argv(enum sv_stage s, const char *path, const char *cfgpath,
    const char *start_text, const char *start_token, int new_stream,
    int load_fd)
{
	char **argv = xcalloc(10, sizeof(*argv));
	int n = 0;

	argv[n++] = xstrdup(path);
	argv[n++] = xstrdup("-c");
	argv[n++] = xstrdup(cfgpath);
	if (s == SV_CKPT)
		argv[n++] = xstrdup("serve");
	/* a position and its text, never a secret: argv is public */
	if (s == SV_CAPTURE && start_text != NULL) {
		argv[n++] = xstrdup("--start-pos");
		argv[n++] = xstrdup(start_text);
		argv[n++] = xstrdup("--start-token");
		argv[n++] = xstrdup(start_token);
	}
	if (s == SV_CAPTURE && new_stream)
		argv[n++] = xstrdup("--new-stream");
	if (load_fd) {
		argv[n++] = xstrdup("--load-fd");
		argv[n++] = xstrdup("4");
	}
	argv[n] = NULL;
	return argv;
}

void
sv_argv_free(char **argv)
{
	char **a;

	if (argv == NULL)
		return;
	for (a = argv; *a; a++)
		free(*a);
	free(argv);
}
