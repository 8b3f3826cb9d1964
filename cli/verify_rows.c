/*
 * verify_rows.c - the rows of the configured tables as the pipeline would
 * render them: the loader reads them (stand-alone: every table from the
 * start, nothing stored) and the shaper shapes them from its load fd,
 * exactly as in a load, so transforms, renames, ids, fan-out and the
 * index a row goes to are the pipeline's own and cannot drift from a
 * copy of them. The index operations come back here frame by frame: a
 * table of any size is never held as text.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "frame.h"
#include "p2o.h"
#include "xio.h"

/* the load fd the shaper reads copy rows from */
#define LOAD_FD	4

/*
 * argv with stdin from in (-1: /dev/null), stdout to out and, when
 * load >= 0, fd LOAD_FD from load. Every other descriptor is closed: an open fd 3 is a
 * control channel to the loader and the shaper, and the target's
 * connection (curl's sockets are not close-on-exec) would be taken for
 * one.
 */
pid_t
rows_spawn(char *const argv[], int in, int out, int load)
{
	char *path = tool_path(argv[0]);
	pid_t pid;
	int fd, null;

	if ((pid = fork()) == 0) {
		if (in >= 0)
			dup2(in, 0);
		else if ((null = open("/dev/null", O_RDONLY)) >= 0)
			dup2(null, 0);
		dup2(out, 1);
		/* dup2 onto itself keeps close-on-exec: clear it */
		if (load == LOAD_FD)
			fcntl(LOAD_FD, F_SETFD, 0);
		else if (load >= 0)
			dup2(load, LOAD_FD);
		for (fd = 3; fd < 1024; fd++)
			if (fd != LOAD_FD || load < 0)
				close(fd);
		/* the programs' progress lines only when asked for */
		if (getenv("P2O_LOG_LEVEL") == NULL)
			setenv("P2O_LOG_LEVEL", "warn", 1);
		execvp(path, argv);
		_exit(127);
	}
	free(path);
	return pid;
}

int
rows_reap(pid_t pid, const char *name, struct p2o_err *err)
{
	int st;

	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return p2o_fail(err, P2O_EXIT_INTERNAL, "waitpid: %s",
			    strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		return p2o_fail(err, WEXITSTATUS(st) == 127 ?
		    P2O_EXIT_INTERNAL : WEXITSTATUS(st), "%s exited %d "
		    "(its message is above)", name, WEXITSTATUS(st));
	return p2o_fail(err, P2O_EXIT_INTERNAL, "%s was killed by signal %d",
	    name, WTERMSIG(st));
}

int
shape_rows(const struct config *cfg, char *const *lextra,
    int (*fn)(void *, const struct frame *, const struct msg_op *),
    void *arg, uint64_t *rows, struct p2o_err *err)
{
	char *largv[16] = { "loader", "-c", cfg->path, NULL };
	char *sargv[] = { "shaper", "-c", cfg->path, "--load-fd", "4", NULL };
	struct frame_reader r;
	struct frame f;
	struct msg_op m;
	struct p2o_err ignored;
	int copy[2], ops[2], rc = 0, st, i;
	pid_t lpid, spid;
	char why[256];

	for (i = 0; lextra != NULL && lextra[i] != NULL && i < 12; i++)
		largv[3 + i] = lextra[i];
	largv[3 + i] = NULL;
	if (pipe2(copy, O_CLOEXEC) == -1 || pipe2(ops, O_CLOEXEC) == -1)
		return p2o_fail(err, P2O_EXIT_INTERNAL, "pipe: %s",
		    strerror(errno));
	lpid = rows_spawn(largv, -1, copy[1], -1);
	spid = rows_spawn(sargv, -1, ops[1], copy[0]);
	close(copy[0]);
	close(copy[1]);
	close(ops[1]);
	if (lpid == -1 || spid == -1) {
		close(ops[0]);
		return p2o_fail(err, P2O_EXIT_INTERNAL, "fork: %s",
		    strerror(errno));
	}
	frame_reader_init(&r, ops[0], "the shaper's output");
	while ((st = frame_read(&r, &f)) == 1) {
		if (!frame_is(&f, "index") && !frame_is(&f, "delete"))
			continue;
		if (msg_read_op(&f, &m, why, sizeof(why)) == -1) {
			rc = p2o_fail(err, P2O_EXIT_DATA, "the shaper's "
			    "output: %s", why);
			break;
		}
		if (m.kind == MSG_INDEX)
			(*rows)++;
		if (fn(arg, &f, &m) == -1) {
			rc = -1;
			break;
		}
	}
	if (st == -1 && rc == 0)
		rc = p2o_fail(err, P2O_EXIT_DATA, "%s", r.err);
	if (rc == -1) {
		/* stopping early: the programs need not finish */
		kill(lpid, SIGTERM);
		kill(spid, SIGTERM);
	}
	frame_reader_release(&r);
	close(ops[0]);
	if (rc == -1) {
		rows_reap(lpid, "loader", &ignored);
		rows_reap(spid, "shaper", &ignored);
		return -1;
	}
	if (rows_reap(lpid, "loader", err) == -1) {
		rows_reap(spid, "shaper", &ignored);
		return -1;
	}
	return rows_reap(spid, "shaper", err);
}

/* verify's view: the index operations only */
struct ops_only {
	int	(*fn)(void *, const struct msg_op *);
	void	*arg;
};

static int
index_only(void *arg, const struct frame *f, const struct msg_op *m)
{
	struct ops_only *o = arg;

	(void)f;
	return m->kind == MSG_INDEX ? o->fn(o->arg, m) : 0;
}

int
verify_rows(const struct config *cfg,
    int (*fn)(void *, const struct msg_op *), void *arg, uint64_t *rows,
    struct p2o_err *err)
{
	struct ops_only o = { fn, arg };

	return shape_rows(cfg, NULL, index_only, &o, rows, err);
}

unsigned char *
rows_choose(const struct config *cfg, const char *table)
{
	const struct sync_section *s;
	unsigned char *want;
	int i, j, n = 0;

	want = xcalloc((size_t)cfg->nsyncs + 1, 1);
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (table == NULL || strcmp(s->name, table) == 0 ||
		    strcmp(s->table, table) == 0 ||
		    strcmp(s->rel, table) == 0) {
			want[i] = 1;
			n++;
		}
	}
	if (n == 0) {
		free(want);
		return NULL;
	}
	/* the documents of an index are compared with all its rows */
	for (i = 0; i < cfg->nsyncs; i++)
		for (j = 0; j < cfg->nsyncs; j++)
			if (want[j] && !want[i] &&
			    strcmp(cfg->syncs[i].index,
			    cfg->syncs[j].index) == 0)
				want[i] = 1;
	return want;
}
