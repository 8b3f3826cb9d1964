/*
 * ctl.h - the supervisor control channel on fd 3 (framing.md §6), as seen
 * from a stage. A stage without fd 3 runs stand-alone and every call here is
 * a no-op returning 0.
 */
#ifndef CTL_H
#define CTL_H

#include <stdint.h>
#include "frame.h"

struct ctl {
	int	fd;		/* -1 when stand-alone */
	struct frame_reader rd;
	struct sbuf out;
};

/* adopt fd 3 if open; sends hello {"tool":tool,"proto":P2O_PROTO,"pid":..} */
int	ctl_open(struct ctl *, const char *tool);
int	ctl_active(const struct ctl *);
/* queue and write one frame built by the caller (json object text) */
int	ctl_send(struct ctl *, const char *json, size_t len);
/* convenience senders */
int	ctl_send_durable(struct ctl *, uint64_t pos, const char *lsn,
	    long long commit_ts_us, long long sent_us, long long at_us);
int	ctl_send_stats(struct ctl *, const char *tool, const char *const *names,
	    const uint64_t *values, int n);
void	ctl_close(struct ctl *);

#endif
