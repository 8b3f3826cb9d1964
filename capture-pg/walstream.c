/*
 * walstream.c - capture-pg's side of the capture loop (lib/capture.c):
 * reads CopyData from the walsender, hands each pgoutput message to the
 * decoder and sends the server standby status updates.
 *
 * Owns the feedback rule everything downstream rests on: the flush
 * position the server may recycle WAL up to is never past the supervisor's
 * last ack, and stand-alone never past where streaming started. Owns the
 * idle "pos" frame's position. Never decodes a message, never exits.
 */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "capture.h"
#include "capture-pg.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "xio.h"

#define XLOGDATA_HDR	25	/* 'w', dataStart, walEnd, sendTime */
#define KEEPALIVE_LEN	18	/* 'k', walEnd, sendTime, replyRequested */
#define STATUS_LEN	34	/* 'r', write, flush, apply, sendTime, reply */
/*
 * A walsender that cannot finish (a fast shutdown waiting for a flush
 * position we may not confirm yet) asks for a reply after every reply; an
 * immediate answer each time makes both processes spin. Replies are spaced
 * at least this far apart, far below any wal_sender_timeout.
 */
#define REPLY_MIN_MS	100
/* libpq's last error, on one line */
static const char *
conn_error(PGconn *c, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%s", PQerrorMessage(c));
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	if (n == 0)
		snprintf(buf, len, "connection closed");
	return buf;
}

static int
lost(struct walstream *ws, struct p2o_err *e)
{
	char msg[512];

	return p2o_fail(e, P2O_EXIT_TEMPFAIL, "replication connection lost: "
	    "%s", conn_error(ws->conn, msg, sizeof(msg)));
}

static uint64_t
get_be64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void
put_be64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

void
walstream_init(struct walstream *ws, struct pg_conn *conn,
    struct pgo_decoder *dec, uint64_t start)
{
	memset(ws, 0, sizeof(*ws));
	ws->conn = conn;
	ws->dec = dec;
	ws->start = start;
	ws->flushed = start;
}

/*
 * What the server may consider done: the last ack, but never below where
 * we started (that would move the slot back) and never past what we have
 * received (an ack for a position we never sent is somebody's bug).
 */
static uint64_t
flush_position(const struct walstream *ws)
{
	uint64_t f = ws->acked;

	if (f > ws->received)
		f = ws->received;
	if (f < ws->start)
		f = ws->start;
	return f;
}

static int
send_status(struct walstream *ws, struct p2o_err *e)
{
	unsigned char msg[STATUS_LEN];
	uint64_t flush = flush_position(ws);
	uint64_t write = ws->received > flush ? ws->received : flush;
	char w[LSN_TEXT_MAX], f[LSN_TEXT_MAX];

	msg[0] = 'r';
	put_be64(msg + 1, write);
	put_be64(msg + 9, flush);
	put_be64(msg + 17, flush);	/* apply: nothing applies later */
	put_be64(msg + 25, (uint64_t)(now_us_wall() - PG_EPOCH_OFFSET_US));
	msg[33] = 0;
	if (PQputCopyData(ws->conn, (const char *)msg, sizeof(msg)) != 1 ||
	    PQflush(ws->conn) != 0)
		return lost(ws, e);
	if (flush != ws->flushed && log_level_enabled(LOG_LVL_DEBUG)) {
		lsn_format(write, w);
		lsn_format(flush, f);
		log_debug("confirmed %s to the server (received %s)", f, w);
	}
	ws->flushed = flush;
	ws->last_status_ms = now_ms();
	ws->reply_pending = 0;
	return 0;
}

static int
handle_message(struct walstream *ws, const unsigned char *buf, size_t len,
    struct sbuf *out, struct p2o_err *e)
{
	uint64_t lsn;

	switch (buf[0]) {
	case 'w':
		if (len < XLOGDATA_HDR)
			return p2o_fail(e, P2O_EXIT_TEMPFAIL, "replication "
			    "protocol error: XLogData of %zu bytes", len);
		/* 0 for every message but a callback's last: harmless */
		if ((lsn = get_be64(buf + 1)) > ws->received)
			ws->received = lsn;
		ws->dec->rx_us = now_us_wall();
		ws->dec->tx_us = (long long)get_be64(buf + 17) +
		    PG_EPOCH_OFFSET_US;
		if (pgo_decode(ws->dec, buf + XLOGDATA_HDR,
		    len - XLOGDATA_HDR, out) == -1) {
			*e = ws->dec->err;
			return -1;
		}
		return 0;
	case 'k':
		if (len < KEEPALIVE_LEN)
			return p2o_fail(e, P2O_EXIT_TEMPFAIL, "replication "
			    "protocol error: keepalive of %zu bytes", len);
		lsn = get_be64(buf + 1);
		if (lsn > ws->walend)
			ws->walend = lsn;
		if (lsn > ws->received)
			ws->received = lsn;
		/* the server asks for an answer (near its timeout, or
		 * waiting at shutdown) */
		if (buf[17]) {
			if (now_ms() - ws->last_status_ms >= REPLY_MIN_MS)
				return send_status(ws, e);
			ws->reply_pending = 1;
		}
		return 0;
	default:
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "replication protocol "
		    "error: message type 0x%02x", buf[0]);
	}
}

/* the server ended the COPY: say why */
static int
copy_ended(struct walstream *ws, struct p2o_err *e)
{
	char msg[512];
	PGresult *res = PQgetResult(ws->conn);
	ExecStatusType rs = PQresultStatus(res);
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) :
	    NULL;
	int code = P2O_EXIT_TEMPFAIL, newer_pub = 0;

	if (rs == PGRES_COMMAND_OK || rs == PGRES_COPY_OUT)
		snprintf(msg, sizeof(msg), "the server ended the stream");
	else {
		snprintf(msg, sizeof(msg), "%s", res ?
		    PQresultErrorMessage(res) : PQerrorMessage(ws->conn));
		msg[strcspn(msg, "\n")] = '\0';
	}
	/*
	 * Errors that a restart would meet again at the same position: a
	 * publication created after the slot's position (pgoutput looks
	 * it up as of each change), a slot that lost its WAL.
	 */
	if (state != NULL && (strcmp(state, "42704") == 0 ||
	    strcmp(state, "55000") == 0)) {
		code = P2O_EXIT_REFUSED;
		newer_pub = strcmp(state, "42704") == 0;
	}
	PQclear(res);
	if (code == P2O_EXIT_REFUSED)
		return p2o_fail(e, code, "the server refuses to decode the "
		    "slot: %s%s", msg, newer_pub ? " (a publication newer "
		    "than the slot's position cannot decode what the slot "
		    "holds from before it: drop the slot and load the tables "
		    "again)" : "");
	return p2o_fail(e, code, "replication connection lost: %s",
	    msg[0] ? msg : "connection closed");
}

/*
 * Decode everything the server has sent, until nothing more is waiting or
 * the stdout buffer reaches its cap: then the loop writes. Above the cap
 * the socket is left unread, so the server's send buffer fills and the
 * walsender waits; it keeps processing our status updates meanwhile, so
 * wal_sender_timeout does not fire.
 */
static int
ws_read(void *src, struct outq *out, long long now, struct p2o_err *e)
{
	struct walstream *ws = src;
	char *buf;
	int n, consumed = 0;

	(void)now;
	while (outq_pending(out) < CAPTURE_OUT_CAP) {
		n = PQgetCopyData(ws->conn, &buf, 1);
		if (n > 0) {
			consumed = 0;
			n = handle_message(ws, (unsigned char *)buf, n,
			    &out->buf, e);
			PQfreemem(buf);
			if (n == -1)
				return -1;
			continue;
		}
		if (n == -1)
			return copy_ended(ws, e);
		if (n < -1)
			return lost(ws, e);
		/* nothing complete buffered: one look at the socket */
		if (consumed)
			break;
		if (!PQconsumeInput(ws->conn))
			return lost(ws, e);
		consumed = 1;
	}
	/* the loop waits next: what was decoded is closed now, its
	 * parents read once for the whole burst */
	if (pgo_flush(ws->dec, &out->buf) == -1) {
		*e = ws->dec->err;
		return -1;
	}
	return 0;
}

static int
ws_socket(void *src)
{
	return PQsocket(((struct walstream *)src)->conn);
}

static long long
ws_due(void *src, int reading)
{
	const struct walstream *ws = src;

	if (ws->reply_pending)
		return ws->last_status_ms + REPLY_MIN_MS;
	return ws->last_status_ms + (reading ? WALSTREAM_STATUS_MS :
	    WALSTREAM_PAUSED_STATUS_MS);
}

/* a standby status update is due: also while stdout is full and the
 * socket unread, since only these keep wal_sender_timeout away then */
static int
ws_tick(void *src, long long now, int reading, int running,
    struct p2o_err *e)
{
	(void)now, (void)reading, (void)running;
	return send_status(src, e);
}

/* let the server recycle WAL as soon as it is safe */
static int
ws_acked(void *src, uint64_t acked, struct p2o_err *e)
{
	struct walstream *ws = src;

	ws->acked = acked;
	if (flush_position(ws) != ws->flushed)
		return send_status(ws, e);
	return 0;
}

static uint64_t
last_emitted(const struct walstream *ws)
{
	uint64_t p = ws->start;

	if (ws->dec->last_commit > p)
		p = ws->dec->last_commit;
	if (ws->last_pos > p)
		p = ws->last_pos;
	return p;
}

/* a transaction's frames wait for its Commit (capture.h) */
static int
ws_in_txn(void *src)
{
	return ((struct walstream *)src)->dec->in_txn;
}

/*
 * An idle slot moves only through the server's keepalive end: with no
 * transaction open, everything before walEnd has been sent, so a pos
 * frame carries it through the pipeline and comes back as an ack.
 */
static int
ws_pos_owed(void *src)
{
	const struct walstream *ws = src;

	/* a held commit (pgo_flush) is a transaction still open */
	return !ws->dec->in_txn && !ws->dec->held &&
	    ws->walend > last_emitted(ws);
}

static void
ws_put_pos(void *src, struct sbuf *out)
{
	struct walstream *ws = src;
	char lsn[LSN_TEXT_MAX];

	lsn_format(ws->walend, lsn);
	msg_put_pos(out, ws->walend, lsn);
	ws->last_pos = ws->walend;
}

static void
ws_counters(void *src, uint64_t acked, uint64_t v[CAPTURE_NSTATS])
{
	const struct walstream *ws = src;
	const struct pgo_counters *c = &ws->dec->n;

	(void)acked;
	v[0] = c->inserts;
	v[1] = c->updates;
	v[2] = c->deletes;
	v[3] = c->truncates;
	v[4] = c->commits;
	v[5] = ws->flushed;
	v[6] = ws->received;
}

/* CopyDone: the server ends the stream once it has what it needs */
static int
ws_finish(void *src, struct p2o_err *e)
{
	struct walstream *ws = src;

	if (PQputCopyEnd(ws->conn, NULL) != 1 || PQflush(ws->conn) != 0)
		return lost(ws, e);
	return 1;
}

/* after CopyDone: discard what is still in flight until the server ends */
static int
ws_finish_read(void *src, int *done, struct p2o_err *e)
{
	struct walstream *ws = src;
	char *buf;
	int n;

	if (!PQconsumeInput(ws->conn))
		return lost(ws, e);
	while ((n = PQgetCopyData(ws->conn, &buf, 1)) > 0)
		PQfreemem(buf);
	if (n == -1) {
		PQclear(PQgetResult(ws->conn));
		*done = 1;
	} else if (n < -1)
		return lost(ws, e);
	return 0;
}

static void
ws_where(void *src, char *buf, size_t len)
{
	const struct walstream *ws = src;
	char r[LSN_TEXT_MAX], f[LSN_TEXT_MAX];

	lsn_format(ws->received, r);
	lsn_format(ws->flushed, f);
	snprintf(buf, len, "received %s, confirmed %s to the server", r, f);
}

const struct capture_ops walstream_ops = {
	.tool = "capture-pg",
	.read = ws_read,
	.socket = ws_socket,
	.due = ws_due,
	.tick = ws_tick,
	.acked = ws_acked,
	.in_txn = ws_in_txn,
	.pos_owed = ws_pos_owed,
	.put_pos = ws_put_pos,
	.counters = ws_counters,
	.finish = ws_finish,
	.finish_read = ws_finish_read,
	.where = ws_where,
};
