/*
 * capture.h - the one loop of a capture program (capture-pg,
 * capture-mysql): read the source, write event frames to stdout with
 * back-pressure, read acks on fd 3, report stats, owe a bare pos frame
 * when the log moves without a change, and drain on SIGTERM. What differs
 * between sources is a table of callbacks; the order of the shutdown and
 * the rule that nothing is acknowledged that was not acked are the loop's.
 */
#ifndef CAPTURE_H
#define CAPTURE_H

#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "outq.h"
#include "sbuf.h"
#include "stage.h"

struct ctl;

/* frames waiting for stdout above this stop reads from the server */
#define CAPTURE_OUT_CAP		(256 * 1024)
/* inside a transaction stdout is written once this much is queued, or
 * once the oldest queued byte has waited this long (capture_ops.in_txn) */
#define CAPTURE_TXN_BYTES	(64 * 1024)
#define CAPTURE_TXN_MS		5
/* inside one, after a read that decoded something: a nap, so the rest
 * the server is sending arrives as one read, not a wakeup a message */
#define CAPTURE_TXN_NAP_US	100
#define CAPTURE_POS_MS		1000	/* at most a bare pos frame a second */
#define CAPTURE_STATS_MS	1000
#define CAPTURE_DRAIN_MS	30000	/* shutdown: wait for the last ack */
#define CAPTURE_FINISH_MS	10000	/* then for the server's end */

/* the counters every capture reports, in this order */
#define CAPTURE_NSTATS		8	/* inserts, updates, deletes, truncates,
					 * commits, confirmed, received (the
					 * source's counters callback), spans
					 * dropped (the loop's) */

struct capture_ops {
	const char *tool;		/* names the stats frames */
	/* decode what the server has sent into out, until nothing more is
	 * waiting or out holds CAPTURE_OUT_CAP: 0, or -1 with err */
	int	(*read)(void *src, struct outq *out, long long now,
		    struct p2o_err *);
	int	(*socket)(void *src);
	/* 1 when whole messages already wait in the client library, where
	 * poll cannot see them (NULL: never) */
	int	(*buffered)(void *src);
	/* the source's own duties (a standby status update, a silence
	 * limit): when the next is due, and doing what is due at now;
	 * reading: the socket is being read; running: not shutting down */
	long long (*due)(void *src, int reading);
	int	(*tick)(void *src, long long now, int reading, int running,
		    struct p2o_err *);
	/* the supervisor acked this position (it only grows) */
	int	(*acked)(void *src, uint64_t acked, struct p2o_err *);
	/* 1 while the source must not be read until a position it wrote
	 * is acked (a stream whose start no server keeps, before that
	 * start is stored); only asked with fd 3, since nothing is acked
	 * without it, and an end of fd 3 while held stops the capture.
	 * NULL: never */
	int	(*held)(void *src);
	/* 1 between a transaction's first event decoded and its end: its
	 * frames wait in out for the end, CAPTURE_TXN_BYTES or
	 * CAPTURE_TXN_MS, so the stages below wake once a transaction and
	 * not once a row (a server sends each row on its own). NULL: never */
	int	(*in_txn)(void *src);
	/* 1 when the log moved past the last frame that carried a position,
	 * outside any transaction: put_pos appends that pos frame */
	int	(*pos_owed)(void *src);
	void	(*put_pos)(void *src, struct sbuf *out);
	void	(*counters)(void *src, uint64_t acked,
		    uint64_t v[CAPTURE_NSTATS]);
	/* after the last ack: end the server's side. 1 when its end is to
	 * be waited for (finish_read, once the socket is readable, sets
	 * *done), 0 when there is none, -1 with err. NULL: none */
	int	(*finish)(void *src, struct p2o_err *);
	int	(*finish_read)(void *src, int *done, struct p2o_err *);
	/* where the stream is, for the log */
	void	(*where)(void *src, char *buf, size_t len);
};

/*
 * A duty of the capture's beside the stream, on the loop's clock
 * (capture-pg's slot watch): when it is next due, and doing it, which may
 * queue frames on the control channel. It cannot fail the stream: what
 * goes wrong is its own to log.
 */
struct capture_side {
	long long (*due)(void *arg);
	void	(*run)(void *arg, long long now, struct ctl *);
	void	*arg;
};

struct capture {
	const struct capture_ops *ops;
	const struct capture_side *side;	/* NULL: none */
	void	*src;
	struct ctl *ctl;
	const volatile sig_atomic_t *stop;	/* set by SIGTERM/SIGINT */
	struct outq out;	/* frames not yet on stdout (fd -1: closed) */
	uint64_t acked;		/* the supervisor's last ack */
	long long last_pos_ms, last_stats_ms;
	long long queued_ms;	/* when out last went from empty to not */
	uint64_t stats_sent[CAPTURE_NSTATS];
	struct p2o_err err;
};

/*
 * The command line every capture takes beside the skeleton's, the one the
 * supervisor builds from the checkpoint (supervisor/stages.c): where to
 * resume, --start-pos TEXT, and the number stored with it, --start-token
 * N; --new-stream once the old position is gone (a reload, the tables
 * loaded again); what they mean is the source's. A capture's stage spec is
 * CAPTURE_STAGE_SPEC: capture_option fills a struct capture_args, SIGTERM
 * is the drain capture_run does, fd 3 its channel. It has no stats timer
 * of the skeleton's: the loop paces its stats with its other deadlines.
 */
struct capture_args {
	const char *pos;	/* --start-pos, NULL: none */
	const char *token;	/* --start-token, NULL: none */
	int	 new_stream;	/* --new-stream: the supervisor is reloading
				 * because the position was lost, so a slot
				 * that lost its WAL is dropped, not refused */
};
extern const struct option capture_longopts[];
#define CAPTURE_STAGE_SPEC(name, usage_text) {				\
	.tool = (name), .usage = (usage_text),				\
	.longopts = capture_longopts, .option = capture_option,		\
	.signals = STAGE_SIG(STAGE_TERM), .control = 1 }

/* capture.c */
int	capture_option(void *args, int ch, const char *val,
	    struct p2o_err *);
/*
 * The number a capture's positions continue from, by the rule every
 * capture shares: --start-token is a number without a sign, and only
 * beside --start-pos (else 64); without it, coord - the coordinate of
 * --start-pos, which the capture parses in its own form (0 without one).
 * exact: the token must be coord (a source whose positions are their own
 * numbers, an LSN), else at least coord (positions continue from the
 * token, a generation base above the text's). Any other token is a
 * checkpoint that disagrees with itself (66). 0, or -1 with err.
 */
int	capture_start_token(const struct capture_args *, uint64_t coord,
	    int exact, uint64_t *token, struct p2o_err *);
void	capture_init(struct capture *, const struct capture_ops *, void *src,
	    struct ctl *, const volatile sig_atomic_t *stop);
void	capture_release(struct capture *);
/*
 * Until a clean shutdown (stop set, stdout flushed and closed, the last
 * ack taken, the server's side ended): 0, or a framing.md §8 exit code
 * with err set.
 */
int	capture_run(struct capture *);

#endif
