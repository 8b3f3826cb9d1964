/*
 * config_metrics.c - the metrics section: where the supervisor serves
 * /metrics and /healthz. Owns its key and the form of a bind address; it
 * opens no socket.
 */
#include <ctype.h>
#include <stdio.h>
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
	{ NULL }
};
