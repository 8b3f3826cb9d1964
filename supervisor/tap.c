/*
 * tap.c - the process a --tap puts on one boundary of the pipeline: it
 * copies its stdin to its stdout, and every byte also to a file that a
 * problem can be replayed from at a desk (`shaper < events.frames`). The
 * pipeline comes first: bytes go downstream before they go to the file,
 * and a file that cannot be written is given up, not waited for. The file
 * is rotated only where a frame ends, so each file replays on its own.
 * It reads frame lengths only and never validates a frame: the stage
 * downstream does that.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "p2o.h"
#include "supervisor.h"
#include "xio.h"

#define TAP_CHUNK	(128 * 1024)

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

int
sv_tap_run(void *arg)
{
	const struct sv_tap *t = arg;
	struct sv_framepos fp;
	struct tapfile f = { t, -1, 0 };
	char *buf = xmalloc(TAP_CHUNK);
	size_t off, room;
	ssize_t n;
	long cut;

	log_init("tap");
	memset(&fp, 0, sizeof(fp));
	open_file(&f);
	for (;;) {
		n = xread(P2O_FD_IN, buf, TAP_CHUNK);
		if (n == 0)
			break;
		if (n == -1) {
			log_warn("tap '%s': reading", t->point);
			free(buf);
			return P2O_EXIT_TEMPFAIL;
		}
		/* downstream first: the file never holds the pipeline up */
		if (write_in_full(P2O_FD_OUT, buf, (size_t)n) == -1) {
			/* the stage after us is gone: its end is the news */
			free(buf);
			return P2O_EXIT_TEMPFAIL;
		}
		/* to the file, rotated at the first frame end at or past
		 * the limit */
		for (off = 0; off < (size_t)n; off += (size_t)cut) {
			room = f.size < t->max ? (size_t)(t->max - f.size) : 0;
			cut = sv_framepos_next(&fp, buf + off, (size_t)n - off,
			    room);
			if (fp.bad) {
				if (f.fd != -1)
					give_up(&f, "input is not frames: "
					    "stopped copying to");
				break;
			}
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
