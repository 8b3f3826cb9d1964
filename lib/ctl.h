/*
 * ctl.h - the supervisor control channel on fd 3 (framing.md §6), as seen
 * from a stage. A stage without fd 3 runs stand-alone: frames queued for
 * the supervisor are dropped and every call returns 0.
 *
 * Frames are queued with the msg_put_* encoders of msg.h into ctl->out and
 * written by ctl_flush; the owner polls ctl->fd and reads ctl->rd with
 * frame_fill/frame_next itself.
 */
#ifndef CTL_H
#define CTL_H

#include <stdint.h>
#include "err.h"
#include "frame.h"
#include "msg.h"

struct ctl {
	int	fd;		/* -1 when stand-alone */
	struct frame_reader rd;
	struct sbuf out;	/* frames for the supervisor, not yet written */
};

/*
 * Call first in main, before anything opens a descriptor: when fd 3 is
 * not open, hold it with /dev/null. Otherwise the first connection a
 * stand-alone stage opens would get fd 3, and ctl_open would take that
 * socket for the supervisor's channel and write hello into it.
 */
void	ctl_claim(void);
/* adopt fd 3 if it is a socket and send hello (msg_put_hello) */
int	ctl_open(struct ctl *, const char *tool);
int	ctl_active(const struct ctl *);
/* write every frame queued in ctl->out (blocking: control frames are
 * small and the supervisor always reads); 0, or -1 when the channel is
 * gone. Stand-alone, the queue is emptied and 0 returned. */
int	ctl_flush(struct ctl *);
void	ctl_close(struct ctl *);

/*
 * A capture's two exchanges, the same for every source:
 * ctl_send_stats queues and writes one stats frame of the n counters ids
 * with values v when they differ from sent[] (updated once written);
 * 1 when the supervisor closed its end (as good as EOF), 0, or -1 with
 * errno. ctl_take_acks reads what fd 3 holds and raises *acked to the
 * highest ack in it; *eof once the supervisor closed fd 3; 0, or -1 with
 * the exit code and the reason in e.
 */
int	ctl_send_stats(struct ctl *, const char *tool,
	    const enum msg_counter *ids, const uint64_t *v, uint64_t *sent,
	    size_t n);
int	ctl_take_acks(struct ctl *, uint64_t *acked, int *eof,
	    struct p2o_err *e);

#endif
