/*
 * kcount.c - a counter per key. Owns the keys' memory; knows nothing of
 * what is counted beyond the msg.h counter it reports under.
 */
#include <stdlib.h>
#include <string.h>

#include "kcount.h"

static struct kcount_entry *
find(const struct kcount *k, const char *key, size_t n)
{
	int i;

	for (i = 0; i < k->n; i++)
		if (strlen(k->e[i].key) == n && memcmp(k->e[i].key, key, n) == 0)
			return &k->e[i];
	return NULL;
}

void
kcount_add(struct kcount *k, const char *key, size_t n, uint64_t by)
{
	struct kcount_entry *e = find(k, key, n);

	if (e == NULL) {
		if (k->n == k->cap) {
			k->cap = k->cap ? k->cap * 2 : 8;
			k->e = xrealloc(k->e, (size_t)k->cap * sizeof(*k->e));
		}
		e = &k->e[k->n++];
		e->key = xstrndup(key, n);
		e->v = 0;
	}
	e->v += by;
	k->changed = 1;
}

uint64_t
kcount_get(const struct kcount *k, const char *key)
{
	const struct kcount_entry *e = find(k, key, strlen(key));

	return e ? e->v : 0;
}

uint64_t
kcount_total(const struct kcount *k)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < k->n; i++)
		t += k->e[i].v;
	return t;
}

void
kcount_put_stats(struct kcount *k, struct sbuf *j, enum msg_counter c)
{
	int i;

	k->changed = 0;
	if (k->n == 0)
		return;
	msg_stats_keyed_begin(j, c);
	for (i = 0; i < k->n; i++)
		msg_stats_keyed_add(j, k->e[i].key, strlen(k->e[i].key),
		    k->e[i].v);
	msg_stats_keyed_end(j);
}

void
kcount_release(struct kcount *k)
{
	int i;

	for (i = 0; i < k->n; i++)
		free(k->e[i].key);
	free(k->e);
	memset(k, 0, sizeof(*k));
}
