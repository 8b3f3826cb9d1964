/*
 * tap.c - the process a --tap puts on one boundary of the pipeline: it
 * copies its stdin to its stdout, and every frame also to a file that a
 * problem can be replayed from at a desk (`shaper < events.frames`).
 *
 * The pipeline comes first. The file is written by a process of its own
 * (a regular file's write can block, and nothing can wait for it without
 * blocking), fed through a pipe from a bounded queue; when the queue is
 * full the copy drops whole frames rather than wait, and writes a gap frame
 * (msg.c) where they would have been, so a replay of the file knows it is
 * not the stream. The file is rotated only where a frame ends, so each
 * file replays on its own. It reads frame lengths only and never validates
 * a frame: the stage downstream does that.
 */
#include <sys/prctl.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "supervisor.h"
#include "xio.h"

#define TAP_CHUNK	(128 * 1024)
#define TAP_PIPE	(1024 * 1024)	/* asked of the pipe to the file */
#define NO_START	((size_t)-1)

long
sv_framepos_next(struct sv_framepos *fp, const char *buf, size_t n,
    size_t from)
{
	size_t i = 0, take;

	while (i < n && !fp->bad) {
		if (fp->in_body) {
			take = n - i < fp->left ? n - i : (size_t)fp->left;
			i += take;
			fp->left -= take;
			if (fp->left == 0) {
				fp->in_body = 0;
				if (i >= from)
					return (long)i;
			}
			continue;
		}
		if (buf[i] >= '0' && buf[i] <= '9' && fp->digits < 10) {
			fp->len = fp->len * 10 + (uint64_t)(buf[i] - '0');
			fp->digits++;
		} else if (buf[i] == ' ' && fp->digits > 0 && fp->len > 0) {
			fp->in_body = 1;
			fp->left = fp->len;
			fp->len = 0;
			fp->digits = 0;
		} else
			fp->bad = 1;
		i++;
	}
	return -1;
}

/* ---- the file's process ---- */

struct tapfile {
	const struct sv_tap *t;
	int	 fd;		/* -1 once given up */
	uint64_t size;
};

static void
give_up(struct tapfile *f, const char *what)
{
	log_warn("tap '%s': %s '%s'; the pipeline goes on without the tap",
	    f->t->point, what, f->t->path);
	if (f->fd != -1)
		close(f->fd);
	f->fd = -1;
}

static void
open_file(struct tapfile *f)
{
	f->fd = open(f->t->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);
	f->size = 0;
	if (f->fd == -1)
		give_up(f, "could not open");
}

static void
rotate(struct tapfile *f)
{
	struct sbuf old = SBUF_INIT;

	close(f->fd);
	f->fd = -1;
	sbuf_addf(&old, "%s.1", f->t->path);
	if (rename(f->t->path, old.buf) == -1)
		log_warn("tap '%s': could not rename '%s'", f->t->point,
		    f->t->path);
	sbuf_release(&old);
	open_file(f);
}

static void
to_file(struct tapfile *f, const char *p, size_t n)
{
	if (f->fd == -1 || n == 0)
		return;
	if (write_in_full(f->fd, p, n) == -1) {
		give_up(f, "could not write");
		return;
	}
	f->size += n;
}

/* copy fd to the file until EOF, rotated at the first frame end at or
 * past the limit; a file that cannot be written is given up (the copy
 * then stops feeding it) */
static int
file_run(const struct sv_tap *t, int fd)
{
	struct sv_framepos fp;
	struct tapfile f = { t, -1, 0 };
	char *buf = xmalloc(TAP_CHUNK);
	size_t off, room;
	ssize_t n;
	long cut;

	memset(&fp, 0, sizeof(fp));
	open_file(&f);
	while (f.fd != -1 && (n = xread(fd, buf, TAP_CHUNK)) > 0) {
		for (off = 0; off < (size_t)n; off += (size_t)cut) {
			room = f.size < t->max ? (size_t)(t->max - f.size) : 0;
			cut = sv_framepos_next(&fp, buf + off, (size_t)n - off,
			    room);
			if (cut < 0) {
				to_file(&f, buf + off, (size_t)n - off);
				break;
			}
			to_file(&f, buf + off, (size_t)cut);
			if (f.fd != -1)
				rotate(&f);
		}
	}
	free(buf);
	if (f.fd != -1 && close(f.fd) == -1)
		log_warn("tap '%s': closing '%s'", t->point, t->path);
	return P2O_EXIT_OK;
}

/* the file's process, fed by a pipe: its write end, or -1 (no file) */
static int
start_file(const struct sv_tap *t, pid_t *pid)
{
	int p[2], null;

	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("tap '%s': no file: pipe", t->point);
		return -1;
	}
	if ((*pid = fork()) == -1) {
		log_warn("tap '%s': no file: fork", t->point);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (*pid == 0) {
		/* the pipeline's pipes stay with the copy alone, or their
		 * readers would not see their end when it does: the queue's
		 * pipe as stdin, stderr for the log, nothing else */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (dup2(p[0], P2O_FD_IN) == -1 ||
		    (null = open("/dev/null", O_WRONLY)) == -1 ||
		    dup2(null, P2O_FD_OUT) == -1)
			_exit(P2O_EXIT_INTERNAL);
		close_range(3, ~0U, 0);
		_exit(file_run(t, P2O_FD_IN));
	}
	close(p[0]);
	set_nonblock(p[1], 1);
	/* a bigger pipe rides out a slower disk before anything drops */
	(void)fcntl(p[1], F_SETPIPE_SZ, TAP_PIPE);
	return p[1];
}

/* ---- the copy ---- */

struct copy {
	const struct sv_tap *t;
	int	 fd;		/* the pipe to the file's process, -1 none */
	struct sbuf q;		/* frames for it, from qoff on */
	size_t	 qoff;
	size_t	 frame_at;	/* where the frame being queued starts in q;
				 * NO_START once that start went to the pipe */
	struct sv_framepos fp;
	int	 at_start;	/* the next byte starts a frame */
	int	 keep;		/* the current frame goes to the file */
	int	 stopped;	/* the input is not frames: nothing more goes */
	struct msg_gap gap;	/* dropped since the last frame kept */
	uint64_t dropped, dropped_bytes, gaps;	/* for the last line */
};

static size_t
queued(const struct copy *c)
{
	return c->q.len - c->qoff;
}

/* the file is given up: nothing more is queued for it */
static void
no_file(struct copy *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	sbuf_reset(&c->q);
	c->qoff = 0;
	c->frame_at = NO_START;
}

static void
put_gap(struct copy *c)
{
	if (c->gap.frames == 0)
		return;
	msg_put_gap(&c->q, &c->gap);
	c->gaps++;
	memset(&c->gap, 0, sizeof(c->gap));
}

/* a frame starts: it goes to the file while the queue has room */
static void
frame_starts(struct copy *c)
{
	c->at_start = 0;
	c->keep = queued(c) < SV_TAP_QUEUE;
	if (c->keep) {
		put_gap(c);
		c->frame_at = c->q.len;
		return;
	}
	if (c->gap.frames == 0)
		log_warnx("tap '%s': '%s' is behind: frames are dropped from "
		    "it, and marked there, until it catches up; the pipeline "
		    "goes on", c->t->point, c->t->path);
	c->gap.frames++;
	c->dropped++;
}

/* the frames of a chunk that went downstream: queued or dropped */
static void
account(struct copy *c, const char *buf, size_t n)
{
	size_t off = 0, seg;
	long end;

	while (c->fd != -1 && !c->stopped && off < n) {
		if (c->at_start)
			frame_starts(c);
		end = sv_framepos_next(&c->fp, buf + off, n - off, 0);
		if (c->fp.bad) {
			/* what reaches the file is frames: the start of this
			 * one goes, unless it went already */
			if (c->keep && c->frame_at != NO_START) {
				c->q.len = c->frame_at;
				c->q.buf[c->q.len] = '\0';
			}
			log_warnx("tap '%s': input is not frames: stopped "
			    "copying to '%s'", c->t->point, c->t->path);
			c->stopped = 1;
			return;
		}
		seg = end < 0 ? n - off : (size_t)end;
		if (c->keep)
			sbuf_add(&c->q, buf + off, seg);
		else {
			c->gap.bytes += seg;
			c->dropped_bytes += seg;
		}
		off += seg;
		if (end >= 0)
			c->at_start = 1;
	}
}

/* write what the pipe takes now; 0, or -1 once the file is given up */
static int
feed(struct copy *c)
{
	ssize_t n;

	while (c->fd != -1 && queued(c) > 0) {
		n = xwrite(c->fd, c->q.buf + c->qoff, queued(c));
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			/* the file's process gave up, and said why */
			no_file(c);
			return -1;
		}
		c->qoff += (size_t)n;
	}
	/* written bytes leave the queue in large steps, not per write */
	if (c->qoff == c->q.len || c->qoff > SV_TAP_QUEUE / 2) {
		c->frame_at = c->frame_at != NO_START && c->frame_at >= c->qoff ?
		    c->frame_at - c->qoff : NO_START;
		sbuf_consume(&c->q, c->qoff);
		c->qoff = 0;
	}
	return 0;
}

/* the end of the input: the rest of the queue, waited for, then the file's
 * process; downstream has seen its end already */
static void
finish(struct copy *c, pid_t pid)
{
	if (c->fd != -1) {
		if (!c->stopped)
			put_gap(c);
		set_nonblock(c->fd, 0);
		feed(c);
	}
	no_file(c);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
	if (c->dropped > 0)
		log_warnx("tap '%s': %llu frames (%llu bytes) were not copied to "
		    "'%s'; %llu gap frame%s there say%s where", c->t->point,
		    (unsigned long long)c->dropped,
		    (unsigned long long)c->dropped_bytes, c->t->path,
		    (unsigned long long)c->gaps, c->gaps == 1 ? "" : "s",
		    c->gaps == 1 ? "s" : "");
}

int
sv_tap_run(void *arg)
{
	const struct sv_tap *t = arg;
	struct copy c;
	struct pollfd pfd[2];
	char *buf = xmalloc(TAP_CHUNK);
	pid_t pid = -1;
	ssize_t n;
	int rc = P2O_EXIT_OK;

	log_init("tap");
	/* the file's process gone is EPIPE on the next write, not an end */
	signal(SIGPIPE, SIG_IGN);
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.at_start = 1;
	c.frame_at = NO_START;
	sbuf_init(&c.q);
	c.fd = start_file(t, &pid);
	for (;;) {
		pfd[0] = (struct pollfd){ .fd = P2O_FD_IN, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = queued(&c) > 0 ? c.fd : -1,
		    .events = POLLOUT };
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("tap '%s': poll", t->point);
			rc = P2O_EXIT_INTERNAL;
			break;
		}
		if (pfd[1].revents)
			feed(&c);
		if (pfd[0].revents == 0)
			continue;
		if ((n = xread(P2O_FD_IN, buf, TAP_CHUNK)) == 0)
			break;
		if (n == -1) {
			log_warn("tap '%s': reading", t->point);
			rc = P2O_EXIT_TEMPFAIL;
			break;
		}
		/* downstream first: the file never holds the pipeline up */
		if (write_in_full(P2O_FD_OUT, buf, (size_t)n) == -1) {
			/* the stage after us is gone: its end is the news */
			rc = P2O_EXIT_TEMPFAIL;
			break;
		}
		account(&c, buf, (size_t)n);
		feed(&c);
	}
	free(buf);
	/* the stage after us sees its input end now, whatever the file does */
	close(P2O_FD_OUT);
	finish(&c, pid);
	sbuf_release(&c.q);
	return rc;
}
