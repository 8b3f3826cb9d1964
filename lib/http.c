/*
 * http.c - a small blocking HTTP client over one reused libcurl easy
 * handle, so requests to the target share a kept-alive connection. Owns
 * handing credentials to curl (CURLOPT_USERNAME/PASSWORD: never in a URL,
 * an argv or an error message). Never interprets a response: the status
 * and body go back to the caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "http.h"

#define HTTP_TIMEOUT_MS_DEFAULT	60000L

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

int
http_init(struct http_client *c, const char *base_url, const char *username,
    const char *password)
{
	size_t n;
	CURL *h;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = HTTP_TIMEOUT_MS_DEFAULT;
	if (url_has_userinfo(base_url)) {
		/* curl would send them, and every error would print them */
		snprintf(c->err, sizeof(c->err), "credentials in the target "
		    "url are not accepted: give a username and password "
		    "instead");
		return -1;
	}
	if ((h = curl_easy_init()) == NULL) {
		snprintf(c->err, sizeof(c->err), "could not create a curl "
		    "handle");
		return -1;
	}
	n = strlen(base_url);
	while (n > 0 && base_url[n - 1] == '/')
		n--;
	c->base = xstrndup(base_url, n);
	c->curl = h;

	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (username != NULL) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, username);
		if (password != NULL)
			curl_easy_setopt(h, CURLOPT_PASSWORD, password);
	}
	return 0;
}

void
http_release(struct http_client *c)
{
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	free(c->base);
	c->curl = NULL;
	c->headers = NULL;
	c->base = NULL;
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
	curl_slist_free_all(c->headers);
	c->headers = l;
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, l);
	return 0;
}

int
http_request(struct http_client *c, const char *method, const char *path,
    const char *ctype, const char *body, size_t len, struct sbuf *resp,
    long *status)
{
	char errbuf[CURL_ERROR_SIZE];
	struct sbuf url = SBUF_INIT;
	CURL *h = c->curl;
	CURLcode rc;

	c->err[0] = '\0';
	*status = 0;
	if (resp != NULL)
		sbuf_reset(resp);
	if (set_headers(c, ctype ? ctype : "application/json") < 0) {
		snprintf(c->err, sizeof(c->err), "out of memory for headers");
		return -1;
	}
	sbuf_adds(&url, c->base);
	sbuf_adds(&url, path);
	errbuf[0] = '\0';

	/* the handle keeps options between requests: reset the method */
	curl_easy_setopt(h, CURLOPT_URL, url.buf);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (body != NULL || strcmp(method, "GET") != 0) {
		/* a body, or a method that sends one: Content-Length: 0
		 * rather than none for an empty PUT/POST */
		if (body != NULL || strcmp(method, "DELETE") != 0) {
			curl_easy_setopt(h, CURLOPT_POST, 1L);
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)(body ? len : 0));
			curl_easy_setopt(h, CURLOPT_POSTFIELDS,
			    body ? body : "");
		}
		if (strcmp(method, "POST") != 0)
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
	    c->timeout_ms > 0 ? c->timeout_ms : HTTP_TIMEOUT_MS_DEFAULT);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);

	rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	sbuf_release(&url);
	if (rc != CURLE_OK) {
		errbuf[strcspn(errbuf, "\r\n")] = '\0';
		if (errbuf[0] && strcmp(errbuf, curl_easy_strerror(rc)) != 0)
			snprintf(c->err, sizeof(c->err), "%s: %.200s",
			    curl_easy_strerror(rc), errbuf);
		else
			snprintf(c->err, sizeof(c->err), "%s",
			    curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	return 0;
}
