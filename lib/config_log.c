/*
 * config_log.c - the log section: the form of every log line (text or
 * JSON) and the least level written. Owns its keys; what a line looks
 * like is lib/log.c's. The supervisor hands both to its stages through
 * their environment (P2O_LOG_FORMAT, P2O_LOG_LEVEL), so every program of
 * a pipeline writes the same lines.
 */
#include "config_sections.h"

static const char *const formats[] = { "text", "json", NULL };
static const char *const levels[] = { "error", "warn", "info", "debug",
	NULL };

const struct cs_node config_log_keys[] = {
	{ "format", CS_ENUM, CFG(log_format), .def = "text",
	    .choices = formats },
	{ "level", CS_ENUM, CFG(log_level), .def = "info",
	    .choices = levels },
	{ NULL }
};
