/*
 * tap.h - Test Anything Protocol for the unit tests, run by prove(1).
 * Header-only so each t-*.c is one self-contained program.
 */
#ifndef TAP_H
#define TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <time.h>

static int tap_n, tap_failed;

/* seconds since some fixed point: the tests that compare the time of a
 * large case with a small one (a pairwise walk against an index) */
static inline double
tap_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

#define ok(cond, ...)	tap_ok(!!(cond), __VA_ARGS__)
#define is_str(got, want, ...) do {					\
	const char *g_ = (got), *w_ = (want);				\
	if (!tap_ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))	\
		printf("#   got:  '%s'\n#   want: '%s'\n",		\
		    g_ ? g_ : "(null)", w_ ? w_ : "(null)");		\
} while (0)
#define is_int(got, want, ...) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	if (!tap_ok(g_ == w_, __VA_ARGS__))				\
		printf("#   got:  %lld\n#   want: %lld\n", g_, w_);	\
} while (0)

/* a comment line in the TAP stream */
static inline void
diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* the test cannot go on: say why and stop */
#define BAIL_OUT(why) do {						\
	printf("Bail out! %s\n", (why));				\
	exit(2);							\
} while (0)

static inline int
done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
