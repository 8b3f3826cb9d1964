/*
 * http.h - a small blocking HTTP client over libcurl, for the target's REST
 * API (writer, ckpt). Credentials are handed to curl directly and never
 * appear in a URL, an argv or a log line.
 */
#ifndef HTTP_H
#define HTTP_H

#include "sbuf.h"

struct http_client {
	void	*curl;		/* CURL * */
	void	*headers;	/* struct curl_slist * */
	char	*base;		/* "http://127.0.0.1:9200", no trailing slash */
	long	 timeout_ms;	/* whole-request timeout, default 60000 */
	char	 err[256];	/* transport error text after -1 */
};

int	http_global_init(void);		/* once per process, before threads */
/* username/password may be NULL; tls options come from the URL scheme */
int	http_init(struct http_client *, const char *base_url,
	    const char *username, const char *password);
void	http_release(struct http_client *);
/* method "GET"/"PUT"/"POST"/"DELETE"/"HEAD"; path starts with '/'; body may
 * be NULL. ctype defaults to application/json. Returns 0 when a response
 * arrived (any status, in *status, body in resp), -1 on a transport error
 * (connection refused, timeout, TLS): err says which. */
int	http_request(struct http_client *, const char *method, const char *path,
	    const char *ctype, const char *body, size_t len, struct sbuf *resp,
	    long *status);

#endif
