/*
 * trace.h - where a batch spent its time, as OpenTelemetry spans sent to
 * a collector over OTLP/HTTP with a JSON body (POST <endpoint>/v1/traces).
 * One trace per source transaction: the capture opens it (the root span
 * pg2osync.batch and its decode span) and puts its context on the commit
 * frame as a W3C traceparent; each later stage that handles that commit
 * adds its own span under the root and exports it itself.
 *
 * The exporter is one per process, like the log: spans are queued without
 * blocking (a full queue drops them, counted) and sent in small batches by
 * a thread of its own, so a slow or unreachable collector never holds a
 * stage's loop up: it costs one warning per outage and the spans it drops.
 * Ids come from a fast generator of each thread's, seeded from OpenSSL's
 * RAND_bytes. Nothing here exits.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "sbuf.h"

#define TRACE_ID_LEN	16
#define TRACE_SPAN_LEN	8
/* "00-" 32 hex "-" 16 hex "-" 2 hex, and the NUL */
#define TRACE_PARENT_LEN	56
/* spans a process holds for the exporter at most; more are dropped */
#define TRACE_QUEUE_MAX	4096
/* a batch is sent once this many spans wait, or the oldest has waited
 * TRACE_FLUSH_MS. A request costs the exporter's thread about as much as
 * its spans do (curl, the loopback, the wakeups), so the delay is what
 * keeps the requests few under a steady stream: 1 s (OpenTelemetry's
 * SDKs wait 5) */
#define TRACE_BATCH_MAX	256
#define TRACE_FLUSH_MS	1000
/* one export request at most this long: a collector that does not answer
 * in time costs the batch, never the stream */
#define TRACE_TIMEOUT_MS	2000
#define TRACE_ATTR_MAX	6
#define TRACE_STR_MAX	128

/* what a traceparent carries: the trace, the span the next one hangs
 * under, and whether the caller sampled it */
struct trace_ctx {
	unsigned char trace_id[TRACE_ID_LEN];
	unsigned char span_id[TRACE_SPAN_LEN];
	int	 sampled;
};

struct trace_attr {
	const char *key;	/* a literal: never copied */
	int	 is_int;
	long long i;
	char	 s[TRACE_STR_MAX];	/* cut to fit */
};

struct trace_span {
	unsigned char trace_id[TRACE_ID_LEN];
	unsigned char span_id[TRACE_SPAN_LEN];
	unsigned char parent_id[TRACE_SPAN_LEN];	/* all zero: a root */
	const char *name;	/* a literal */
	long long start_ns, end_ns;	/* since the epoch */
	int	 error;		/* status ERROR instead of UNSET */
	struct trace_attr attr[TRACE_ATTR_MAX];
	int	 nattr;
};

/* trace.c */
/* a W3C traceparent (version 00, lowercase hex, neither id all zero):
 * 0, or -1 when it is not one (the caller drops it, never fails on it) */
int	trace_ctx_parse(const char *s, size_t n, struct trace_ctx *);
void	trace_ctx_format(const struct trace_ctx *, char buf[TRACE_PARENT_LEN]);
/* n random bytes, never all zero: 0, or -1 when OpenSSL has none to
 * seed the thread's generator with */
int	trace_random(unsigned char *buf, size_t n);
long long trace_now_ns(void);
/* a span under ctx (a new span id; ctx's span is its parent), named name,
 * started at start_ns, not yet ended: 0, or -1 without random bytes */
int	trace_span_child(struct trace_span *, const struct trace_ctx *,
	    const char *name, long long start_ns);
void	trace_attr_int(struct trace_span *, const char *key, long long v);
void	trace_attr_str(struct trace_span *, const char *key, const char *v,
	    size_t n);
/* the OTLP JSON request body for n spans of a process named service
 * (resource service.name) run as tool (process.executable.name): ids in
 * lowercase hex, times as strings of nanoseconds */
void	trace_otlp_json(struct sbuf *out, const char *service,
	    const char *tool, const struct trace_span *, size_t n);
/* the endpoint's form: http:// or https://, a host, no query: 0, or -1
 * and why ("must ...") */
int	trace_check_endpoint(const char *s, char *why, size_t len);

/*
 * A capture's transaction on its way to its commit frame: when its first
 * message came, and the bytes of the source's log it took.
 */
struct trace_batch {
	long long start_ns;	/* 0: no message yet */
	uint64_t bytes;
};
/* a message of n bytes of the transaction (nothing when tracing is off) */
void	trace_batch_add(struct trace_batch *, size_t n);
/*
 * At its commit, pos and text its position and rows its rows: when the
 * ratio samples it, its decode span is queued, its root span
 * pg2osync.batch is opened, and buf holds the traceparent the commit frame
 * carries (returned); else NULL. Under trace_batch_hold the root stays
 * open until trace_batch_acked reaches pos, else it ends now. The batch
 * starts anew either way.
 */
const char *trace_batch_commit(struct trace_batch *, uint64_t rows,
	    uint64_t pos, const char *text, char buf[TRACE_PARENT_LEN]);
/* the capture runs under a supervisor, whose ack ends a batch */
void	trace_batch_hold(int);
/*
 * A span that ends when a position is kept: held (trace_hold) until
 * trace_held_end reaches its pos - a capture's root at the supervisor's
 * ack, the supervisor's checkpoint span at ckpt's stored. Spans held at
 * most; past it the oldest ends at once.
 */
#define TRACE_OPEN_MAX	256
void	trace_hold(const struct trace_span *, uint64_t pos);
/* pos is kept: every span held at or below it ends now */
void	trace_held_end(uint64_t pos);

/*
 * The process's exporter. trace_start with endpoint NULL or ratio 0 leaves
 * tracing off (every call below a no-op). tool names this process's spans.
 * 0, or -1 with e (78: an endpoint that is not a URL).
 */
int	trace_start(const char *endpoint, double ratio, const char *tool,
	    struct p2o_err *e);
int	trace_on(void);
/* a new trace's root context by the sample ratio: 1 and ctx sampled, 0
 * when this one is not sampled (or tracing is off) */
int	trace_begin(struct trace_ctx *ctx);
/* end the span at end_ns and queue it; never blocks */
void	trace_emit(struct trace_span *, long long end_ns);
/* spans dropped since the start: queue full, or the collector failed */
uint64_t trace_dropped(void);
/* end every open root, send what is queued, waiting at most wait_ms,
 * then stop the thread; a stage's clean end waits TRACE_STOP_MS */
#define TRACE_STOP_MS	2000
void	trace_stop(long wait_ms);

#endif
