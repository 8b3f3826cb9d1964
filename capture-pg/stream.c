/*
 * stream.c - capture-pg's replication loop. Reads CopyData from the
 * walsender, hands each pgoutput message to the decoder, writes the frames
 * it makes to stdout, reads acks on fd 3 and sends the server standby
 * status updates.
 *
 * Owns the feedback rule everything downstream rests on: the flush
 * position the server may recycle WAL up to is never past the supervisor's
 * last ack, and stand-alone never past where streaming started. Owns the
 * idle "pos" frame, the only frame it builds itself. Never decodes a
 * message, never exits.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "capture.h"
#include "ctl.h"
#include "frame.h"
#include "jscan.h"
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
#define FINISH_MS	10000	/* after CopyDone, wait this long for the end */

enum phase {
	RUNNING,	/* streaming */
	DRAINING,	/* stop asked: emptying the stdout buffer */
	AWAITING_ACK,	/* stdout closed: waiting for the last ack */
	FINISHING,	/* CopyDone sent: waiting for the server's end */
};

/* what the capture reports, in the order counters() fills them */
static const enum msg_counter stat_ids[] = {
	MC_EVENTS_INSERT, MC_EVENTS_UPDATE, MC_EVENTS_DELETE,
	MC_EVENTS_TRUNCATE, MC_COMMITS, MC_CONFIRMED_POS, MC_RECEIVED_POS,
};
#define NSTATS	(sizeof(stat_ids) / sizeof(stat_ids[0]))
_Static_assert(NSTATS == sizeof(((struct stream *)0)->stats_sent) /
    sizeof(uint64_t), "stats_sent holds one value per counter");

static int
fail(struct stream *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct stream *st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->err, sizeof(st->err), fmt, ap);
	va_end(ap);
	st->exit_code = code;
	return -1;
}

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
lost(struct stream *st)
{
	char msg[512];

	return fail(st, P2O_EXIT_TEMPFAIL, "replication connection lost: %s",
	    conn_error(st->conn, msg, sizeof(msg)));
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
stream_init(struct stream *st, struct pg_conn *conn, struct pgo_decoder *dec,
    struct ctl *ctl, uint64_t start, const volatile sig_atomic_t *stop)
{
	memset(st, 0, sizeof(*st));
	st->conn = conn;
	st->dec = dec;
	st->ctl = ctl;
	st->stop = stop;
	outq_init(&st->out, P2O_FD_OUT);
	st->start = start;
	st->flushed = start;
}

void
stream_release(struct stream *st)
{
	outq_close(&st->out);
}

/*
 * What the server may consider done: the last ack, but never below where
 * we started (that would move the slot back) and never past what we have
 * received (an ack for a position we never sent is somebody's bug).
 */
static uint64_t
flush_position(const struct stream *st)
{
	uint64_t f = st->acked;

	if (f > st->received)
		f = st->received;
	if (f < st->start)
		f = st->start;
	return f;
}

static int
send_status(struct stream *st)
{
	unsigned char msg[STATUS_LEN];
	uint64_t flush = flush_position(st);
	uint64_t write = st->received > flush ? st->received : flush;
	char w[32], f[32];

	msg[0] = 'r';
	put_be64(msg + 1, write);
	put_be64(msg + 9, flush);
	put_be64(msg + 17, flush);	/* apply: nothing applies later */
	put_be64(msg + 25, (uint64_t)(now_us_wall() - PG_EPOCH_OFFSET_US));
	msg[33] = 0;
	if (PQputCopyData(st->conn, (const char *)msg, sizeof(msg)) != 1 ||
	    PQflush(st->conn) != 0)
		return lost(st);
	if (flush != st->flushed && log_level_enabled(LOG_LVL_DEBUG)) {
		lsn_format(write, w);
		lsn_format(flush, f);
		log_debug("confirmed %s to the server (received %s)", f, w);
	}
	st->flushed = flush;
	st->last_status_ms = now_ms();
	st->reply_pending = 0;
	return 0;
}

static long long
status_due(const struct stream *st, int reading)
{
	if (st->reply_pending)
		return st->last_status_ms + REPLY_MIN_MS;
	return st->last_status_ms + (reading ? STREAM_STATUS_MS :
	    STREAM_PAUSED_STATUS_MS);
}

static int
handle_message(struct stream *st, const unsigned char *buf, size_t len)
{
	uint64_t lsn;

	switch (buf[0]) {
	case 'w':
		if (len < XLOGDATA_HDR)
			return fail(st, P2O_EXIT_TEMPFAIL, "replication "
			    "protocol error: XLogData of %zu bytes", len);
		/* 0 for every message but a callback's last: harmless */
		if ((lsn = get_be64(buf + 1)) > st->received)
			st->received = lsn;
		if (pgo_decode(st->dec, buf + XLOGDATA_HDR,
		    len - XLOGDATA_HDR, &st->out.buf) == -1)
			return fail(st, st->dec->exit_code ?
			    st->dec->exit_code : P2O_EXIT_DATA, "%s",
			    st->dec->err);
		return 0;
	case 'k':
		if (len < KEEPALIVE_LEN)
			return fail(st, P2O_EXIT_TEMPFAIL, "replication "
			    "protocol error: keepalive of %zu bytes", len);
		lsn = get_be64(buf + 1);
		if (lsn > st->walend)
			st->walend = lsn;
		if (lsn > st->received)
			st->received = lsn;
		/* the server asks for an answer (near its timeout, or
		 * waiting at shutdown) */
		if (buf[17]) {
			if (now_ms() - st->last_status_ms >= REPLY_MIN_MS)
				return send_status(st);
			st->reply_pending = 1;
		}
		return 0;
	default:
		return fail(st, P2O_EXIT_TEMPFAIL, "replication protocol "
		    "error: message type 0x%02x", buf[0]);
	}
}

/* the server ended the COPY: say why */
static int
copy_ended(struct stream *st)
{
	char msg[512];
	PGresult *res = PQgetResult(st->conn);
	ExecStatusType rs = PQresultStatus(res);
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) :
	    NULL;
	int code = P2O_EXIT_TEMPFAIL;

	if (rs == PGRES_COMMAND_OK || rs == PGRES_COPY_OUT)
		snprintf(msg, sizeof(msg), "the server ended the stream");
	else {
		snprintf(msg, sizeof(msg), "%s", res ?
		    PQresultErrorMessage(res) : PQerrorMessage(st->conn));
		msg[strcspn(msg, "\n")] = '\0';
	}
	/*
	 * Errors that a restart would meet again at the same position: a
	 * publication created after the slot's position (pgoutput looks
	 * it up as of each change), a slot that lost its WAL.
	 */
	if (state != NULL && (strcmp(state, "42704") == 0 ||
	    strcmp(state, "55000") == 0))
		code = P2O_EXIT_REFUSED;
	PQclear(res);
	if (code == P2O_EXIT_REFUSED)
		return fail(st, code, "the server refuses to decode the slot: "
		    "%s%s", msg, strcmp(state, "42704") == 0 ? " (a "
		    "publication newer than the slot's position cannot decode "
		    "what the slot holds from before it: drop the slot and "
		    "load the tables again)" : "");
	return fail(st, code, "replication connection lost: %s",
	    msg[0] ? msg : "connection closed");
}

/*
 * Decode everything the server has sent, until nothing more is waiting or
 * the stdout buffer reaches its cap: then the caller writes. Above the cap
 * the socket is left unread, so the server's send buffer fills and the
 * walsender waits; it keeps processing our status updates meanwhile, so
 * wal_sender_timeout does not fire.
 */
static int
read_server(struct stream *st)
{
	char *buf;
	int n, consumed = 0;

	while (outq_pending(&st->out) < STREAM_OUT_CAP) {
		n = PQgetCopyData(st->conn, &buf, 1);
		if (n > 0) {
			consumed = 0;
			n = handle_message(st, (unsigned char *)buf, n);
			PQfreemem(buf);
			if (n == -1)
				return -1;
			continue;
		}
		if (n == -1)
			return copy_ended(st);
		if (n < -1)
			return lost(st);
		/* nothing complete buffered: one look at the socket */
		if (consumed)
			return 0;
		if (!PQconsumeInput(st->conn))
			return lost(st);
		consumed = 1;
	}
	return 0;
}

/* after CopyDone: discard what is still in flight until the server ends */
static int
finish_server(struct stream *st, int *done)
{
	char *buf;
	int n;

	if (!PQconsumeInput(st->conn))
		return lost(st);
	while ((n = PQgetCopyData(st->conn, &buf, 1)) > 0)
		PQfreemem(buf);
	if (n == -1) {
		PQclear(PQgetResult(st->conn));
		*done = 1;
	} else if (n < -1)
		return lost(st);
	return 0;
}

static int
write_out(struct stream *st)
{
	if (outq_write(&st->out) == -1)
		return fail(st, P2O_EXIT_TEMPFAIL, "stdout: %s",
		    strerror(errno));
	return 0;
}

static uint64_t
last_emitted(const struct stream *st)
{
	uint64_t p = st->start;

	if (st->dec->last_commit > p)
		p = st->dec->last_commit;
	if (st->last_pos > p)
		p = st->last_pos;
	return p;
}

/* 1 when a pos frame is owed as soon as the rate limit allows */
static int
pos_owed(const struct stream *st)
{
	return !st->dec->in_txn && st->walend > last_emitted(st);
}

/*
 * An idle slot moves only through the server's keepalive end: with no
 * transaction open, everything before walEnd has been sent, so a pos
 * frame carries it through the pipeline and comes back as an ack.
 */
static void
emit_pos(struct stream *st, long long now)
{
	char lsn[LSN_TEXT_MAX];

	if (!pos_owed(st) || now - st->last_pos_ms < STREAM_POS_MS)
		return;
	lsn_format(st->walend, lsn);
	msg_put_pos(&st->out.buf, st->walend, lsn);
	st->last_pos = st->walend;
	st->last_pos_ms = now;
}

static void
counters(const struct stream *st, uint64_t v[NSTATS])
{
	const struct pgo_counters *c = &st->dec->n;

	v[0] = c->inserts;
	v[1] = c->updates;
	v[2] = c->deletes;
	v[3] = c->truncates;
	v[4] = c->commits;
	v[5] = st->flushed;
	v[6] = st->received;
}

/* 0, 1 when the supervisor has closed fd 3, -1 on error */
static int
send_stats(struct stream *st, long long now)
{
	uint64_t v[NSTATS];
	int rc;

	if (now - st->last_stats_ms < STREAM_STATS_MS)
		return 0;
	/* the poll timeout follows last_stats_ms: move it even when
	 * nothing changed, or the loop would spin */
	st->last_stats_ms = now;
	counters(st, v);
	rc = ctl_send_stats(st->ctl, "capture-pg", stat_ids, v,
	    st->stats_sent, NSTATS);
	if (rc == -1)
		return fail(st, P2O_EXIT_TEMPFAIL, "control fd 3: %s",
		    strerror(errno));
	return rc;
}

/* acks from the supervisor; *eof once it closed fd 3 */
static int
read_ctl(struct stream *st, int *eof)
{
	uint64_t before = st->acked;

	if (ctl_read_acks(st->ctl, &st->acked, eof, &st->exit_code, st->err,
	    sizeof(st->err)) == -1)
		return -1;
	/* let the server recycle WAL as soon as it is safe */
	if (st->acked > before && flush_position(st) != st->flushed)
		return send_status(st);
	return 0;
}

int
stream_run(struct stream *st)
{
	enum phase phase = RUNNING;
	struct pollfd pfd[3];
	int npfd, rc, i, ctl_on, ctl_eof = 0, done = 0, reading;
	int sock = PQsocket(st->conn);
	long long now, wake, deadline = 0;
	char at[32];

	ctl_on = ctl_active(st->ctl);
	/* a full pipe must not stop the feedback: stdout is polled */
	if (set_nonblock(st->out.fd, 1) == -1)
		return fail(st, P2O_EXIT_INTERNAL, "stdout: %s",
		    strerror(errno));
	if (send_status(st) == -1)
		return st->exit_code;

	for (;;) {
		now = now_ms();
		if (phase == RUNNING && *st->stop) {
			lsn_format(st->received, at);
			log_info("stopping: received up to %s; flushing "
			    "stdout", at);
			phase = DRAINING;
		}
		if (phase == RUNNING) {
			if (read_server(st) == -1)
				return st->exit_code;
			emit_pos(st, now);
		}
		if (st->out.fd >= 0 && write_out(st) == -1)
			return st->exit_code;
		if (phase == DRAINING && outq_pending(&st->out) == 0) {
			close(st->out.fd);
			st->out.fd = -1;
			phase = AWAITING_ACK;
			deadline = now + STREAM_DRAIN_MS;
			if (ctl_on && !ctl_eof)
				log_info("stdout closed; waiting up to %d s "
				    "for the last ack", STREAM_DRAIN_MS / 1000);
		}
		if (phase == AWAITING_ACK && (!ctl_on || ctl_eof ||
		    now >= deadline)) {
			if (ctl_on && !ctl_eof)
				log_warnx("no end of control fd 3 within %d s; "
				    "confirming nothing more",
				    STREAM_DRAIN_MS / 1000);
			if (PQputCopyEnd(st->conn, NULL) != 1 ||
			    PQflush(st->conn) != 0)
				return lost(st);
			phase = FINISHING;
			deadline = now + FINISH_MS;
		}
		if (phase == FINISHING && (done || now >= deadline))
			break;
		/*
		 * While the socket is left unread the server's keepalives
		 * wait in it unanswered: only our own status updates keep
		 * wal_sender_timeout (which may be a few seconds) away.
		 */
		reading = (phase == RUNNING &&
		    outq_pending(&st->out) < STREAM_OUT_CAP) ||
		    phase == FINISHING;
		if (now >= status_due(st, reading) && send_status(st) == -1)
			return st->exit_code;
		if (ctl_on && !ctl_eof && (rc = send_stats(st, now)) != 0) {
			if (rc == -1)
				return st->exit_code;
			ctl_eof = 1;
		}

		npfd = 0;
		wake = status_due(st, reading);
		if (reading)
			pfd[npfd++] = (struct pollfd){ sock, POLLIN, 0 };
		if (st->out.fd >= 0 && outq_pending(&st->out) > 0)
			pfd[npfd++] = (struct pollfd){ st->out.fd, POLLOUT, 0 };
		if (ctl_on && !ctl_eof) {
			pfd[npfd++] = (struct pollfd){ st->ctl->fd, POLLIN, 0 };
			if (st->last_stats_ms + STREAM_STATS_MS < wake)
				wake = st->last_stats_ms + STREAM_STATS_MS;
		}
		if (phase == RUNNING && pos_owed(st) &&
		    st->last_pos_ms + STREAM_POS_MS < wake)
			wake = st->last_pos_ms + STREAM_POS_MS;
		if (phase >= AWAITING_ACK && deadline < wake)
			wake = deadline;

		rc = poll(pfd, npfd, wake > now ? (int)(wake - now) : 0);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return fail(st, P2O_EXIT_INTERNAL, "poll: %s",
			    strerror(errno));
		}
		for (i = 0; i < npfd; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == sock && phase == FINISHING)
				rc = finish_server(st, &done);
			else if (pfd[i].fd == sock)
				rc = PQconsumeInput(st->conn) ? 0 : lost(st);
			else if (ctl_on && pfd[i].fd == st->ctl->fd)
				rc = read_ctl(st, &ctl_eof);
			else
				rc = 0;	/* stdout: written at the top */
			if (rc == -1)
				return st->exit_code;
		}
		if (ctl_on && ctl_eof && phase == RUNNING) {
			/* the supervisor is gone: nothing more will be
			 * acked, so nothing more is confirmed */
			lsn_format(st->flushed, at);
			log_warnx("control fd 3 closed; confirming nothing "
			    "past %s", at);
			ctl_on = 0;
		}
	}
	lsn_format(st->flushed, at);
	log_info("stopped; confirmed %s to the server", at);
	return 0;
}
