/*
 * t-nodes.c - which node of a cluster takes a request (lib/nodes.c): in
 * turn over the healthy ones, a failed node left to rest and the attempt
 * moved on, one trial after the rest, the rest doubling up to its most,
 * and a lone node that never rests.
 */
#include "nodes.h"
#include "tap.h"

static const char *const three[] = { "http://a:9200/", "http://b:9200",
    "https://c:9200/p//" };

/* the nodes n fresh requests go to, as a string of their indices */
static const char *
turns(struct nodes *ns, int n, long long now)
{
	static char out[64];
	int i, k, trial;

	for (i = 0; i < n && i < (int)sizeof(out) - 1; i++) {
		k = nodes_pick(ns, 0, now, &trial);
		out[i] = k < 0 ? '-' : (char)('0' + k);
	}
	out[i] = '\0';
	return out;
}

static void
test_init(void)
{
	const char *urls[NODES_MAX + 1];
	struct nodes ns;
	int i;

	ok(nodes_init(&ns, three, 3) == 0, "three nodes");
	is_str(ns.v[0].base, "http://a:9200", "a trailing slash dropped");
	is_str(ns.v[2].base, "https://c:9200/p", "every trailing slash");
	is_str(ns.names, "http://a:9200, http://b:9200, https://c:9200/p",
	    "their names for messages");
	nodes_release(&ns);
	for (i = 0; i <= NODES_MAX; i++)
		urls[i] = "http://x:1";
	ok(nodes_init(&ns, urls, NODES_MAX) == 0, "%d nodes", NODES_MAX);
	nodes_release(&ns);
	ok(nodes_init(&ns, urls, NODES_MAX + 1) == -1, "not %d",
	    NODES_MAX + 1);
	ok(nodes_init(&ns, urls, 0) == -1, "nor none");
}

static void
test_one(void)
{
	struct nodes ns;
	int trial, i;

	nodes_init(&ns, three, 1);
	is_str(turns(&ns, 3, 0), "000", "one node takes every request");
	ok(nodes_pick(&ns, 1, 0, &trial) == -1, "and a failed request has "
	    "nowhere else to go: the caller's retry is the only one");
	for (i = 0; i < 5; i++)
		ok(nodes_failed(&ns, 0, 0, 1000 * i) == NODE_SAME,
		    "a lone node never rests (failure %d)", i + 1);
	is_str(turns(&ns, 2, 5000), "00", "and keeps taking them");
	nodes_release(&ns);
}

static void
test_spread_and_rest(void)
{
	struct nodes ns;
	const char *t;
	int k, trial;

	nodes_init(&ns, three, 3);
	is_str(turns(&ns, 6, 0), "012012", "requests go to each node in turn");

	/* node 1 refuses a connection at t=10 s */
	ok(nodes_failed(&ns, 1, 0, 10000) == NODE_LEFT, "a failing node "
	    "leaves");
	is_int(ns.v[1].rest_until, 10000 + NODE_REST_FIRST_MS,
	    "for its first rest");
	k = nodes_pick(&ns, 1ul << 1, 10000, &trial);
	ok(k != 1 && k >= 0 && !trial, "the failed attempt goes on to another "
	    "node (%d)", k);
	ok(nodes_failed(&ns, 1, 0, 10010) == NODE_SAME, "another attempt sent "
	    "before it left fails too: its rest does not grow");
	is_int(ns.v[1].rest_until, 10000 + NODE_REST_FIRST_MS, "(still 1 s)");
	ok(nodes_ok(&ns, 1, 0) == 0 && ns.v[1].rest_until != 0, "nor does an "
	    "answer to an attempt sent before it left bring it back");
	is_str(turns(&ns, 4, 10500), "2020", "while it rests, the others "
	    "take its requests");

	/* the rest is over: one attempt is its trial */
	k = nodes_pick(&ns, 0, 11000, &trial);
	ok(k == 1 && trial, "after its rest it is tried again, once");
	is_str(turns(&ns, 4, 11000), "2020", "no other attempt goes to it "
	    "while its trial is out");
	ok(nodes_failed(&ns, 1, 1, 11005) == NODE_STILL, "a failed trial");
	is_int(ns.v[1].rest_ms, 2 * NODE_REST_FIRST_MS, "rests twice as long");
	for (k = 0; k < 10; k++) {
		nodes_pick(&ns, 1ul << 0 | 1ul << 2, ns.v[1].rest_until,
		    &trial);
		nodes_failed(&ns, 1, trial, ns.v[1].rest_until);
	}
	is_int(ns.v[1].rest_ms, NODE_REST_MAX_MS, "up to %d s",
	    NODE_REST_MAX_MS / 1000);

	/* back */
	k = nodes_pick(&ns, 1ul << 0 | 1ul << 2, ns.v[1].rest_until, &trial);
	ok(k == 1 && trial, "tried again after its longest rest");
	ok(nodes_ok(&ns, 1, trial) == 1, "its trial answered: it is back");
	ok(ns.v[1].rest_until == 0 && ns.v[1].rest_ms == 0, "healthy, its "
	    "rest forgotten");
	t = turns(&ns, 3, 500000);
	ok(strchr(t, '0') && strchr(t, '1') && strchr(t, '2'), "and takes "
	    "its turn again (%s)", t);
	ok(nodes_failed(&ns, 1, 0, 500000) == NODE_LEFT &&
	    ns.v[1].rest_ms == NODE_REST_FIRST_MS, "a new outage starts from "
	    "the first rest");
	nodes_release(&ns);
}

static void
test_all_down(void)
{
	struct nodes ns;
	int k, trial;

	nodes_init(&ns, three, 3);
	nodes_failed(&ns, 0, 0, 100);
	nodes_failed(&ns, 2, 0, 300);
	k = nodes_pick(&ns, 1ul << 1, 400, &trial);
	ok(k == -1, "a request whose every healthy node failed ends: its "
	    "caller backs off");
	nodes_failed(&ns, 1, 0, 400);
	k = nodes_pick(&ns, 0, 500, &trial);
	ok(k == 0 && trial, "with every node resting a new request still goes "
	    "out, to the node tried again soonest (%d)", k);
	ok(nodes_pick(&ns, 1ul << 0, 500, &trial) == -1, "and only there");
	nodes_failed(&ns, 0, 1, 510);
	k = nodes_pick(&ns, 0, 520, &trial);
	ok(k == 2 && trial, "its failed trial makes it rest longer: the next "
	    "request goes to the next soonest (%d)", k);
	ok(nodes_ok(&ns, 2, trial) == 1, "which answers: the cluster is back");
	is_str(turns(&ns, 2, 600), "22", "the nodes still resting wait their "
	    "turn");
	k = nodes_pick(&ns, 0, 1400, &trial);
	ok(k == 1 && trial, "until their rest is over (%d)", k);
	nodes_release(&ns);
}

int
main(void)
{
	test_init();
	test_one();
	test_spread_and_rest();
	test_all_down();
	return done_testing();
}
