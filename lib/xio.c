/*
 * xio.c - the fd read/write loops and clocks every stage uses. Owns EINTR,
 * EAGAIN and short-transfer handling so no other file loops on read(2) or
 * write(2). Never logs and never exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "xio.h"

/* a single read(2) or write(2) larger than this gains nothing and some
 * kernels misbehave near SSIZE_MAX */
#define XIO_MAX_CHUNK	(8u * 1024 * 1024)

ssize_t
xread(int fd, void *buf, size_t len)
{
	ssize_t n;

	if (len > XIO_MAX_CHUNK)
		len = XIO_MAX_CHUNK;
	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

ssize_t
xwrite(int fd, const void *buf, size_t len)
{
	ssize_t n;

	if (len > XIO_MAX_CHUNK)
		len = XIO_MAX_CHUNK;
	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* block until fd is ready for events; the fd is non-blocking, the caller
 * asked for a blocking transfer */
static int
wait_fd(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int rc;

	do
		rc = poll(&pfd, 1, -1);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? -1 : 0;
}

ssize_t
read_in_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = xread(fd, p + got, len - got);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (wait_fd(fd, POLLIN) < 0)
					return -1;
				continue;
			}
			return -1;
		}
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

int
write_in_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = xwrite(fd, p, len);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (wait_fd(fd, POLLOUT) < 0)
					return -1;
				continue;
			}
			return -1;
		}
		if (n == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int
set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) < 0 ? -1 : 0;
}

int
set_cloexec(int fd, int on)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0)
		return -1;
	fl = on ? fl | FD_CLOEXEC : fl & ~FD_CLOEXEC;
	return fcntl(fd, F_SETFD, fl) < 0 ? -1 : 0;
}

int
fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

static long long
clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

long long
now_ms(void)
{
	return clock_us(CLOCK_MONOTONIC) / 1000;
}

long long
now_us_mono(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

long long
now_us_wall(void)
{
	return clock_us(CLOCK_REALTIME);
}
