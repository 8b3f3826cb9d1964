/*
 * config_traces.c - the traces section: where spans go (an OTLP/HTTP
 * collector, or the PG2OSYNC_OTLP_ENDPOINT variable when the file names
 * none) and which share of batches is traced. Owns their keys and that
 * fallback; the spans and their export are lib/trace.c's. It opens no
 * connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_sections.h"
#include "p2o.h"
#include "trace.h"

static int
parse_ratio(const char *s, double *r)
{
	char *end;

	errno = 0;
	*r = strtod(s, &end);
	return errno != 0 || end == s || *end != '\0' || !(*r >= 0.0) ||
	    *r > 1.0 ? -1 : 0;
}

static int
check_ratio(const char *s, char *why, size_t len)
{
	double r;

	if (parse_ratio(s, &r) == -1) {
		snprintf(why, len, "must be a number from 0 to 1 (the share "
		    "of batches traced: 1 every one, 0.01 one in a hundred)");
		return -1;
	}
	return 0;
}

const struct cs_node config_traces_keys[] = {
	{ "endpoint", CS_STR, CFG(traces_endpoint),
	    .check = trace_check_endpoint },
	{ "sample_ratio", CS_STR, CFG(traces_sample_ratio), .def = "1",
	    .check = check_ratio },
	{ NULL }
};

int
config_traces(const struct config *cfg, const char **endpoint,
    double *ratio, struct p2o_err *e)
{
	const char *env = getenv(CONFIG_OTLP_ENV);
	char why[200];

	*ratio = 1.0;
	if (cfg->traces_sample_ratio != NULL)
		parse_ratio(cfg->traces_sample_ratio, ratio);
	*endpoint = cfg->traces_endpoint;
	if (*endpoint != NULL || env == NULL || *env == '\0')
		return 0;
	if (trace_check_endpoint(env, why, sizeof(why)) == -1)
		return p2o_fail(e, P2O_EXIT_CONFIG, "%s %s", CONFIG_OTLP_ENV,
		    why);
	*endpoint = env;
	return 0;
}

int
config_traces_start(const struct config *cfg, const char *tool,
    struct p2o_err *e)
{
	const char *endpoint;
	double ratio;

	if (config_traces(cfg, &endpoint, &ratio, e) == -1)
		return -1;
	return trace_start(endpoint, ratio, tool, e);
}
