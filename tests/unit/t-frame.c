/*
 * t-frame.c - length-framed NDJSON through real pipes: round trips, a
 * frame arriving one byte at a time, every malformed case of framing.md
 * §1 with its exact message and offset, and a buffer that stays about the
 * size of the largest frame.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "jscan.h"
#include "msg.h"
#include "sbuf.h"
#include "tap.h"
#include "xio.h"

/* feed bytes to a reader through a pipe from a child process (so any size
 * works), read every frame; the number of frames, or -1 with err copied */
static int
read_stream(const char *bytes, size_t n, char *err, size_t errlen,
    size_t *cap_seen)
{
	struct frame_reader r;
	struct frame f;
	int fds[2], rc, count = 0, status;
	pid_t pid;

	if (pipe(fds) < 0)
		return -2;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(write_in_full(fds[1], bytes, n) < 0 ? 1 : 0);
	}
	close(fds[1]);
	frame_reader_init(&r, fds[0], "stdin");
	while ((rc = frame_read(&r, &f)) == 1)
		count++;
	if (err)
		snprintf(err, errlen, "%s", rc < 0 ? r.err : "");
	if (cap_seen)
		*cap_seen = r.cap;
	frame_reader_release(&r);
	close(fds[0]);
	waitpid(pid, &status, 0);
	return rc < 0 ? -1 : count;
}

static void
bad_is(const char *bytes, size_t n, const char *want, const char *name)
{
	char err[256];
	int rc;

	rc = read_stream(bytes, n, err, sizeof(err), NULL);
	is_int(rc, -1, "%s is an error", name);
	is_str(err, want, "%s message", name);
}

#define BAD(lit, want, name)	bad_is(lit, sizeof(lit) - 1, want, name)

static void
test_round_trip(void)
{
	struct sbuf out = SBUF_INIT, json = SBUF_INIT;
	struct frame_reader r;
	struct frame f;
	struct jspan v;
	uint64_t u;
	int fds[2], i, good = 0, status, rc;
	const int nframes = 20000;
	char pad[97];
	pid_t pid;

	memset(pad, 'x', sizeof(pad));
	if (pipe(fds) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		for (i = 0; i < nframes; i++) {
			sbuf_reset(&json);
			sbuf_adds(&json, "{\"k\":\"row\",\"i\":");
			sbuf_add_u64(&json, i);
			sbuf_adds(&json, ",\"pad\":");
			/* sizes vary so frames straddle read boundaries */
			sbuf_add_jstr(&json, pad, i % sizeof(pad));
			sbuf_addc(&json, '}');
			frame_put(&out, json.buf, json.len);
			if (out.len > 10000 && frame_flush(fds[1], &out) < 0)
				_exit(1);
		}
		_exit(frame_flush(fds[1], &out) < 0 ? 1 : 0);
	}
	close(fds[1]);
	frame_reader_init(&r, fds[0], "stdin");
	for (i = 0; (rc = frame_read(&r, &f)) == 1; i++)
		if (frame_is(&f, "row") && jobj_get(f.obj, "i", &v) &&
		    jnum_u64(v, &u) == 0 && u == (uint64_t)i)
			good++;
	is_int(rc, 0, "round trip ends cleanly (%s)", r.err);
	is_int(good, nframes, "every frame came back in order");
	ok(r.cap == 256 * 1024, "small frames keep the 256 KiB buffer (%zu)",
	    r.cap);
	frame_reader_release(&r);
	close(fds[0]);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer ok");
	sbuf_release(&out);
	sbuf_release(&json);
}

static void
test_frame_put(void)
{
	struct sbuf out = SBUF_INIT;
	const char *j = "{\"k\":\"commit\",\"pos\":23456,\"text\":\"0/5BA0\"}";

	frame_put(&out, j, strlen(j));
	is_str(out.buf, "43 {\"k\":\"commit\",\"pos\":23456,\"text\":\"0/5BA0\"}\n",
	    "frame_put counts the JSON and the LF");
	sbuf_release(&out);
}

static void
test_one_byte_writes(void)
{
	const char *s = "23 {\"k\":\"pos\",\"pos\":1234}\n3 {}\n";
	struct frame_reader r;
	struct frame f;
	int fds[2], rc = 0, early = 0, got = 0;
	size_t i, n = strlen("23 {\"k\":\"pos\",\"pos\":1234}\n");

	if (pipe(fds) < 0)
		return;
	frame_reader_init(&r, fds[0], "stdin");
	for (i = 0; i < n; i++) {
		if (write(fds[1], s + i, 1) != 1)
			break;
		if (frame_fill(&r) != 1)
			break;
		rc = frame_next(&r, &f);
		if (rc != 0 && i + 1 < n)
			early++;
		if (rc == 1)
			got++;
	}
	is_int(early, 0, "nothing before the last byte of a frame");
	is_int(got, 1, "the frame arrives with its last byte");
	ok(got && frame_is(&f, "pos") && f.offset == 0, "kind and offset");
	/* a frame that then arrives without "k" fails at offset 26 */
	if (write(fds[1], s + n, strlen(s + n)) < 0)
		return;
	close(fds[1]);
	is_int(frame_read(&r, &f), -1, "second frame has no k");
	is_str(r.err, "stdin: offset 26: frame has no \"k\"", "its message");
	is_int(frame_read(&r, &f), -1, "the error is sticky");
	frame_reader_release(&r);
	close(fds[0]);
}

static void
test_malformed(void)
{
	char err[256];
	size_t cap = 0;

	BAD("23 {\"k\":\"pos\",\"pos\":1234", "stdin: offset 0: truncated "
	    "frame: EOF after 21 of 23 bytes", "torn tail");
	BAD("23 {\"k\":\"pos\",\"pos\":1234}\n26 {\"k\"",
	    "stdin: offset 26: truncated frame: EOF after 4 of 26 bytes",
	    "torn second frame");
	BAD("26", "stdin: offset 0: truncated frame: EOF after 0 of 26 bytes",
	    "EOF inside the length");
	BAD("26 ", "stdin: offset 0: truncated frame: EOF after 0 of 26 bytes",
	    "EOF after the space");

	is_int(read_stream("9999999999 {", 12, err, sizeof(err), &cap), -1,
	    "a 10-digit length over the limit is an error");
	is_str(err, "stdin: offset 0: frame of 9999999999 bytes exceeds the "
	    "67108864-byte limit", "its message");
	ok(cap <= 256 * 1024, "and nothing was allocated for it (cap %zu)", cap);
	BAD("67108865 {}", "stdin: offset 0: frame of 67108865 bytes exceeds "
	    "the 67108864-byte limit", "one byte over the limit");
	BAD("12345678901 {}\n", "stdin: offset 0: bad frame length",
	    "11 digits");
	BAD("4a {}\n", "stdin: offset 0: bad frame length", "a letter");
	BAD("-3 {}\n", "stdin: offset 0: bad frame length", "a sign");
	BAD("+3 {}\n", "stdin: offset 0: bad frame length", "a plus");
	BAD("03 {}\n", "stdin: offset 0: bad frame length", "a leading zero");
	BAD("0 \n", "stdin: offset 0: bad frame length", "length zero");
	BAD(" 3 {}\n", "stdin: offset 0: bad frame length", "a leading space");
	BAD("2 }\n", "stdin: offset 0: bad frame length", "too short for {}");
	BAD("3{}\n", "stdin: offset 0: bad frame length", "no space");
	BAD("3\t{}\n", "stdin: offset 0: bad frame length", "a tab for space");
	BAD("{\"k\":\"x\"}\n", "stdin: offset 0: bad frame length",
	    "plain NDJSON");
	BAD("6 {a:1}\n", "stdin: offset 0: invalid JSON: expected a member "
	    "name at byte 1", "bad JSON");
	BAD("11 {\"k\":\"x\",}\n", "stdin: offset 0: invalid JSON: expected "
	    "a member name at byte 9", "trailing comma");
	BAD("11 {\"k\":\"\xc0\xaf\"}\n", "stdin: offset 0: invalid JSON: "
	    "invalid UTF-8 at byte 6", "bad UTF-8");
	BAD("3 {}x", "stdin: offset 0: frame does not end with a newline",
	    "last byte not LF");
	BAD("9 {\"k\":\"x\"}\n", "stdin: offset 0: frame does not end with a "
	    "newline", "length one short");
	BAD("11 {\"k\":\"x\"}\n3 {}\n", "stdin: offset 0: frame does not end "
	    "with a newline", "length one long");
	BAD("4 {\n}\n", "stdin: offset 0: newline inside frame",
	    "LF inside");
	BAD("4 123\n", "stdin: offset 0: frame is not a JSON object",
	    "a number");
	BAD("3 []\n", "stdin: offset 0: frame is not a JSON object",
	    "an array");
	BAD("4 \"k\"\n", "stdin: offset 0: frame is not a JSON object",
	    "a string");
	BAD("3 {}\n", "stdin: offset 0: frame has no \"k\"", "no k");
	BAD("8 {\"k\":1}\n", "stdin: offset 0: frame has no \"k\"",
	    "k not a string");
	BAD("16 {\"a\":{\"k\":\"x\"}}\n", "stdin: offset 0: frame has no \"k\"",
	    "k only nested");
}

static void
test_offsets(void)
{
	/* 3rd frame bad: its offset is the byte count of the first two */
	const char s[] =
	    "10 {\"k\":\"a\"}\n"		/* 13 bytes */
	    "18 {\"k\":\"b\",\"x\":[1]}\n"	/* 21 bytes */
	    "10 {\"k\":\"c\"]\n";
	char err[256];

	is_int(read_stream(s, sizeof(s) - 1, err, sizeof(err), NULL), -1,
	    "third frame bad");
	is_str(err, "stdin: offset 34: invalid JSON: expected ',' or '}' at "
	    "byte 8", "the offset counts the first two frames");
	is_int(read_stream(s, 34, err, sizeof(err), NULL), 2,
	    "clean EOF between frames ends the stream after two");
	is_int(read_stream("", 0, err, sizeof(err), NULL), 0,
	    "an empty stream is a clean end");
}

static void
test_ndjson(void)
{
	const char *objs[] = { "{\"k\":\"a\"}", "{\"k\":\"b\",\"s\":\"é\\n\"}",
	    "{ \"k\" : \"c\" }" };
	struct sbuf out = SBUF_INIT, nd = SBUF_INIT, want = SBUF_INIT;
	size_t i;
	char *p, *line, *sp;

	for (i = 0; i < 3; i++) {
		frame_put(&out, objs[i], strlen(objs[i]));
		sbuf_adds(&want, objs[i]);
		sbuf_addc(&want, '\n');
	}
	/* sed -E 's/^[0-9]+ //' */
	for (p = out.buf; *p; p = line) {
		line = strchr(p, '\n') + 1;
		sp = p;
		while (*sp >= '0' && *sp <= '9')
			sp++;
		if (*sp == ' ')
			sp++;
		sbuf_add(&nd, sp, line - sp);
	}
	is_str(nd.buf, want.buf, "stripping the prefixes leaves NDJSON");
	is_int(read_stream(out.buf, out.len, NULL, 0, NULL), 3,
	    "and the frames read back");
	sbuf_release(&out);
	sbuf_release(&nd);
	sbuf_release(&want);
}

/* one large frame grows the buffer to about its size, not past it, and
 * small frames after it do not grow it further */
static void
test_memory(void)
{
	struct sbuf out = SBUF_INIT, json = SBUF_INIT;
	size_t cap = 0, big = 3 * 1024 * 1024 + 17;
	char *pad = malloc(big);
	int i;

	memset(pad, 'y', big);
	for (i = 0; i < 1000; i++)
		frame_put(&out, "{\"k\":\"small\"}", 13);
	sbuf_adds(&json, "{\"k\":\"big\",\"pad\":");
	sbuf_add_jstr(&json, pad, big);
	sbuf_addc(&json, '}');
	frame_put(&out, json.buf, json.len);
	for (i = 0; i < 1000; i++)
		frame_put(&out, "{\"k\":\"small\"}", 13);
	is_int(read_stream(out.buf, out.len, NULL, 0, &cap), 2001,
	    "2001 frames around a 3 MiB one");
	ok(cap >= json.len && cap <= json.len + 64,
	    "the buffer is the big frame's size: %zu for %zu", cap, json.len);
	free(pad);
	sbuf_release(&out);
	sbuf_release(&json);
}

/* msg_kind_of tells every kind by its name, and nothing else */
static void
test_kinds(void)
{
	struct sbuf q = SBUF_INIT;
	struct jspan s;
	int k, good = 1;

	for (k = MSG_UNKNOWN + 1; k < MSG_NKINDS; k++) {
		if (msg_kind_len(k) != strlen(msg_kind_name(k)))
			good = 0;
		sbuf_reset(&q);
		sbuf_add_jstr(&q, msg_kind_name(k), strlen(msg_kind_name(k)));
		s.p = q.buf;
		s.n = q.len;
		if (msg_kind_of(s) != (enum msg_kind)k)
			good = 0;
		/* one byte fewer, one more: not a kind */
		s.p = q.buf;
		sbuf_reset(&q);
		sbuf_addf(&q, "\"%.*s\"", (int)strlen(msg_kind_name(k)) - 1,
		    msg_kind_name(k));
		s.p = q.buf;
		s.n = q.len;
		if (msg_kind_of(s) != MSG_UNKNOWN)
			good = 0;
		sbuf_reset(&q);
		sbuf_addf(&q, "\"%sx\"", msg_kind_name(k));
		s.p = q.buf;
		s.n = q.len;
		if (msg_kind_of(s) != MSG_UNKNOWN)
			good = 0;
	}
	ok(good, "each kind known by its name, with its length, and a name "
	    "one byte short or long is not a kind");
	s.p = "\"\"";
	s.n = 2;
	ok(msg_kind_of(s) == MSG_UNKNOWN, "the empty name is not a kind");
	s.p = "\"\\u0072ow\"";
	s.n = strlen(s.p);
	ok(msg_kind_of(s) == MSG_UNKNOWN, "an escaped spelling is not a kind");
	sbuf_release(&q);
}

/* a frame built in the output itself is the frame built in a scratch
 * buffer, whatever the size of the one before: prefixes of 2 to 6 digits,
 * growing and shrinking, after bytes already in the output */
static void
test_in_place(void)
{
	static const size_t sizes[] = { 0, 5, 90, 95, 100, 5, 990, 1000, 3,
	    99990, 10, 100000, 100000, 1, 0 };
	struct sbuf a = SBUF_INIT, b = SBUF_INIT, j = SBUF_INIT;
	struct msg_in in = { 0, 0 };
	char *id = malloc(100001);
	size_t i;

	memset(id, 'x', 100001);
	sbuf_adds(&a, "x");	/* out already holds something */
	sbuf_adds(&b, "x");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		msg_op_begin(&j, MSG_INDEX, "ix", 2, id, sizes[i], 7);
		msg_op_doc(&j);
		sbuf_adds(&j, "{}");
		msg_end(&a, &j);
		msg_op_begin_in(&b, &in, MSG_INDEX, "ix", 2, id, sizes[i], 7);
		msg_op_doc(&b);
		sbuf_adds(&b, "{}");
		msg_end_in(&b, &in);
	}
	ok(a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0 &&
	    b.buf[b.len] == '\0', "in place: the same %zu bytes as through "
	    "a scratch buffer", b.len);
	is_int(read_stream(b.buf + 1, b.len - 1, NULL, 0, NULL),
	    (int)(sizeof(sizes) / sizeof(sizes[0])), "in place: every frame "
	    "reads back");
	free(id);
	sbuf_release(&a);
	sbuf_release(&b);
	sbuf_release(&j);
}

int
main(void)
{
	test_kinds();
	test_in_place();
	signal(SIGPIPE, SIG_IGN);
	test_frame_put();
	test_round_trip();
	test_one_byte_writes();
	test_malformed();
	test_offsets();
	test_ndjson();
	test_memory();
	return done_testing();
}
