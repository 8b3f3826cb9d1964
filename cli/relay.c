/*
 * relay.c - a table's rows written the way a load writes them, for the
 * verbs that write rows (resnapshot, reindex): the loader stand-alone on
 * one table, the shaper from its load fd, the writer without a control
 * channel. The shaper's index operations pass through here on their way
 * to the writer, so a rebuild can send them into another index (the
 * frame is copied with its index string replaced, nothing else touched)
 * and a delete can be left out. Nothing here acknowledges a position or
 * stores a mark: the loader runs stand-alone and the writer reports to
 * no one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "frame.h"
#include "p2o.h"
#include "source.h"
#include "xio.h"

struct relay {
	int	 fd;		/* the writer's stdin */
	const char *into;	/* the index to write to, or NULL */
	struct sbuf out, obj;
	uint64_t written, dropped;
	struct p2o_err *err;
};

static int
forward(void *arg, const struct frame *f, const struct msg_op *m)
{
	struct relay *r = arg;
	size_t at;

	if (m->kind != MSG_INDEX) {
		r->dropped++;
		return 0;
	}
	if (r->into == NULL)
		frame_put(&r->out, f->obj.p, f->obj.n);
	else {
		/* the same frame, its index string another one */
		at = (size_t)(m->index.p - f->obj.p);
		sbuf_reset(&r->obj);
		sbuf_add(&r->obj, f->obj.p, at);
		sbuf_add_jstr(&r->obj, r->into, strlen(r->into));
		sbuf_add(&r->obj, m->index.p + m->index.n,
		    f->obj.n - at - m->index.n);
		frame_put(&r->out, r->obj.buf, r->obj.len);
	}
	r->written++;
	/* the pipe to the writer is the queue: no more than a page here */
	if (r->out.len >= 256 * 1024 && frame_flush(r->fd, &r->out) == -1)
		return p2o_fail(r->err, P2O_EXIT_TEMPFAIL, "the writer "
		    "stopped reading: %s", strerror(errno));
	return 0;
}

int
relay_rows(const struct config *cfg, const struct sync_section *s,
    const char *where, const char *into, uint64_t *written,
    uint64_t *dropped, struct p2o_err *e)
{
	char *wargv[] = { "writer", "-c", cfg->path, NULL };
	char *lextra[8], cparg[1200];
	struct ckpt_view ck;
	struct relay r;
	struct p2o_err ignored;
	int n = 0, wfd[2], null, rc;
	uint64_t rows = 0;
	pid_t wpid;

	lextra[n++] = "--table";
	lextra[n++] = s->rel;
	if (where != NULL) {
		lextra[n++] = "--where";
		lextra[n++] = (char *)where;
	}
	/* a source that holds its start (MySQL) versions copies from the
	 * generation the checkpoint is in, as a supervised load does; none
	 * stored is the first generation */
	if (cfg->source->start_held) {
		status_checkpoint(cfg, &ck);
		if (!ck.known) {
			ckpt_view_release(&ck);
			return p2o_fail(e, P2O_EXIT_TEMPFAIL, "the stored "
			    "checkpoint could not be read: %s", ck.why);
		}
		if (ck.found) {
			snprintf(cparg, sizeof(cparg), "%llu:%s",
			    (unsigned long long)ck.pos, ck.text);
			lextra[n++] = "--checkpoint";
			lextra[n++] = cparg;
		}
		ckpt_view_release(&ck);
	}
	lextra[n] = NULL;

	memset(&r, 0, sizeof(r));
	sbuf_init(&r.out);
	sbuf_init(&r.obj);
	r.into = into;
	r.err = e;
	if (pipe2(wfd, O_CLOEXEC) == -1)
		return p2o_fail(e, P2O_EXIT_INTERNAL, "pipe: %s",
		    strerror(errno));
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1) {
		close(wfd[0]);
		close(wfd[1]);
		return p2o_fail(e, P2O_EXIT_INTERNAL, "/dev/null: %s",
		    strerror(errno));
	}
	wpid = rows_spawn(wargv, wfd[0], null, -1);
	close(wfd[0]);
	close(null);
	if (wpid == -1) {
		close(wfd[1]);
		return p2o_fail(e, P2O_EXIT_INTERNAL, "fork: %s",
		    strerror(errno));
	}
	r.fd = wfd[1];
	rc = shape_rows(cfg, lextra, forward, &r, &rows, e);
	if (rc == 0 && frame_flush(r.fd, &r.out) == -1)
		rc = p2o_fail(e, P2O_EXIT_TEMPFAIL, "the writer stopped "
		    "reading: %s", strerror(errno));
	/* end of input: the writer writes what it has and exits 0 */
	close(r.fd);
	if (rc == -1)
		rows_reap(wpid, "writer", &ignored);
	else
		rc = rows_reap(wpid, "writer", e);
	*written = r.written;
	*dropped = r.dropped;
	sbuf_release(&r.out);
	sbuf_release(&r.obj);
	return rc;
}
