/*
 * t-supervisor-logpipe - a child's stderr forwarded whole lines at a time:
 * never split, never merged, prefixed when the line lacks its stage's name,
 * cut at the cap, the last unterminated line kept at EOF. With log.format
 * json a stage's own JSON line passes as it is and any other line (plain,
 * foreign, cut) becomes one JSON object with time, stage, level, message.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xio.h"
#include "../../supervisor/supervisor.h"
#include "tap.h"

static char outbuf[65536];

/* everything forwarded so far */
static const char *
collect(int fd)
{
	static size_t got;
	ssize_t n;

	while ((n = read(fd, outbuf + got, sizeof(outbuf) - 1 - got)) > 0)
		got += (size_t)n;
	outbuf[got] = '\0';
	return outbuf;
}

/* log.format json: every line that leaves is an object */
static void
json_lines(void)
{
	static const char own[] = "{\"time\":\"2026-01-31T12:00:00.123Z\","
	    "\"stage\":\"shaper\",\"level\":\"info\",\"message\":\"hi\"}";
	struct sv_logpipe lp;
	char buf[8192];
	int in[2], out[2];
	ssize_t n;

	if (pipe(in) == -1 || pipe(out) == -1)
		return;
	set_nonblock(in[0], 1);
	set_nonblock(out[0], 1);
	log_set_format(LOG_FMT_JSON);
	sv_logpipe_init(&lp, in[0], out[1], "shaper");
	write(in[1], own, sizeof(own) - 1);
	write(in[1], "\nshaper: error: plain \"quoted\"\n", 31);
	write(in[1], "*** stack smashing\tdetected ***\n", 33);
	sv_logpipe_read(&lp);
	n = read(out[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	ok(strncmp(buf, own, sizeof(own) - 1) == 0 &&
	    buf[sizeof(own) - 1] == '\n', "a stage's own JSON line passes as it is");
	ok(strstr(buf, "\"stage\":\"shaper\",\"level\":\"error\","
	    "\"message\":\"plain \\\"quoted\\\"\"}\n") != NULL,
	    "a plain line of the stage keeps its level, quotes escaped");
	ok(strstr(buf, "\"stage\":\"shaper\",\"level\":\"warn\","
	    "\"message\":\"*** stack smashing detected ***\"}\n") != NULL,
	    "a foreign line becomes an object at warn, a tab a space");
	ok(strstr(buf, "{\"time\":\"20") != NULL && strstr(buf + 10,
	    "Z\",\"stage\"") != NULL, "with the time, UTC");
	log_set_format(LOG_FMT_PLAIN);
	close(in[1]);
	sv_logpipe_read(&lp);
	close(out[0]);
	close(out[1]);
}

int
main(void)
{
	struct sv_logpipe lp;
	int in[2], out[2], r;
	char big[3 * SV_LOGLINE_MAX];
	const char *s;

	if (pipe(in) == -1 || pipe(out) == -1)
		return 1;
	set_nonblock(in[0], 1);
	set_nonblock(out[0], 1);
	sv_logpipe_init(&lp, in[0], out[1], "writer");

	write(in[1], "writer: info: hel", 17);
	is_int(sv_logpipe_read(&lp), 1, "open, drained");
	is_str(collect(out[0]), "", "half a line is held back");
	write(in[1], "lo\nwriter: warn: two\nwri", 24);
	sv_logpipe_read(&lp);
	is_str(collect(out[0]), "writer: info: hello\nwriter: warn: two\n",
	    "completed lines go out, each whole");
	write(in[1], "ter: x\n", 7);
	sv_logpipe_read(&lp);
	ok(strstr(collect(out[0]), "\nwriter: x\n") != NULL,
	    "a name split across reads is still recognised");
	write(in[1], "Segmentation fault\nwriter:no space\n", 35);
	sv_logpipe_read(&lp);
	s = collect(out[0]);
	ok(strstr(s, "\nwriter: Segmentation fault\n") != NULL,
	    "a foreign line gets the stage's name");
	ok(strstr(s, "\nwriter: writer:no space\n") != NULL,
	    "'writer:' without a space is not the prefix");

	memset(big, 'a', sizeof(big));
	memcpy(big, "writer: ", 8);
	big[sizeof(big) - 1] = '\n';
	write(in[1], big, sizeof(big));
	write(in[1], "writer: after\n", 14);
	while ((r = sv_logpipe_read(&lp)) == 2)
		;
	s = collect(out[0]);
	ok(strstr(s, "a [line cut]\nwriter: after\n") != NULL,
	    "an over-long line is cut, marked, its rest dropped");
	{
		const char *cut = strstr(s, "writer: aaa");
		const char *nl = strchr(cut, '\n');

		is_int(nl - cut, SV_LOGLINE_MAX + 11,
		    "the cut line is the cap plus the mark");
	}

	write(in[1], "writer: last words", 18);
	close(in[1]);
	is_int(sv_logpipe_read(&lp), 0, "EOF");
	ok(strstr(collect(out[0]), "\nwriter: last words\n") != NULL,
	    "the unterminated last line is forwarded with a newline");
	is_int(lp.fd, -1, "and the pipe closed");
	is_int(sv_logpipe_read(&lp), 0, "reading again stays at EOF");
	json_lines();
	return done_testing();
}
