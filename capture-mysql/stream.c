/*
 * stream.c - capture-mysql's loop: reads the binlog dump, hands each event
 * to the assembler, writes the frames it makes to stdout, records the
 * supervisor's acks from fd 3, reports stats, and drains on SIGTERM.
 *
 * Owns back-pressure (above STREAM_OUT_CAP of unwritten frames the dump is
 * left unread, so the server's send buffer fills and it waits), the idle
 * pos frame's pace, and the silence limit (the server sends a heartbeat
 * every SRC_HEARTBEAT_S while idle: a dump that says nothing for
 * SRC_SILENCE_MS is dead). MySQL keeps no consumer position, so an ack is
 * only recorded: nothing is confirmed to the server. Never decodes an
 * event, never exits.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "frame.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "server.h"
#include "xio.h"

/* events decoded before the loop looks at stdout and fd 3 again */
#define EVENTS_PER_TURN	256

enum phase {
	RUNNING,	/* streaming */
	DRAINING,	/* stop asked: emptying the stdout buffer */
	AWAITING_ACK,	/* stdout closed: waiting for fd 3 to close */
};

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

void
stream_init(struct stream *st, struct my_source *src, struct txn *txn,
    struct ctl *ctl, const volatile sig_atomic_t *stop)
{
	memset(st, 0, sizeof(*st));
	st->src = src;
	st->txn = txn;
	st->ctl = ctl;
	st->stop = stop;
	outq_init(&st->out, P2O_FD_OUT);
	st->last_event_ms = now_ms();
}

void
stream_release(struct stream *st)
{
	outq_close(&st->out);
}

/* the position the stream has read up to, in the checkpoint's terms */
static uint64_t
received(const struct stream *st)
{
	const struct txn *t = st->txn;

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
read_server(struct stream *st, long long now)
{
	const unsigned char *ev;
	size_t len;
	int n;

	for (n = 0; n < EVENTS_PER_TURN &&
	    outq_pending(&st->out) < STREAM_OUT_CAP; n++) {
		if (!src_buffered(st->src) && !readable(src_socket(st->src)))
			break;
		if (src_read_event(st->src, &ev, &len) == -1)
			return fail(st, st->src->exit_code, "%s",
			    st->src->err);
		st->last_event_ms = now;
		if (txn_event(st->txn, ev, len, &st->out.buf) == -1)
			return fail(st, st->txn->exit_code, "%s",
			    st->txn->err);
	}
	/* silence counts only while the server is waited for: a stdout
	 * that does not drain (the target is down) stops the reads */
	if (outq_pending(&st->out) >= STREAM_OUT_CAP)
		st->last_event_ms = now;
	if (now - st->last_event_ms > SRC_SILENCE_MS)
		return fail(st, P2O_EXIT_TEMPFAIL, "dump connection lost: "
		    "nothing from the server, not even a heartbeat, in %d s",
		    SRC_SILENCE_MS / 1000);
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

/* a group that touched no configured table still moves the checkpoint,
 * at most once a second */
static void
emit_pos(struct stream *st, long long now)
{
	if (!txn_pos_owed(st->txn) || now - st->last_pos_ms < STREAM_POS_MS)
		return;
	txn_put_pos(st->txn, &st->out.buf);
	st->last_pos_ms = now;
}

/* 0, 1 when the supervisor has closed fd 3, -1 on error */
static int
send_stats(struct stream *st, long long now)
{
	const struct txn_counters *c = &st->txn->n;
	uint64_t v[NSTATS];
	int rc;

	if (now - st->last_stats_ms < STREAM_STATS_MS)
		return 0;
	st->last_stats_ms = now;
	v[0] = c->inserts;
	v[1] = c->updates;
	v[2] = c->deletes;
	v[3] = c->truncates;
	v[4] = c->commits;
	v[5] = st->acked;
	v[6] = received(st);
	rc = ctl_send_stats(st->ctl, "capture-mysql", stat_ids, v,
	    st->stats_sent, NSTATS);
	if (rc == -1)
		return fail(st, P2O_EXIT_TEMPFAIL, "control fd 3: %s",
		    strerror(errno));
	return rc;
}

/* acks from the supervisor, recorded; *eof once it closed fd 3 */
static int
read_ctl(struct stream *st, int *eof)
{
	uint64_t before = st->acked;

	if (ctl_read_acks(st->ctl, &st->acked, eof, &st->exit_code, st->err,
	    sizeof(st->err)) == -1)
		return -1;
	if (st->acked > before)
		log_debug("acked %llu", (unsigned long long)st->acked);
	return 0;
}

int
stream_run(struct stream *st)
{
	enum phase phase = RUNNING;
	struct pollfd pfd[3];
	int npfd, rc, i, ctl_on, ctl_eof = 0, reading;
	int sock = src_socket(st->src);
	long long now, wake, deadline = 0;

	ctl_on = ctl_active(st->ctl);
	if (set_nonblock(st->out.fd, 1) == -1)
		return fail(st, P2O_EXIT_INTERNAL, "stdout: %s",
		    strerror(errno));
	for (;;) {
		now = now_ms();
		if (phase == RUNNING && *st->stop) {
			log_info("stopping: read up to %llu; flushing stdout",
			    (unsigned long long)received(st));
			phase = DRAINING;
		}
		if (phase == RUNNING) {
			if (read_server(st, now) == -1)
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
				log_warnx("no end of control fd 3 within %d s",
				    STREAM_DRAIN_MS / 1000);
			break;
		}
		if (ctl_on && !ctl_eof && (rc = send_stats(st, now)) != 0) {
			if (rc == -1)
				return st->exit_code;
			ctl_eof = 1;
		}

		reading = phase == RUNNING && outq_pending(&st->out) < STREAM_OUT_CAP;
		/* bytes already in the client library: no need to wait */
		if (reading && src_buffered(st->src))
			continue;
		npfd = 0;
		wake = st->last_event_ms + SRC_SILENCE_MS + 1;
		if (reading)
			pfd[npfd++] = (struct pollfd){ sock, POLLIN, 0 };
		if (st->out.fd >= 0 && outq_pending(&st->out) > 0)
			pfd[npfd++] = (struct pollfd){ st->out.fd, POLLOUT, 0 };
		if (ctl_on && !ctl_eof) {
			pfd[npfd++] = (struct pollfd){ st->ctl->fd, POLLIN, 0 };
			if (st->last_stats_ms + STREAM_STATS_MS < wake)
				wake = st->last_stats_ms + STREAM_STATS_MS;
		}
		if (phase == RUNNING && txn_pos_owed(st->txn) &&
		    st->last_pos_ms + STREAM_POS_MS < wake)
			wake = st->last_pos_ms + STREAM_POS_MS;
		if (phase != RUNNING && deadline && deadline < wake)
			wake = deadline;
		if (phase == DRAINING && wake > now + 100)
			wake = now + 100;

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
			if (ctl_on && pfd[i].fd == st->ctl->fd &&
			    read_ctl(st, &ctl_eof) == -1)
				return st->exit_code;
		}
		if (ctl_on && ctl_eof && phase == RUNNING) {
			log_warnx("control fd 3 closed; acks no longer arrive");
			ctl_on = 0;
		}
	}
	log_info("stopped at %llu (last ack %llu)",
	    (unsigned long long)received(st), (unsigned long long)st->acked);
	return 0;
}
