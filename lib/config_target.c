/*
 * config_target.c - the target section: the OpenSearch cluster documents
 * are written to. Owns its keys, what a target url may hold, and the rules
 * between the credential keys.
 *
 * It never quotes the url or a password.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config_sections.h"

const struct cs_node config_target_keys[] = {
	{ "url", CS_STR, CFG(target_url), .required = 1 },
	{ "username", CS_STR, CFG(target_username) },
	{ "password", CS_STR, CFG(target_password) },
	{ "password_env", CS_STR, CFG(target_password_env),
	    .check = config_check_envname },
	{ NULL }
};

/* checks target.url and strips trailing slashes in place */
static int
check_target_url(char *url, char *why, size_t len)
{
	const char *host, *end, *port;
	size_t n;

	if (config_has_prefix(url, "http://"))
		host = url + 7;
	else if (config_has_prefix(url, "https://"))
		host = url + 8;
	else {
		snprintf(why, len, "must start with http:// or https://");
		return -1;
	}
	end = host + strcspn(host, "/");
	if (end == host) {
		snprintf(why, len, "must name a host");
		return -1;
	}
	if (memchr(host, '@', (size_t)(end - host))) {
		snprintf(why, len, "must not hold credentials; use "
		    "'target.username' and 'target.password_env'");
		return -1;
	}
	if (strpbrk(url, "?# \t\r\n")) {
		snprintf(why, len, "must not hold a query, a fragment or "
		    "white space");
		return -1;
	}
	/* Serverless is refused: SigV4-only, and custom ids work on
	 * one collection type of three */
	port = memchr(host, ':', (size_t)(end - host));
	n = (size_t)((port ? port : end) - host);
	if (n >= 19 && strncasecmp(host + n - 19, ".aoss.amazonaws.com", 19)
	    == 0) {
		snprintf(why, len, "names Amazon OpenSearch Serverless, which "
		    "is not supported");
		return -1;
	}
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/' && url + n - 1 >= end)
		url[--n] = '\0';
	return 0;
}

int
config_target_finish(struct cs_walk *w, void *base, const char *path,
    int line)
{
	struct config *cfg = base;
	char why[256];
	int lurl = cs_line(w, "target.url");
	int lpw = cs_line(w, "target.password");
	int lenv = cs_line(w, "target.password_env");

	if (check_target_url(cfg->target_url, why, sizeof(why)) == -1)
		return cs_err(w, lurl, "'target.url' %s", why);
	if (lpw && lenv)
		return cs_err(w, lpw > lenv ? lpw : lenv, "'target.password' "
		    "and 'target.password_env' cannot both be set");
	if ((lpw || lenv) && cfg->target_username == NULL)
		return cs_err(w, lpw ? lpw : lenv, "'target.%s' needs "
		    "'target.username'", lpw ? "password" : "password_env");
	if (lenv && config_resolve_env(w, "target.password_env", lenv,
	    cfg->target_password_env, &cfg->target_password) == -1)
		return -1;
	return 0;
}
