/*
 * log.c - the one logging API: lines on stderr, plain ("tool: level:
 * message"), text (the same after a UTC timestamp) or JSON (time, stage,
 * level, message as fields), as log.h says.
 * Each line leaves in a single write(2) so lines from the processes of a
 * pipeline sharing one stderr never interleave. Owns URL redaction, so a
 * connection string reaches a log line only without its password. Never
 * exits except in fatal()/fatalx(), which only main.c calls.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "p2o.h"

/* PIPE_BUF is the size up to which a write to a pipe is atomic */
#define LOG_LINE_MAX	4096

static char log_tool[64] = "pg2osync";
/* "tool[source]" while a source is set, else the tool */
static char log_label[64 + 160] = "pg2osync";
static enum log_level log_level = LOG_LVL_INFO;
static enum log_format log_format = LOG_FMT_PLAIN;
static int log_tty = -1;		/* stderr is a terminal; -1 unknown */
static char status_line[LOG_LINE_MAX];	/* shown under the log, or "" */

static const char *const level_names[] = {
	[LOG_LVL_ERROR] = "error",
	[LOG_LVL_WARN] = "warn",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

void
log_set_source(const char *source)
{
	if (source == NULL || *source == '\0')
		snprintf(log_label, sizeof(log_label), "%s", log_tool);
	else
		snprintf(log_label, sizeof(log_label), "%s[%.150s]", log_tool,
		    source);
}

void
log_init(const char *tool)
{
	enum log_level lvl;
	const char *env;

	snprintf(log_tool, sizeof(log_tool), "%s", tool);
	log_set_source(getenv("P2O_LOG_SOURCE"));
	/* the format first: a warning about the level is written in it */
	env = getenv("P2O_LOG_FORMAT");
	if (env != NULL && *env != '\0' && log_format_of(env,
	    &log_format) == -1)
		log_warnx("unknown P2O_LOG_FORMAT '%s', using plain lines", env);
	env = getenv("P2O_LOG_LEVEL");
	if (env == NULL || *env == '\0')
		return;
	if (log_level_of(env, &lvl) == 0) {
		log_level = lvl;
		return;
	}
	log_warnx("unknown P2O_LOG_LEVEL '%s', using 'info'", env);
}

int
log_level_of(const char *name, enum log_level *lvl)
{
	int i;

	for (i = LOG_LVL_ERROR; i <= LOG_LVL_DEBUG; i++)
		if (strcasecmp(name, level_names[i]) == 0) {
			*lvl = i;
			return 0;
		}
	return -1;
}

int
log_format_of(const char *name, enum log_format *fmt)
{
	if (strcmp(name, "text") == 0)
		*fmt = LOG_FMT_TEXT;
	else if (strcmp(name, "json") == 0)
		*fmt = LOG_FMT_JSON;
	else if (strcmp(name, "plain") == 0)
		*fmt = LOG_FMT_PLAIN;
	else
		return -1;
	return 0;
}

void
log_set_format(enum log_format fmt)
{
	log_format = fmt;
}

enum log_format
log_get_format(void)
{
	return log_format;
}

void
log_set_level(enum log_level lvl)
{
	log_level = lvl;
}

int
log_level_enabled(enum log_level lvl)
{
	return lvl <= log_level;
}

static void
put(const char *s, size_t n)
{
	ssize_t w;

	/* a signal caught while stderr is full (no SA_RESTART, stage.c)
	 * must not cost the line; a short write is not retried, so a line
	 * is never written in two pieces another process's could split */
	do
		w = write(P2O_FD_LOG, s, n);
	while (w < 0 && errno == EINTR);
}

/* on a terminal, the status line is cleared before a line is written and
 * drawn again after it, in one write so it never flickers apart */
void
log_line(const char *line, size_t len)
{
	char buf[2 * LOG_LINE_MAX + 16];
	size_t n;

	if (status_line[0] == '\0' || len > LOG_LINE_MAX) {
		put(line, len);
		return;
	}
	memcpy(buf, "\r\033[K", 4);
	memcpy(buf + 4, line, len);
	n = 4 + len;
	memcpy(buf + n, status_line, strlen(status_line));
	n += strlen(status_line);
	put(buf, n);
}

void
log_status(const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;
	int n;

	if (log_tty == -1)
		log_tty = isatty(P2O_FD_LOG);
	if (!log_tty)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	line[n] = '\0';
	put("\r\033[K", 4);
	put(line, (size_t)n);
	snprintf(status_line, sizeof(status_line), "%s", line);
}

/* the UTC time now, as 2026-01-31T12:00:00.123Z: its length */
static size_t
stamp(char *buf, size_t cap)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(buf + n, cap - n, ".%03ldZ",
	    ts.tv_nsec / 1000000);
	return n;
}

/* bounded appender: never overruns, always terminates */
struct out {
	char	*buf;
	size_t	 len, cap;
};

static void
out_add(struct out *o, const char *p, size_t n)
{
	size_t room = o->cap - 1 - o->len;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* s as the inside of a JSON string; a byte that cannot be escaped whole
 * in the room left is dropped, so the line stays valid JSON. Newlines
 * become spaces: a message is one line whatever the caller's data held */
static void
out_jstr(struct out *o, const char *s, size_t n, size_t keep)
{
	char esc[8];
	size_t i, k;
	unsigned char c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			k = 2;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			esc[0] = ' ';
			k = 1;
		} else if (c < 0x20 || c == 0x7f) {
			k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c);
		} else {
			esc[0] = (char)c;
			k = 1;
		}
		if (o->len + k + keep >= o->cap)
			break;
		out_add(o, esc, k);
	}
}

/* one line of the format set: tool, level, message (n bytes) */
static size_t
format_line(char *buf, size_t cap, const char *tool, const char *level,
    const char *msg, size_t n)
{
	struct out o = { buf, 0, cap };
	char ts[40];
	size_t i, tl;

	tl = stamp(ts, sizeof(ts));
	buf[0] = '\0';
	if (log_format == LOG_FMT_JSON) {
		out_add(&o, "{\"time\":\"", 9);
		out_add(&o, ts, tl);
		out_add(&o, "\",\"stage\":\"", 11);
		out_jstr(&o, tool, strlen(tool), 40);
		out_add(&o, "\",\"level\":\"", 11);
		out_add(&o, level, strlen(level));
		out_add(&o, "\",\"message\":\"", 13);
		/* room for the closing "}\n */
		out_jstr(&o, msg, n, 4);
		out_add(&o, "\"}\n", 3);
		return o.len;
	}
	if (log_format == LOG_FMT_TEXT) {
		out_add(&o, ts, tl);
		out_add(&o, " ", 1);
	}
	out_add(&o, tool, strlen(tool));
	out_add(&o, ": ", 2);
	out_add(&o, level, strlen(level));
	out_add(&o, ": ", 2);
	i = o.len;
	if (n > o.cap - 2 - o.len)
		n = o.cap - 2 - o.len;
	out_add(&o, msg, n);
	for (; i < o.len; i++)
		if (buf[i] == '\n' || buf[i] == '\r')
			buf[i] = ' ';
	out_add(&o, "\n", 1);
	return o.len;
}

static void
vlog(enum log_level lvl, int err, const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX], line[LOG_LINE_MAX + 512];
	size_t len;
	int n;

	if (!log_level_enabled(lvl))
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	len = n < 0 ? 0 : (size_t)n >= sizeof(msg) ? sizeof(msg) - 1 :
	    (size_t)n;
	if (err && len < sizeof(msg) - 1) {
		n = snprintf(msg + len, sizeof(msg) - len, ": %s",
		    strerror(err));
		if (n > 0)
			len = (size_t)n >= sizeof(msg) - len ?
			    sizeof(msg) - 1 : len + n;
	}
	/* a line a pipe takes in one atomic write */
	len = format_line(line, LOG_LINE_MAX, log_label, level_names[lvl],
	    msg, len);
	log_line(line, len);
}

int
log_is_formatted(const char *line, size_t n)
{
	static const char json[] = "{\"time\":\"";
	size_t i;

	switch (log_format) {
	case LOG_FMT_JSON:
		return n >= sizeof(json) - 1 && memcmp(line, json,
		    sizeof(json) - 1) == 0 && line[n - 1] == '}';
	case LOG_FMT_TEXT:
		/* 2026-01-31T12:00:00.123Z and a space */
		if (n < 25 || line[4] != '-' || line[10] != 'T' ||
		    line[23] != 'Z' || line[24] != ' ')
			return 0;
		for (i = 0; i < 4; i++)
			if (!isdigit((unsigned char)line[i]))
				return 0;
		return 1;
	default:
		return 0;
	}
}

size_t
log_format_foreign(char *buf, size_t cap, const char *from,
    const char *line, size_t n)
{
	char name[80];
	size_t nl = strlen(from);

	/* a plain line of the program's own (before its format was set):
	 * its tool and level stay apart */
	if (n > nl + 2 && memcmp(line, from, nl) == 0 && line[nl] == ':' &&
	    line[nl + 1] == ' ') {
		int i;

		for (i = LOG_LVL_ERROR; i <= LOG_LVL_DEBUG; i++) {
			size_t ll = strlen(level_names[i]);

			if (n >= nl + 2 + ll + 2 &&
			    memcmp(line + nl + 2, level_names[i], ll) == 0 &&
			    line[nl + 2 + ll] == ':' &&
			    line[nl + 3 + ll] == ' ')
				return format_line(buf, cap, from,
				    level_names[i], line + nl + 4 + ll,
				    n - (nl + 4 + ll));
		}
		line += nl + 2;
		n -= nl + 2;
	}
	snprintf(name, sizeof(name), "%s", from);
	/* not through this API: what it says is likely a failure's */
	return format_line(buf, cap, name, level_names[LOG_LVL_WARN], line, n);
}

#define LOG_FN(name, lvl, with_errno)					\
void									\
name(const char *fmt, ...)						\
{									\
	int saved = errno;						\
	va_list ap;							\
									\
	va_start(ap, fmt);						\
	vlog(lvl, with_errno ? saved : 0, fmt, ap);			\
	va_end(ap);							\
	errno = saved;							\
}

LOG_FN(log_warn, LOG_LVL_WARN, 1)
LOG_FN(log_warnx, LOG_LVL_WARN, 0)
LOG_FN(log_error, LOG_LVL_ERROR, 0)
LOG_FN(log_info, LOG_LVL_INFO, 0)
LOG_FN(log_debug, LOG_LVL_DEBUG, 0)

void
fatal(int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_ERROR, saved, fmt, ap);
	va_end(ap);
	exit(code);
}

void
fatalx(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_ERROR, 0, fmt, ap);
	va_end(ap);
	exit(code);
}

/* end of a conninfo or query-string value starting at p: quoted values
 * ('...' with backslash escapes) end after the closing quote */
static const char *
value_end(const char *p)
{
	if (*p == '\'') {
		for (p++; *p && *p != '\''; p++)
			if (*p == '\\' && p[1])
				p++;
		return *p ? p + 1 : p;
	}
	while (*p && !isspace((unsigned char)*p) && *p != '&' && *p != ';')
		p++;
	return p;
}

const char *
log_redact_url(const char *url, char *buf, size_t len)
{
	static const char key[] = "password";
	struct out o = { buf, 0, len };
	const char *p = url, *scheme, *auth, *at, *colon, *q, *v;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (url == NULL)
		return buf;

	/* scheme://user:password@host... (the last '@' of the authority:
	 * a password may hold one) */
	scheme = strstr(url, "://");
	if (scheme) {
		auth = scheme + 3;
		q = auth + strcspn(auth, "/?#");
		at = NULL;
		for (const char *c = auth; c < q; c++)
			if (*c == '@')
				at = c;
		colon = at ? memchr(auth, ':', at - auth) : NULL;
		if (colon) {
			out_add(&o, url, colon + 1 - url);
			out_add(&o, "***", 3);
			p = at;
		}
	}

	/* password=... in a conninfo string (libpq allows spaces around
	 * the '=') or a URL query */
	while ((q = strcasestr(p, key)) != NULL) {
		v = q + sizeof(key) - 1;
		while (*v == ' ')
			v++;
		if (*v != '=' || (q != url && !(isspace((unsigned char)q[-1]) ||
		    q[-1] == '?' || q[-1] == '&' || q[-1] == ';'))) {
			out_add(&o, p, q + 1 - p);
			p = q + 1;
			continue;
		}
		for (v++; *v == ' '; v++)
			;
		out_add(&o, p, v - p);
		out_add(&o, "***", 3);
		p = value_end(v);
	}
	out_add(&o, p, strlen(p));
	return buf;
}
