/*
 * dumpstream.c - capture-mysql's side of the capture loop (lib/capture.c):
 * reads the binlog dump and hands each event to the assembler.
 *
 * Owns the silence limit (the server sends a heartbeat every
 * SERVER_HEARTBEAT_S while idle: a dump that says nothing for
 * DUMPSTREAM_SILENCE_MS while it is being read is dead). MySQL keeps no
 * consumer position, so an ack is only recorded: nothing is confirmed to
 * the server, and there is no end of the dump to wait for. Never decodes
 * an event, never exits.
 *
 * For the same reason a fresh start (no checkpoint) is held at its start.
 * A replication slot keeps where a stream began until something is
 * confirmed; a MySQL server does not, so a pipeline that dies before its
 * first checkpoint is stored starts again at the server's position of
 * that later moment, and the changes in between are never streamed. Had
 * this run's stream written any of the rows past its start into the
 * index, they would stay there as they were: a row deleted in between
 * resurrected, a row whose key moved in between kept under its old key
 * (tests/integration/604-mysql-unstored-start.t). So the start's pos frame
 * is the first frame written, and nothing past it is read until the
 * supervisor acks it (it is stored): from then on a restart resumes from
 * it and replays everything after it. Stand-alone nothing is ever acked
 * or stored, and nothing is held.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "log.h"
#include "p2o.h"
#include "server.h"
#include "xio.h"

/* events decoded before the loop looks at stdout and fd 3 again */
#define EVENTS_PER_TURN	256

void
dumpstream_init(struct dumpstream *ds, struct server *srv, struct txn *txn)
{
	memset(ds, 0, sizeof(*ds));
	ds->srv = srv;
	ds->txn = txn;
	ds->last_event_ms = now_ms();
	ds->start_owed = txn->fresh;
}

/*
 * A fresh start: once the log is read up to the start, its pos frame is
 * written before any event past it is decoded. 1 once it is written
 * (hold_pos), 0 while the start is still ahead.
 */
static int
start_written(struct dumpstream *ds, struct outq *out)
{
	struct txn *t = ds->txn;

	if (t->last_emitted == 0 && txn_pos_owed(t))
		txn_put_pos(t, &out->buf);
	/* a ROTATE at the start writes the pos frame itself */
	if (t->last_emitted == 0)
		return 0;
	ds->start_owed = 0;
	ds->hold_pos = t->last_emitted;
	log_debug("holding the stream at its start %s:%u until it is stored",
	    t->file, (unsigned)(t->last_boundary & 0xffffffffu));
	return 1;
}

/* the position the stream has read up to, in the checkpoint's terms */
static uint64_t
received(const struct dumpstream *ds)
{
	const struct txn *t = ds->txn;

	return t->have_base ? t->base + t->cur : 0;
}

static int
readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP |
	    POLLERR));
}

/*
 * Decode what the server has sent, until nothing more waits or the
 * stdout buffer reaches its cap. A packet is read only when bytes wait
 * (in the socket or in the client library), so the read does not block
 * for longer than the rest of a packet takes to arrive.
 */
static int
ds_read(void *src, struct outq *out, long long now, struct p2o_err *e)
{
	struct dumpstream *ds = src;
	const unsigned char *ev;
	size_t len;
	int n;

	for (n = 0; n < EVENTS_PER_TURN && outq_pending(out) < CAPTURE_OUT_CAP;
	    n++) {
		if (!server_buffered(ds->srv) &&
		    !readable(server_socket(ds->srv)))
			break;
		if (server_read_event(ds->srv, &ev, &len) == -1) {
			*e = ds->srv->err;
			return -1;
		}
		ds->last_event_ms = now;
		ds->txn->rx_us = now_us_wall();
		if (txn_event(ds->txn, ev, len, &out->buf) == -1) {
			*e = ds->txn->err;
			return -1;
		}
		/* the loop asks held() before it reads again */
		if (ds->start_owed && start_written(ds, out))
			break;
	}
	/* silence counts only while the server is waited for: a stdout
	 * that does not drain (the target is down) stops the reads */
	if (outq_pending(out) >= CAPTURE_OUT_CAP)
		ds->last_event_ms = now;
	return 0;
}

static int
ds_socket(void *src)
{
	return server_socket(((struct dumpstream *)src)->srv);
}

static int
ds_buffered(void *src)
{
	return server_buffered(((struct dumpstream *)src)->srv);
}

static long long
ds_due(void *src, int reading)
{
	const struct dumpstream *ds = src;

	(void)reading;
	return ds->last_event_ms + DUMPSTREAM_SILENCE_MS + 1;
}

static int
ds_tick(void *src, long long now, int reading, int running,
    struct p2o_err *e)
{
	struct dumpstream *ds = src;

	/* a shutdown reads no more: the dump may well be silent then */
	if (!running || !reading) {
		ds->last_event_ms = now;
		return 0;
	}
	if (now - ds->last_event_ms > DUMPSTREAM_SILENCE_MS)
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "dump connection lost: "
		    "nothing from the server, not even a heartbeat, in %d s",
		    DUMPSTREAM_SILENCE_MS / 1000);
	return 0;
}

/* MySQL keeps no position for a reader: an ack is only recorded, and
 * frees a fresh start's stream */
static int
ds_acked(void *src, uint64_t acked, struct p2o_err *e)
{
	struct dumpstream *ds = src;

	(void)e;
	log_debug("acked %llu", (unsigned long long)acked);
	ds->acked = acked;
	if (ds->hold_pos != 0 && acked >= ds->hold_pos) {
		log_info("the stream's start is stored; streaming on from it");
		ds->hold_pos = 0;
	}
	return 0;
}

static int
ds_held(void *src)
{
	const struct dumpstream *ds = src;

	return ds->hold_pos != 0 && ds->acked < ds->hold_pos;
}

/* a group's frames wait for its end (capture.h) */
static int
ds_in_txn(void *src)
{
	return ((struct dumpstream *)src)->txn->state != TS_NONE;
}

static int
ds_pos_owed(void *src)
{
	return txn_pos_owed(((struct dumpstream *)src)->txn);
}

static void
ds_put_pos(void *src, struct sbuf *out)
{
	txn_put_pos(((struct dumpstream *)src)->txn, out);
}

static void
ds_counters(void *src, uint64_t acked, uint64_t v[CAPTURE_NSTATS])
{
	const struct dumpstream *ds = src;
	const struct txn_counters *c = &ds->txn->n;

	v[0] = c->inserts;
	v[1] = c->updates;
	v[2] = c->deletes;
	v[3] = c->truncates;
	v[4] = c->commits;
	v[5] = acked;
	v[6] = received(ds);
}

static void
ds_where(void *src, char *buf, size_t len)
{
	snprintf(buf, len, "%llu", (unsigned long long)received(src));
}

const struct capture_ops dumpstream_ops = {
	.tool = "capture-mysql",
	.read = ds_read,
	.socket = ds_socket,
	.buffered = ds_buffered,
	.due = ds_due,
	.tick = ds_tick,
	.acked = ds_acked,
	.held = ds_held,
	.in_txn = ds_in_txn,
	.pos_owed = ds_pos_owed,
	.put_pos = ds_put_pos,
	.counters = ds_counters,
	.where = ds_where,
};
