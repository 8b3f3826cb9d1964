/*
 * log.h - the one logging API. Lines go to stderr as "tool: level: message".
 * Messages are lowercase, subject first, names quoted. Never log a secret:
 * connection strings are logged only through log_redact_url().
 */
#ifndef LOG_H
#define LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

void	log_init(const char *tool);	/* level from P2O_LOG_LEVEL env */
void	log_set_level(enum log_level);
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
