/*
 * aux.c - the supervisor's own helper processes: what must block (a query
 * to the source, a request to the target, a reload's checks against the
 * live servers) runs in a fork of the supervisor, never in its loop, which
 * would stop carrying acknowledgements and answering probes meanwhile.
 * Each helper has a frame channel: its stdin our frames, its stdout its
 * own, read here without blocking; its stderr a logpipe like a stage's.
 *
 * This file starts, polls, reads and reaps them; what their frames say
 * is the module's that started each one (helper.c, reload.c), through
 * on_frame and on_end. Never exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "p2o.h"
#include "supervisor.h"
#include "xio.h"

int
sv_aux_start(struct sv *sv, int a, const struct sv_aux_ops *ops,
    int (*fn)(void *), void *arg, char *err, size_t errlen)
{
	struct sv_aux *x = &sv->aux[a];
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, rc;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "could not start '%s': %s", ops->name,
		    strerror(errno));
		if (in[0] != -1) {
			close(in[0]);
			close(in[1]);
		}
		return -1;
	}
	/* its log lines say they are the supervisor's: it is one */
	sv_child_init(&x->c, "pg2osync-supervise", NULL);
	x->c.tag = sv->tag;
	x->ops = ops;
	rc = sv_child_fork(&x->c, fn, arg, in[0], out[1], P2O_FD_LOG, err,
	    errlen);
	close(in[0]);
	close(out[1]);
	if (rc == -1) {
		close(in[1]);
		close(out[0]);
		return -1;
	}
	x->c.ctl_wfd = in[1];
	x->c.ctl_rfd = out[0];
	set_nonblock(x->c.ctl_rfd, 1);
	set_nonblock(x->c.ctl_wfd, 1);
	frame_reader_init(&x->c.rd, x->c.ctl_rfd, ops->name);
	x->c.rd.max = SV_CTL_FRAME_MAX;
	log_debug("started %s (pid %d)", ops->name, (int)x->c.pid);
	return 0;
}

int
sv_aux_running(const struct sv *sv, int a)
{
	return sv_child_running(&sv->aux[a].c);
}

struct sbuf *
sv_aux_out(struct sv *sv, int a)
{
	return sv_child_out(&sv->aux[a].c);
}

void
sv_aux_stop(struct sv *sv, int a)
{
	sv_child_kill(&sv->aux[a].c, SIGTERM, now_ms());
}

int
sv_aux_pollfds(struct sv *sv, struct pollfd *pfd, int n)
{
	struct sv_child *c;
	int a;

	for (a = 0; a < SV_NAUX; a++) {
		c = &sv->aux[a].c;
		sv->aux[a].pidx[0] = sv->aux[a].pidx[1] = sv->aux[a].pidx[2] = -1;
		if (c->pid == 0)
			continue;
		if (c->ctl_rfd != -1) {
			sv->aux[a].pidx[0] = n;
			pfd[n].fd = c->ctl_rfd;
			pfd[n++].events = POLLIN;
		}
		if (c->ctl_wfd != -1 && c->out.len > 0) {
			sv->aux[a].pidx[1] = n;
			pfd[n].fd = c->ctl_wfd;
			pfd[n++].events = POLLOUT;
		}
		if (c->log.fd != -1) {
			sv->aux[a].pidx[2] = n;
			pfd[n].fd = c->log.fd;
			pfd[n++].events = POLLIN;
		}
	}
	return n;
}

/* every frame it has sent, to its module */
static void
aux_read(struct sv *sv, int a)
{
	struct sv_aux *x = &sv->aux[a];
	struct frame f;
	ssize_t n;
	int r;

	if (x->c.ctl_rfd == -1)
		return;
	do {
		n = frame_fill(&x->c.rd);
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0)
			x->c.rd.eof = 1;
		while ((r = frame_next(&x->c.rd, &f)) == 1)
			x->ops->on_frame(sv, &f);
		if (r == -1) {
			log_warnx("%s: %s", x->ops->name, x->c.rd.err);
			x->c.rd.eof = 1;
		}
	} while (!x->c.rd.eof);
	if (x->c.rd.eof) {
		sv_child_close_ctl(&x->c);
		x->c.rd.fd = -1;
	}
}

void
sv_aux_io(struct sv *sv, const struct pollfd *pfd)
{
	struct sv_aux *x;
	int a;

	for (a = 0; a < SV_NAUX; a++) {
		x = &sv->aux[a];
		if (x->pidx[2] != -1 && pfd[x->pidx[2]].revents)
			sv_logpipe_read(&x->c.log);
		if (x->pidx[0] != -1 && pfd[x->pidx[0]].revents)
			aux_read(sv, a);
		if (x->pidx[1] != -1 && pfd[x->pidx[1]].revents)
			sv_child_flush(&x->c);
	}
}

void
sv_aux_flush(struct sv *sv)
{
	int a;

	for (a = 0; a < SV_NAUX; a++)
		if (sv->aux[a].c.out.len > 0)
			sv_child_flush(&sv->aux[a].c);
}

int
sv_aux_reaped(struct sv *sv, pid_t pid, int status)
{
	struct sv_aux *x;
	int a, code;

	for (a = 0; a < SV_NAUX; a++) {
		x = &sv->aux[a];
		if (x->c.pid != pid || x->c.exited)
			continue;
		x->c.exited = 1;
		x->c.wstatus = status;
		code = sv_child_code(&x->c);
		/* what it wrote before it ended counts: read it first */
		aux_read(sv, a);
		while (sv_logpipe_read(&x->c.log) == 2)
			;
		sv_child_release(&x->c);
		x->c.exited = 0;
		x->ops->on_end(sv, code);
		return 1;
	}
	return 0;
}

void
sv_aux_release(struct sv *sv)
{
	int a;

	for (a = 0; a < SV_NAUX; a++) {
		if (sv->aux[a].c.pid == 0)
			continue;
		sv_child_kill(&sv->aux[a].c, SIGKILL, now_ms());
		while (waitpid(sv->aux[a].c.pid, NULL, 0) == -1 &&
		    errno == EINTR)
			;
		sv_child_release(&sv->aux[a].c);
	}
}
