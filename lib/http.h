/*
 * http.h - an HTTP client over libcurl for the target's REST API: one
 * blocking request at a time (ckpt), or several open at once in a pool
 * whose transfers the caller's own poll loop drives (writer). Credentials
 * are handed to curl directly and never appear in a URL, an argv or a log
 * line.
 *
 * A client sends to the nodes of a cluster (nodes.h): each request to
 * the next healthy node in turn, and an attempt that cannot connect, fails
 * on the way or is answered 5xx goes on to another node at once, the node
 * left to rest; the caller sees the answer of the last attempt. With one
 * node every request is sent to it once, as a plain client would.
 */
#ifndef HTTP_H
#define HTTP_H

#include "err.h"
#include "nodes.h"
#include "sbuf.h"

/* a request for a caller to make; the pointers stay valid until it is
 * answered */
struct http_call {
	const char *method, *path, *ctype, *body;
	size_t	 len;
	long	 timeout_ms;	/* 0: the client's default */
};

/* the call with these fields, the timeout 0 */
void	http_call_set(struct http_call *, const char *method, const char *path,
	    const char *ctype, const char *body, size_t len);

/* s appended to out percent-escaped but for the unreserved bytes of RFC
 * 3986 (letters, digits, "-._~") and those of keep: HTTP_KEEP_INDEX for an
 * index name, a list or a glob of them in a path; HTTP_KEEP_ID for a
 * document id in a path; "" for a query string value, where '+' would
 * read as a space */
#define HTTP_KEEP_INDEX	",+*"
#define HTTP_KEEP_ID	":"
void	http_escape(struct sbuf *out, const char *s, const char *keep);

/*
 * A target reached in-process instead of over HTTP (a PostgreSQL table,
 * lib/target/postgres*.c): its module answers each request itself, on a
 * connection of its own per client (*conn, NULL until the first request
 * opens it), before the request returns. 0 with the status and body in
 * resp, or -1 with why in err as a transport error (unreachable: the
 * connection was closed and *conn is NULL again). The url may hold a
 * password: it is handed to the module and never quoted here.
 */
struct http_local {
	int	(*request)(void **conn, const char *url, const char *method,
		    const char *path, const char *body, size_t len,
		    struct sbuf *resp, long *status, char *err, size_t errlen);
	void	(*close)(void *conn);
};

/* how a client authenticates and checks the server, all optional: basic
 * credentials (username, password), an API key (sent as "Authorization:
 * <api_key_scheme> <key>", "ApiKey" when the scheme is NULL, as
 * OpenSearch and Elasticsearch read it), a CA bundle file, and no_verify to
 * skip the certificate check (the caller warns) */
struct http_opts {
	const char *username, *password;
	const char *api_key;
	const char *api_key_scheme;
	const char *ca_file;
	int	 no_verify;
	const struct http_local *local;	/* NULL: HTTP over curl */
};

/* the request a client has under way, kept to send it to another node */
struct http_req {
	const char *method, *ctype, *body;
	size_t	 len;
	struct sbuf *resp;
	long	 timeout_ms;
	struct sbuf path;
	unsigned long tried;	/* bit i: node i had an attempt */
	int	 node;		/* the node of the attempt under way */
	int	 trial;		/* that attempt is the node's trial */
	int	 attempts;
};

struct http_client {
	void	*curl;		/* CURL * */
	char	*auth;		/* the API key's header line, or NULL */
	int	 tls_failed;	/* the last transport error was the TLS check
				 * of the server (permanent: a CA, a name) */
	void	*headers;	/* struct curl_slist * */
	struct nodes *nodes;	/* where it sends: its own, or its pool's */
	int	 own_nodes;
	long	 timeout_ms;	/* whole-request timeout, default 90000 */
	struct http_req req;
	char	 err[256];	/* transport error text after -1 */
	char	 curlerr[256];	/* curl's detail (CURL_ERROR_SIZE) */
	/* an in-process target (opts.local): its handler, its connection,
	 * and in a pool the outcome of the request it answered */
	const struct http_local *local;
	char	*local_url;	/* the url the handler opens, which may hold a
				 * password: base is its redacted form */
	void	*local_conn;
	long	 local_status;
	int	 local_failed;
};

int	http_global_init(void);		/* once per process, before threads */
/* a client of the n nodes at urls (trailing '/' dropped; nodes.h's
 * NODES_MAX at most). opts may be NULL (no credentials, the system's CAs).
 * Every credential and TLS setting of a target is handed to curl here and
 * nowhere else */
int	http_init(struct http_client *, const char *const *urls, int n,
	    const struct http_opts *opts);
void	http_release(struct http_client *);
/* method "GET"/"PUT"/"POST"/"DELETE"/"HEAD"; path starts with '/'; body may
 * be NULL. ctype defaults to application/json. Returns 0 when a response
 * arrived (any status, in *status, body in resp), -1 on a transport error
 * (connection refused, timeout, TLS): err says which. */
int	http_request(struct http_client *, const char *method, const char *path,
	    const char *ctype, const char *body, size_t len, struct sbuf *resp,
	    long *status);
/* the same for a call; its timeout_ms, when not 0, bounds each attempt
 * (each node it goes to) instead of the client's timeout */
int	http_call_do(struct http_client *, const struct http_call *,
	    struct sbuf *resp, long *status);

/*
 * A pool of slots, each a client with its own connection, all driven
 * through one libcurl multi handle: http_pool_start opens a request on a
 * free slot and returns at once, http_pool_wait polls the transfers (and
 * a few descriptors of the caller's) and moves them along, http_pool_done
 * hands out each finished request once.
 */
struct http_pool {
	void	*multi;		/* CURLM * */
	struct nodes nodes;	/* every slot's, so that a node one slot found
				 * failing rests for all */
	struct http_client *slot;
	int	*open;		/* slot has a request in flight */
	int	*answered;	/* an in-process slot's request is answered,
				 * not yet handed out by http_pool_done */
	int	 nslots;
	int	 nopen;
};

struct http_done {
	int	 slot;
	long	 status;	/* HTTP status; 0 after a transport error */
	const char *err;	/* NULL, or why no response arrived */
	int	 tls;		/* err is the server's certificate check */
};

/* nslots clients of the n nodes at urls: 0, or -1 with err: 78 for a url
 * or credentials curl cannot use */
int	http_pool_init(struct http_pool *, int nslots, const char *const *urls,
	    int n, const struct http_opts *opts, struct p2o_err *err);
void	http_pool_release(struct http_pool *);
/* the same arguments as http_request, plus a timeout (0: the default).
 * body and resp must stay valid until the request is done. -1 if the slot
 * is busy or curl refuses (err in the slot's client). */
int	http_pool_start(struct http_pool *, int slot, const char *method,
	    const char *path, const char *ctype, const char *body, size_t len,
	    struct sbuf *resp, long timeout_ms);
/* the caller's descriptors http_pool_wait watches at most */
#define HTTP_WAIT_FDS	4

/* wait up to timeout_ms for a transfer to need attention or for one of
 * the nfds descriptors fds (up to HTTP_WAIT_FDS; -1 entries are skipped)
 * to become readable, then run the transfers; bit i of *ready says
 * whether fds[i] is readable. Returns at once when curl's own timer is
 * due. -1 only when polling itself fails. */
int	http_pool_wait(struct http_pool *, const int *fds, int nfds,
	    unsigned *ready, long timeout_ms);
/* 1 and *d for a request that finished since the last call, 0 when none
 * (an attempt that failed on a node and went on to another is no request
 * finished) */
int	http_pool_done(struct http_pool *, struct http_done *d);

#endif
