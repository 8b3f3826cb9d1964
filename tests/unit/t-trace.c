/*
 * t-trace - lib/trace.c: the W3C traceparent read and written (a malformed
 * one refused, never trusted), the OTLP/HTTP JSON body a collector reads
 * (ids in lowercase hex, times as strings of nanoseconds, a root without a
 * parent), sampling by ratio, and the exporter: spans to a collector that
 * answers arrive in one POST to /v1/traces, spans to one that does not are
 * dropped and counted. The work a stage's loop does per span is bounded:
 * ids are cheap and distinct, and a full set of held roots does not cost
 * a copy of the whole set per batch.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "frame.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "trace.h"
#include "tap.h"

static const char tp[] =
    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

static void
test_traceparent(void)
{
	static const char *const bad[] = {
		"",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
		"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333g-01",
		"00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",
	};
	struct trace_ctx c;
	char buf[TRACE_PARENT_LEN];
	size_t i;

	ok(trace_ctx_parse(tp, strlen(tp), &c) == 0, "a traceparent parses");
	ok(c.sampled == 1, "its flag 01 is sampled");
	ok(c.trace_id[0] == 0x0a && c.trace_id[15] == 0x9c &&
	    c.span_id[0] == 0xb7 && c.span_id[7] == 0x31, "ids as bytes");
	trace_ctx_format(&c, buf);
	is_str(buf, tp, "written back the same");
	ok(trace_ctx_parse("00-0af7651916cd43dd8448eb211c80319c-"
	    "b7ad6b7169203331-00", 55, &c) == 0 && c.sampled == 0,
	    "flag 00: not sampled");
	trace_ctx_format(&c, buf);
	ok(strcmp(buf + 53, "00") == 0, "written with flag 00");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(trace_ctx_parse(bad[i], strlen(bad[i]), &c) == -1,
		    "refused: '%s'", bad[i]);
}

/* the frames of buf through a pipe, each read as a position into p[] */
static int
read_positions(const struct sbuf *buf, struct msg_pos *p, int max)
{
	struct frame_reader r;
	struct frame f;
	char why[256];
	int fds[2], n = 0;

	if (pipe(fds) == -1 || write(fds[1], buf->buf, buf->len) !=
	    (ssize_t)buf->len)
		BAIL_OUT("pipe");
	close(fds[1]);
	frame_reader_init(&r, fds[0], "stdin");
	while (n < max && frame_read(&r, &f) == 1) {
		if (msg_read_pos(&f, &p[n], why, sizeof(why)) == -1) {
			diag("%s", why);
			break;
		}
		n++;
	}
	frame_reader_release(&r);
	close(fds[0]);
	return n;
}

static void
test_frames(void)
{
	static const char *const bad[] = {
		"{\"k\":\"commit\",\"pos\":5,\"text\":\"0/5\",\"trace\":\"x\"}",
		"{\"k\":\"commit\",\"pos\":5,\"text\":\"0/5\",\"trace\":7}",
		"{\"k\":\"commit\",\"pos\":5,\"text\":\"0/5\",\"trace\":"
		    "\"00-00000000000000000000000000000000-b7ad6b7169203331-01\"}",
	};
	struct sbuf out = SBUF_INIT;
	struct msg_pos p[5], d;
	size_t i;
	int n;

	msg_put_commit(&out, 22817480, "0/15C2AC8", 1764489600123456, 3, 0, 0,
	    tp);
	msg_put_commit(&out, 22817490, "0/15C2AD2", 1764489600123457, 1, 0, 0,
	    NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		frame_put(&out, bad[i], strlen(bad[i]));
	n = read_positions(&out, p, 5);
	is_int(n, 5, "every commit reads, a malformed trace member or not");
	is_str(p[0].trace, tp, "a commit carries its batch's traceparent");
	is_str(p[1].trace, "", "an untraced commit has none");
	for (i = 2; i < 5; i++)
		is_str(p[i].trace, "", "a malformed one is dropped: '%s'",
		    bad[i - 2]);
	ok(p[0].pos == 22817480 && strcmp(p[0].text, "0/15C2AC8") == 0 &&
	    p[0].n == 3, "the rest of the commit as before");

	sbuf_reset(&out);
	memset(&d, 0, sizeof(d));
	d.pos = 22817480;
	d.text = "0/15C2AC8";
	d.at = 1764489600200000;
	memcpy(d.trace, tp, sizeof(tp));
	msg_put_durable(&out, &d);
	ok(strstr(out.buf, "\"trace\":\"00-0af7651916cd43dd8448eb211c80319c-"
	    "b7ad6b7169203331-01\"") != NULL, "durable carries it on");
	for (i = 0; i < 5; i++)
		msg_pos_release(&p[i]);
	ok(read_positions(&out, p, 1) == 1, "and reads back");
	is_str(p[0].trace, tp, "the same traceparent");
	msg_pos_release(&p[0]);
	sbuf_release(&out);
}

static void
test_json(void)
{
	struct trace_ctx c;
	struct trace_span sp[2];
	struct sbuf out = SBUF_INIT;
	json_t *root, *span, *attrs;
	json_error_t jerr;
	const char *want;

	trace_ctx_parse(tp, strlen(tp), &c);
	/* a root: its own id is the context's, no parent */
	memset(&sp[0], 0, sizeof(sp[0]));
	memcpy(sp[0].trace_id, c.trace_id, TRACE_ID_LEN);
	memcpy(sp[0].span_id, c.span_id, TRACE_SPAN_LEN);
	sp[0].name = "pg2osync.batch";
	sp[0].start_ns = 1764489600123456789LL;
	trace_attr_int(&sp[0], "rows", 3);
	trace_attr_str(&sp[0], "position", "0/15C2AC8", 9);
	sp[0].end_ns = 1764489600223456789LL;
	ok(trace_span_child(&sp[1], &c, "write", 1764489600200000000LL) == 0,
	    "a child span");
	ok(memcmp(sp[1].parent_id, c.span_id, TRACE_SPAN_LEN) == 0 &&
	    memcmp(sp[1].span_id, c.span_id, TRACE_SPAN_LEN) != 0,
	    "its parent is the context's span, its id a new one");
	trace_attr_str(&sp[1], "outcome", "ok", 2);
	sp[1].error = 1;
	sp[1].end_ns = 1764489600200000001LL;

	trace_otlp_json(&out, "pg2osync", "writer", sp, 1);
	want = "{\"resourceSpans\":[{\"resource\":{\"attributes\":["
	    "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"pg2osync\"}},"
	    "{\"key\":\"process.executable.name\",\"value\":{\"stringValue\":"
	    "\"writer\"}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"pg2osync\","
	    "\"version\":\"" P2O_VERSION "\"},\"spans\":["
	    "{\"traceId\":\"0af7651916cd43dd8448eb211c80319c\","
	    "\"spanId\":\"b7ad6b7169203331\",\"name\":\"pg2osync.batch\","
	    "\"kind\":1,\"startTimeUnixNano\":\"1764489600123456789\","
	    "\"endTimeUnixNano\":\"1764489600223456789\",\"attributes\":["
	    "{\"key\":\"rows\",\"value\":{\"intValue\":\"3\"}},"
	    "{\"key\":\"position\",\"value\":{\"stringValue\":\"0/15C2AC8\"}}]}"
	    "]}]}]}";
	is_str(out.buf, want, "the OTLP JSON of a root span, byte for byte");

	sbuf_reset(&out);
	trace_otlp_json(&out, "pg2osync", "writer", sp, 2);
	root = json_loads(out.buf, 0, &jerr);
	ok(root != NULL, "two spans: valid JSON");
	span = json_array_get(json_object_get(json_array_get(json_object_get(
	    json_array_get(json_object_get(root, "resourceSpans"), 0),
	    "scopeSpans"), 0), "spans"), 1);
	ok(json_is_string(json_object_get(span, "parentSpanId")) &&
	    strcmp(json_string_value(json_object_get(span, "parentSpanId")),
	    "b7ad6b7169203331") == 0, "the child names its parent in hex");
	ok(strlen(json_string_value(json_object_get(span, "spanId"))) == 16,
	    "its own id: 16 hex digits");
	is_str(json_string_value(json_object_get(span, "startTimeUnixNano")),
	    "1764489600200000000", "its start: a string of nanoseconds");
	ok(json_integer_value(json_object_get(json_object_get(span,
	    "status"), "code")) == 2, "an error span has status ERROR (2)");
	attrs = json_object_get(span, "attributes");
	is_str(json_string_value(json_object_get(json_object_get(
	    json_array_get(attrs, 0), "value"), "stringValue")), "ok",
	    "a string attribute");
	json_decref(root);
	sbuf_release(&out);
}

static void
test_endpoint(void)
{
	char why[200];

	ok(trace_check_endpoint("http://127.0.0.1:4318", why,
	    sizeof(why)) == 0, "http://host:port is an endpoint");
	ok(trace_check_endpoint("https://otel.example/base/", why,
	    sizeof(why)) == 0, "https with a path is one");
	ok(trace_check_endpoint("127.0.0.1:4318", why, sizeof(why)) == -1,
	    "no scheme is refused");
	ok(trace_check_endpoint("http://", why, sizeof(why)) == -1,
	    "no host is refused");
	ok(trace_check_endpoint("http://h:1/v1?x=1", why, sizeof(why)) == -1,
	    "a query is refused");
}

/* a collector that takes one request, answers 200 and writes what it was
 * sent to fd out */
static pid_t
collector(int *port, int out)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char buf[65536];
	size_t got = 0;
	ssize_t r;
	pid_t pid;
	int s, c;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s == -1 || bind(s, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(s, 1) == -1 ||
	    getsockname(s, (struct sockaddr *)&a, &alen) == -1)
		BAIL_OUT("no listening socket");
	*port = ntohs(a.sin_port);
	if ((pid = fork()) != 0) {
		close(s);
		return pid;
	}
	if ((c = accept(s, NULL, NULL)) == -1)
		_exit(1);
	/* the headers and a body of Content-Length bytes */
	for (;;) {
		char *h, *cl;

		if ((r = read(c, buf + got, sizeof(buf) - 1 - got)) <= 0)
			_exit(1);
		got += (size_t)r;
		buf[got] = '\0';
		if ((h = strstr(buf, "\r\n\r\n")) == NULL)
			continue;
		cl = strcasestr(buf, "content-length:");
		if (cl != NULL && got - (size_t)(h + 4 - buf) >=
		    strtoul(cl + 15, NULL, 10))
			break;
	}
	dprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
	if (write(out, buf, got) != (ssize_t)got)
		_exit(1);
	_exit(0);
}

static void
test_export(void)
{
	struct p2o_err e;
	struct trace_ctx c;
	struct trace_span sp;
	char url[64], got[65536];
	int port, fds[2], st, n, sampled = 0, i;
	ssize_t r;
	size_t len = 0;
	pid_t pid;

	if (pipe(fds) == -1)
		BAIL_OUT("pipe");
	pid = collector(&port, fds[1]);
	close(fds[1]);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	p2o_err_clear(&e);
	ok(trace_start(url, 1.0, "t-trace", &e) == 0 && trace_on(),
	    "the exporter starts");
	ok(trace_begin(&c) == 1 && c.sampled, "ratio 1: every trace sampled");
	for (i = 0; i < 3; i++) {
		trace_span_child(&sp, &c, "shape", trace_now_ns());
		trace_emit(&sp, trace_now_ns());
	}
	trace_stop(5000);
	while ((r = read(fds[0], got + len, sizeof(got) - 1 - len)) > 0)
		len += (size_t)r;
	got[len] = '\0';
	close(fds[0]);
	waitpid(pid, &st, 0);
	ok(strncmp(got, "POST /v1/traces HTTP/1.1\r\n", 26) == 0,
	    "one POST to /v1/traces (a trailing slash on the endpoint is "
	    "dropped)");
	ok(strcasestr(got, "content-type: application/json") != NULL,
	    "with a JSON body");
	for (n = 0, i = 0; (size_t)i < len; i++)
		if (strncmp(got + i, "\"name\":\"shape\"", 14) == 0)
			n++;
	is_int(n, 3, "the three spans in it");
	is_int(trace_dropped(), 0, "none dropped");

	ok(trace_start(url, 0.25, "t-trace", &e) == 0, "ratio 0.25");
	for (i = 0; i < 4000; i++)
		sampled += trace_begin(&c);
	ok(sampled > 800 && sampled < 1200, "about a quarter sampled (%d of "
	    "4000)", sampled);
	trace_stop(0);
	p2o_err_clear(&e);
	ok(trace_start("localhost:4318", 1.0, "t-trace", &e) == -1 &&
	    e.code == 78, "an endpoint that is no URL: 78");
	ok(trace_start(NULL, 1.0, "t-trace", &e) == 0 && !trace_on(),
	    "no endpoint: off");
	ok(trace_begin(&c) == 0, "off: nothing sampled");
}

static void
test_unreachable(void)
{
	struct p2o_err e;
	struct trace_ctx c;
	struct trace_span sp;
	int i;

	/* port 1 on loopback: refused at once */
	p2o_err_clear(&e);
	ok(trace_start("http://127.0.0.1:1", 1.0, "t-trace", &e) == 0,
	    "an exporter to a closed port");
	trace_begin(&c);
	for (i = 0; i < 5; i++) {
		trace_span_child(&sp, &c, "write", trace_now_ns());
		trace_emit(&sp, trace_now_ns());
	}
	/* past the flush delay, so the batch is tried before the stop */
	usleep((TRACE_FLUSH_MS + 300) * 1000);
	is_int(trace_dropped(), 5, "its five spans dropped and counted");
	trace_stop(1000);
}

/* CPU seconds of this thread: what the host's load does not inflate
 * (much), unlike the wall clock */
static double
thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp_id(const void *a, const void *b)
{
	return memcmp(a, b, TRACE_SPAN_LEN);
}

static void
test_ids(void)
{
	enum { N = 100000, KEEP = 8192 };
	static unsigned char id[KEEP][TRACE_SPAN_LEN];
	unsigned char t[TRACE_ID_LEN];
	double t0, cpu;
	int i, zero = 0, same = 0;

	t0 = thread_cpu_s();
	for (i = 0; i < N; i++) {
		if (trace_random(i < KEEP ? id[i] : t, TRACE_SPAN_LEN) == -1)
			break;
		zero += memcmp(i < KEEP ? id[i] : t, "\0\0\0\0\0\0\0\0",
		    TRACE_SPAN_LEN) == 0;
	}
	cpu = thread_cpu_s() - t0;
	is_int(i, N, "100,000 span ids");
	is_int(zero, 0, "none all zero");
	qsort(id, KEEP, TRACE_SPAN_LEN, cmp_id);
	for (i = 1; i < KEEP; i++)
		same += memcmp(id[i - 1], id[i], TRACE_SPAN_LEN) == 0;
	is_int(same, 0, "8,192 of them all distinct");
	/* a capture makes three a batch: with RAND_bytes for each (7,600
	 * instructions) these took 0.078 s, with the generator under 1 ms */
	ok(cpu < 0.02, "100,000 ids in %.3f s of CPU (under 0.02)", cpu);
}

static void
test_held(void)
{
	enum { N = 50000 };
	struct p2o_err e;
	struct trace_ctx c;
	struct trace_span sp;
	double t0, cpu;
	int i;

	p2o_err_clear(&e);
	ok(trace_start("http://127.0.0.1:1", 1.0, "t-trace", &e) == 0,
	    "an exporter to a closed port");
	trace_begin(&c);
	trace_span_child(&sp, &c, "pg2osync.batch", trace_now_ns());
	trace_attr_str(&sp, "position", "0/15C2AC8", 9);
	/* more roots wait for their ack than are held: past the first
	 * TRACE_OPEN_MAX, each new one ends the oldest */
	t0 = thread_cpu_s();
	for (i = 1; i <= N; i++)
		trace_hold(&sp, (uint64_t)i);
	trace_held_end(N / 2);
	trace_held_end(N);
	cpu = thread_cpu_s() - t0;
	/* moving the set down by one, 250 KB, for each took 0.14 s for
	 * these; the ring 5 ms */
	ok(cpu < 0.04, "50,000 roots held with %d open at most, in %.3f s of "
	    "CPU (under 0.04)", TRACE_OPEN_MAX, cpu);
	/* each one ended once and dropped (by the full queue, or when the
	 * collector was not there): none lost, none ended twice */
	for (i = 0; i < 50 && trace_dropped() < N; i++)
		usleep(100 * 1000);
	is_int(trace_dropped(), N, "every held root ended once");
	trace_stop(0);
}

int
main(void)
{
	log_init("t-trace");
	test_traceparent();
	test_frames();
	test_json();
	test_endpoint();
	test_export();
	test_unreachable();
	test_ids();
	test_held();
	return done_testing();
}
