/*
 * wave.c - reading a wave: n contiguous ranges, each a COPY on its own
 * connection, driven by one poll loop, every row turned into a copy row
 * frame on stdout as it arrives. Owns the COPY reads and stdout; decides
 * nothing about which ranges or when (load.c does).
 *
 * Memory stays bounded by stdout: frames are written once LOAD_OUT_CAP
 * bytes are waiting, and a write that blocks (the shaper is behind) stops the
 * reads, so the server's send buffers fill and the backends wait. The
 * pipe to the shaper is the queue.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "msg.h"
#include "p2o.h"
#include "pg/pgconn.h"
#include "pg/pgtypes.h"
#include "xio.h"
#include "loader.h"

#define WAVE_POLL_MS	1000

enum { W_SENT, W_COPY, W_DONE };

struct reader {
	struct pg_conn *c;
	int	 range;
	int	 state;
	uint64_t rows;
	long long t0;
};

int
wave_row_frame(struct sbuf *out, struct msg_in *in, const struct ld_table *t,
    uint64_t v, const struct copy_field *f, struct p2o_err *e)
{
	const char *vals[t->nest.n + 1];
	size_t lens[t->nest.n + 1];
	char *key;
	int i, rc, sent;

	/* the same builders, names and value mapping as the stream's row,
	 * so the two documents are the same bytes (the template is their
	 * bytes, built once per table), written in out itself */
	if (t->tpl != NULL)
		msg_rowtpl_begin_in(out, in, t->tpl, v);
	else {
		msg_row_begin_in(out, in, 'c', t->rel, strlen(t->rel), v);
		msg_list_begin(out, ML_KEY);
		for (i = 0; i < t->nkeys; i++)
			msg_list_item(out, t->keys[i].name,
			    strlen(t->keys[i].name));
		msg_list_end(out);
		msg_image_begin(out, MI_NEW);
	}
	for (i = 0, sent = 0; i < t->ncols; i++) {
		if (t->cols[i].hidden)
			continue;
		if (t->tpl != NULL)
			msg_rowtpl_column(out, t->tpl, sent++);
		else
			msg_column(out, t->cols[i].name,
			    strlen(t->cols[i].name));
		if (f[i].p == NULL)
			sbuf_adds(out, "null");
		else
			pgtype_to_json(t->cols[i].typoid, f[i].p, f[i].n, out);
	}
	if (t->nest.n > 0) {
		/* the collections' fields follow the columns */
		for (i = 0; i < t->nest.n; i++) {
			vals[i] = f[t->ncols + i].p;
			lens[i] = f[t->ncols + i].n;
		}
		key = f[t->nest_key].p ? xstrndup(f[t->nest_key].p,
		    f[t->nest_key].n) : xstrdup("NULL");
		rc = pgnest_put((struct pgnest *)&t->nest, out, vals, lens, key,
		    t->rel, e);
		free(key);
		if (rc == -1) {
			msg_abort_in(out, in);
			return -1;
		}
	}
	msg_image_end(out);
	msg_end_in(out, in);
	return 0;
}

/* every row libpq holds for r; 0, or -1 with err */
static int
drain(struct loader *ld, const struct ld_table *t, uint64_t v,
    struct reader *r, struct copy_field *f)
{
	PGconn *pg = r->c;
	PGresult *res;
	char what[64], err[256], *row;
	uint64_t before = r->rows;
	int len, ok;

	snprintf(what, sizeof(what), "reading range %d of '%s'", r->range + 1,
	    t->rel);
	if (r->state == W_SENT) {
		if (PQisBusy(pg))
			return 0;
		res = PQgetResult(pg);
		ok = PQresultStatus(res) == PGRES_COPY_OUT;
		if (!ok)
			pgconn_failed(r->c, res, what, &ld->err);
		PQclear(res);
		if (!ok)
			return -1;
		r->state = W_COPY;
	}
	while ((len = PQgetCopyData(pg, &row, 1)) > 0) {
		if (copy_split(row, len, f, t->ncols + t->nest.n, err,
		    sizeof(err)) == -1) {
			p2o_fail(&ld->err, P2O_EXIT_TEMPFAIL, "%s: %s", what,
			    err);
			PQfreemem(row);
			return -1;
		}
		if (wave_row_frame(&ld->out, &ld->row_in, t, v, f, &ld->err) ==
		    -1) {
			PQfreemem(row);
			return -1;
		}
		PQfreemem(row);
		r->rows++;
		if (ld->out.len >= LOAD_OUT_CAP && load_flush(ld) == -1)
			return -1;
	}
	control_rows(ld, t->rel, r->rows - before);
	if (control_pace(ld) == -1)
		return -1;
	if (len == 0)
		return 0;
	if (len == -2)
		return pgconn_failed(r->c, NULL, what, &ld->err);
	/* the end of the COPY: its result, then the connection is idle */
	ok = 1;
	while ((res = PQgetResult(pg)) != NULL) {
		if (ok && PQresultStatus(res) != PGRES_COMMAND_OK) {
			pgconn_failed(r->c, res, what, &ld->err);
			ok = 0;
		}
		PQclear(res);
	}
	if (!ok)
		return -1;
	r->state = W_DONE;
	meter_range(&ld->meter, r->range, r->rows, now_ms() - r->t0);
	return 0;
}

int
wave_run(struct loader *ld, const struct ld_table *t,
    const struct progress *p, int first, int n, uint64_t v, uint64_t *rows)
{
	struct pgload *pg = ld->src;
	struct reader *r = xcalloc(n, sizeof(*r));
	struct pollfd *pfd = xcalloc(n, sizeof(*pfd));
	struct copy_field *f = xcalloc((size_t)(t->ncols + t->nest.n),
	    sizeof(*f));
	struct sbuf sql = SBUF_INIT;
	int i, active = 0, rc = -1;

	for (i = 0; i < n; i++) {
		r[i].c = pg->conns[i];
		r[i].range = first + i;
		if (table_copy_sql(&sql, r[i].c, t, p, first + i,
		    &ld->err) == -1)
			goto out;
		if (!PQsendQuery(r[i].c, sql.buf)) {
			pgconn_failed(r[i].c, NULL, "starting a COPY",
			    &ld->err);
			goto out;
		}
		r[i].t0 = now_ms();
		active++;
	}
	while (active > 0) {
		for (i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = r[i].state == W_DONE ?
			    -1 : PQsocket(r[i].c), .events = POLLIN };
		if (poll(pfd, n, WAVE_POLL_MS) == -1 && errno != EINTR) {
			p2o_fail(&ld->err, P2O_EXIT_INTERNAL, "poll: %s",
			    strerror(errno));
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (r[i].state == W_DONE || pfd[i].revents == 0)
				continue;
			if (!PQconsumeInput(r[i].c)) {
				pgconn_failed(r[i].c, NULL, "reading a COPY",
				    &ld->err);
				goto out;
			}
			if (drain(ld, t, v, &r[i], f) == -1)
				goto out;
			if (r[i].state == W_DONE)
				active--;
		}
		if (control_stats(ld, 0) == -1)
			goto out;
	}
	for (i = 0; i < n; i++)
		rows[i] = r[i].rows;
	rc = load_flush(ld);
out:
	sbuf_release(&sql);
	free(f);
	free(pfd);
	free(r);
	return rc;
}
