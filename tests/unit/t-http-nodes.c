/*
 * t-http-nodes.c - a request's attempts over the nodes of a cluster
 * (lib/http.c on lib/nodes.c) against two local sockets: one node that
 * takes the request and never answers (a node holding a write it cannot
 * apply), one that answers. A call's own timeout bounds each attempt, so
 * the request goes on to the answering node in about that time rather
 * than the client's default 90 s, and the holding node rests.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "http.h"
#include "p2o.h"
#include "sbuf.h"
#include "tap.h"
#include "xio.h"

static int
listener(int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 16) < 0 || getsockname(fd, (struct sockaddr *)&a,
	    &len) < 0)
		BAIL_OUT("a listening socket");
	*port = ntohs(a.sin_port);
	return fd;
}

/* the two nodes, until the parent goes: holder keeps every connection
 * open unanswered, server answers each request 201 */
static void
serve(int holder, int server, int parent)
{
	static const char answer[] = "HTTP/1.1 201 Created\r\nContent-Type: "
	    "application/json\r\nContent-Length: 2\r\nConnection: close\r\n"
	    "\r\n{}";
	struct pollfd p[3] = { { holder, POLLIN, 0 }, { server, POLLIN, 0 },
	    { parent, POLLIN, 0 } };
	char buf[4096];
	int fd;

	for (;;) {
		if (poll(p, 3, 30000) <= 0 || p[2].revents)
			_exit(0);
		if (p[0].revents & POLLIN)
			(void)accept(holder, NULL, NULL);	/* held open */
		if (p[1].revents & POLLIN) {
			if ((fd = accept(server, NULL, NULL)) < 0)
				continue;
			/* a GET without a body: its head is all there is */
			(void)read(fd, buf, sizeof(buf));
			(void)write(fd, answer, sizeof(answer) - 1);
			close(fd);
		}
	}
}

int
main(void)
{
	struct http_client c;
	struct http_call call;
	struct sbuf resp = SBUF_INIT;
	char u0[64], u1[64];
	const char *urls[2] = { u0, u1 };
	long long t0, took;
	long status;
	int holder, server, hp, sp, pipefd[2], rc;
	pid_t kid;

	holder = listener(&hp);
	server = listener(&sp);
	if (pipe(pipefd) < 0 || (kid = fork()) < 0)
		BAIL_OUT("fork");
	if (kid == 0) {
		close(pipefd[1]);
		serve(holder, server, pipefd[0]);
	}
	close(pipefd[0]);
	close(holder);
	close(server);
	snprintf(u0, sizeof(u0), "http://127.0.0.1:%d", hp);
	snprintf(u1, sizeof(u1), "http://127.0.0.1:%d", sp);

	ok(http_global_init() == 0, "curl initialised");
	ok(http_init(&c, urls, 2, NULL) == 0, "a client of two nodes");

	/* the first request goes to node 0 first: the one that holds it */
	http_call_set(&call, "GET", "/", NULL, NULL, 0);
	call.timeout_ms = 500;
	t0 = now_ms();
	rc = http_call_do(&c, &call, &resp, &status);
	took = now_ms() - t0;
	ok(rc == 0 && status == 201, "the request held by one node is "
	    "answered by the other (rc %d, HTTP %ld)", rc, status);
	ok(took < 5000, "in about the call's timeout, not the client's 90 s "
	    "(%lld ms)", took);
	ok(c.nodes->v[0].rest_until != 0, "the node that held it rests");

	/* the next request goes straight to the answering node */
	t0 = now_ms();
	rc = http_call_do(&c, &call, &resp, &status);
	took = now_ms() - t0;
	ok(rc == 0 && status == 201 && took < 2000, "the next request goes "
	    "to the node that answers (HTTP %ld, %lld ms)", status, took);

	/* no timeout of its own: the client's (here 500 ms) bounds it */
	http_release(&c);
	ok(http_init(&c, urls, 2, NULL) == 0, "a new client");
	c.timeout_ms = 500;
	t0 = now_ms();
	rc = http_request(&c, "GET", "/", NULL, NULL, 0, &resp, &status);
	took = now_ms() - t0;
	ok(rc == 0 && status == 201 && took < 5000, "a call without a "
	    "timeout of its own has the client's (HTTP %ld, %lld ms)", status,
	    took);

	http_release(&c);
	sbuf_release(&resp);
	close(pipefd[1]);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
