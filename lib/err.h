/*
 * err.h - the one way library code reports a failure: a framing.md §8 exit
 * code and one line for the log. A function that can fail returns -1 (or
 * NULL) and fills a struct p2o_err; only a program's main.c turns it into
 * an exit. The message never holds a secret: no connection string, no
 * password, no token, no certificate.
 */
#ifndef P2O_ERR_H
#define P2O_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define P2O_ERR_MAX	1024

struct p2o_err {
	int	 code;		/* framing.md §8 exit code, 0 while none */
	char	 msg[P2O_ERR_MAX];
};

void	p2o_err_clear(struct p2o_err *);
/* set code and the message; returns -1, so `return p2o_fail(...)` */
int	p2o_fail(struct p2o_err *, int code, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
int	p2o_vfail(struct p2o_err *, int code, const char *fmt, va_list);
/* put "what: " before the message already there, keeping the code;
 * returns -1 */
int	p2o_err_prefix(struct p2o_err *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
