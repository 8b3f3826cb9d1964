/*
 * free-port.h - a loopback TCP port nothing listens on now, for a test's
 * supervisor to serve its HTTP endpoints on: the kernel picks it (bind to
 * port 0), so it is not one of the servers' beside the test, as a port
 * computed from the pid could be (the other lane's OpenSearch, MariaDB).
 * 0 when none could be had.
 */
#ifndef FREE_PORT_H
#define FREE_PORT_H

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>

static inline int
free_port(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd, port = 0;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

#endif
