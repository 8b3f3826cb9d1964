/*
 * t-lost-position.c - the pieces of the recovery when the stream's
 * position is gone: exit 67 is permanent and named, the supervisor's
 * "get" with forget and ckpt's load frame with sweep survive the framing,
 * the capture is told --new-stream (and only the capture), and
 * source.on_lost_position defaults to reload, takes halt and refuses
 * anything else with its file:line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "jscan.h"
#include "msg.h"
#include "p2o.h"
#include "sbuf.h"
#include "tap.h"
#include "../../supervisor/supervisor.h"

/* the frame in out, parsed as a reader would hand it over */
static int
parse(struct sbuf *out, struct frame *f)
{
	f->obj.p = strchr(out->buf, ' ') + 1;
	f->obj.n = out->len - (size_t)(f->obj.p - out->buf) - 1;
	f->offset = 0;
	if (jscan_validate(f->obj.p, f->obj.n, NULL, NULL) == -1 ||
	    !jobj_get(f->obj, "k", &f->kind))
		return -1;
	return 0;
}

static void
frames(void)
{
	struct sbuf out = SBUF_INIT, j = SBUF_INIT;
	struct frame f;
	struct jspan tables;
	struct msg_pos cp = { 0 };
	char err[128];

	msg_put_get(&out, 1);
	ok(parse(&out, &f) == 0 && msg_kind(&f) == MSG_GET &&
	    msg_get_forget(&f), "get with forget");
	sbuf_reset(&out);
	msg_put_get(&out, 0);
	ok(parse(&out, &f) == 0 && msg_kind(&f) == MSG_GET &&
	    !msg_get_forget(&f), "a plain get forgets nothing");

	sbuf_reset(&out);
	msg_load_begin(&j, NULL);
	msg_load_table(&j, "public.t", (struct jspan){ NULL, 0 });
	msg_load_end(&out, &j, 1);
	ok(parse(&out, &f) == 0 && msg_load_sweep(&f) &&
	    msg_read_load(&f, &tables, &cp, err, sizeof(err)) == 0,
	    "a load frame owing a sweep still reads as a load");
	msg_pos_release(&cp);
	sbuf_reset(&out);
	msg_load_begin(&j, NULL);
	msg_load_end(&out, &j, 0);
	ok(parse(&out, &f) == 0 && !msg_load_sweep(&f), "no sweep owed");

	sbuf_reset(&out);
	msg_put_swept(&out);
	ok(parse(&out, &f) == 0 && msg_kind(&f) == MSG_SWEPT, "swept");
	sbuf_release(&out);
	sbuf_release(&j);
}

static int
has(char **argv, const char *a)
{
	for (; *argv; argv++)
		if (strcmp(*argv, a) == 0)
			return 1;
	return 0;
}

static void
argv_of_stages(void)
{
	char **a;

	a = sv_stage_argv(SV_CAPTURE, "capture-pg", "c.yaml", NULL, "0", 1, 0);
	ok(has(a, "--new-stream") && !has(a, "--start-pos"),
	    "a new stream's capture: --new-stream, no start");
	sv_argv_free(a);
	a = sv_stage_argv(SV_CAPTURE, "capture-pg", "c.yaml", "0/10", "16", 0,
	    0);
	ok(!has(a, "--new-stream") && has(a, "--start-pos"),
	    "a resuming capture: its start, no --new-stream");
	sv_argv_free(a);
	a = sv_stage_argv(SV_WRITER, "writer", "c.yaml", NULL, "0", 1, 0);
	ok(!has(a, "--new-stream"), "only the capture is told");
	sv_argv_free(a);
}

static int
load(const char *path, const char *extra, struct config *cfg,
    struct p2o_err *e)
{
	FILE *fp = fopen(path, "w");

	if (fp == NULL)
		BAIL_OUT("cannot write the config");
	fprintf(fp, "source:\n  url: postgres://u@h/db\n%s"
	    "target:\n  url: http://127.0.0.1:9200\n"
	    "sync:\n  t:\n    table: public.t\n    index: t\n", extra);
	fclose(fp);
	return config_load_with(path, CONFIG_SECRETS_ALL, cfg, e);
}

static void
config_key(void)
{
	char path[] = "/tmp/t-lost-position.XXXXXX";
	struct config cfg;
	struct p2o_err e;
	int fd = mkstemp(path);

	if (fd == -1)
		BAIL_OUT("mkstemp");
	close(fd);
	ok(load(path, "", &cfg, &e) == 0 && config_reload_on_lost(&cfg),
	    "on_lost_position defaults to reload");
	config_release(&cfg);
	ok(load(path, "  on_lost_position: halt\n", &cfg, &e) == 0 &&
	    !config_reload_on_lost(&cfg), "halt");
	config_release(&cfg);
	ok(load(path, "  on_lost_position: ignore\n", &cfg, &e) == -1 &&
	    e.code == P2O_EXIT_CONFIG && strstr(e.msg, ":3:") != NULL &&
	    strstr(e.msg, "on_lost_position") != NULL,
	    "anything else refused with its line: %s", e.msg);
	unlink(path);
}

int
main(void)
{
	ok(p2o_exit_permanent(P2O_EXIT_LOST) &&
	    strcmp(p2o_exit_name(P2O_EXIT_LOST), "lost") == 0 &&
	    P2O_EXIT_LOST != P2O_EXIT_CHECKPOINT,
	    "67 is permanent, named lost, apart from 66 (another stream)");
	frames();
	argv_of_stages();
	config_key();
	return done_testing();
}
