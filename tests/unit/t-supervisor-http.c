/*
 * t-supervisor-http - the request parser behind /metrics and /healthz, and
 * one round trip through the non-blocking server on a loopback socket.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sbuf.h"
#include "xio.h"
#include "../../supervisor/supervisor.h"
#include "tap.h"

static int
parse(const char *s, struct sv_http_req *req)
{
	return sv_http_parse(s, strlen(s), req);
}

static void
test_parse(void)
{
	struct sv_http_req req;
	char big[SV_HTTP_REQ_MAX + 100];
	int i;

	is_int(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &req), 1,
	    "a GET");
	is_str(req.path, "/metrics", "its path");
	is_int(req.method, SV_HTTP_GET, "method GET");
	is_int(parse("HEAD /healthz?verbose=1 HTTP/1.0\n\n", &req), 1,
	    "HEAD, HTTP/1.0, bare LFs");
	is_str(req.path, "/healthz", "the query is not part of the path");
	is_int(req.method, SV_HTTP_HEAD, "method HEAD");
	is_int(parse("POST /metrics HTTP/1.1\r\n\r\n", &req), 1,
	    "POST parses");
	is_int(req.method, SV_HTTP_OTHER, "as another method (405)");

	is_int(parse("GET /synced HTTP/1.1\r\nTraceParent:  00-0af7651916cd43dd"
	    "8448eb211c80319c-b7ad6b7169203331-01 \r\n\r\n", &req), 1,
	    "a traceparent header");
	is_str(req.traceparent, "00-0af7651916cd43dd8448eb211c80319c-"
	    "b7ad6b7169203331-01", "kept, without its blanks, whatever the "
	    "name's case");
	is_int(parse("GET /synced HTTP/1.1\r\ntraceparent: 00-0af76519-01\r\n"
	    "\r\n", &req), 1, "a short one parses");
	is_str(req.traceparent, "", "but is not kept");
	is_int(parse("GET /synced HTTP/1.1\r\n\r\n", &req), 1, "none");
	is_str(req.traceparent, "", "none kept");

	is_int(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &req), 0,
	    "head not finished: need more");
	is_int(parse("GET /metr", &req), 0, "request line not finished");
	is_int(parse("", &req), 0, "nothing yet");

	is_int(parse("GET /metrics\r\n\r\n", &req), -1, "HTTP/0.9 form");
	is_int(parse("GET /metrics HTTP/2.0\r\n\r\n", &req), -1, "HTTP/2.0");
	is_int(parse("GET  /metrics HTTP/1.1\r\n\r\n", &req), -1,
	    "two spaces");
	is_int(parse("GET http://x/metrics HTTP/1.1\r\n\r\n", &req), -1,
	    "absolute form");
	is_int(parse("G(T /metrics HTTP/1.1\r\n\r\n", &req), -1,
	    "method not a token");
	is_int(parse("GET /me\ttrics HTTP/1.1\r\n\r\n", &req), -1,
	    "control byte in the target");
	is_int(parse("GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", &req), -1,
	    "header without a colon");
	is_int(parse("GET /metrics HTTP/1.1\r\n: v\r\n\r\n", &req), -1,
	    "empty header name");
	is_int(parse("GET /metrics HTTP/1.1\r\nA: b\r\n c\r\n\r\n", &req),
	    -1, "obsolete line folding");
	is_int(parse("GET /metrics HTTP/1.1\r\nA\r: b\r\n\r\n", &req), -1,
	    "bare CR");
	is_int(sv_http_parse("GET /m\0 HTTP/1.1\r\n\r\n", 20, &req), -1,
	    "NUL in the target");

	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	is_int(sv_http_parse(big, sizeof(big), &req), -2,
	    "request line over the cap: too large");
	i = snprintf(big, sizeof(big), "GET /x HTTP/1.1\r\n");
	while ((size_t)i < SV_HTTP_REQ_MAX)
		i += snprintf(big + i, sizeof(big) - (size_t)i, "X-A: b\r\n");
	is_int(sv_http_parse(big, (size_t)i, &req), -2,
	    "headers over the cap: too large");
	memset(big, 0, sizeof(big));
	memcpy(big, "GET /", 5);
	memset(big + 5, 'p', 300);
	memcpy(big + 305, " HTTP/1.1\r\n\r\n", 13);
	is_int(sv_http_parse(big, 318, &req), -2, "a 300-byte path: too large");
}

static void
handler(void *arg, const struct sv_http_req *req, struct sv_http_resp *resp)
{
	int *calls = arg;

	(*calls)++;
	if (strcmp(req->path, "/metrics") == 0) {
		resp->status = 200;
		sbuf_adds(&resp->body, "x 1\n");
	} else {
		resp->status = 404;
		sbuf_adds(&resp->body, "not found\n");
	}
}

/* one request through the server; the response text into out */
static void
round_trip(struct sv_httpd *h, int port, const char *req, char *out,
    size_t len)
{
	struct sockaddr_in sin;
	struct pollfd pfd[SV_HTTPD_POLLFDS];
	size_t got = 0;
	ssize_t n;
	int fd, i;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	write_in_full(fd, req, strlen(req));
	set_nonblock(fd, 1);
	for (i = 0; i < 200; i++) {
		int np = sv_httpd_pollfds(h, pfd);

		poll(pfd, (nfds_t)np, 10);
		sv_httpd_handle(h, pfd, now_ms());
		while ((n = read(fd, out + got, len - 1 - got)) > 0)
			got += (size_t)n;
		if (n == 0)
			break;
	}
	out[got] = '\0';
	close(fd);
}

static void
test_server(void)
{
	struct sv_httpd h;
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	char err[256], out[4096];
	int calls = 0, port;

	ok(sv_httpd_open(&h, "nonsense", handler, &calls, err, sizeof(err)) ==
	    -1, "bind without a port is refused: %s", err);
	if (!ok(sv_httpd_open(&h, "127.0.0.1:0", handler, &calls, err,
	    sizeof(err)) == 0, "listen on 127.0.0.1:0")) {
		printf("# %s\n", err);
		return;
	}
	getsockname(h.fd, (struct sockaddr *)&sin, &sl);
	port = ntohs(sin.sin_port);

	round_trip(&h, port, "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", out,
	    sizeof(out));
	ok(strncmp(out, "HTTP/1.1 200 OK\r\n", 17) == 0, "200 for /metrics");
	ok(strstr(out, "Connection: close\r\n") != NULL, "Connection: close");
	ok(strstr(out, "Content-Length: 4\r\n") != NULL, "Content-Length");
	ok(strstr(out, "\r\n\r\nx 1\n") != NULL, "the body");

	round_trip(&h, port, "HEAD /metrics HTTP/1.1\r\n\r\n", out,
	    sizeof(out));
	ok(strncmp(out, "HTTP/1.1 200", 12) == 0 &&
	    strstr(out, "\r\n\r\n")[4] == '\0', "HEAD: headers, no body");
	round_trip(&h, port, "GET /nope HTTP/1.1\r\n\r\n", out, sizeof(out));
	ok(strncmp(out, "HTTP/1.1 404", 12) == 0, "404 for another path");
	round_trip(&h, port, "DELETE /metrics HTTP/1.1\r\n\r\n", out,
	    sizeof(out));
	ok(strncmp(out, "HTTP/1.1 405", 12) == 0 &&
	    strstr(out, "Allow: GET, HEAD\r\n"), "405 with Allow");
	round_trip(&h, port, "garbage\r\n\r\n", out, sizeof(out));
	ok(strncmp(out, "HTTP/1.1 400", 12) == 0, "400 for garbage");
	is_int(calls, 3, "the handler saw GET, HEAD and the 404 only");
	sv_httpd_close(&h);
}

int
main(void)
{
	test_parse();
	test_server();
	return done_testing();
}
