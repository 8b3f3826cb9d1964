/*
 * t-supervisor-tap - the --tap copying process: frame ends found from the
 * length prefixes alone (whole, split at every byte), the copy passing
 * every byte downstream, the file rotated only where a frame ends, and a
 * file that cannot be written never stopping the copy downstream.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "msg.h"
#include "sbuf.h"
#include "xio.h"
#include "../../supervisor/supervisor.h"
#include "tap.h"

static char dir[64];

static char *
slurp(const char *path, size_t *len)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd == -1 ? -1 : read_in_full(fd, buf, sizeof(buf) - 1);

	if (fd != -1)
		close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static int
isdigit_first(const char *s)
{
	return s[0] >= '1' && s[0] <= '9';
}

static void
test_framepos(void)
{
	const char *s = "3 {}\n10 {\"k\":\"a\"}\n3 {}\n";
	struct sv_framepos fp;
	size_t i, n = strlen(s);
	long r, last = -1;
	int ends = 0;

	memset(&fp, 0, sizeof(fp));
	is_int(sv_framepos_next(&fp, s, n, 0), 5, "the first frame's end");
	is_int(sv_framepos_next(&fp, s + 5, n - 5, 0), 13, "the second's");
	is_int(sv_framepos_next(&fp, s + 18, n - 18, 6), -1,
	    "none at or past 6 in the last 5 bytes: all consumed");
	memset(&fp, 0, sizeof(fp));
	is_int(sv_framepos_next(&fp, s, n, 6), 18,
	    "the first end at or past 6 is the second frame's");
	memset(&fp, 0, sizeof(fp));
	is_int(sv_framepos_next(&fp, s, 6, 0), 5, "split: the first end");
	is_int(sv_framepos_next(&fp, s + 5, 10, 0), -1, "none inside a body");
	is_int(sv_framepos_next(&fp, s + 15, 4, 0), 3,
	    "the body's end in the next piece");
	memset(&fp, 0, sizeof(fp));
	for (i = 0; i < n; i++)
		if ((r = sv_framepos_next(&fp, s + i, 1, 0)) == 1) {
			ends++;
			last = (long)i;
		}
	is_int(ends, 3, "byte by byte: three ends");
	is_int(last, (long)n - 1, "the last at the last byte");
	memset(&fp, 0, sizeof(fp));
	is_int(sv_framepos_next(&fp, "x {}\n", 5, 0), -1, "not frames");
	ok(fp.bad, "marked bad");
	memset(&fp, 0, sizeof(fp));
	sv_framepos_next(&fp, "0 \n", 3, 0);
	ok(fp.bad, "a zero length is bad");
	memset(&fp, 0, sizeof(fp));
	sv_framepos_next(&fp, "12345678901 ", 12, 0);
	ok(fp.bad, "eleven digits are bad");
}

/* run the tap over input in a child, collecting what came out */
static int
run_tap(struct sv_tap *t, const char *input, size_t len, struct sbuf *out)
{
	int in[2], op[2], status;
	char buf[4096];
	pid_t pid;
	ssize_t n;

	if (pipe(in) == -1 || pipe(op) == -1)
		BAIL_OUT("pipe");
	if ((pid = fork()) == 0) {
		close(in[1]);
		close(op[0]);
		dup2(in[0], 0);
		dup2(op[1], 1);
		_exit(sv_tap_run(t));
	}
	close(in[0]);
	close(op[1]);
	/* small writes, so the tap sees frames split across reads */
	for (size_t off = 0; off < len; off += 700)
		write_in_full(in[1], input + off, len - off < 700 ? len - off :
		    700);
	close(in[1]);
	while ((n = read(op[0], buf, sizeof(buf))) > 0)
		sbuf_add(out, buf, (size_t)n);
	close(op[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
test_copy_and_rotate(void)
{
	struct sbuf in = SBUF_INIT, out = SBUF_INIT, both = SBUF_INIT;
	struct sv_tap t = { "events", NULL, 2000 };
	char path[128], old[140], *a, *b;
	size_t alen = 0, blen = 0;
	int i;

	for (i = 0; i < 200; i++) {
		char json[64];
		int n = snprintf(json, sizeof(json), "{\"k\":\"pos\",\"pos\":%d}",
		    i);
		frame_put(&in, json, (size_t)n);
	}
	snprintf(path, sizeof(path), "%s/events.frames", dir);
	snprintf(old, sizeof(old), "%s.1", path);
	t.path = path;
	is_int(run_tap(&t, in.buf, in.len, &out), 0, "the tap exits 0 at EOF");
	ok(out.len == in.len && memcmp(out.buf, in.buf, in.len) == 0,
	    "every byte went downstream, in order");
	b = slurp(path, &blen);
	ok(b != NULL && blen < 2000, "the live file holds what came after "
	    "the last rotation, under the limit (%zu bytes)", blen);
	if (b)
		sbuf_add(&both, b, blen);	/* slurp's buffer is reused */
	a = slurp(old, &alen);
	ok(a != NULL && alen >= 2000 && alen < 2000 + 32, "the rotated file is "
	    "cut at the first frame end past the limit (%zu bytes)", alen);
	ok(a != NULL && alen > 0 && a[alen - 1] == '\n' && isdigit_first(a),
	    "and ends and starts on a frame boundary");
	ok(both.len == 0 || (both.buf[both.len - 1] == '\n' &&
	    isdigit_first(both.buf)), "so does the live file");
	/* the two files are the tail of the stream: a replay of them is */
	if (a) {
		struct sbuf cat = SBUF_INIT;

		sbuf_add(&cat, a, alen);
		sbuf_add(&cat, both.buf, both.len);
		ok(cat.len <= in.len && memcmp(in.buf + in.len - cat.len,
		    cat.buf, cat.len) == 0, "FILE.1 then FILE is the end of "
		    "the stream, byte for byte");
		sbuf_release(&cat);
	}
	sbuf_release(&in);
	sbuf_release(&out);
	sbuf_release(&both);
}

static void
test_file_trouble(void)
{
	struct sbuf in = SBUF_INIT, out = SBUF_INIT;
	struct sv_tap t = { "ops", "/nonexistent/dir/ops.frames",
	    SV_TAP_MAX_DEFAULT };
	char path[128], *b;
	size_t len = 0;

	sbuf_adds(&in, "3 {}\n3 {}\n");
	is_int(run_tap(&t, in.buf, in.len, &out), 0,
	    "an unopenable file: still exits 0");
	ok(out.len == in.len && memcmp(out.buf, in.buf, in.len) == 0,
	    "and still copied everything downstream");
	sbuf_reset(&out);
	sbuf_reset(&in);
	sbuf_adds(&in, "3 {}\nnot a frame at all\n");
	snprintf(path, sizeof(path), "%s/bad.frames", dir);
	t.path = path;
	is_int(run_tap(&t, in.buf, in.len, &out), 0, "input that is not frames");
	ok(out.len == in.len, "passed on as it came: the stage after decides");
	b = slurp(path, &len);
	ok(b != NULL && len == 5 && memcmp(b, "3 {}\n", 5) == 0,
	    "the file holds the frame before and stops where the frames "
	    "stopped (%zu bytes)", len);
	sbuf_release(&in);
	sbuf_release(&out);
}

/*
 * The file falls behind (a FIFO nobody opens until the stream is over):
 * the copy downstream is whole and never waits, the file holds the frames
 * that fit in the queue and then a gap frame saying how many frames and
 * bytes are missing.
 */
static void
test_drops(void)
{
	struct sbuf in = SBUF_INIT, out = SBUF_INIT, file = SBUF_INIT;
	struct sv_tap t = { "events", NULL, SV_TAP_MAX_DEFAULT };
	struct frame_reader rd;
	struct frame f;
	struct msg_gap g;
	char path[128], pad[1024], buf[65536], why[128];
	int ip[2], op[2], fd, status, total = 0, kept = 0, gaps = 0, bad = 0;
	size_t kept_bytes = 0;
	pid_t tap, feeder;
	ssize_t n;

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	while (in.len < 3 * SV_TAP_QUEUE + (2u << 20)) {
		char json[sizeof(pad) + 64];
		int len = snprintf(json, sizeof(json), "{\"k\":\"pos\",\"pos\":%d,"
		    "\"pad\":\"%s\"}", total++, pad);

		frame_put(&in, json, (size_t)len);
	}
	snprintf(path, sizeof(path), "%s/behind.frames", dir);
	if (mkfifo(path, 0600) == -1 || pipe(ip) == -1 || pipe(op) == -1)
		BAIL_OUT("mkfifo/pipe");
	t.path = path;
	if ((tap = fork()) == 0) {
		/* as the supervisor starts it: nothing open but its fds */
		dup2(ip[0], 0);
		dup2(op[1], 1);
		close_range(3, ~0U, 0);
		_exit(sv_tap_run(&t));
	}
	close(ip[0]);
	close(op[1]);
	if ((feeder = fork()) == 0) {
		close(op[0]);
		_exit(write_in_full(ip[1], in.buf, in.len) == 0 ? 0 : 1);
	}
	close(ip[1]);
	while ((n = read(op[0], buf, sizeof(buf))) > 0)
		sbuf_add(&out, buf, (size_t)n);
	close(op[0]);
	ok(out.len == in.len && memcmp(out.buf, in.buf, in.len) == 0,
	    "the file stuck: every byte still went downstream, to the end of "
	    "the stream (%zu bytes)", out.len);
	/* only now does anyone read the file */
	if ((fd = open(path, O_RDONLY)) == -1)
		BAIL_OUT("open fifo");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sbuf_add(&file, buf, (size_t)n);
	close(fd);
	waitpid(feeder, NULL, 0);
	waitpid(tap, &status, 0);
	is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	    "the tap exits 0");

	memset(&g, 0, sizeof(g));
	if (pipe(ip) == -1)
		BAIL_OUT("pipe");
	if ((feeder = fork()) == 0) {
		close(ip[0]);
		_exit(write_in_full(ip[1], file.buf, file.len) == 0 ? 0 : 1);
	}
	close(ip[1]);
	frame_reader_init(&rd, ip[0], "file");
	while (frame_read(&rd, &f) == 1) {
		if (msg_kind(&f) == MSG_GAP) {
			gaps++;
			if (msg_read_gap(&f, &g, why, sizeof(why)) == -1)
				bad++;
			continue;
		}
		/* frames after a gap would be frames the file caught up on:
		 * none here, since nothing read it until the end */
		if (gaps > 0)
			bad++;
		kept++;
		kept_bytes = f.offset + (size_t)snprintf(why, sizeof(why),
		    "%zu ", f.obj.n + 1) + f.obj.n + 1;
	}
	frame_reader_release(&rd);
	close(ip[0]);
	waitpid(feeder, NULL, 0);
	ok(kept > 0 && kept < total, "the file holds the frames that fit (%d "
	    "of %d)", kept, total);
	ok(file.len >= kept_bytes && memcmp(file.buf, in.buf, kept_bytes) == 0,
	    "a prefix of the stream, byte for byte (%zu bytes)", kept_bytes);
	is_int(gaps, 1, "then one gap frame, at its end");
	ok(bad == 0 && g.frames == (uint64_t)(total - kept) &&
	    g.bytes == in.len - kept_bytes, "saying how much is missing: %llu "
	    "frames, %llu bytes", (unsigned long long)g.frames,
	    (unsigned long long)g.bytes);
	sbuf_release(&in);
	sbuf_release(&out);
	sbuf_release(&file);
}

int
main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/t-supervisor-tap.XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL_OUT("mkdtemp");
	test_framepos();
	test_copy_and_rotate();
	test_file_trouble();
	test_drops();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
