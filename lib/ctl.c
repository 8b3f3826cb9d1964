/*
 * ctl.c - a stage's end of the supervisor control channel on fd 3
 * (framing.md §6). Owns adopting fd 3 and writing what the stage queued
 * for the supervisor; what the frames say is msg.c's. Without fd 3 every
 * call is a no-op, so a stage runs the same code stand-alone.
 */
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
