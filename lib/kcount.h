/*
 * kcount.h - counters kept per key (a table name), for the keyed counters
 * of msg.h (pg2osync_toast_missing_total{table}, ...). A handful of keys
 * per pipeline: a linear list is the right size.
 */
#ifndef KCOUNT_H
#define KCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"

struct kcount {
	struct kcount_entry {
		char	*key;
		uint64_t v;
	} *e;
	int	 n, cap;
	int	 changed;	/* since the last kcount_put_stats */
};

void	kcount_add(struct kcount *, const char *key, size_t n, uint64_t by);
uint64_t kcount_get(const struct kcount *, const char *key);
uint64_t kcount_total(const struct kcount *);
/* the counter c's member of a stats frame under construction (nothing
 * when no key was ever counted) */
void	kcount_put_stats(struct kcount *, struct sbuf *j, enum msg_counter c);
void	kcount_release(struct kcount *);

#endif
