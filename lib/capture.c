/*
 * capture.c - a capture's poll loop (capture.h), for every source. Owns
 * the phases of a shutdown (stop reading, empty and close stdout, wait
 * for the last ack, end the server's side), back-pressure (above
 * CAPTURE_OUT_CAP the server is left unread, so its send buffer fills
 * and it waits), the pace of bare pos frames and of stats, that the
 * only positions a source hears of are the supervisor's acks, and that a
 * source that asks to be held (held()) is not read until an ack frees it
 * (an end of fd 3 while it is held stops the capture there). Owns too
 * the command line every capture takes and the rule of its start token
 * (capture_start_token); the position's text is the source's to parse.
 *
 * It never reads the server's bytes or decodes anything (the source's
 * callbacks do) and never exits.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "ctl.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "trace.h"
#include "xio.h"

enum phase {
	RUNNING,	/* streaming */
	DRAINING,	/* stop asked: emptying the stdout buffer */
	AWAITING_ACK,	/* stdout closed: waiting for the last ack */
	FINISHING,	/* the server's side is ending */
};

static const enum msg_counter stat_ids[CAPTURE_NSTATS] = {
	MC_EVENTS_INSERT, MC_EVENTS_UPDATE, MC_EVENTS_DELETE,
	MC_EVENTS_TRUNCATE, MC_COMMITS, MC_CONFIRMED_POS, MC_RECEIVED_POS,
	MC_TRACE_DROPPED_CAPTURE,
};

const struct option capture_longopts[] = {
	{ "start-pos", required_argument, NULL, 'L' },
	{ "start-token", required_argument, NULL, 'T' },
	{ "new-stream", no_argument, NULL, 'N' },
	{ NULL, 0, NULL, 0 }
};

int
capture_option(void *args, int ch, const char *val, struct p2o_err *e)
{
	struct capture_args *a = args;

	/* read by the source's main.c, which knows what they mean */
	if (ch == 'L')
		a->pos = val;
	else if (ch == 'N')
		a->new_stream = 1;
	else
		a->token = val;
	return 0;
}

int
capture_start_token(const struct capture_args *a, uint64_t coord, int exact,
    uint64_t *token, struct p2o_err *e)
{
	char *end;

	*token = coord;
	if (a->token == NULL)
		return 0;
	errno = 0;
	*token = strtoull(a->token, &end, 10);
	/* strtoull reads "-5" as a huge number: a sign is no number here */
	if (a->pos == NULL || errno || *end || end == a->token ||
	    (*a->token < '0' || *a->token > '9'))
		return p2o_fail(e, P2O_EXIT_USAGE, "--start-token '%s' needs "
		    "--start-pos and must be a number", a->token);
	if (exact ? *token != coord : *token < coord)
		return p2o_fail(e, P2O_EXIT_CHECKPOINT, "--start-token %" PRIu64
		    " is %s the position of --start-pos (%" PRIu64 "): "
		    "refusing a checkpoint that disagrees with itself", *token,
		    exact ? "not" : "below", coord);
	return 0;
}

void
capture_init(struct capture *c, const struct capture_ops *ops, void *src,
    struct ctl *ctl, const volatile sig_atomic_t *stop)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->src = src;
	c->ctl = ctl;
	c->stop = stop;
	outq_init(&c->out, P2O_FD_OUT);
}

void
capture_release(struct capture *c)
{
	outq_close(&c->out);
}

/* err for a failed system call; returns the exit code */
static int
sys_failed(struct capture *c, int code, const char *what)
{
	p2o_fail(&c->err, code, "%s: %s", what, strerror(errno));
	return code;
}

static const char *
where(const struct capture *c, char *buf, size_t len)
{
	c->ops->where(c->src, buf, len);
	return buf;
}

/* a transaction-less stretch of log still moves the checkpoint, at most
 * once a second */
static void
emit_pos(struct capture *c, long long now)
{
	if (!c->ops->pos_owed(c->src) || now - c->last_pos_ms < CAPTURE_POS_MS)
		return;
	c->ops->put_pos(c->src, &c->out.buf);
	c->last_pos_ms = now;
}

/*
 * 1 while stdout waits for the end of the transaction being read: writing
 * each row as it arrives wakes every stage below once a row. Only while
 * streaming; the wait is bounded by bytes and by time, so a transaction
 * the server sends slowly still flows.
 */
static int
holding_txn(struct capture *c, int running, long long now)
{
	size_t pending = outq_pending(&c->out);

	if (pending == 0)
		return 0;
	if (c->queued_ms == 0)
		c->queued_ms = now;
	return running && c->ops->in_txn != NULL && c->ops->in_txn(c->src) &&
	    pending < CAPTURE_TXN_BYTES &&
	    now - c->queued_ms < CAPTURE_TXN_MS;
}

/* 0, 1 when the supervisor has closed fd 3, -1 on error */
static int
send_stats(struct capture *c, long long now)
{
	uint64_t v[CAPTURE_NSTATS];
	int rc;

	if (now - c->last_stats_ms < CAPTURE_STATS_MS)
		return 0;
	/* the poll timeout follows last_stats_ms: move it even when
	 * nothing changed, or the loop would spin */
	c->last_stats_ms = now;
	c->ops->counters(c->src, c->acked, v);
	v[CAPTURE_NSTATS - 1] = trace_dropped();
	rc = ctl_send_stats(c->ctl, c->ops->tool, stat_ids, v, c->stats_sent,
	    CAPTURE_NSTATS);
	if (rc == -1)
		sys_failed(c, P2O_EXIT_TEMPFAIL, "control fd 3");
	return rc;
}

/* acks from the supervisor; *eof once it closed fd 3 */
static int
read_ctl(struct capture *c, int *eof)
{
	uint64_t before = c->acked;

	if (ctl_take_acks(c->ctl, &c->acked, eof, &c->err) == -1)
		return -1;
	if (c->acked > before) {
		/* a traced batch ends once its position is kept */
		trace_held_end(c->acked);
		return c->ops->acked(c->src, c->acked, &c->err);
	}
	return 0;
}

int
capture_run(struct capture *c)
{
	const struct capture_ops *o = c->ops;
	enum phase phase = RUNNING;
	struct pollfd pfd[3];
	int npfd, rc, i, ctl_on, ctl_eof = 0, done = 0, reading, held, hold;
	int grew = 0;	/* the last read decoded something */
	int sock = o->socket(c->src);
	long long now, wake, deadline = 0;
	char at[600];

	ctl_on = ctl_active(c->ctl);
	trace_batch_hold(ctl_on);
	/* a full pipe must not stop the source's own duties (the status
	 * updates a walsender times out without): stdout is polled */
	if (set_nonblock(c->out.fd, 1) == -1)
		return sys_failed(c, P2O_EXIT_INTERNAL, "stdout");

	for (;;) {
		now = now_ms();
		if (phase == RUNNING && *c->stop) {
			log_info("stopping: read up to %s; flushing stdout",
			    where(c, at, sizeof(at)));
			phase = DRAINING;
		}
		/* held: the source waits for an ack before it reads on, and
		 * its socket is not polled meanwhile (it would stay readable).
		 * An end of fd 3 does not free it: the source stops instead
		 * (below), before reading anything its stored start would
		 * not replay. */
		held = phase == RUNNING && ctl_on &&
		    o->held != NULL && o->held(c->src);
		if (phase == RUNNING && !held) {
			size_t before = outq_pending(&c->out);

			if (o->read(c->src, &c->out, now, &c->err) == -1)
				return c->err.code;
			grew = outq_pending(&c->out) > before;
			emit_pos(c, now);
		}
		hold = holding_txn(c, phase == RUNNING && !held, now);
		if (c->out.fd >= 0 && !hold && outq_write(&c->out) == -1)
			return sys_failed(c, P2O_EXIT_TEMPFAIL, "stdout");
		if (outq_pending(&c->out) == 0)
			c->queued_ms = 0;
		if (phase == DRAINING && outq_pending(&c->out) == 0) {
			close(c->out.fd);
			c->out.fd = -1;
			phase = AWAITING_ACK;
			deadline = now + CAPTURE_DRAIN_MS;
			if (ctl_on && !ctl_eof)
				log_info("stdout closed; waiting up to %d s "
				    "for the last ack",
				        CAPTURE_DRAIN_MS / 1000);
		}
		if (phase == AWAITING_ACK && (!ctl_on || ctl_eof ||
		    now >= deadline)) {
			if (ctl_on && !ctl_eof)
				log_warnx("no end of control fd 3 within %d s; "
				    "acknowledging nothing more",
				    CAPTURE_DRAIN_MS / 1000);
			rc = o->finish ? o->finish(c->src, &c->err) : 0;
			if (rc == -1)
				return c->err.code;
			if (rc == 0)
				break;
			phase = FINISHING;
			deadline = now + CAPTURE_FINISH_MS;
		}
		if (phase == FINISHING && (done || now >= deadline))
			break;
		/*
		 * While the socket is left unread the server's own messages
		 * wait in it unanswered: only the source's duties keep it
		 * from timing out (a walsender's wal_sender_timeout).
		 */
		reading = (phase == RUNNING && !held &&
		    outq_pending(&c->out) < CAPTURE_OUT_CAP) ||
		    phase == FINISHING;
		if (now >= o->due(c->src, reading) && o->tick(c->src, now,
		    reading, phase == RUNNING, &c->err) == -1)
			return c->err.code;
		if (phase == RUNNING && c->side != NULL &&
		    now >= c->side->due(c->side->arg))
			c->side->run(c->side->arg, now, ctl_on && !ctl_eof ?
			    c->ctl : NULL);
		if (ctl_on && !ctl_eof && (rc = send_stats(c, now)) != 0) {
			if (rc == -1)
				return c->err.code;
			ctl_eof = 1;
		}
		/* bytes already in the client library: no need to wait */
		if (phase == RUNNING && reading && o->buffered &&
		    o->buffered(c->src))
			continue;

		/*
		 * A server sends a transaction a message at a time, each
		 * about as soon as it is decoded: polling at once would wake
		 * the loop for nearly every row of it. While its frames are
		 * held and the last read found more, a nap lets the rest
		 * queue up; a read that found nothing goes to poll.
		 */
		if (hold && reading && grew) {
			struct timespec nap = { 0, CAPTURE_TXN_NAP_US * 1000L };

			grew = 0;
			nanosleep(&nap, NULL);
			continue;
		}

		npfd = 0;
		wake = o->due(c->src, reading);
		if (reading)
			pfd[npfd++] = (struct pollfd){ sock, POLLIN, 0 };
		if (c->out.fd >= 0 && outq_pending(&c->out) > 0 && !hold)
			pfd[npfd++] = (struct pollfd){ c->out.fd, POLLOUT, 0 };
		if (hold && c->queued_ms + CAPTURE_TXN_MS < wake)
			wake = c->queued_ms + CAPTURE_TXN_MS;
		if (ctl_on && !ctl_eof) {
			pfd[npfd++] = (struct pollfd){ c->ctl->fd, POLLIN, 0 };
			if (c->last_stats_ms + CAPTURE_STATS_MS < wake)
				wake = c->last_stats_ms + CAPTURE_STATS_MS;
		}
		if (phase == RUNNING && o->pos_owed(c->src) &&
		    c->last_pos_ms + CAPTURE_POS_MS < wake)
			wake = c->last_pos_ms + CAPTURE_POS_MS;
		if (phase >= AWAITING_ACK && deadline < wake)
			wake = deadline;
		if (phase == RUNNING && c->side != NULL &&
		    c->side->due(c->side->arg) < wake)
			wake = c->side->due(c->side->arg);

		rc = poll(pfd, npfd, wake > now ? (int)(wake - now) : 0);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return sys_failed(c, P2O_EXIT_INTERNAL, "poll");
		}
		for (i = 0; i < npfd; i++) {
			if (pfd[i].revents == 0)
				continue;
			/* a readable socket is read at the top; at the end
			 * the source discards what is still in flight */
			if (pfd[i].fd == sock && phase == FINISHING)
				rc = o->finish_read(c->src, &done, &c->err);
			else if (ctl_on && pfd[i].fd == c->ctl->fd)
				rc = read_ctl(c, &ctl_eof);
			else
				rc = 0;
			if (rc == -1)
				return c->err.code;
		}
		if (ctl_on && ctl_eof && phase == RUNNING) {
			/* the supervisor is gone: nothing more will be
			 * acked, so nothing more is acknowledged */
			log_warnx("control fd 3 closed; acknowledging nothing "
			    "more (%s)", where(c, at, sizeof(at)));
			/*
			 * A held start was never stored: a restart begins
			 * at a later position, so whatever this run read past
			 * it and the pipeline indexed would never be
			 * corrected. The supervisor's death hands its
			 * children SIGTERM and they drain what they hold,
			 * which must not include any of it.
			 */
			if (o->held != NULL && o->held(c->src)) {
				log_warnx("the stream's start was never "
				    "stored: stopping at it");
				phase = DRAINING;
			}
			ctl_on = 0;
		}
	}
	log_info("stopped: %s", where(c, at, sizeof(at)));
	return 0;
}
