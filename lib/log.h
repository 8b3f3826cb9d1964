/*
 * log.h - the one logging API. Lines go to stderr as "tool: level: message"
 * (plain, a program run by hand), "TIME tool: level: message" (text, every
 * program of a supervised pipeline: TIME is UTC, 2026-01-31T12:00:00.123Z)
 * or one JSON object {"time","stage","level","message"} (json).
 * Messages are lowercase, subject first, names quoted. Never log a secret:
 * connection strings are logged only through log_redact_url().
 */
#ifndef LOG_H
#define LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

enum log_format { LOG_FMT_PLAIN, LOG_FMT_TEXT, LOG_FMT_JSON };

/* level from P2O_LOG_LEVEL, format from P2O_LOG_FORMAT (text or json;
 * plain when unset), the source from P2O_LOG_SOURCE: the supervisor sets
 * them for its stages */
void	log_init(const char *tool);
/* the source the lines are about, when one process runs several: the
 * tool is written "tool[source]" ("capture-pg[shop]: info: ..."); NULL
 * or "" none */
void	log_set_source(const char *);
void	log_set_level(enum log_level);
void	log_set_format(enum log_format);
enum log_format log_get_format(void);
/* a name of log.level / log.format: 0, or -1 when it is none */
int	log_level_of(const char *name, enum log_level *);
int	log_format_of(const char *name, enum log_format *);
/* line (n bytes, no newline) already in the format set: a program's own,
 * which a supervisor forwards as it is */
int	log_is_formatted(const char *line, size_t n);
/* the line (n bytes, no newline) another program wrote to its stderr,
 * not through this API (a library, a crash report), as one line of the
 * format set, newline included, into buf (cap bytes, at least 256): its
 * length; from names the program */
size_t	log_format_foreign(char *buf, size_t cap, const char *from,
	    const char *line, size_t n);
int	log_level_enabled(enum log_level);
/* log_warn appends ": strerror(errno)"; the x variants do not */
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
/* only main.c calls these: log and exit(code) */
void	fatal(int code, const char *, ...)
	    __attribute__((format(printf, 2, 3), noreturn));
void	fatalx(int code, const char *, ...)
	    __attribute__((format(printf, 2, 3), noreturn));
/* a status line kept under the log on a terminal (rewritten in place;
 * "" takes it away); nothing when stderr is not a terminal */
void	log_status(const char *, ...) __attribute__((format(printf, 1, 2)));
/* a complete line (with its newline) written to stderr in one write,
 * above the status line if one is shown */
void	log_line(const char *line, size_t len);
/* copy url into buf with any password replaced by "***" */
const char *log_redact_url(const char *url, char *buf, size_t len);

#endif
