/*
 * logpipe.c - a child's stderr, forwarded to the supervisor's stderr one
 * whole line at a time. A stage's lines already begin with its name
 * ("writer: warn: ..."); anything else it prints (a library's message, a
 * crash report) gets that prefix so every line says where it came from.
 * Lines are never split or merged: an over-long one is cut at the cap and
 * marked, and the rest of it dropped. With log.format text or json a
 * stage's own lines come formatted (the supervisor set P2O_LOG_FORMAT for
 * it) and pass as they are; any other line is made one of the format, so
 * every line the supervisor writes has the time, the stage and the level.
 * Never blocks on the child.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "supervisor.h"
#include "xio.h"

static const char cut_mark[] = " [line cut]";

void
sv_logpipe_init(struct sv_logpipe *lp, int fd, int out, const char *name)
{
	memset(lp, 0, sizeof(*lp));
	lp->fd = fd;
	lp->out = out;
	snprintf(lp->name, sizeof(lp->name), "%s", name);
}

/* one line without its newline, written with a single write(2) */
static void
emit(struct sv_logpipe *lp, const char *s, size_t n, int cut)
{
	char line[2 * SV_LOGLINE_MAX + sizeof(lp->name) + 512];
	size_t nl = strlen(lp->name), len = 0;

	if (log_is_formatted(s, n) && !cut) {
		/* a stage's own line, in the format the supervisor gave it */
		memcpy(line, s, n);
		len = n;
		line[len++] = '\n';
	} else if (log_get_format() == LOG_FMT_PLAIN) {
		if (n < nl + 2 || memcmp(s, lp->name, nl) != 0 ||
		    s[nl] != ':' || s[nl + 1] != ' ') {
			memcpy(line, lp->name, nl);
			memcpy(line + nl, ": ", 2);
			len = nl + 2;
		}
		memcpy(line + len, s, n);
		len += n;
		if (cut) {
			memcpy(line + len, cut_mark, sizeof(cut_mark) - 1);
			len += sizeof(cut_mark) - 1;
		}
		line[len++] = '\n';
	} else {
		/* anything else (a library's message, a crash report, a line
		 * cut) becomes a whole line of the format, the stage named */
		char tmp[SV_LOGLINE_MAX + sizeof(cut_mark)];

		memcpy(tmp, s, n);
		if (cut) {
			memcpy(tmp + n, cut_mark, sizeof(cut_mark) - 1);
			n += sizeof(cut_mark) - 1;
		}
		len = log_format_foreign(line, sizeof(line), lp->name, tmp, n);
	}
	/* a full stderr loses the line rather than stall the supervisor;
	 * ours goes above the status line */
	if (lp->out == P2O_FD_LOG)
		log_line(line, len);
	else
		(void)write_in_full(lp->out, line, len);
}

/* forward the complete lines in buf, keep the unterminated tail */
static void
drain(struct sv_logpipe *lp)
{
	size_t start = 0;
	char *nl;

	while (start < lp->len &&
	    (nl = memchr(lp->buf + start, '\n', lp->len - start)) != NULL) {
		size_t n = (size_t)(nl - (lp->buf + start));

		if (lp->cut)
			lp->cut = 0;	/* the end of a line already cut */
		else
			emit(lp, lp->buf + start, n, 0);
		start += n + 1;
	}
	memmove(lp->buf, lp->buf + start, lp->len - start);
	lp->len -= start;
	if (lp->len == sizeof(lp->buf)) {
		if (!lp->cut)
			emit(lp, lp->buf, lp->len, 1);
		lp->cut = 1;
		lp->len = 0;
	}
}

int
sv_logpipe_read(struct sv_logpipe *lp)
{
	ssize_t n;
	int reads;

	if (lp->fd == -1)
		return 0;
	/* a chatty child must not starve the rest of the poll loop */
	for (reads = 0; reads < 16; reads++) {
		n = xread(lp->fd, lp->buf + lp->len, sizeof(lp->buf) - lp->len);
		if (n > 0) {
			lp->len += (size_t)n;
			drain(lp);
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		break;		/* EOF, or an error that ends the pipe */
	}
	if (reads == 16)
		return 2;
	if (lp->len > 0 && !lp->cut)
		emit(lp, lp->buf, lp->len, 0);
	lp->len = 0;
	lp->cut = 0;
	sv_logpipe_close(lp);
	return 0;
}

void
sv_logpipe_close(struct sv_logpipe *lp)
{
	if (lp->fd != -1)
		close(lp->fd);
	lp->fd = -1;
}

/* log.format and log.level, for the supervisor and, through their
 * environment, for every stage it starts (lib/log.c reads them). What an
 * operator set in P2O_LOG_FORMAT or P2O_LOG_LEVEL before the start wins
 * over the file (a debugging session needs no edit of it); the values
 * this sets itself are not taken for those on a reload */
void
sv_apply_log(const struct config *cf)
{
	static int user_fmt = -1, user_lvl = -1;
	const char *env;
	enum log_format fmt = LOG_FMT_TEXT;
	enum log_level lvl = LOG_LVL_INFO;

	if (user_fmt == -1) {
		env = getenv("P2O_LOG_FORMAT");
		user_fmt = env != NULL && *env != '\0';
		env = getenv("P2O_LOG_LEVEL");
		user_lvl = env != NULL && *env != '\0';
	}
	if (!user_fmt) {
		if (cf->log_format != NULL)
			(void)log_format_of(cf->log_format, &fmt);
		log_set_format(fmt);
		setenv("P2O_LOG_FORMAT", fmt == LOG_FMT_JSON ? "json" : "text", 1);
	}
	if (!user_lvl && cf->log_level != NULL &&
	    log_level_of(cf->log_level, &lvl) == 0) {
		log_set_level(lvl);
		setenv("P2O_LOG_LEVEL", cf->log_level, 1);
	}
}
