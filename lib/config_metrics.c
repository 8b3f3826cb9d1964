/*
 * config_metrics.c - the supervisor's listeners: the metrics section
 * (/metrics, /healthz, /ready: where, the bearer token of /metrics, how
 * long without progress makes a pipeline not ready) and the api section
 * (/synced: where, its bearer token). Owns their keys, the form of a bind
 * address and the resolution of the tokens, which only the supervisor
 * asks for (CONFIG_SECRET_LISTEN). It opens no socket and never quotes a
 * token.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_sections.h"

static int
check_bind(const char *s, char *why, size_t len)
{
	const char *colon = strrchr(s, ':');
	size_t hlen;
	long long port;

	if (colon == NULL)
		goto bad;
	hlen = (size_t)(colon - s);
	if (hlen == 0)
		goto bad;
	if (s[0] == '[') {
		if (hlen < 3 || s[hlen - 1] != ']')
			goto bad;
	} else if (memchr(s, ':', hlen))
		goto bad;
	if (!isdigit((unsigned char)colon[1]) ||
	    cs_parse_ll(colon + 1, &port) == -1 || port < 1 || port > 65535)
		goto bad;
	return 0;
bad:
	snprintf(why, len, "must be host:port with a port from 1 to 65535 "
	    "(e.g. 127.0.0.1:9187 or [::1]:9187)");
	return -1;
}

const struct cs_node config_metrics_keys[] = {
	{ "bind", CS_STR, CFG(metrics_bind), .required = 1,
	    .check = check_bind },
	{ "token_env", CS_STR, CFG(metrics_token_env),
	    .check = config_check_envname },
	/* a minute covers a long transaction's first write and a load's
	 * slowest wave on a healthy target */
	{ "ready_stall_s", CS_INT, CFG(ready_stall_s), .def = "60",
	    .min = 1, .max = 86400 },
	{ NULL }
};

const struct cs_node config_api_keys[] = {
	{ "bind", CS_STR, CFG(api_bind), .required = 1,
	    .check = check_bind },
	{ "token_env", CS_STR, CFG(api_token_env),
	    .check = config_check_envname },
	{ NULL }
};

int
config_listen_finish(struct cs_walk *w, void *base, const char *path,
    int line)
{
	struct config *cfg = base;
	int metrics = strcmp(path, "metrics") == 0;
	const char *key = metrics ? "metrics.token_env" : "api.token_env";
	char *var = metrics ? cfg->metrics_token_env : cfg->api_token_env;
	char **dst = metrics ? &cfg->metrics_token : &cfg->api_token;
	int lenv = cs_line(w, "%s", key);

	if (!lenv)
		return 0;
	return config_resolve_env(w, key, lenv, var, dst);
}

/* the tokens resolved from token_env: no key table holds them, so
 * cs_release does not see them */
void
config_listen_release(void *base)
{
	struct config *cfg = base;

	free(cfg->metrics_token);
	cfg->metrics_token = NULL;
	free(cfg->api_token);
	cfg->api_token = NULL;
}
