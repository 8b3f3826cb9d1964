/*
 * ckpt - read and write the checkpoint of the stream a configuration names.
 *
 *   ckpt -c config.yaml get                    print the stored checkpoint
 *   ckpt -c config.yaml put --pos N --text T   store one (never moves back)
 *   ckpt -c config.yaml serve                  frames on stdin/stdout for
 *                                              the supervisor (framing.md §6)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt.h"
#include "config.h"
#include "frame.h"
#include "http.h"
#include "target.h"
#include "jscan.h"
#include "log.h"
#include "memtrim.h"
#include "msg.h"
#include "p2o.h"
#include "sbuf.h"
#include "stage.h"

static const char usage_text[] =
"usage: ckpt -c config.yaml get\n"
"       ckpt -c config.yaml put --pos N --text TEXT\n"
"       ckpt -c config.yaml serve\n"
"\n"
"The checkpoint of the configured stream lives in the target (on\n"
"OpenSearch, the hidden index '.pg2osync_meta') as one document\n"
"('postgres:<slot_name>',\n"
"'mysql:<server_id>'), bound to the source kind and the stream's identity\n"
"(slot and publication, or server_id). A checkpoint is a position N, the\n"
"unsigned 64-bit number the pipeline orders by, and the source's own text\n"
"for it (PostgreSQL '0/16B3748', MySQL 'binlog.000004:1234;gtid=...'),\n"
"which is what a capture resumes from.\n"
"\n"
"  get     print {\"pos\":N,\"text\":\"...\",\"updated_at\":\"...\",\n"
"          \"instance\":\"...\"} on stdout (instance: who wrote it,\n"
"          PG2OSYNC_INSTANCE_ID or the host's name); when nothing is\n"
"          stored, print nothing, say 'no checkpoint' on stderr and\n"
"          exit 0\n"
"  put     store position N with its TEXT; a checkpoint never moves back:\n"
"          if a later one is stored, it is kept (logged, exit 0)\n"
"  serve   answer get with a checkpoint frame and a load frame (the\n"
"          tables whose initial load is not finished, with their\n"
"          progress; refresh and replicas are suspended on their indices\n"
"          and restored when a load ends), put with stored once the\n"
"          target acknowledged the write, and marked (a load mark the\n"
"          writer made durable) with confirm once its progress is stored\n"
"          (framing.md section 6); a get with \"forget\":true (the\n"
"          stream's position is gone) records a sweep as owed, forgets\n"
"          every table's progress and answers no checkpoint; the load\n"
"          frame says \"sweep\":true while one is owed, swept clears it;\n"
"          ends at EOF on stdin. An unreachable or\n"
"          failing target is retried (1 s doubling to 5 s) instead of\n"
"          ending serve: acknowledgements wait for it\n"
"\n"
"options:\n"
"  -c, --config FILE   the pg2osync configuration (required)\n"
"      --pos N         the position to store (put)\n"
"      --text TEXT     the source's text for it (put)\n"
"  -h, --help          this text\n"
"  -V, --version       print the version\n"
"\n"
"environment: PG2OSYNC_INSTANCE_ID, recorded in every checkpoint written\n"
"as the writer's id (default: the host's name; the supervisor sets\n"
"<host>:<pid> for its children).\n"
"\n"
"exit codes: 0 ok; 64 usage; 65 malformed frame on stdin (serve);\n"
"66 the stored checkpoint belongs to another stream or is unreadable;\n"
"75 target unreachable or failing, get/put only (temporary); 77 the\n"
"target refused the credentials; 78 invalid configuration.\n";

/* put's two options */
struct args {
	const char *pos;	/* --pos */
	const char *text;	/* --text */
};

static int
option(void *arg, int ch, const char *val, struct p2o_err *e)
{
	struct args *a = arg;

	(void)e;
	if (ch == 'P')
		a->pos = val;
	else
		a->text = val;
	return 0;
}

static const struct option longopts[] = {
	{ "pos",	required_argument,	NULL, 'P' },
	{ "text",	required_argument,	NULL, 'T' },
	{ NULL, 0, NULL, 0 }
};

static const struct stage_spec spec = {
	.tool = "ckpt",
	.usage = usage_text,
	.longopts = longopts,
	.option = option,
	.operands = 1,		/* get, put or serve */
	/* its channel to the supervisor is stdin/stdout; no signal of its
	 * own: serve ends at EOF on stdin */
	.control = 0,
};

static void
print_value(const struct ckpt_value *v)
{
	struct sbuf out = SBUF_INIT;

	sbuf_adds(&out, "{\"pos\":");
	sbuf_add_u64(&out, v->pos);
	sbuf_adds(&out, ",\"text\":");
	sbuf_add_jstr(&out, v->text, strlen(v->text));
	if (v->updated_at[0]) {
		sbuf_adds(&out, ",\"updated_at\":");
		sbuf_add_jstr(&out, v->updated_at, strlen(v->updated_at));
	}
	if (v->instance[0]) {
		sbuf_adds(&out, ",\"instance\":");
		sbuf_add_jstr(&out, v->instance, strlen(v->instance));
	}
	sbuf_adds(&out, "}\n");
	fwrite(out.buf, 1, out.len, stdout);
	sbuf_release(&out);
	if (fflush(stdout) == EOF)
		fatal(P2O_EXIT_INTERNAL, "writing to stdout");
}

static void
reply(struct sbuf *out)
{
	if (frame_flush(P2O_FD_OUT, out) == -1)
		fatal(P2O_EXIT_TEMPFAIL, "writing to stdout");
}

static void
logged_newer(struct ckpt_store *st, uint64_t pos)
{
	log_warnx("checkpoint '%s' already holds a position after %" PRIu64
	    ": kept it", st->ident.doc_id, pos);
}

/*
 * In serve mode a target outage is waited out here rather than ending the
 * process: the supervisor would otherwise tear the whole pipeline down on
 * every failed put and, after reconnect_max of them, give up, so a target
 * down for a few minutes would stop replication for good. Waiting only
 * delays the acknowledgement, which is the safe direction.
 *
 * The pause is short (1 s doubling to RETRY_MAX_S): it is how late ckpt
 * sees a target that answers again, and a SIGTERM's drain has a minute
 * for the last checkpoint. At 30 s, a cluster back from an outage waited
 * up to half of that minute for ckpt's next attempt. An attempt is one
 * small document, and the nodes that failed rest in the HTTP client
 * (lib/nodes.c), so a failing target is asked once in a few seconds.
 */
#define RETRY_MAX_S	5

static void
backoff(struct ckpt_store *st, const char *what, int *attempt)
{
	unsigned secs = 1u << (*attempt < 3 ? *attempt : 3);

	if (secs > RETRY_MAX_S)
		secs = RETRY_MAX_S;
	if (*attempt == 0)
		log_warnx("%s: %s; retrying until the target answers", what,
		    st->err.msg);
	(*attempt)++;
	sleep(secs);
}

/* a failure a later attempt may get past */
static int
retry(const struct ckpt_store *st, int rc)
{
	return rc == -1 && st->err.code == P2O_EXIT_TEMPFAIL;
}

static void
recovered(const char *what, int attempt)
{
	if (attempt > 0)
		log_info("%s: the target answered after %d retries", what,
		    attempt);
}

/* at most this many marks in one write: a request of a few hundred
 * kilobytes at most, and the loader keeps 64 open (LOAD_MARKS_OPEN) */
#define MARKS_MAX	256

/* the marks of b stored, retried until the target answers, then each
 * one confirmed in the order it arrived */
static void
store_marks(struct ckpt_store *st, const struct config *cf,
    struct ckpt_marks *b, char **ids, struct sbuf *out)
{
	int attempt = 0, rc, k;

	while (retry(st, rc = ckpt_load_marks_store(st, cf, b)))
		backoff(st, "storing the load progress", &attempt);
	if (rc != 0)
		fatalx(st->err.code, "%s", st->err.msg);
	recovered("storing the load progress", attempt);
	for (k = 0; k < b->n; k++) {
		msg_put_confirm(out, ids[k]);
		free(ids[k]);
	}
	ckpt_load_marks_release(b);
	reply(out);
}

/*
 * The marked frame f and those that arrived with it: their progress in one
 * write, then a confirm for each. Marks arrive in the order the loader
 * wrote them, one at most of each table, so storing them together keeps
 * every table's own order; a mark stored alone (ckpt_load_mark_alone) is
 * stored after those before it. Returns 1 when f holds the next frame,
 * one of another kind read meanwhile, for the caller to serve; else 0.
 */
static int
serve_marks(struct ckpt_store *st, const struct config *cf,
    struct frame_reader *rd, struct frame *f, struct sbuf *out)
{
	struct ckpt_marks b = { 0 };
	struct msg_mark mk;
	char why[256], *ids[MARKS_MAX];
	int attempt, rc, r;

	do {
		if (msg_read_mark(f, &mk, why, sizeof(why)) == -1)
			fatalx(P2O_EXIT_DATA, "stdin: offset %" PRIu64 ": %s",
			    f->offset, why);
		if (!ckpt_load_mark_alone(st, cf, &mk)) {
			ids[b.n] = xstrdup(mk.id);
			ckpt_load_marks_add(st, cf, &mk, &b);
			msg_mark_release(&mk);
			if (b.n == MARKS_MAX)
				store_marks(st, cf, &b, ids, out);
			continue;
		}
		store_marks(st, cf, &b, ids, out);
		attempt = 0;
		while (retry(st, rc = ckpt_load_mark(st, cf, &mk)))
			backoff(st, "storing the load progress", &attempt);
		if (rc != 0)
			fatalx(st->err.code, "%s", st->err.msg);
		recovered("storing the load progress", attempt);
		msg_put_confirm(out, mk.id);
		msg_mark_release(&mk);
		reply(out);
		/* only frames already read: never wait for more here */
	} while ((r = frame_next(rd, f)) == 1 && msg_kind(f) == MSG_MARKED);
	store_marks(st, cf, &b, ids, out);
	if (r == -1)
		fatalx(P2O_EXIT_DATA, "%s", rd->err);
	return r == 1;
}

static int
serve(struct ckpt_store *st, const struct config *cf)
{
	struct frame_reader rd;
	struct frame f;
	struct sbuf out = SBUF_INIT, load = SBUF_INIT;
	struct ckpt_value val;
	struct msg_pos put;
	char why[256];
	int r = 1, rc, newer, attempt, ntables, forget, sweep, held = 0;

	frame_reader_init(&rd, P2O_FD_IN, "stdin");
	/* held: a frame serve_marks read past the marks it stored */
	while (held || (r = frame_read(&rd, &f)) == 1) {
		held = 0;
		switch (msg_kind(&f)) {
		case MSG_GET:
			attempt = 0;
			while (retry(st, rc = ckpt_store_get(st, &val)))
				backoff(st, "reading the checkpoint", &attempt);
			if (rc != 0)
				fatalx(st->err.code, "%s", st->err.msg);
			recovered("reading the checkpoint", attempt);
			/* the position is gone: a new stream, every table
			 * loaded again; the stored checkpoint stays until the
			 * new stream's first one (a higher version) replaces
			 * it, so the bindings to this stream stay checked */
			forget = msg_get_forget(&f);
			attempt = 0;
			while (forget && retry(st, rc = ckpt_load_forget(st,
			    cf)))
				backoff(st, "forgetting the load progress",
				    &attempt);
			if (forget && rc != 0)
				fatalx(st->err.code, "%s", st->err.msg);
			if (forget)
				log_warnx("the stream's position is gone: every "
				    "table is loaded again, the stream starts "
				    "anew");
			memset(&put, 0, sizeof(put));
			put.present = val.present && !forget;
			put.pos = val.pos;
			put.text = val.text;
			msg_put_checkpoint(&out, &put);
			/* and which tables still need their initial load */
			attempt = 0;
			while (retry(st, rc = ckpt_load_plan(st, cf, &put, &load,
			    &ntables)))
				backoff(st, "reading the load progress", &attempt);
			if (rc != 0)
				fatalx(st->err.code, "%s", st->err.msg);
			recovered("reading the load progress", attempt);
			attempt = 0;
			while (retry(st, rc = ckpt_sweep_pending(st, &sweep)))
				backoff(st, "reading the sweep marker", &attempt);
			if (rc != 0)
				fatalx(st->err.code, "%s", st->err.msg);
			ckpt_value_release(&val);
			msg_load_end(&out, &load, sweep);
			reply(&out);
			/* the plan is done once an incarnation: its frame
			 * names every table left to load (a megabyte at ten
			 * thousand), and reading and writing every progress
			 * document left holes in the heap; none of it is
			 * kept for the marks and puts that follow */
			sbuf_release(&out);
			sbuf_release(&load);
			mem_trim();
			break;
		case MSG_MARKED:
			held = serve_marks(st, cf, &rd, &f, &out);
			break;
		case MSG_PUT:
			if (msg_read_pos(&f, &put, why, sizeof(why)) == -1 ||
			    put.text == NULL)
				fatalx(P2O_EXIT_DATA, "stdin: offset %" PRIu64
				    ": %s", f.offset, put.text == NULL ?
				    "put without a \"text\"" : why);
			attempt = 0;
			while (retry(st, rc = ckpt_store_put(st, put.pos, put.text,
			    &newer)))
				backoff(st, "storing the checkpoint", &attempt);
			if (rc != 0)
				fatalx(st->err.code, "%s", st->err.msg);
			recovered("storing the checkpoint", attempt);
			if (newer)
				logged_newer(st, put.pos);
			log_debug("stored checkpoint '%s' at %" PRIu64,
			    st->ident.doc_id, put.pos);
			msg_put_stored(&out, put.pos);
			msg_pos_release(&put);
			reply(&out);
			break;
		case MSG_SWEPT:
			attempt = 0;
			while (retry(st, rc = ckpt_sweep_mark(st, 0)))
				backoff(st, "clearing the sweep marker",
				    &attempt);
			if (rc != 0)
				fatalx(st->err.code, "%s", st->err.msg);
			log_info("the sweep after the reload is done");
			break;
		default:
			log_warnx("stdin: offset %" PRIu64 ": ignoring a "
			    "frame of kind %.*s", f.offset, (int)f.kind.n,
			    f.kind.p);
			break;
		}
	}
	if (r == -1)
		fatalx(P2O_EXIT_DATA, "%s", rd.err);
	frame_reader_release(&rd);
	sbuf_release(&out);
	sbuf_release(&load);
	return P2O_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	struct args a = { 0 };
	struct stage stg;
	struct p2o_err e;
	struct config cf;
	struct ckpt_store st;
	struct ckpt_value val;
	const char *cmd;
	char *end;
	uint64_t pos = 0;
	int rc, newer, put;

	if (stage_begin(&stg, &spec, &a, argc, argv, &e) != STAGE_RUN)
		exit(stage_report(&e));
	if (stg.noperands != 1) {
		fputs(usage_text, stderr);
		return P2O_EXIT_USAGE;
	}
	cmd = stg.operands[0];
	if (strcmp(cmd, "get") != 0 && strcmp(cmd, "put") != 0 &&
	    strcmp(cmd, "serve") != 0)
		fatalx(P2O_EXIT_USAGE, "unknown command '%s' (get, put, serve)",
		    cmd);
	put = strcmp(cmd, "put") == 0;
	if ((a.pos != NULL || a.text != NULL) && !put)
		fatalx(P2O_EXIT_USAGE, "--pos and --text go with put");
	if (put && (a.pos == NULL || a.text == NULL || *a.text == '\0'))
		fatalx(P2O_EXIT_USAGE, "put needs --pos and a non-empty --text");
	if (put) {
		errno = 0;
		pos = strtoull(a.pos, &end, 10);
		if (errno != 0 || *end != '\0' || end == a.pos ||
		    a.pos[0] == '-' || pos > INT64_MAX)
			fatalx(P2O_EXIT_USAGE, "--pos '%s' is not an unsigned "
			    "number below 2^63", a.pos);
	}

	/* the target's secret only: the checkpoint lives there */
	if (config_load_with(stg.cfgpath, CONFIG_SECRET_TARGET, &cf, &e) == -1)
		exit(stage_report(&e));
	if (http_global_init() == -1)
		fatalx(P2O_EXIT_INTERNAL, "could not initialise libcurl");
	if ((rc = ckpt_store_init(&st, &cf)) != 0)
		fatalx(st.err.code, "%s", st.err.msg);

	if (strcmp(cmd, "serve") == 0)
		rc = serve(&st, &cf);
	else if (strcmp(cmd, "get") == 0) {
		if ((rc = ckpt_store_get(&st, &val)) != 0)
			fatalx(st.err.code, "%s", st.err.msg);
		if (val.present)
			print_value(&val);
		else
			log_info("no checkpoint '%s' stored", st.ident.doc_id);
		ckpt_value_release(&val);
	} else {
		if ((rc = ckpt_store_put(&st, pos, a.text, &newer)) != 0)
			fatalx(st.err.code, "%s", st.err.msg);
		if (newer)
			logged_newer(&st, pos);
		else
			log_info("stored checkpoint '%s' at %s (%" PRIu64 ")",
			    st.ident.doc_id, a.text, pos);
	}
	ckpt_store_release(&st);
	config_release(&cf);
	return rc;
}
