/*
 * t-strindex.c - names to positions: found, not found, the first of a
 * name filed twice kept, tags apart, growth past many names, cleared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strindex.h"
#include "tap.h"

struct names {
	char	 (*s)[16];
	int	*tag;
};

static const char *
name_of(const void *arg, int pos, int *tag)
{
	const struct names *n = arg;

	*tag = n->tag[pos];
	return n->s[pos];
}

int
main(void)
{
	enum { N = 50000 };
	struct names n;
	struct strindex x;
	int i, bad;

	n.s = calloc(N, sizeof(*n.s));
	n.tag = calloc(N, sizeof(*n.tag));
	strindex_init(&x, name_of);
	ok(strindex_get(&x, &n, 0, "a", 1) == -1, "an empty index finds "
	    "nothing");
	for (i = 0; i < N; i++) {
		snprintf(n.s[i], sizeof(n.s[i]), "public.t%05d", i % 40000);
		n.tag[i] = i % 40000 == i ? 0 : 1;
	}
	for (bad = 0, i = 0; i < N; i++)
		bad += strindex_put(&x, &n, i) != i;
	is_int(bad, 0, "50,000 names filed, each at its own position");
	for (bad = 0, i = 0; i < N; i++)
		bad += strindex_get(&x, &n, n.tag[i], n.s[i],
		    strlen(n.s[i])) != i;
	is_int(bad, 0, "and each found there, a name under two tags twice");
	is_int(strindex_get(&x, &n, 0, "public.t00012xyz", 13), 12,
	    "a name is its first len bytes");
	is_int(strindex_get(&x, &n, 0, "public.t0001", 12), -1,
	    "a prefix of a name is not the name");
	is_int(strindex_get(&x, &n, 2, "public.t00012", 13), -1,
	    "nor the name under another tag");
	strcpy(n.s[1], n.s[0]);
	n.tag[1] = 0;
	strindex_clear(&x);
	is_int(strindex_get(&x, &n, 0, n.s[0], strlen(n.s[0])), -1,
	    "cleared: nothing found");
	is_int(strindex_put(&x, &n, 0), 0, "filed again");
	is_int(strindex_put(&x, &n, 1), 0, "a name filed twice keeps its "
	    "first position");
	strindex_release(&x);
	free(n.s);
	free(n.tag);
	return done_testing();
}
