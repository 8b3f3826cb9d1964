/*
 * ctl.c - a stage's end of the supervisor control channel on fd 3
 * (framing.md §6). Owns adopting fd 3 and writing what the stage queued
 * for the supervisor; what the frames say is msg.c's. Without fd 3 every
 * call is a no-op, so a stage runs the same code stand-alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "msg.h"
#include "p2o.h"
#include "xio.h"

void
ctl_claim(void)
{
	int fd;

	if (fcntl(P2O_FD_CTL, F_GETFD) != -1)
		return;
	/* /dev/null is no socket: ctl_open leaves it alone */
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 &&
	    fd != P2O_FD_CTL) {
		dup2(fd, P2O_FD_CTL);
		close(fd);
	}
}

int
ctl_open(struct ctl *c, const char *tool)
{
	struct stat st;

	c->fd = -1;
	sbuf_init(&c->out);
	frame_reader_init(&c->rd, -1, "control fd 3");
	if (fcntl(P2O_FD_CTL, F_GETFD) == -1)
		return 0;	/* stand-alone */
	/* the supervisor always hands over a socket; any other fd 3 is
	 * something the shell left open (time -o, a redirect) and writing
	 * frames into it would corrupt it, so the stage runs stand-alone */
	if (fstat(P2O_FD_CTL, &st) == -1 || !S_ISSOCK(st.st_mode))
		return 0;
	/* a program the stage starts must not hold the channel open after
	 * the stage is gone */
	if (set_cloexec(P2O_FD_CTL, 1) < 0)
		return -1;
	c->fd = P2O_FD_CTL;
	c->rd.fd = P2O_FD_CTL;
	msg_put_hello(&c->out, tool);
	return ctl_flush(c);
}

int
ctl_active(const struct ctl *c)
{
	return c->fd >= 0;
}

int
ctl_flush(struct ctl *c)
{
	if (c->fd < 0) {
		sbuf_reset(&c->out);
		return 0;
	}
	if (frame_flush(c->fd, &c->out) < 0) {
		/* the supervisor is gone or the channel is torn: nothing
		 * queued is worth keeping */
		sbuf_reset(&c->out);
		return -1;
	}
	return 0;
}

void
ctl_close(struct ctl *c)
{
	frame_reader_release(&c->rd);
	sbuf_release(&c->out);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int
ctl_send_stats(struct ctl *c, const char *tool, const enum msg_counter *ids,
    const uint64_t *v, uint64_t *sent, size_t n)
{
	struct sbuf j = SBUF_INIT;
	size_t i;

	if (memcmp(v, sent, n * sizeof(*v)) == 0)
		return 0;
	msg_stats_begin(&j, tool);
	for (i = 0; i < n; i++)
		msg_stats_add(&j, ids[i], v[i]);
	msg_stats_end(&c->out, &j);
	sbuf_release(&j);
	if (ctl_flush(c) < 0)
		return errno == EPIPE || errno == ECONNRESET ? 1 : -1;
	memcpy(sent, v, n * sizeof(*v));
	return 0;
}

int
ctl_take_acks(struct ctl *c, uint64_t *acked, int *eof, struct p2o_err *e)
{
	struct frame f;
	struct msg_pos ack;
	char why[128];
	ssize_t n;
	int rc;

	n = frame_fill(&c->rd);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		/* a socketpair closed with our stats unread */
		if (errno == ECONNRESET) {
			*eof = 1;
			return 0;
		}
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "control fd 3: %s",
		    strerror(errno));
	}
	while ((rc = frame_next(&c->rd, &f)) == 1) {
		if (msg_kind(&f) != MSG_ACK)
			continue;	/* nothing else is for a capture */
		if (msg_read_pos(&f, &ack, why, sizeof(why)) == -1)
			return p2o_fail(e, P2O_EXIT_DATA, "control fd 3: offset "
			    "%llu: %s", (unsigned long long)f.offset, why);
		if (ack.pos > *acked)
			*acked = ack.pos;
		msg_pos_release(&ack);
	}
	if (rc == -1)
		return p2o_fail(e, P2O_EXIT_DATA, "%s", c->rd.err);
	if (n == 0)
		*eof = 1;
	return 0;
}
