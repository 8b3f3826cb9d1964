/*
 * httpd.c - the supervisor's HTTP endpoint: a non-blocking listener and a
 * few connections served from the supervisor's one poll loop. HTTP/1.1,
 * one request per connection (Connection: close), GET and HEAD only, the
 * request head bounded to SV_HTTP_REQ_MAX bytes and every connection to
 * SV_HTTP_TIMEOUT_MS. Owns the request parser; what a path answers is the
 * handler's. Never blocks and never exits.
 */
#include <sys/socket.h>
#include <netdb.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "supervisor.h"
#include "xio.h"

/* RFC 9110 tchar */
static int
is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~",
	    c) != NULL);
}

/* the end of the line starting at p (at its LF), or NULL */
static const char *
line_end(const char *p, const char *end)
{
	return memchr(p, '\n', (size_t)(end - p));
}

/* a line's length without its CR LF / LF */
static size_t
line_len(const char *p, const char *lf)
{
	size_t n = (size_t)(lf - p);

	return n > 0 && p[n - 1] == '\r' ? n - 1 : n;
}

static int
parse_request_line(const char *p, size_t n, struct sv_http_req *req)
{
	const char *end = p + n, *sp1, *sp2, *t;
	size_t mlen, plen;

	if ((sp1 = memchr(p, ' ', n)) == NULL)
		return -1;
	mlen = (size_t)(sp1 - p);
	if (mlen == 0 || mlen > 16)
		return -1;
	for (t = p; t < sp1; t++)
		if (!is_tchar((unsigned char)*t))
			return -1;
	if ((sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) == NULL)
		return -1;
	/* HTTP/1.0 or HTTP/1.1, exactly */
	if (end - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -1;
	/* origin-form only: no proxy forms, no spaces, no controls */
	if (sp2 == sp1 + 1 || sp1[1] != '/')
		return -1;
	for (t = sp1 + 1; t < sp2; t++)
		if ((unsigned char)*t <= 0x20 || *t == 0x7f)
			return -1;
	for (t = sp1 + 1; t < sp2 && *t != '?' && *t != '#'; t++)
		;
	plen = (size_t)(t - sp1 - 1);
	if (plen >= sizeof(req->path))
		return -2;
	memcpy(req->path, sp1 + 1, plen);
	req->path[plen] = '\0';
	if (t < sp2 && *t == '?') {
		const char *q = t + 1, *qe = q;
		size_t qlen;

		while (qe < sp2 && *qe != '#')
			qe++;
		qlen = (size_t)(qe - q);
		if (qlen >= sizeof(req->query)) {
			qlen = sizeof(req->query) - 1;
			req->query_cut = 1;
		}
		memcpy(req->query, q, qlen);
		req->query[qlen] = '\0';
	}
	if (mlen == 3 && memcmp(p, "GET", 3) == 0)
		req->method = SV_HTTP_GET;
	else if (mlen == 4 && memcmp(p, "HEAD", 4) == 0)
		req->method = SV_HTTP_HEAD;
	else
		req->method = SV_HTTP_OTHER;
	return 0;
}

/* "name: value" with a token name and no control bytes but HTAB; the
 * Authorization header's value is kept in req */
static int
valid_header(const char *p, size_t n, struct sv_http_req *req)
{
	const char *colon = memchr(p, ':', n), *t, *v, *e = p + n;

	if (colon == NULL || colon == p)
		return -1;
	for (t = p; t < colon; t++)
		if (!is_tchar((unsigned char)*t))
			return -1;
	for (t = colon + 1; t < p + n; t++)
		if (((unsigned char)*t < 0x20 && *t != '\t') || *t == 0x7f)
			return -1;
	for (v = colon + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if ((size_t)(colon - p) == 13 && strncasecmp(p, "Authorization",
	    13) == 0) {
		/* one too long to hold cannot be the token: left empty */
		if ((size_t)(e - v) < sizeof(req->auth)) {
			memcpy(req->auth, v, (size_t)(e - v));
			req->auth[e - v] = '\0';
		}
	}
	/* a caller's trace context: kept only when it is one (synced.c
	 * continues it), anything else left empty */
	if ((size_t)(colon - p) == 11 && strncasecmp(p, "traceparent",
	    11) == 0 && (size_t)(e - v) == sizeof(req->traceparent) - 1) {
		memcpy(req->traceparent, v, (size_t)(e - v));
		req->traceparent[e - v] = '\0';
	}
	return 0;
}

int
sv_http_parse(const char *buf, size_t len, struct sv_http_req *req)
{
	const char *p = buf, *end, *lf;
	size_t n;
	int rc;

	if (len > SV_HTTP_REQ_MAX)
		len = SV_HTTP_REQ_MAX;
	end = buf + len;
	memset(req, 0, sizeof(*req));
	if ((lf = line_end(p, end)) == NULL)
		return len >= SV_HTTP_REQ_MAX ? -2 : 0;
	n = line_len(p, lf);
	if (memchr(p, '\r', n) != NULL || (rc = parse_request_line(p, n,
	    req)) == -1)
		return -1;
	if (rc == -2)
		return -2;
	for (p = lf + 1; ; p = lf + 1) {
		if ((lf = line_end(p, end)) == NULL)
			return len >= SV_HTTP_REQ_MAX ? -2 : 0;
		n = line_len(p, lf);
		if (n == 0)
			return 1;
		/* obsolete line folding and bare CRs are refused */
		if (*p == ' ' || *p == '\t' || memchr(p, '\r', n) != NULL ||
		    valid_header(p, n, req) == -1)
			return -1;
	}
}

static int
split_bind(const char *spec, char *host, size_t hostlen, const char **port)
{
	const char *colon;
	size_t n;

	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');

		if (rb == NULL || rb[1] != ':')
			return -1;
		n = (size_t)(rb - spec - 1);
		spec++;
		colon = rb + 1;
	} else {
		if ((colon = strrchr(spec, ':')) == NULL)
			return -1;
		n = (size_t)(colon - spec);
	}
	if (n >= hostlen || colon[1] == '\0')
		return -1;
	memcpy(host, spec, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

int
sv_httpd_open(struct sv_httpd *h, const char *addr, sv_http_handler handler,
    void *arg, char *err, size_t errlen)
{
	struct addrinfo hints, *res, *ai;
	char host[256];
	const char *port;
	int fd = -1, one = 1, rc, i, e = 0;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	for (i = 0; i < SV_HTTP_CONNS; i++)
		h->conns[i].fd = -1;
	h->handler = handler;
	h->arg = arg;
	if (split_bind(addr, host, sizeof(host), &port) == -1) {
		snprintf(err, errlen, "'%s' is not host:port", addr);
		return -1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res)) != 0) {
		snprintf(err, errlen, "'%s': %s", addr, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd == -1) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, SV_HTTP_CONNS) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1) {
		snprintf(err, errlen, "'%s': %s", addr, strerror(e));
		return -1;
	}
	h->fd = fd;
	return 0;
}

static void
conn_close(struct sv_http_conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	sbuf_release(&c->out);
}

void
sv_httpd_close(struct sv_httpd *h)
{
	int i;

	for (i = 0; i < SV_HTTP_CONNS; i++)
		conn_close(&h->conns[i]);
	if (h->fd != -1)
		close(h->fd);
	h->fd = -1;
}

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default:  return "Internal Server Error";
	}
}

static void
respond(struct sv_http_conn *c, int status, const char *ctype,
    const struct sbuf *body, int with_body, int challenge)
{
	size_t n = body->len;

	sbuf_reset(&c->out);
	sbuf_addf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n", status,
	    reason(status), ctype ? ctype : "text/plain; charset=utf-8", n);
	if (status == 405)
		sbuf_adds(&c->out, "Allow: GET, HEAD\r\n");
	if (challenge)
		sbuf_adds(&c->out, "WWW-Authenticate: Bearer\r\n");
	sbuf_adds(&c->out, "\r\n");
	if (with_body && n > 0)
		sbuf_add(&c->out, body->buf, n);
	c->outoff = 0;
	c->responded = 1;
	c->deferred = 0;
}

static void
respond_text(struct sv_http_conn *c, int status, const char *text)
{
	struct sbuf b = SBUF_INIT;

	sbuf_adds(&b, text);
	respond(c, status, NULL, &b, 1, 0);
	sbuf_release(&b);
}

static void
conn_write(struct sv_http_conn *c)
{
	ssize_t n;

	while (c->outoff < c->out.len) {
		n = xwrite(c->fd, c->out.buf + c->outoff,
		    c->out.len - c->outoff);
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			break;
		c->outoff += (size_t)n;
	}
	conn_close(c);
}

static void
conn_read(struct sv_httpd *h, struct sv_http_conn *c)
{
	struct sv_http_req req;
	struct sv_http_resp resp;
	ssize_t n;
	int rc;

	n = xread(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->inlen += (size_t)n;
	rc = sv_http_parse(c->in, c->inlen, &req);
	if (rc == 0)
		return;
	if (rc == -1) {
		respond_text(c, 400, "bad request\n");
		return;
	}
	if (rc == -2) {
		respond_text(c, 431, "request too large\n");
		return;
	}
	if (req.method == SV_HTTP_OTHER) {
		respond_text(c, 405, "method not allowed\n");
		return;
	}
	memset(&resp, 0, sizeof(resp));
	resp.status = 404;
	sbuf_init(&resp.body);
	req.conn = (int)(c - h->conns);
	req.gen = c->gen;
	h->handler(h->arg, &req, &resp);
	if (resp.deferred) {
		/* nothing more is read from it; its handler answers */
		c->deferred = 1;
		c->head_only = req.method == SV_HTTP_HEAD;
		if (resp.deadline_ms > c->deadline_ms)
			c->deadline_ms = resp.deadline_ms;
	} else
		respond(c, resp.status, resp.ctype, &resp.body,
		    req.method == SV_HTTP_GET, resp.challenge);
	sbuf_release(&resp.body);
}

int
sv_httpd_answer(struct sv_httpd *h, int conn, unsigned gen,
    const struct sv_http_resp *resp)
{
	struct sv_http_conn *c;

	if (conn < 0 || conn >= SV_HTTP_CONNS)
		return -1;
	c = &h->conns[conn];
	if (c->fd == -1 || c->gen != gen || !c->deferred)
		return -1;
	respond(c, resp->status, resp->ctype, &resp->body, !c->head_only,
	    resp->challenge);
	/* out now if the socket takes it, else on the next POLLOUT */
	conn_write(c);
	return 0;
}

static void
accept_all(struct sv_httpd *h, long long now_ms)
{
	int i, fd;

	for (i = 0; i < SV_HTTP_CONNS; i++) {
		struct sv_http_conn *c = &h->conns[i];

		if (c->fd != -1)
			continue;
		fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1)
			return;
		c->fd = fd;
		c->gen++;
		c->deferred = 0;
		c->inlen = 0;
		c->responded = 0;
		c->outoff = 0;
		sbuf_init(&c->out);
		c->deadline_ms = now_ms + SV_HTTP_TIMEOUT_MS;
	}
}

int
sv_httpd_pollfds(struct sv_httpd *h, struct pollfd *pfd)
{
	int i, n = 0, busy = 0;

	h->npolled = 0;
	if (h->fd == -1)
		return 0;
	for (i = 0; i < SV_HTTP_CONNS; i++) {
		struct sv_http_conn *c = &h->conns[i];

		if (c->fd == -1)
			continue;
		busy++;
		/* a deferred answer waits on its handler, not the socket */
		if (c->deferred)
			continue;
		pfd[n].fd = c->fd;
		pfd[n].events = c->responded ? POLLOUT : POLLIN;
		pfd[n].revents = 0;
		h->polled[n++] = i;
	}
	/* with every slot taken, new clients wait in the backlog */
	if (busy < SV_HTTP_CONNS) {
		pfd[n].fd = h->fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		h->polled[n++] = -1;
	}
	h->npolled = n;
	return n;
}

void
sv_httpd_handle(struct sv_httpd *h, const struct pollfd *pfd,
    long long now_ms)
{
	int i;

	for (i = 0; i < h->npolled; i++) {
		struct sv_http_conn *c;

		if (pfd[i].revents == 0)
			continue;
		if (h->polled[i] == -1) {
			accept_all(h, now_ms);
			continue;
		}
		c = &h->conns[h->polled[i]];
		if (c->fd == -1)
			continue;
		if (!c->responded)
			conn_read(h, c);
		if (c->fd != -1 && c->responded)
			conn_write(c);
	}
	h->npolled = 0;
	for (i = 0; i < SV_HTTP_CONNS; i++)
		if (h->conns[i].fd != -1 && now_ms >= h->conns[i].deadline_ms)
			conn_close(&h->conns[i]);
}

long long
sv_httpd_deadline(const struct sv_httpd *h)
{
	long long d = -1;
	int i;

	for (i = 0; i < SV_HTTP_CONNS; i++)
		if (h->conns[i].fd != -1 &&
		    (d == -1 || h->conns[i].deadline_ms < d))
			d = h->conns[i].deadline_ms;
	return d;
}

int
sv_bind_is_loopback(const char *bind)
{
	char host[256];
	const char *port;

	if (split_bind(bind, host, sizeof(host), &port) == -1)
		return 0;
	return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
	    strcasecmp(host, "localhost") == 0;
}

int
sv_http_bearer_ok(const struct sv_http_req *req, const char *token)
{
	const char *given = req->auth;
	size_t n = strlen(token), i;
	unsigned char diff = 0;

	if (strncasecmp(given, "Bearer ", 7) != 0)
		return 0;
	given += 7;
	while (*given == ' ')
		given++;
	if (strlen(given) != n)
		return 0;
	/* every byte compared, whichever differs */
	for (i = 0; i < n; i++)
		diff |= (unsigned char)(given[i] ^ token[i]);
	return diff == 0;
}
