/*
 * wire.c - wiring and spawning an incarnation: ckpt first, then a pipe for
 * each boundary between two stages that run, a tap process in the middle
 * of a tapped one, /dev/null where nothing feeds a stage or reads it, and
 * the stages that wait for another's hello once it came. What to wire is
 * the stage table's (stages.c); how a process starts is child.c's. A
 * failure to start tears the incarnation down; it never exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "source.h"
#include "supervisor.h"

int
sv_will_run(const struct sv *sv, int s)
{
	if (s == SV_CKPT)
		return 0;
	if (!sv_stages[s].optional)
		return 1;
	return s == SV_LOADER && sv->load_tables > 0;
}

static void
spawn_failed(struct sv *sv, long long now, const char *err)
{
	log_error("%s", err);
	sv_teardown(sv, now, 0, "%s", err);
}

void
sv_start_incarnation(struct sv *sv, long long now)
{
	struct sv_child *ck = &sv->kid[SV_CKPT];
	char **argv = sv_stage_argv(SV_CKPT, ck->path, sv->cfgpath, NULL,
	    NULL, 0, 0);
	char err[512];
	int r;

	sv_metrics_restart(&sv->m);
	/* a gauge of the writer that ended, not of the one to come (which
	 * reports it only once it changes) */
	sv->m.last[MC_WRITER_HALTED] = 0;
	sv->reason[0] = '\0';
	sv->fatal_code = 0;
	sv->up_since_ms = 0;
	sv->kill_at_ms = sv->end_at_ms = 0;
	sv->cp_have = 0;
	free(sv->cp_text);
	free(sv->load_frame);
	sv->cp_text = sv->load_frame = NULL;
	sv->load_tables = 0;
	r = sv_child_spawn(ck, argv, SV_CTL_STDIO, -1, -1, -1, P2O_FD_LOG, err,
	    sizeof(err));
	sv_argv_free(argv);
	if (r == -1) {
		spawn_failed(sv, now, err);
		return;
	}
	/* a new stream's start: ckpt forgets the load progress and answers
	 * no checkpoint */
	msg_put_get(sv_child_out(ck), sv->st.stream == STREAM_NEW);
}

static void
close_pair(int p[2])
{
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	p[0] = p[1] = -1;
}

/*
 * A data pipe holds SV_PIPE_BYTES, not the kernel's 64 KiB: a stage that
 * writes faster than the next one reads was woken for every 64 KiB the
 * reader took, and on the wide rows' load those wake-ups were a third of
 * each stage's CPU (docs/benchmarks.md, "fourth round"). Only what is
 * written and not yet read takes the pages. Past the user's pipe limits
 * (fs.pipe-max-size, fs.pipe-user-pages-soft) the pipe keeps its size:
 * slower, never wrong.
 */
static void
pipe_size(int fd)
{
	(void)fcntl(fd, F_SETPIPE_SZ, SV_PIPE_BYTES);
}

/* spawn stage s with its fds (-1: /dev/null, or closed for fd 4) */
static int
spawn_stage(struct sv *sv, int s, int in, int out, int fd4, int null,
    long long now, char *err, size_t errlen)
{
	char token[24], **argv;
	int rc;

	if (sv->kid[s].path == NULL) {
		snprintf(err, errlen, "could not find '%s' next to this "
		    "program or on $PATH", sv_kname(sv, s));
		return -1;
	}
	snprintf(token, sizeof(token), "%" PRIu64, sv->cp_pos);
	argv = sv_stage_argv(s, sv->kid[s].path, sv->cfgpath,
	    sv->cp_have ? sv->cp_text : NULL, token,
	    sv->st.stream == STREAM_NEW, fd4 != -1);
	rc = sv_child_spawn(&sv->kid[s], argv, sv_stages[s].ctl,
	    in != -1 ? in : null, out != -1 ? out : null, fd4, P2O_FD_LOG, err,
	    errlen);
	sv_argv_free(argv);
	if (rc == 0) {
		sv->started_ms[s] = now;
		log_debug("started '%s' (pid %d)", sv_kname(sv, s),
		    (int)sv->kid[s].pid);
	}
	return rc;
}

/*
 * A stage that starts after another one's hello gets its stdout pipe now
 * (its reader must have it from the start) and is spawned later.
 */
void
sv_start_stages(struct sv *sv, long long now)
{
	int edge[SV_NSTAGES][2][2][2];	/* [to][stdin, fd4][up, down][r, w] */
	int in[SV_NSTAGES], out[SV_NSTAGES], fd4[SV_NSTAGES];
	int null = -1, s, e, from, tapk, rc = 0;
	struct sv_tap *t;
	char err[512];

	sv_bc_release(&sv->bc);
	sv_bc_init(&sv->bc, sv->cf.checkpoint_interval_ms, sv->cp_have,
	    sv->cp_pos, sv->cp_text);
	if (sv->cp_have) {
		sv->m.checkpoint_position = sv->cp_pos;
		if (sv->cp_pos > sv->m.position_confirmed)
			sv->m.position_confirmed = sv->cp_pos;
		log_info("checkpoint at %s (%" PRIu64 "): the capture starts "
		    "there", sv->cp_text, sv->cp_pos);
	} else
		log_info("no checkpoint stored: the capture starts where the "
		    "source keeps its position");
	if (sv->load_tables > 0)
		log_info("%d table%s to load beside the stream",
		    sv->load_tables, sv->load_tables == 1 ? "" : "s");
	memset(edge, -1, sizeof(edge));
	for (s = 0; s < SV_NSTAGES; s++)
		in[s] = out[s] = fd4[s] = -1;
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, sizeof(err), "/dev/null: %s", strerror(errno));
		goto fail;
	}
	for (s = 0; s < SV_NSTAGES; s++) {
		if (!sv_will_run(sv, s))
			continue;
		for (e = 0; e < 2; e++) {
			from = e == 0 ? sv_stages[s].stdin_from :
			    sv_stages[s].fd4_from;
			t = e == 0 ? &sv->tap[s] : &sv->tap4[s];
			if (from < 0 || !sv_will_run(sv, from))
				continue;
			if (pipe2(edge[s][e][0], O_CLOEXEC) == -1 ||
			    (t->path && pipe2(edge[s][e][1], O_CLOEXEC) == -1)) {
				snprintf(err, sizeof(err), "could not create the "
				    "pipeline's pipes: %s", strerror(errno));
				goto fail;
			}
			pipe_size(edge[s][e][0][1]);
			if (t->path)
				pipe_size(edge[s][e][1][1]);
			out[from] = edge[s][e][0][1];
			*(e == 0 ? &in[s] : &fd4[s]) = t->path ?
			    edge[s][e][1][0] : edge[s][e][0][0];
			tapk = e == 0 ? SV_TAP_OF(s) : SV_TAP4_OF(s);
			if (t->path && sv_child_fork(&sv->kid[tapk], sv_tap_run,
			    t, edge[s][e][0][0], edge[s][e][1][1], P2O_FD_LOG,
			    err, sizeof(err)) == -1)
				goto fail;
		}
	}
	for (s = 0; s < SV_NSTAGES; s++) {
		if (!sv_will_run(sv, s))
			continue;
		if (sv_stages[s].after >= 0) {
			/* its reader holds the other end from the start; the
			 * copy kept until then must not leak into any child
			 * but this one, or the reader never sees its end */
			if (out[s] != -1)
				sv->pending_out[s] = fcntl(out[s], F_DUPFD_CLOEXEC, 3);
			continue;
		}
		if (spawn_stage(sv, s, in[s], out[s], fd4[s], null, now, err,
		    sizeof(err)) == -1)
			goto fail;
	}
	rc = 1;
fail:
	for (s = 0; s < SV_NSTAGES; s++)
		for (e = 0; e < 2; e++) {
			close_pair(edge[s][e][0]);
			close_pair(edge[s][e][1]);
		}
	if (null != -1)
		close(null);
	if (!rc)
		spawn_failed(sv, now, err);
}

/*
 * A source whose server keeps no position for its readers (MySQL; a
 * replication slot does) holds its start: until a checkpoint is stored, a
 * restarted capture starts at the server's position of that moment, and
 * whatever changed in between is never streamed. A copy written before
 * that would then keep a row the source deleted meanwhile, and a load
 * resumed after a chunk would miss the changes to the chunk's rows. So
 * there the loader starts once the capture's first position is stored (it
 * sends its start at once).
 */
static int
loader_may_start(const struct sv *sv)
{
	return !sv->cf.source->start_held || sv->bc.have_stored;
}

void
sv_start_after(struct sv *sv, int k, long long now)
{
	char err[512];
	int s, null;

	for (s = 0; s < SV_NSTAGES; s++) {
		if (sv_stages[s].after != k || !sv_will_run(sv, s) ||
		    sv->kid[s].pid != 0 ||
		    (s == SV_LOADER && !loader_may_start(sv)))
			continue;
		if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
			spawn_failed(sv, now, "/dev/null");
			return;
		}
		if (spawn_stage(sv, s, -1, sv->pending_out[s], -1, null, now,
		    err, sizeof(err)) == -1) {
			close(null);
			spawn_failed(sv, now, err);
			return;
		}
		close(null);
		if (sv->pending_out[s] != -1)
			close(sv->pending_out[s]);
		sv->pending_out[s] = -1;
	}
}
