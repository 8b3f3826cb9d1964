/*
 * xio.h - read/write loops that survive EINTR, EAGAIN and short transfers.
 * Every stage does its fd I/O through these; nothing else loops on read(2).
 */
#ifndef XIO_H
#define XIO_H

#include <sys/types.h>
#include <stddef.h>

/* one read(2), retried on EINTR; EAGAIN is returned to the caller as -1 */
ssize_t	xread(int fd, void *buf, size_t len);
/* one write(2), retried on EINTR */
ssize_t	xwrite(int fd, const void *buf, size_t len);
/* read until len bytes or EOF; returns bytes read (< len only at EOF) or -1.
 * On a non-blocking fd it poll(2)s for readability instead of failing. */
ssize_t	read_in_full(int fd, void *buf, size_t len);
/* write all len bytes (polls on EAGAIN); 0 on success, -1 with errno */
int	write_in_full(int fd, const void *buf, size_t len);
int	set_nonblock(int fd, int on);
int	set_cloexec(int fd, int on);
/* 1 if fd is open */
int	fd_is_open(int fd);
/* CLOCK_MONOTONIC in milliseconds / microseconds; wall clock in µs since epoch */
long long now_ms(void);
long long now_us_mono(void);
long long now_us_wall(void);

#endif
