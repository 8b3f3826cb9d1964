/*
 * keyset.h - a set of key texts (the parents a transaction's rows name,
 * for the captures' commit-time re-reads): chained, grown when it is as
 * full as it is wide, so a thousand rows naming one parent are one key.
 */
#ifndef KEYSET_H
#define KEYSET_H

#include <stddef.h>

struct keyset {
	struct keyset_key {
		struct keyset_key *next;
		size_t	 n;
		char	 s[];
	} **b;
	size_t	 nb, n;		/* buckets, keys */
};

/* the hash the set files a key text under (djb2), for tables of key
 * texts built beside a set */
unsigned long keyset_hash(const char *s, size_t n);
void	keyset_add(struct keyset *, const char *s, size_t n);
/* each key to fn (in no order), the set emptied */
void	keyset_take(struct keyset *, void (*fn)(void *arg, const char *s,
	    size_t n), void *arg);
void	keyset_release(struct keyset *);

#endif
