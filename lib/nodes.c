/*
 * nodes.c - which node of a search cluster takes a request: every request
 * goes to the next healthy node in turn, so the load spreads over them; a
 * node that fails an attempt rests and the attempt goes on to another; a
 * node whose rest is over gets one attempt as its trial, and rests twice
 * as long when that fails too. One node is the old single url: it never
 * rests, and a request tries it once. Owns those rules and nothing else:
 * no I/O, no clock of its own, no log (http.c says what changed).
 */
#include <stdlib.h>
#include <string.h>

#include "nodes.h"
#include "sbuf.h"

int
nodes_init(struct nodes *ns, const char *const *urls, int n)
{
	struct sbuf names = SBUF_INIT;
	size_t len;
	int i;

	memset(ns, 0, sizeof(*ns));
	if (n < 1 || n > NODES_MAX)
		return -1;
	ns->v = xcalloc((size_t)n, sizeof(*ns->v));
	ns->n = n;
	for (i = 0; i < n; i++) {
		len = strlen(urls[i]);
		while (len > 0 && urls[i][len - 1] == '/')
			len--;
		ns->v[i].base = xstrndup(urls[i], len);
		if (i > 0)
			sbuf_adds(&names, ", ");
		sbuf_adds(&names, ns->v[i].base);
	}
	ns->names = names.buf;
	return 0;
}

void
nodes_release(struct nodes *ns)
{
	int i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i].base);
	free(ns->v);
	free(ns->names);
	memset(ns, 0, sizeof(*ns));
}

int
nodes_pick(struct nodes *ns, unsigned long tried, long long now, int *trial)
{
	struct node *nd;
	int i, k, first = -1;

	*trial = 0;
	if (ns->n == 1)
		return tried & 1ul ? -1 : 0;
	for (k = 0; k < ns->n; k++) {
		i = (ns->next + k) % ns->n;
		nd = &ns->v[i];
		if (tried & (1ul << i))
			continue;
		if (nd->rest_until == 0 || (now >= nd->rest_until &&
		    !nd->trial)) {
			ns->next = (i + 1) % ns->n;
			if (nd->rest_until != 0)
				*trial = nd->trial = 1;
			return i;
		}
		if (first == -1 || nd->rest_until < ns->v[first].rest_until)
			first = i;
	}
	/* every node rests: the request goes to the one that is soonest
	 * tried again rather than nowhere, once */
	if (tried != 0 || first == -1)
		return -1;
	*trial = ns->v[first].trial = 1;
	return first;
}

int
nodes_ok(struct nodes *ns, int i, int trial)
{
	struct node *nd = &ns->v[i];

	/* an answer to an attempt sent before the node failed says nothing
	 * of it now: only its trial brings it back */
	if (nd->rest_until == 0 || !trial)
		return 0;
	nd->rest_until = 0;
	nd->rest_ms = 0;
	nd->trial = 0;
	return 1;
}

enum node_change
nodes_failed(struct nodes *ns, int i, int trial, long long now)
{
	struct node *nd = &ns->v[i];

	if (ns->n == 1)
		return NODE_SAME;
	if (nd->rest_until == 0) {
		nd->rest_ms = NODE_REST_FIRST_MS;
		nd->rest_until = now + nd->rest_ms;
		nd->down_since = now;
		return NODE_LEFT;
	}
	if (!trial)
		return NODE_SAME;
	nd->trial = 0;
	nd->rest_ms = nd->rest_ms * 2 > NODE_REST_MAX_MS ? NODE_REST_MAX_MS :
	    nd->rest_ms * 2;
	nd->rest_until = now + nd->rest_ms;
	return NODE_STILL;
}
