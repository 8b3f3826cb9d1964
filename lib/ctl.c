/*
 * ctl.c - a stage's end of the supervisor control channel on fd 3
 * (framing.md §6). Owns adopting fd 3, the hello and the frames a stage
 * reports upward. Without fd 3 every call is a no-op, so a stage runs the
 * same code stand-alone. The owner polls ctl->fd and reads ctl->rd with
 * frame_fill/frame_next itself; nothing here blocks on reading.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "p2o.h"
#include "xio.h"

int
ctl_open(struct ctl *c, const char *tool)
{
	struct sbuf hello = SBUF_INIT;
	struct stat st;
	int rc;

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
	/* children the stage starts (none today) must not hold the channel
	 * open after the stage is gone */
	if (set_cloexec(P2O_FD_CTL, 1) < 0)
		return -1;
	c->fd = P2O_FD_CTL;
	c->rd.fd = P2O_FD_CTL;

	sbuf_adds(&hello, "{\"k\":\"hello\",\"tool\":");
	sbuf_add_jstr(&hello, tool, strlen(tool));
	sbuf_addf(&hello, ",\"proto\":%d,\"pid\":%ld}", P2O_PROTO,
	    (long)getpid());
	rc = ctl_send(c, hello.buf, hello.len);
	sbuf_release(&hello);
	return rc;
}

int
ctl_active(const struct ctl *c)
{
	return c->fd >= 0;
}

int
ctl_send(struct ctl *c, const char *json, size_t len)
{
	if (c->fd < 0)
		return 0;
	frame_put(&c->out, json, len);
	if (frame_flush(c->fd, &c->out) < 0) {
		/* the supervisor is gone or the channel is torn: nothing
		 * queued is worth keeping */
		sbuf_reset(&c->out);
		return -1;
	}
	return 0;
}

int
ctl_send_durable(struct ctl *c, uint64_t pos, const char *lsn,
    long long commit_ts_us, long long sent_us, long long at_us)
{
	struct sbuf j = SBUF_INIT;
	int rc;

	if (c->fd < 0)
		return 0;
	sbuf_adds(&j, "{\"k\":\"durable\",\"pos\":");
	sbuf_add_u64(&j, pos);
	if (lsn != NULL) {
		sbuf_adds(&j, ",\"lsn\":");
		sbuf_add_jstr(&j, lsn, strlen(lsn));
	}
	/* a bare pos frame has no commit time: the caller passes 0 or less */
	if (commit_ts_us > 0) {
		sbuf_adds(&j, ",\"ts\":");
		sbuf_add_i64(&j, commit_ts_us);
	}
	if (sent_us > 0) {
		sbuf_adds(&j, ",\"sent\":");
		sbuf_add_i64(&j, sent_us);
	}
	sbuf_adds(&j, ",\"at\":");
	sbuf_add_i64(&j, at_us);
	sbuf_addc(&j, '}');
	rc = ctl_send(c, j.buf, j.len);
	sbuf_release(&j);
	return rc;
}

int
ctl_send_stats(struct ctl *c, const char *tool, const char *const *names,
    const uint64_t *values, int n)
{
	struct sbuf j = SBUF_INIT;
	int i, rc;

	if (c->fd < 0)
		return 0;
	sbuf_adds(&j, "{\"k\":\"stats\",\"tool\":");
	sbuf_add_jstr(&j, tool, strlen(tool));
	sbuf_adds(&j, ",\"counters\":{");
	for (i = 0; i < n; i++) {
		if (i > 0)
			sbuf_addc(&j, ',');
		sbuf_add_jstr(&j, names[i], strlen(names[i]));
		sbuf_addc(&j, ':');
		sbuf_add_u64(&j, values[i]);
	}
	sbuf_adds(&j, "}}");
	rc = ctl_send(c, j.buf, j.len);
	sbuf_release(&j);
	return rc;
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
