/*
 * keyset.c - a set of key texts (keyset.h).
 */
#include <stdlib.h>
#include <string.h>

#include "keyset.h"
#include "sbuf.h"

unsigned long
keyset_hash(const char *s, size_t n)
{
	unsigned long h = 5381;

	while (n--)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

void
keyset_add(struct keyset *k, const char *s, size_t n)
{
	struct keyset_key *e, **nb, *next;
	size_t i, h;

	if (k->nb == 0) {
		k->nb = 64;
		k->b = xcalloc(k->nb, sizeof(*k->b));
	}
	h = keyset_hash(s, n) % k->nb;
	for (e = k->b[h]; e; e = e->next)
		if (e->n == n && memcmp(e->s, s, n) == 0)
			return;
	e = xmalloc(sizeof(*e) + n + 1);
	e->n = n;
	memcpy(e->s, s, n);
	e->s[n] = '\0';
	e->next = k->b[h];
	k->b[h] = e;
	if (++k->n < k->nb)
		return;
	nb = xcalloc(k->nb * 2, sizeof(*nb));
	for (i = 0; i < k->nb; i++)
		for (e = k->b[i]; e; e = next) {
			next = e->next;
			h = keyset_hash(e->s, e->n) % (k->nb * 2);
			e->next = nb[h];
			nb[h] = e;
		}
	free(k->b);
	k->b = nb;
	k->nb *= 2;
}

void
keyset_take(struct keyset *k, void (*fn)(void *, const char *, size_t),
    void *arg)
{
	struct keyset_key *e, *next;
	size_t i;

	for (i = 0; i < k->nb; i++) {
		for (e = k->b[i]; e; e = next) {
			next = e->next;
			if (fn != NULL)
				fn(arg, e->s, e->n);
			free(e);
		}
		k->b[i] = NULL;
	}
	k->n = 0;
}

void
keyset_release(struct keyset *k)
{
	keyset_take(k, NULL, NULL);
	free(k->b);
	memset(k, 0, sizeof(*k));
}
