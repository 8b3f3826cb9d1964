/*
 * trace.c - spans and their export (trace.h): the W3C traceparent read
 * and written, random ids, the OTLP/HTTP JSON body, and the process's one
 * exporter thread. It owns the span queue and the collector's connection;
 * it never blocks its caller on the collector, never fails a stage over a
 * span, and never exits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "hex.h"
#include "http.h"
#include "log.h"
#include "p2o.h"
#include "trace.h"
#include "xio.h"

/* ---- contexts and ids ---- */

static int
all_zero(const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

static int
hex_bytes(const char *s, unsigned char *out, size_t n)
{
	size_t i;
	int hi, lo;

	for (i = 0; i < n; i++) {
		/* lowercase only, as the W3C text says */
		if ((s[2 * i] >= 'A' && s[2 * i] <= 'F') ||
		    (s[2 * i + 1] >= 'A' && s[2 * i + 1] <= 'F'))
			return -1;
		if ((hi = hex_value(s[2 * i])) < 0 ||
		    (lo = hex_value(s[2 * i + 1])) < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

static void
add_hex(struct sbuf *out, const unsigned char *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	sbuf_grow(out, 2 * n);
	for (i = 0; i < n; i++) {
		out->buf[out->len++] = digits[b[i] >> 4];
		out->buf[out->len++] = digits[b[i] & 15];
	}
	out->buf[out->len] = '\0';
}

int
trace_ctx_parse(const char *s, size_t n, struct trace_ctx *c)
{
	unsigned char flags;

	/* 00-<32 hex>-<16 hex>-<2 hex>: version 00 has exactly this length */
	if (n != TRACE_PARENT_LEN - 1 || s[0] != '0' || s[1] != '0' ||
	    s[2] != '-' || s[35] != '-' || s[52] != '-')
		return -1;
	if (hex_bytes(s + 3, c->trace_id, TRACE_ID_LEN) == -1 ||
	    hex_bytes(s + 36, c->span_id, TRACE_SPAN_LEN) == -1 ||
	    hex_bytes(s + 53, &flags, 1) == -1)
		return -1;
	if (all_zero(c->trace_id, TRACE_ID_LEN) ||
	    all_zero(c->span_id, TRACE_SPAN_LEN))
		return -1;
	c->sampled = flags & 1;
	return 0;
}

void
trace_ctx_format(const struct trace_ctx *c, char buf[TRACE_PARENT_LEN])
{
	struct sbuf sb = SBUF_INIT;

	sbuf_adds(&sb, "00-");
	add_hex(&sb, c->trace_id, TRACE_ID_LEN);
	sbuf_addc(&sb, '-');
	add_hex(&sb, c->span_id, TRACE_SPAN_LEN);
	sbuf_adds(&sb, c->sampled ? "-01" : "-00");
	memcpy(buf, sb.buf, TRACE_PARENT_LEN);
	sbuf_release(&sb);
}

/*
 * Ids come from a generator of each thread's own (xoshiro256**), seeded
 * once from OpenSSL's RAND_bytes: RAND_bytes costs about 7,600
 * instructions a call (its DRBG, locks and parameters), six calls a batch
 * in a capture, where an id only has to be unpredictable enough not to
 * collide, not secret. 256 bits of state seeded at random make two
 * processes' sequences overlap with no likelihood worth counting.
 */
static _Thread_local uint64_t rng[4];
static _Thread_local int rng_seeded;

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t
rng_next(void)
{
	uint64_t r = rotl(rng[1] * 5, 7) * 9, t = rng[1] << 17;

	rng[2] ^= rng[0];
	rng[3] ^= rng[1];
	rng[1] ^= rng[2];
	rng[0] ^= rng[3];
	rng[2] ^= t;
	rng[3] = rotl(rng[3], 45);
	return r;
}

int
trace_random(unsigned char *buf, size_t n)
{
	uint64_t v;
	size_t i;
	int tries;

	if (!rng_seeded) {
		/* an all-zero state would stay zero */
		if (RAND_bytes((unsigned char *)rng, sizeof(rng)) != 1 ||
		    all_zero((unsigned char *)rng, sizeof(rng)))
			return -1;
		rng_seeded = 1;
	}
	for (tries = 0; tries < 4; tries++) {
		for (i = 0; i < n; i += sizeof(v)) {
			v = rng_next();
			memcpy(buf + i, &v, n - i < sizeof(v) ? n - i :
			    sizeof(v));
		}
		if (!all_zero(buf, n))
			return 0;
	}
	return -1;
}

long long
trace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int
trace_span_child(struct trace_span *sp, const struct trace_ctx *c,
    const char *name, long long start_ns)
{
	memset(sp, 0, sizeof(*sp));
	memcpy(sp->trace_id, c->trace_id, TRACE_ID_LEN);
	memcpy(sp->parent_id, c->span_id, TRACE_SPAN_LEN);
	sp->name = name;
	sp->start_ns = start_ns;
	return trace_random(sp->span_id, TRACE_SPAN_LEN);
}

void
trace_attr_int(struct trace_span *sp, const char *key, long long v)
{
	struct trace_attr *a;

	if (sp->nattr == TRACE_ATTR_MAX)
		return;
	a = &sp->attr[sp->nattr++];
	a->key = key;
	a->is_int = 1;
	a->i = v;
}

void
trace_attr_str(struct trace_span *sp, const char *key, const char *v,
    size_t n)
{
	struct trace_attr *a;

	if (sp->nattr == TRACE_ATTR_MAX)
		return;
	a = &sp->attr[sp->nattr++];
	a->key = key;
	a->is_int = 0;
	if (n >= sizeof(a->s))
		n = sizeof(a->s) - 1;
	memcpy(a->s, v, n);
	a->s[n] = '\0';
}

/* ---- the OTLP JSON body ---- */

static void
add_kv_str(struct sbuf *out, const char *key, const char *v)
{
	sbuf_adds(out, "{\"key\":");
	sbuf_add_jstr(out, key, strlen(key));
	sbuf_adds(out, ",\"value\":{\"stringValue\":");
	sbuf_add_jstr(out, v, strlen(v));
	sbuf_adds(out, "}}");
}

static void
add_span(struct sbuf *out, const struct trace_span *sp)
{
	int i;

	sbuf_adds(out, "{\"traceId\":\"");
	add_hex(out, sp->trace_id, TRACE_ID_LEN);
	sbuf_adds(out, "\",\"spanId\":\"");
	add_hex(out, sp->span_id, TRACE_SPAN_LEN);
	sbuf_addc(out, '"');
	if (!all_zero(sp->parent_id, TRACE_SPAN_LEN)) {
		sbuf_adds(out, ",\"parentSpanId\":\"");
		add_hex(out, sp->parent_id, TRACE_SPAN_LEN);
		sbuf_addc(out, '"');
	}
	sbuf_adds(out, ",\"name\":");
	sbuf_add_jstr(out, sp->name, strlen(sp->name));
	/* SPAN_KIND_INTERNAL; 64-bit integers are strings in proto3 JSON */
	sbuf_adds(out, ",\"kind\":1,\"startTimeUnixNano\":\"");
	sbuf_add_i64(out, sp->start_ns);
	sbuf_adds(out, "\",\"endTimeUnixNano\":\"");
	sbuf_add_i64(out, sp->end_ns);
	sbuf_adds(out, "\",\"attributes\":[");
	for (i = 0; i < sp->nattr; i++) {
		const struct trace_attr *a = &sp->attr[i];

		if (i)
			sbuf_addc(out, ',');
		if (!a->is_int) {
			add_kv_str(out, a->key, a->s);
			continue;
		}
		sbuf_adds(out, "{\"key\":");
		sbuf_add_jstr(out, a->key, strlen(a->key));
		sbuf_adds(out, ",\"value\":{\"intValue\":\"");
		sbuf_add_i64(out, a->i);
		sbuf_adds(out, "\"}}");
	}
	sbuf_addc(out, ']');
	/* STATUS_CODE_ERROR; an unset status is left out */
	if (sp->error)
		sbuf_adds(out, ",\"status\":{\"code\":2}");
	sbuf_addc(out, '}');
}

void
trace_otlp_json(struct sbuf *out, const char *service, const char *tool,
    const struct trace_span *sp, size_t n)
{
	size_t i;

	sbuf_adds(out, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
	add_kv_str(out, "service.name", service);
	sbuf_addc(out, ',');
	add_kv_str(out, "process.executable.name", tool);
	sbuf_adds(out, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"pg2osync\","
	    "\"version\":");
	sbuf_add_jstr(out, P2O_VERSION, strlen(P2O_VERSION));
	sbuf_adds(out, "},\"spans\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(out, ',');
		add_span(out, &sp[i]);
	}
	sbuf_adds(out, "]}]}]}");
}

int
trace_check_endpoint(const char *s, char *why, size_t len)
{
	const char *host;

	if (strncmp(s, "http://", 7) == 0)
		host = s + 7;
	else if (strncmp(s, "https://", 8) == 0)
		host = s + 8;
	else
		goto bad;
	if (*host == '\0' || *host == '/' || strpbrk(s, "?# \t") != NULL)
		goto bad;
	return 0;
bad:
	snprintf(why, len, "must be an http:// or https:// URL of an OTLP "
	    "collector, without a query (e.g. http://127.0.0.1:4318); "
	    "spans go to its /v1/traces");
	return -1;
}

/* ---- the exporter ---- */

static struct {
	int	 on;
	double	 ratio;
	char	 tool[32];
	char	*base;		/* the endpoint, no trailing slash */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct trace_span *q;	/* a ring of TRACE_QUEUE_MAX */
	size_t	 head, n;
	long long oldest_ms;	/* when the oldest queued span came */
	int	 stopping;
	long long stop_by_ms;	/* stopping: drop what is left after this */
	uint64_t dropped;
} ex = { .mu = PTHREAD_MUTEX_INITIALIZER };

int
trace_on(void)
{
	return ex.on;
}

uint64_t
trace_dropped(void)
{
	uint64_t d;

	if (!ex.on)
		return 0;
	pthread_mutex_lock(&ex.mu);
	d = ex.dropped;
	pthread_mutex_unlock(&ex.mu);
	return d;
}

int
trace_begin(struct trace_ctx *c)
{
	uint64_t r = 0;
	int i;

	if (!ex.on)
		return 0;
	if (trace_random(c->trace_id, TRACE_ID_LEN) == -1 ||
	    trace_random(c->span_id, TRACE_SPAN_LEN) == -1)
		return 0;
	/* the trace id's last 8 bytes decide, as OpenTelemetry's
	 * TraceIdRatioBased sampler does */
	for (i = 8; i < TRACE_ID_LEN; i++)
		r = r << 8 | c->trace_id[i];
	c->sampled = ex.ratio >= 1.0 ||
	    (double)(r >> 11) < ex.ratio * 9007199254740992.0;
	return c->sampled;
}

void
trace_emit(struct trace_span *sp, long long end_ns)
{
	if (!ex.on)
		return;
	sp->end_ns = end_ns;
	pthread_mutex_lock(&ex.mu);
	if (ex.n == TRACE_QUEUE_MAX || ex.stopping) {
		ex.dropped++;
	} else {
		ex.q[(ex.head + ex.n) % TRACE_QUEUE_MAX] = *sp;
		/* the thread sleeps without a deadline while nothing is
		 * queued, and until the flush delay while a little is */
		if (ex.n++ == 0) {
			ex.oldest_ms = now_ms();
			pthread_cond_signal(&ex.cv);
		} else if (ex.n == TRACE_BATCH_MAX)
			pthread_cond_signal(&ex.cv);
	}
	pthread_mutex_unlock(&ex.mu);
}

/* ---- a capture's batches ---- */

/* spans waiting for their position to be kept, oldest first, in a ring
 * (a capture ahead of its acks by more than TRACE_OPEN_MAX batches ends
 * the oldest at each commit: moving the rest down, 250 KB, cost more than
 * all the rest of its tracing); only the process's loop touches them */
static struct {
	uint64_t pos;
	struct trace_span sp;
} open_root[TRACE_OPEN_MAX];
static int open_head, nopen, hold_roots;

void
trace_batch_hold(int on)
{
	hold_roots = on;
}

void
trace_batch_add(struct trace_batch *tb, size_t n)
{
	if (!ex.on)
		return;
	if (tb->start_ns == 0)
		tb->start_ns = trace_now_ns();
	tb->bytes += n;
}

static void
end_oldest(int k, long long now)
{
	for (; k > 0; k--) {
		trace_emit(&open_root[open_head].sp, now);
		open_head = (open_head + 1) % TRACE_OPEN_MAX;
		nopen--;
	}
}

const char *
trace_batch_commit(struct trace_batch *tb, uint64_t rows, uint64_t pos,
    const char *text, char buf[TRACE_PARENT_LEN])
{
	struct trace_span root, decode;
	struct trace_ctx c;
	long long now, start;

	if (!ex.on)
		return NULL;
	now = trace_now_ns();
	start = tb->start_ns ? tb->start_ns : now;
	if (!trace_begin(&c)) {
		memset(tb, 0, sizeof(*tb));
		return NULL;
	}
	memset(&root, 0, sizeof(root));
	memcpy(root.trace_id, c.trace_id, TRACE_ID_LEN);
	memcpy(root.span_id, c.span_id, TRACE_SPAN_LEN);
	root.name = "pg2osync.batch";
	root.start_ns = start;
	trace_attr_int(&root, "rows", (long long)rows);
	trace_attr_int(&root, "bytes", (long long)tb->bytes);
	trace_attr_str(&root, "position", text, strlen(text));
	if (trace_span_child(&decode, &c, "decode", start) == 0) {
		trace_attr_int(&decode, "rows", (long long)rows);
		trace_emit(&decode, now);
	}
	memset(tb, 0, sizeof(*tb));
	if (!hold_roots)
		trace_emit(&root, now);
	else
		trace_hold(&root, pos);
	trace_ctx_format(&c, buf);
	return buf;
}

void
trace_hold(const struct trace_span *sp, uint64_t pos)
{
	int i;

	if (!ex.on)
		return;
	if (nopen == TRACE_OPEN_MAX)
		end_oldest(1, trace_now_ns());
	i = (open_head + nopen++) % TRACE_OPEN_MAX;
	open_root[i].pos = pos;
	open_root[i].sp = *sp;
}

void
trace_held_end(uint64_t pos)
{
	int k = 0;

	while (k < nopen &&
	    open_root[(open_head + k) % TRACE_OPEN_MAX].pos <= pos)
		k++;
	if (k > 0)
		end_oldest(k, trace_now_ns());
}

/* POST one batch: 0, or -1 and why */
static int
post(struct http_client *c, const struct trace_span *sp, size_t n,
    struct sbuf *body, char *why, size_t len)
{
	struct sbuf resp = SBUF_INIT;
	long status = 0;
	int rc = 0;

	sbuf_reset(body);
	trace_otlp_json(body, "pg2osync", ex.tool, sp, n);
	if (http_request(c, "POST", "/v1/traces", "application/json",
	    body->buf, body->len, &resp, &status) == -1) {
		snprintf(why, len, "%s", c->err);
		rc = -1;
	} else if (status < 200 || status > 299) {
		snprintf(why, len, "HTTP %ld", status);
		rc = -1;
	}
	sbuf_release(&resp);
	return rc;
}

static void
wait_until(long long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ms -= now_ms();
	if (ms <= 0)
		return;
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&ex.cv, &ex.mu, &ts);
}

static void *
exporter(void *arg)
{
	struct trace_span *batch = xcalloc(TRACE_BATCH_MAX, sizeof(*batch));
	struct http_client c;
	struct sbuf body = SBUF_INIT;
	char why[300], redacted[512];
	int failing = 0, client;
	size_t k, i;

	(void)arg;
	/* the collector is one node */
	client = http_init(&c, (const char *const *)&ex.base, 1, NULL) == 0;
	if (client)
		c.timeout_ms = TRACE_TIMEOUT_MS;
	log_redact_url(ex.base, redacted, sizeof(redacted));
	pthread_mutex_lock(&ex.mu);
	for (;;) {
		if (ex.stopping && (ex.n == 0 || now_ms() >= ex.stop_by_ms)) {
			ex.dropped += ex.n;
			ex.n = 0;
			break;
		}
		if (ex.n == 0) {
			pthread_cond_wait(&ex.cv, &ex.mu);
			continue;
		}
		if (!ex.stopping && ex.n < TRACE_BATCH_MAX &&
		    now_ms() < ex.oldest_ms + TRACE_FLUSH_MS) {
			wait_until(ex.oldest_ms + TRACE_FLUSH_MS);
			continue;
		}
		k = ex.n < TRACE_BATCH_MAX ? ex.n : TRACE_BATCH_MAX;
		for (i = 0; i < k; i++)
			batch[i] = ex.q[(ex.head + i) % TRACE_QUEUE_MAX];
		ex.head = (ex.head + k) % TRACE_QUEUE_MAX;
		ex.n -= k;
		ex.oldest_ms = now_ms();
		pthread_mutex_unlock(&ex.mu);

		if (!client) {
			snprintf(why, sizeof(why), "no HTTP client");
		}
		if (!client || post(&c, batch, k, &body, why,
		    sizeof(why)) == -1) {
			if (!failing)
				log_warnx("traces: the collector at '%s' did "
				    "not take %zu span%s (%s): spans are "
				    "dropped, and counted, while it fails",
				    redacted, k, k == 1 ? "" : "s", why);
			failing = 1;
			pthread_mutex_lock(&ex.mu);
			ex.dropped += k;
			continue;
		}
		if (failing)
			log_info("traces: the collector at '%s' takes spans "
			    "again", redacted);
		failing = 0;
		pthread_mutex_lock(&ex.mu);
	}
	pthread_mutex_unlock(&ex.mu);
	if (client)
		http_release(&c);
	sbuf_release(&body);
	free(batch);
	return NULL;
}

int
trace_start(const char *endpoint, double ratio, const char *tool,
    struct p2o_err *e)
{
	pthread_condattr_t ca;
	char why[200];
	size_t len;
	int rc;

	if (ex.on || endpoint == NULL || ratio <= 0)
		return 0;
	if (trace_check_endpoint(endpoint, why, sizeof(why)) == -1)
		return p2o_fail(e, P2O_EXIT_CONFIG, "traces endpoint %s", why);
	if (http_global_init() == -1)
		return p2o_fail(e, P2O_EXIT_INTERNAL, "traces: libcurl would "
		    "not start");
	ex.base = xstrdup(endpoint);
	len = strlen(ex.base);
	while (len > 0 && ex.base[len - 1] == '/')
		ex.base[--len] = '\0';
	ex.ratio = ratio;
	ex.head = ex.n = 0;
	ex.stopping = 0;
	ex.dropped = 0;
	snprintf(ex.tool, sizeof(ex.tool), "%s", tool);
	ex.q = xcalloc(TRACE_QUEUE_MAX, sizeof(*ex.q));
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ex.cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = pthread_create(&ex.thread, NULL, exporter, NULL)) != 0) {
		free(ex.q);
		free(ex.base);
		ex.q = NULL;
		ex.base = NULL;
		return p2o_fail(e, P2O_EXIT_INTERNAL, "traces: no exporter "
		    "thread: %s", strerror(rc));
	}
	ex.on = 1;
	return 0;
}

void
trace_stop(long wait_ms)
{
	if (!ex.on)
		return;
	/* a root the stream did not live to see acked ends with it */
	end_oldest(nopen, trace_now_ns());
	pthread_mutex_lock(&ex.mu);
	ex.stopping = 1;
	ex.stop_by_ms = now_ms() + wait_ms;
	pthread_cond_signal(&ex.cv);
	pthread_mutex_unlock(&ex.mu);
	pthread_join(ex.thread, NULL);
	ex.on = 0;
	pthread_cond_destroy(&ex.cv);
	free(ex.q);
	free(ex.base);
	ex.q = NULL;
	ex.base = NULL;
}
