/*
 * nodes.h - the nodes of a search cluster that an HTTP client spreads its
 * requests over (target.urls, or the one target.url): which node takes a
 * request's next attempt, which nodes rest after a failure, and when each
 * is tried again. Pure: the caller passes the time, makes the requests and
 * says how each attempt went.
 */
#ifndef NODES_H
#define NODES_H

/* nodes a client takes at most (a request's attempts are a bit mask) */
#define NODES_MAX		32
/* a node's first rest after a failure, doubled at each failed trial up
 * to the most */
#define NODE_REST_FIRST_MS	1000
#define NODE_REST_MAX_MS	30000

struct node {
	char	*base;		/* "http://127.0.0.1:9200", no trailing slash */
	long long rest_until;	/* monotonic ms it rests until; 0: healthy */
	long long rest_ms;	/* the length of its last rest */
	long long down_since;	/* monotonic ms of the failure that began
				 * its rest */
	int	 trial;		/* an attempt tries it after its rest */
};

struct nodes {
	struct node *v;
	int	 n;
	int	 next;		/* the round robin starts its search here */
	char	*names;		/* every base, ", "-joined, for messages */
};

/* what an attempt's failure did to its node (nodes_failed) */
enum node_change {
	NODE_SAME,	/* nothing: it already rests (an attempt sent before
			 * its rest began), or it is the only node */
	NODE_LEFT,	/* a healthy node begins to rest */
	NODE_STILL	/* a trial failed: it rests again, twice as long */
};

/* nodes.c */
/* n urls (1 to NODES_MAX, trailing '/' dropped): 0, or -1 with n out of
 * range */
int	nodes_init(struct nodes *, const char *const *urls, int n);
void	nodes_release(struct nodes *);
/*
 * The node of a request's next attempt; tried has bit i set for each node
 * the request already went to. In turn, the next node not tried that is
 * healthy or whose rest is over and that no other attempt tries yet (*trial
 * 1: the attempt is its trial). When none is and the request has tried
 * nothing yet, the node whose rest ends first (a trial too): a request is
 * always sent somewhere, and the caller's own backoff paces it. -1 when the
 * request has no node left.
 */
int	nodes_pick(struct nodes *, unsigned long tried, long long now,
	    int *trial);
/* an attempt on node i got an answer (trial: nodes_pick's): 1 when the
 * node was resting and is healthy again, else 0 */
int	nodes_ok(struct nodes *, int i, int trial);
/* an attempt on node i found it failing at now */
enum node_change nodes_failed(struct nodes *, int i, int trial,
	    long long now);

#endif
