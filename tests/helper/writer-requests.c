/*
 * writer-requests - what the writer would send for a stream of operation
 * frames, without a network: for the writer's golden tests
 * (tests/golden/writer/run.sh).
 *
 *   writer-requests -c config.yaml < ops.frames
 *
 * It runs the writer's own modules (libwriter.a: batch, window, sink, bulk,
 * toast) on stdin read from a file, where input never pauses, and prints
 * each request as it is asked for ("> METHOD PATH" and the body), then what
 * the writer reports ("< durable POS TEXT", "< marked {...}"), and at the
 * end the documents written without their unchanged fields, per table.
 * Every request is answered at once as a healthy node would: every bulk
 * item written, every _mget document found with "(stored NAME)" as each
 * field asked for - except a document whose id begins with "gone", which
 * is not stored; a new index is created; a cascade's first search finds
 * two children ("<parent>-child-1" and "-2", routed to the parent), a
 * clear's two documents ("doc-1" and "doc-2", the second written after the
 * truncate, so its delete conflicts), and their scrolls nothing more. A malformed operation ends it with exit 65 and the
 * writer's message, after what the writer would still have written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "frame.h"
#include "log.h"
#include "p2o.h"
#include "../../writer/writer.h"

static struct writer_stats stats;

static void
print_call(const struct http_call *call)
{
	printf("> %s %s\n", call->method, call->path);
	if (call->body && call->len) {
		fwrite(call->body, 1, call->len, stdout);
		if (call->body[call->len - 1] != '\n')
			putchar('\n');
	}
}

/* a _source holding "(stored NAME)" for every field of the op's list */
static void
stored_source(struct sbuf *out, const struct op *op)
{
	struct jspan fields, name;
	struct jiter it;
	char *plain;
	int n = 0;

	fields.p = op->toast;
	fields.n = strlen(op->toast);
	sbuf_addc(out, '{');
	jiter_init(&it, fields);
	while (jiter_elem(&it, &name) == 1) {
		plain = jstr_dup(name);
		sbuf_addf(out, "%s%.*s:\"(stored %s)\"", n++ ? "," : "",
		    (int)name.n, name.p, plain);
		free(plain);
	}
	sbuf_addc(out, '}');
}

/* the lines of a body: a bulk request's entries when each is one line */
static int
lines(const struct http_call *call)
{
	size_t i;
	int n = 0;

	for (i = 0; i < call->len; i++)
		n += call->body[i] == '\n';
	return n;
}

/* the answer of a healthy node to what flush fl asked, told apart by
 * path as a node does */
static void
answer(const struct flush *fl, const struct http_call *call,
    struct sbuf *resp, long *status)
{
	const struct target_proc *p = &fl->proc;
	const struct op *op;
	int i;

	*status = 200;
	sbuf_reset(resp);
	if (fl->phase == PH_BARRIER && strncmp(call->path, "/_bulk", 6) == 0) {
		/* a barrier's page of deletes, one line each; the second
		 * document of a clear's page is newer than the truncate */
		sbuf_adds(resp, "{\"errors\":false,\"items\":[");
		for (i = 0; i < lines(call); i++)
			sbuf_addf(resp, "%s{\"delete\":{\"status\":%d}}",
			    i ? "," : "", p->kind == PROC_CLEAR && i == 1 ?
			    409 : 200);
		sbuf_adds(resp, "]}");
	} else if (strstr(call->path, "/_search?scroll=")) {
		sbuf_adds(resp, "{\"_scroll_id\":\"s1\",\"hits\":{\"hits\":[");
		for (i = 1; i <= 2; i++) {
			sbuf_addf(resp, "%s{\"_index\":", i > 1 ? "," : "");
			if (p->kind == PROC_CLEAR) {
				/* in an index the name (or glob) claims */
				sbuf_addc(resp, '"');
				sbuf_add(resp, p->index, strcspn(p->index, "*"));
				sbuf_addf(resp, "%s\",\"_id\":\"doc-%d\"}",
				    strchr(p->index, '*') ? "2024" : "", i);
				continue;
			}
			sbuf_add_jstr(resp, p->index, strlen(p->index));
			sbuf_addf(resp, ",\"_id\":\"%s-child-%d\",\"_routing\":",
			    p->parent, i);
			sbuf_add_jstr(resp, p->parent, strlen(p->parent));
			sbuf_addc(resp, '}');
		}
		sbuf_adds(resp, "]}}");
	} else if (strcmp(call->method, "POST") == 0 &&
	    strcmp(call->path, "/_search/scroll") == 0)
		sbuf_adds(resp, "{\"_scroll_id\":\"s1\",\"hits\":{\"hits\":[]}}");
	else if (strcmp(call->method, "PUT") == 0 ||
	    strcmp(call->method, "DELETE") == 0)
		sbuf_adds(resp, "{\"acknowledged\":true}");
	else if (strncmp(call->path, "/_bulk", 6) == 0) {
		sbuf_adds(resp, "{\"errors\":false,\"items\":[");
		for (i = 0; i < fl->nsent; i++) {
			op = &fl->b.ops[fl->arr.sent[i]];
			sbuf_addf(resp, "%s{\"%s\":{\"status\":%d}}",
			    i ? "," : "", op->kind == OP_DELETE ? "delete" :
			    "index", op->kind == OP_DELETE ? 200 : 201);
		}
		sbuf_adds(resp, "]}");
	} else if (strcmp(call->path, "/_mget") == 0) {
		sbuf_adds(resp, "{\"docs\":[");
		for (i = 0; i < fl->nasked; i++) {
			op = &fl->b.ops[fl->arr.asked[i]];
			sbuf_adds(resp, i ? "," : "");
			if (strncmp(op->toast_id ? op->toast_id :
			    fl->b.arena.buf + op->id.off, "\"gone", 5) == 0) {
				sbuf_adds(resp, "{\"found\":false}");
				continue;
			}
			sbuf_adds(resp, "{\"found\":true,\"_source\":");
			stored_source(resp, op);
			sbuf_addc(resp, '}');
		}
		sbuf_adds(resp, "]}");
	} else
		sbuf_adds(resp, "{\"_shards\":{\"failed\":0}}");
}

/* cut, send, answer and report until nothing moves */
static void
pump(struct window *w, struct batch *b, enum cut_reason why)
{
	struct http_call call;
	struct msg_pos d;
	struct jspan mark;
	struct sbuf *resp, frame = SBUF_INIT;
	long status;
	int n, slot, moved;

	do {
		moved = 0;
		while ((n = batch_cut(b, why)) > 0 &&
		    window_may_open(w, b, n)) {
			window_open(w, b, n);
			moved = 1;
		}
		while (window_next(w, 0, 1, &slot, &call, &resp)) {
			print_call(&call);
			answer(&w->fl[slot], &call, resp, &status);
			if (window_answer(w, slot, NULL, status, 0) ==
			    STEP_WAIT)
				fatalx(P2O_EXIT_INTERNAL, "a request "
				    "failed: %s", w->sink->err.msg);
			moved = 1;
		}
		while (window_report(w, &d, &mark)) {
			if (d.present)
				printf("< durable %llu %s\n",
				    (unsigned long long)d.pos,
				    d.text ? d.text : "-");
			if (mark.p) {
				sbuf_reset(&frame);
				msg_put_marked_from(&frame, mark);
				printf("< marked %s",
				    strchr(frame.buf, ' ') + 1);
			}
			window_retire(w);
			moved = 1;
		}
	} while (moved);
	sbuf_release(&frame);
}

int
main(int argc, char **argv)
{
	struct config cfg;
	struct frame_reader in;
	struct frame f;
	struct batch b;
	struct sink sink;
	struct window w;
	struct p2o_err perr;
	int r, i, bad = 0;

	log_init("writer");
	if (argc != 3 || strcmp(argv[1], "-c") != 0) {
		fprintf(stderr, "usage: writer-requests -c config.yaml\n");
		return P2O_EXIT_USAGE;
	}
	/* what the writer asks for: the target's secret alone */
	if (config_load_with(argv[2], CONFIG_SECRET_TARGET, &cfg, &perr) == -1)
		fatalx(perr.code, "%s", perr.msg);
	frame_reader_init(&in, P2O_FD_IN, "stdin");
	batch_init(&b, cfg.target_module, cfg.batch_size, cfg.batch_max_bytes);
	if (sink_init(&sink, cfg.target_module, "golden", &stats, &cfg,
	    &perr) == -1)
		fatalx(perr.code, "%s", perr.msg);
	window_init(&w, cfg.write_concurrency, &sink);

	/* the writer reads while the batch has room and holds no barrier */
	while ((r = frame_read(&in, &f)) == 1) {
		if (batch_add(&b, &f, &perr) == -1) {
			log_error("%s: offset %llu: %s", in.name,
			    (unsigned long long)f.offset, perr.msg);
			bad = 1;
			break;
		}
		if (batch_full(&b) || b.first_barrier >= 0)
			pump(&w, &b, CUT_NONE);
	}
	if (r == -1) {
		log_error("%s", in.err);
		bad = 1;
	}
	pump(&w, &b, bad ? CUT_STOP : CUT_EOF);
	for (i = 0; i < stats.toast_missing.n; i++)
		printf("toast_missing %s %llu\n", stats.toast_missing.e[i].key,
		    (unsigned long long)stats.toast_missing.e[i].v);
	window_release(&w);
	batch_release(&b);
	sink_release(&sink);
	frame_reader_release(&in);
	config_release(&cfg);
	kcount_release(&stats.toast_missing);
	return bad ? P2O_EXIT_DATA : P2O_EXIT_OK;
}
