/*
 * err.c - struct p2o_err: a code and a message, set where a failure is
 * found and read by the main.c that decides to exit.
 */
#include <stdio.h>
#include <string.h>

#include "err.h"

void
p2o_err_clear(struct p2o_err *e)
{
	e->code = 0;
	e->msg[0] = '\0';
}

int
p2o_vfail(struct p2o_err *e, int code, const char *fmt, va_list ap)
{
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	e->code = code;
	return -1;
}

int
p2o_fail(struct p2o_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p2o_vfail(e, code, fmt, ap);
	va_end(ap);
	return -1;
}

int
p2o_err_prefix(struct p2o_err *e, const char *fmt, ...)
{
	char old[P2O_ERR_MAX];
	size_t n;
	va_list ap;

	memcpy(old, e->msg, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	/* a long prefix keeps what fits of the old message after it */
	if (n + 2 < sizeof(e->msg)) {
		memcpy(e->msg + n, ": ", 2);
		n += 2;
		strncpy(e->msg + n, old, sizeof(e->msg) - n - 1);
		e->msg[sizeof(e->msg) - 1] = '\0';
	}
	return -1;
}
