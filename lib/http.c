/*
 * http.c - HTTP requests to the target over libcurl: blocking on one
 * reused easy handle, or several at once through a multi handle whose
 * transfers the caller's poll loop drives. Each easy handle keeps its own
 * kept-alive connection. Owns handing credentials to curl
 * (CURLOPT_USERNAME/PASSWORD: never in a URL, an argv or an error message).
 * Never interprets a response: the status and body go back to the caller.
 * A target that is no HTTP server (opts.local) is answered in-process by
 * its module's handler instead, at the same calls, so that the writer's
 * and ckpt's loops stay the same for it.
 * Sends each attempt to the node nodes.c picks and, when the node cannot
 * be reached or answers 5xx, the same request to the next (every request
 * to our targets is one a retry may repeat: versioned writes, reads,
 * creations that find the index there), saying in the log when a node
 * leaves and when it answers again. Also the one percent-escaper of what
 * goes into a path or a query.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "http.h"
#include "log.h"
#include "p2o.h"
#include "xio.h"

/* above the minute a search engine's node waits for a shard that is not
 * active before it answers a write (the bulk's own default timeout): its
 * answer, which writes it could not make, arrives rather than a timeout
 * that would blame the node */
#define HTTP_TIMEOUT_MS_DEFAULT	90000L

_Static_assert(sizeof(((struct http_client *)0)->curlerr) >= CURL_ERROR_SIZE,
    "curl's error buffer size");

void
http_call_set(struct http_call *call, const char *method, const char *path,
    const char *ctype, const char *body, size_t len)
{
	memset(call, 0, sizeof(*call));
	call->method = method;
	call->path = path;
	call->ctype = ctype;
	call->body = body;
	call->len = len;
}

void
http_escape(struct sbuf *out, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		    *p == '.' || *p == '~' || strchr(keep, *p))
			sbuf_addc(out, (char)*p);
		else {
			sbuf_addc(out, '%');
			sbuf_addc(out, hex[*p >> 4]);
			sbuf_addc(out, hex[*p & 15]);
		}
	}
}

int
http_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static size_t
collect(char *p, size_t size, size_t nmemb, void *arg)
{
	struct sbuf *resp = arg;

	if (resp != NULL)
		sbuf_add(resp, p, size * nmemb);
	return size * nmemb;
}

/* 1 if url has user information ("scheme://user[:pass]@host") */
static int
url_has_userinfo(const char *url)
{
	const char *auth = strstr(url, "://"), *end;

	if (auth == NULL)
		return 0;
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	return memchr(auth, '@', end - auth) != NULL;
}

/* c's handle and credentials, sending to nodes (which it owns when own) */
static int
client_init(struct http_client *c, struct nodes *nodes, int own,
    const struct http_opts *o)
{
	static const struct http_opts none;
	CURL *h;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = HTTP_TIMEOUT_MS_DEFAULT;
	c->nodes = nodes;
	c->own_nodes = own;
	sbuf_init(&c->req.path);
	if (o == NULL)
		o = &none;
	if (o->local != NULL) {
		/* answered by the module: no curl handle (the url it opens
		 * is set by the caller, which has it) */
		c->local = o->local;
		return 0;
	}
	if ((h = curl_easy_init()) == NULL) {
		snprintf(c->err, sizeof(c->err), "could not create a curl "
		    "handle");
		return -1;
	}
	c->curl = h;

	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->username != NULL) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, o->username);
		if (o->password != NULL)
			curl_easy_setopt(h, CURLOPT_PASSWORD, o->password);
	}
	if (o->api_key != NULL) {
		/* a header of every request (set_headers), never logged */
		const char *scheme = o->api_key_scheme ? o->api_key_scheme :
		    "ApiKey";
		size_t hn = strlen(o->api_key) + strlen(scheme) +
		    sizeof("Authorization:  ");

		c->auth = xmalloc(hn);
		snprintf(c->auth, hn, "Authorization: %s %s", scheme,
		    o->api_key);
	}
	if (o->ca_file != NULL)
		curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
	if (o->no_verify) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return 0;
}

/* the nodes of urls, each a url curl may be given: 0, or -1 with why. An
 * in-process target (o->local) has one url, which may carry its password:
 * its node is named by the url with the password redacted, since messages
 * name a target by its node */
static int
nodes_of(struct nodes *ns, const char *const *urls, int n,
    const struct http_opts *o, char *why, size_t len)
{
	char shown[512];
	const char *one;
	int i;

	if (o != NULL && o->local != NULL) {
		if (n != 1) {
			snprintf(why, len, "%d target urls: this target takes "
			    "one", n);
			return -1;
		}
		one = log_redact_url(urls[0], shown, sizeof(shown));
		return nodes_init(ns, &one, 1);
	}
	for (i = 0; i < n; i++)
		if (url_has_userinfo(urls[i])) {
			/* curl would send them, and every error would
			 * print them */
			snprintf(why, len, "credentials in the target url are "
			    "not accepted: give a username and password "
			    "instead");
			return -1;
		}
	if (nodes_init(ns, urls, n) == -1) {
		snprintf(why, len, "%d target urls: give 1 to %d", n,
		    NODES_MAX);
		return -1;
	}
	return 0;
}

int
http_init(struct http_client *c, const char *const *urls, int n,
    const struct http_opts *o)
{
	struct nodes *ns = xcalloc(1, sizeof(*ns));
	char why[sizeof(c->err)];

	if (nodes_of(ns, urls, n, o, why, sizeof(why)) == -1) {
		free(ns);
		memset(c, 0, sizeof(*c));
		snprintf(c->err, sizeof(c->err), "%s", why);
		return -1;
	}
	if (client_init(c, ns, 1, o) == -1) {
		nodes_release(ns);
		free(ns);
		c->nodes = NULL;
		return -1;
	}
	if (c->local != NULL)
		c->local_url = xstrdup(urls[0]);
	return 0;
}

void
http_release(struct http_client *c)
{
	if (c->local != NULL && c->local_conn != NULL)
		c->local->close(c->local_conn);
	c->local_conn = NULL;
	if (c->local_url != NULL) {
		explicit_bzero(c->local_url, strlen(c->local_url));
		free(c->local_url);
		c->local_url = NULL;
	}
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	if (c->own_nodes && c->nodes != NULL) {
		nodes_release(c->nodes);
		free(c->nodes);
	}
	sbuf_release(&c->req.path);
	if (c->auth != NULL) {
		explicit_bzero(c->auth, strlen(c->auth));
		free(c->auth);
	}
	c->auth = NULL;
	c->curl = NULL;
	c->headers = NULL;
	c->nodes = NULL;
}

/* the header list for ctype, rebuilt only when the type changes */
static int
set_headers(struct http_client *c, const char *ctype)
{
	struct curl_slist *l = NULL, *t;
	char line[256];

	snprintf(line, sizeof(line), "Content-Type: %s", ctype);
	if (c->headers != NULL &&
	    strcmp(((struct curl_slist *)c->headers)->data, line) == 0)
		return 0;
	/* curl's "Expect: 100-continue" costs a round trip per bulk body */
	if ((t = curl_slist_append(l, line)) == NULL)
		return -1;
	l = t;
	if ((t = curl_slist_append(l, "Expect:")) == NULL) {
		curl_slist_free_all(l);
		return -1;
	}
	l = t;
	if (c->auth != NULL) {
		if ((t = curl_slist_append(l, c->auth)) == NULL) {
			curl_slist_free_all(l);
			return -1;
		}
		l = t;
	}
	curl_slist_free_all(c->headers);
	c->headers = l;
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, l);
	return 0;
}

/* a request's first attempt: remembered, to be sent again elsewhere */
static void
begin(struct http_client *c, const char *method, const char *path,
    const char *ctype, const char *body, size_t len, struct sbuf *resp,
    long timeout_ms)
{
	struct http_req *r = &c->req;

	r->method = method;
	r->ctype = ctype;
	r->body = body;
	r->len = len;
	r->resp = resp;
	r->timeout_ms = timeout_ms;
	sbuf_reset(&r->path);
	sbuf_adds(&r->path, path);
	r->tried = 0;
	r->attempts = 0;
	r->node = nodes_pick(c->nodes, 0, now_ms(), &r->trial);
}

/* the options of the request's attempt on its node, on c's handle:
 * everything but running it */
static int
prepare(struct http_client *c)
{
	const struct http_req *r = &c->req;
	struct sbuf url = SBUF_INIT;
	const char *method = r->method;
	CURL *h = c->curl;
	long timeout_ms = r->timeout_ms;

	c->err[0] = '\0';
	c->curlerr[0] = '\0';
	if (r->resp != NULL)
		sbuf_reset(r->resp);
	if (set_headers(c, r->ctype ? r->ctype : "application/json") < 0) {
		snprintf(c->err, sizeof(c->err), "out of memory for headers");
		return -1;
	}
	c->req.tried |= 1ul << r->node;
	c->req.attempts++;
	sbuf_adds(&url, c->nodes->v[r->node].base);
	sbuf_add(&url, r->path.buf, r->path.len);

	/* the handle keeps options between requests: reset the method */
	curl_easy_setopt(h, CURLOPT_URL, url.buf);
	sbuf_release(&url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (r->body != NULL || strcmp(method, "GET") != 0) {
		/* a body, or a method that sends one: Content-Length: 0
		 * rather than none for an empty PUT/POST */
		if (r->body != NULL || strcmp(method, "DELETE") != 0) {
			curl_easy_setopt(h, CURLOPT_POST, 1L);
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)(r->body ? r->len : 0));
			curl_easy_setopt(h, CURLOPT_POSTFIELDS,
			    r->body ? r->body : "");
		}
		if (strcmp(method, "POST") != 0)
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	if (timeout_ms <= 0)
		timeout_ms = c->timeout_ms > 0 ? c->timeout_ms :
		    HTTP_TIMEOUT_MS_DEFAULT;
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r->resp);
	/* set per request: the client may have moved since the last one */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->curlerr);
	curl_easy_setopt(h, CURLOPT_PRIVATE, c);
	return 0;
}

/* after a transfer: 0 and the status, or -1 with err saying why not */
static int
finish(struct http_client *c, CURLcode rc, long *status)
{
	char *detail = c->curlerr;

	*status = 0;
	c->tls_failed = 0;
	if (rc != CURLE_OK) {
		/* the server's certificate: no retry changes it */
		c->tls_failed = rc == CURLE_PEER_FAILED_VERIFICATION ||
		    rc == CURLE_SSL_CACERT_BADFILE ||
		    rc == CURLE_SSL_ISSUER_ERROR;
		detail[strcspn(detail, "\r\n")] = '\0';
		if (detail[0] && strcmp(detail, curl_easy_strerror(rc)) != 0)
			snprintf(c->err, sizeof(c->err), "%s: %.200s",
			    curl_easy_strerror(rc), detail);
		else
			snprintf(c->err, sizeof(c->err), "%s",
			    curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
	return 0;
}

/* an in-process target's answer, as finish() gives curl's */
static int
local_request(struct http_client *c, const char *method, const char *path,
    const char *body, size_t len, struct sbuf *resp, long *status)
{
	c->err[0] = '\0';
	c->tls_failed = 0;
	*status = 0;
	if (resp != NULL)
		sbuf_reset(resp);
	return c->local->request(&c->local_conn, c->local_url, method, path, body,
	    len, resp, status, c->err, sizeof(c->err));
}

/*
 * After an attempt (rc finish's, status its answer): what it says of its
 * node, and 1 when the request goes on to another node. A TLS failure is
 * the configuration's, not the node's: it ends the request as it is.
 */
static int
next_node(struct http_client *c, int rc, long status)
{
	struct http_req *r = &c->req;
	struct nodes *ns = c->nodes;
	struct node *nd = &ns->v[r->node];
	long long now = now_ms();
	char why[sizeof(c->err)];
	int from = r->node;

	if (rc == -1 && c->tls_failed)
		return 0;
	if (rc == 0 && status < 500) {
		if (nodes_ok(ns, r->node, r->trial))
			log_info("target node '%s' answers again, after %llds",
			    nd->base, (now - nd->down_since + 500) / 1000);
		return 0;
	}
	if (rc == -1)
		snprintf(why, sizeof(why), "%s", c->err);
	else
		snprintf(why, sizeof(why), "HTTP %ld", status);
	switch (nodes_failed(ns, r->node, r->trial, now)) {
	case NODE_LEFT:
		log_warnx("target node '%s' left: %s; the other nodes take "
		    "its requests, it is tried again in %llds", nd->base, why,
		    nd->rest_ms / 1000);
		break;
	case NODE_STILL:
		log_debug("target node '%s' still fails: %s; tried again in "
		    "%llds", nd->base, why, nd->rest_ms / 1000);
		break;
	case NODE_SAME:
		break;
	}
	if ((r->node = nodes_pick(ns, r->tried, now, &r->trial)) == -1) {
		r->node = from;
		if (rc == -1 && r->attempts > 1)
			snprintf(c->err, sizeof(c->err), "no node answered "
			    "(%d tried); the last, '%.80s': %.100s", r->attempts,
			    nd->base, why);
		else if (rc == -1 && ns->n > 1)
			snprintf(c->err, sizeof(c->err), "node '%.80s': "
			    "%.160s", nd->base, why);
		return 0;
	}
	log_debug("request %s %s: node '%s' failed (%s), sent to '%s'",
	    r->method, r->path.buf, nd->base, why, ns->v[r->node].base);
	return 1;
}

int
http_request(struct http_client *c, const char *method, const char *path,
    const char *ctype, const char *body, size_t len, struct sbuf *resp,
    long *status)
{
	struct http_call call;

	http_call_set(&call, method, path, ctype, body, len);
	return http_call_do(c, &call, resp, status);
}

int
http_call_do(struct http_client *c, const struct http_call *call,
    struct sbuf *resp, long *status)
{
	int rc;

	*status = 0;
	if (c->local != NULL)
		return local_request(c, call->method, call->path, call->body,
		    call->len, resp, status);
	/* the call's own timeout bounds each attempt: a node that holds it
	 * longer is left for the next, as one that refuses it */
	begin(c, call->method, call->path, call->ctype, call->body, call->len,
	    resp, call->timeout_ms);
	do {
		if (prepare(c) == -1)
			return -1;
		rc = finish(c, curl_easy_perform(c->curl), status);
	} while (next_node(c, rc, *status));
	return rc;
}

int
http_pool_init(struct http_pool *p, int nslots, const char *const *urls,
    int n, const struct http_opts *opts, struct p2o_err *err)
{
	char why[256];
	int i;

	memset(p, 0, sizeof(*p));
	if (nodes_of(&p->nodes, urls, n, opts, why, sizeof(why)) == -1)
		return p2o_fail(err, P2O_EXIT_CONFIG, "%s", why);
	if (nslots < 1)
		nslots = 1;
	p->slot = xcalloc(nslots, sizeof(*p->slot));
	p->open = xcalloc(nslots, sizeof(*p->open));
	p->answered = xcalloc(nslots, sizeof(*p->answered));
	for (i = 0; i < nslots; i++) {
		if (client_init(&p->slot[i], &p->nodes, 0, opts) == -1) {
			p2o_fail(err, P2O_EXIT_CONFIG, "%s", p->slot[i].err);
			goto fail;
		}
		if (p->slot[i].local != NULL)
			p->slot[i].local_url = xstrdup(urls[0]);
		p->nslots = i + 1;
	}
	if ((p->multi = curl_multi_init()) == NULL) {
		p2o_fail(err, P2O_EXIT_INTERNAL, "could not create a curl "
		    "multi handle");
		goto fail;
	}
	return 0;
fail:
	http_pool_release(p);
	return -1;
}

void
http_pool_release(struct http_pool *p)
{
	int i;

	for (i = 0; i < p->nslots; i++) {
		if (p->open[i] && p->slot[i].curl != NULL)
			curl_multi_remove_handle(p->multi, p->slot[i].curl);
		http_release(&p->slot[i]);
	}
	if (p->multi != NULL)
		curl_multi_cleanup(p->multi);
	free(p->slot);
	free(p->open);
	free(p->answered);
	nodes_release(&p->nodes);
	memset(p, 0, sizeof(*p));
}

int
http_pool_start(struct http_pool *p, int slot, const char *method,
    const char *path, const char *ctype, const char *body, size_t len,
    struct sbuf *resp, long timeout_ms)
{
	struct http_client *c;

	if (slot < 0 || slot >= p->nslots || p->open[slot])
		return -1;
	c = &p->slot[slot];
	if (c->local != NULL) {
		/* answered now; handed out by the next http_pool_done */
		c->local_failed = local_request(c, method, path, body, len,
		    resp, &c->local_status) == -1;
		p->open[slot] = p->answered[slot] = 1;
		p->nopen++;
		return 0;
	}
	begin(c, method, path, ctype, body, len, resp, timeout_ms);
	if (prepare(c) == -1)
		return -1;
	if (curl_multi_add_handle(p->multi, c->curl) != CURLM_OK) {
		snprintf(c->err, sizeof(c->err), "curl refused a request");
		return -1;
	}
	p->open[slot] = 1;
	p->nopen++;
	return 0;
}

int
http_pool_wait(struct http_pool *p, const int *fds, int nfds, unsigned *ready,
    long timeout_ms)
{
	struct curl_waitfd w[HTTP_WAIT_FDS];
	int at[HTTP_WAIT_FDS];
	int running, i, n = 0;

	*ready = 0;
	for (i = 0; i < nfds && i < HTTP_WAIT_FDS; i++) {
		if (fds[i] < 0)
			continue;
		memset(&w[n], 0, sizeof(w[n]));
		w[n].fd = fds[i];
		w[n].events = CURL_WAIT_POLLIN;
		at[n++] = i;
	}
	if (timeout_ms < 0)
		timeout_ms = 0;
	/* an answered in-process request is ready now: only look */
	for (i = 0; i < p->nslots; i++)
		if (p->answered[i])
			timeout_ms = 0;
	/* curl shortens the wait to its own next deadline; a signal ends
	 * it early, which the caller sees as a short wait */
	if (curl_multi_poll(p->multi, n ? w : NULL, (unsigned)n,
	    (int)timeout_ms, NULL) != CURLM_OK)
		return -1;
	for (i = 0; i < n; i++)
		if (w[i].revents & CURL_WAIT_POLLIN)
			*ready |= 1u << at[i];
	if (curl_multi_perform(p->multi, &running) != CURLM_OK)
		return -1;
	return 0;
}

int
http_pool_done(struct http_pool *p, struct http_done *d)
{
	struct http_client *c;
	CURLMsg *m;
	void *priv;
	int left, i, rc;

	for (i = 0; i < p->nslots; i++) {
		if (!p->answered[i])
			continue;
		c = &p->slot[i];
		d->slot = i;
		d->status = c->local_failed ? 0 : c->local_status;
		d->err = c->local_failed ? c->err : NULL;
		d->tls = 0;
		p->answered[i] = p->open[i] = 0;
		p->nopen--;
		return 1;
	}
	while ((m = curl_multi_info_read(p->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		c = priv;
		d->slot = (int)(c - p->slot);
		rc = finish(c, m->data.result, &d->status);
		curl_multi_remove_handle(p->multi, c->curl);
		/* the same request to the next node, under way at once: the
		 * caller sees only its last answer */
		if (next_node(c, rc, d->status)) {
			if (prepare(c) == 0 && curl_multi_add_handle(p->multi,
			    c->curl) == CURLM_OK)
				continue;
			if (c->err[0] == '\0')
				snprintf(c->err, sizeof(c->err), "curl refused "
				    "a request");
			rc = -1;
			d->status = 0;
		}
		d->err = rc == -1 ? c->err : NULL;
		d->tls = d->err != NULL && c->tls_failed;
		p->open[d->slot] = 0;
		p->nopen--;
		return 1;
	}
	return 0;
}
