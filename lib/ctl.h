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
#include "frame.h"

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

#endif
