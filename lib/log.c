/*
 * log.c - the one logging API: "tool: level: message" lines on stderr.
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
#include <unistd.h>

#include "log.h"
#include "p2o.h"

/* PIPE_BUF is the size up to which a write to a pipe is atomic */
#define LOG_LINE_MAX	4096

static char log_tool[64] = "pg2osync";
static enum log_level log_level = LOG_LVL_INFO;
static int log_tty = -1;		/* stderr is a terminal; -1 unknown */
static char status_line[LOG_LINE_MAX];	/* shown under the log, or "" */

static const char *const level_names[] = {
	[LOG_LVL_ERROR] = "error",
	[LOG_LVL_WARN] = "warn",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

void
log_init(const char *tool)
{
	const char *env;
	int i;

	snprintf(log_tool, sizeof(log_tool), "%s", tool);
	env = getenv("P2O_LOG_LEVEL");
	if (env == NULL || *env == '\0')
		return;
	for (i = LOG_LVL_ERROR; i <= LOG_LVL_DEBUG; i++)
		if (strcasecmp(env, level_names[i]) == 0) {
			log_level = i;
			return;
		}
	log_warnx("unknown P2O_LOG_LEVEL '%s', using 'info'", env);
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

static void
vlog(enum log_level lvl, int err, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	size_t len, room, i;
	int n;

	if (!log_level_enabled(lvl))
		return;
	/* keep one byte for the newline */
	room = sizeof(line) - 1;
	n = snprintf(line, room, "%s: %s: ", log_tool, level_names[lvl]);
	len = n < 0 ? 0 : (size_t)n >= room ? room - 1 : (size_t)n;
	n = vsnprintf(line + len, room - len, fmt, ap);
	if (n > 0)
		len = (size_t)n >= room - len ? room - 1 : len + n;
	if (err && len < room - 1) {
		n = snprintf(line + len, room - len, ": %s", strerror(err));
		if (n > 0)
			len = (size_t)n >= room - len ? room - 1 : len + n;
	}
	/* a message is one line whatever the caller's data held */
	for (i = 0; i < len; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[len++] = '\n';
	log_line(line, len);
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

/* bounded appender for log_redact_url: never overruns, always terminates */
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
