/*
 * fuzz-window.c - libFuzzer target for the writer's scheduling: the input
 * is a script of reading operations into the batch, cutting, sending the
 * requests the window asks for, answering them in any order (written,
 * conflict, retry, refused, a whole 503, a transport error, garbage, _mget
 * documents found or not), letting time pass, and reporting. Whatever the
 * order, a reported position must be larger than the one before and every
 * operation before it must have been answered as written; the window never
 * has more requests open than write_concurrency; and once every answer is a
 * success, everything cut is written and reported (nothing deadlocks).
 *
 * Operations carry their number as their version, so an answer can say
 * which one it wrote; their documents are among eight ids, so completions
 * find earlier writes of the same document in open flushes. A write a
 * later write of its document made moot (in its own flush, or in a later
 * flush that was written first) counts as written once that later one is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "../../writer/writer.h"

#define MAXOPS	512

static void
check(int cond)
{
	if (!cond)
		abort();
}

struct fz {
	const uint8_t *p, *end;
	struct window w;
	struct batch b;
	struct sink sink;
	struct writer_stats st;
	int	 nops;			/* operations added so far */
	unsigned char written[MAXOPS];	/* by version - 1 */
	unsigned char docof[MAXOPS];	/* by version - 1: its id, 0-7 */
	int	 newest[8];		/* by id: the newest version written */
	int	 need[MAXOPS];		/* per boundary: ops before it */
	int	 nbound;
	uint64_t last;			/* last position reported */
	int	 any;
	long long now;
	struct http_call call[8];	/* what each slot asked */
};

static int
byte(struct fz *z)
{
	return z->p < z->end ? *z->p++ : 0;
}

static void
add(struct fz *z, const char *json)
{
	struct frame f;
	struct p2o_err err;

	memset(&f, 0, sizeof(f));
	f.obj.p = json;
	f.obj.n = strlen(json);
	check(jobj_get(f.obj, "k", &f.kind));
	check(batch_add(&z->b, &f, &err) == 0);
}

static void
read_op(struct fz *z)
{
	char buf[256];
	int c = byte(z), id = byte(z) % 8, v = z->nops + 1;

	if (z->nops >= MAXOPS - 1 || z->nbound >= MAXOPS - 1)
		return;
	switch (c % 8) {
	case 0:
	case 1:
		snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
		    "\"id\":\"%d\",\"v\":%d,\"doc\":{\"id\":%d,\"body\":%d}}",
		    id, v, id, v);
		break;
	case 2:
		snprintf(buf, sizeof(buf), "{\"k\":\"index\",\"index\":\"t\","
		    "\"id\":\"%d\",\"v\":%d,\"toast\":[\"body\"],"
		    "\"rel\":\"public.t\",\"doc\":{\"id\":%d}}", id, v, id);
		break;
	case 3:
		snprintf(buf, sizeof(buf), "{\"k\":\"delete\",\"index\":\"t\","
		    "\"id\":\"%d\",\"v\":%d}", id, v);
		break;
	case 4:
	case 5:
		/* the number of a boundary is its position */
		z->need[z->nbound] = z->nops;
		snprintf(buf, sizeof(buf), "{\"k\":\"%s\",\"pos\":%d}",
		    c % 8 == 4 ? "commit" : "pos", z->nbound++);
		add(z, buf);
		return;
	case 6:
		if (c % 16 < 8)
			snprintf(buf, sizeof(buf), "{\"k\":\"clear\","
			    "\"index\":\"t\",\"v\":%d}", v);
		else
			snprintf(buf, sizeof(buf), "{\"k\":\"cascade\","
			    "\"index\":\"t\",\"id\":\"p%d\",\"v\":%d,"
			    "\"children\":[\"c\"]}", v % 3, v);
		add(z, buf);
		return;
	default:
		z->need[z->nbound] = z->nops;
		snprintf(buf, sizeof(buf), "{\"k\":\"mark\",\"id\":\"%d\"}",
		    z->nbound++);
		add(z, buf);
		return;
	}
	add(z, buf);
	z->docof[z->nops] = (unsigned char)id;
	z->nops++;
}

/* version - 1 = i written, or a newer write of its document: a flush sent
 * again leaves out a write a later flush's newer one of the document has
 * put in the node (window.c, drop_superseded) */
static int
done(const struct fz *z, int i)
{
	return z->written[i] || z->newest[z->docof[i]] > i;
}

/* version ver of a document written */
static void
wrote(struct fz *z, int ver)
{
	z->written[ver - 1] = 1;
	if (z->newest[z->docof[ver - 1]] < ver)
		z->newest[z->docof[ver - 1]] = ver;
}

static int
version_of(const struct batch *b, const struct op *op)
{
	const char *v = strstr(b->arena.buf + op->head.off, "\"version\":");

	check(v != NULL);
	return atoi(v + 10);
}

/* a write whose document a later write of its flush put in the node is
 * done with: the node holds a state at least as new */
static void
superseded(struct fz *z, const struct flush *fl)
{
	const struct batch *b = &fl->b;
	const struct op *x, *y;
	int i, j, last;

	for (i = 0; i < b->nops; i++) {
		x = &b->ops[i];
		if (x->kind != OP_INDEX && x->kind != OP_DELETE)
			continue;
		last = -1;
		for (j = i + 1; j < b->nops; j++) {
			y = &b->ops[j];
			if ((y->kind == OP_INDEX || y->kind == OP_DELETE) &&
			    y->id.len == x->id.len &&
			    memcmp(b->arena.buf + y->id.off,
			    b->arena.buf + x->id.off, x->id.len) == 0)
				last = j;
		}
		if (last >= 0 && z->written[version_of(b, &b->ops[last]) - 1])
			wrote(z, version_of(b, x));
	}
}

/* a node's answer to a barrier's request, told apart by path: a clear's
 * refresh and delete, a cascade's search (none, one or two children),
 * its page of deletes (each deleted, or one failing), its scroll */
static void
barrier_answer(const struct http_call *call, struct sbuf *resp, int how)
{
	size_t i;
	int n = 0;

	if (strstr(call->path, "_search?scroll=")) {
		sbuf_adds(resp, "{\"_scroll_id\":\"s\",\"hits\":{\"hits\":[");
		for (n = 0; n < how % 3; n++)
			sbuf_addf(resp, "%s{\"_index\":\"t\",\"_id\":\"c%d\"}",
			    n ? "," : "", n);
		sbuf_adds(resp, "]}}");
	} else if (strcmp(call->path, "/_search/scroll") == 0)
		sbuf_adds(resp, strcmp(call->method, "DELETE") == 0 ? "{}" :
		    "{\"_scroll_id\":\"s\",\"hits\":{\"hits\":[]}}");
	else if (strncmp(call->path, "/_bulk", 6) == 0) {
		sbuf_adds(resp, "{\"errors\":true,\"items\":[");
		for (i = 0; i < call->len; i++) {
			if (call->body[i] != '\n')
				continue;
			/* the first of a page fails now and then */
			sbuf_addf(resp, "%s{\"delete\":{\"status\":%d}}",
			    n ? "," : "", how % 5 == 4 && n == 0 ? 503 : 200);
			n++;
		}
		sbuf_adds(resp, "]}");
	} else
		sbuf_adds(resp, "{\"failures\":[],\"timed_out\":false}");
}

static void
answer(struct fz *z, int slot, int how)
{
	struct flush *fl = &z->w.fl[slot];
	const struct op *op;
	enum step_result r;
	long status = 200;
	int i, st, ver;

	check(fl->inflight);
	sbuf_reset(&fl->resp);
	if (how % 16 == 15) {
		r = window_answer(&z->w, slot, "connection reset", 0, z->now);
		check(r == STEP_WAIT);
		return;
	}
	if (how % 16 == 14) {
		sbuf_adds(&fl->resp, "{\"error\":{\"type\":\"x\",\"reason\":"
		    "\"y\"}}");
		status = 503;
	} else if (how % 16 == 13)
		sbuf_adds(&fl->resp, "{\"items\":[");
	else if (fl->phase == PH_TOAST) {
		sbuf_adds(&fl->resp, "{\"docs\":[");
		for (i = 0; i < fl->nasked; i++) {
			sbuf_adds(&fl->resp, i ? "," : "");
			sbuf_adds(&fl->resp, (how + i) % 3 == 0 ?
			    "{\"found\":false}" :
			    "{\"found\":true,\"_source\":{\"body\":0}}");
		}
		sbuf_adds(&fl->resp, "]}");
	} else if (fl->phase == PH_BULK) {
		sbuf_adds(&fl->resp, "{\"items\":[");
		for (i = 0; i < fl->nsent; i++) {
			op = &fl->b.ops[fl->arr.sent[i]];
			st = how % 16 < 8 ? 201 : (int[]){ 201, 409, 429, 400,
			    404 }[(how / 16 + i) % 5];
			sbuf_addf(&fl->resp, "%s{\"%s\":{\"status\":%d}}",
			    i ? "," : "", op->kind == OP_DELETE ? "delete" :
			    "index", st);
			ver = version_of(&fl->b, op);
			check(ver >= 1 && ver <= MAXOPS);
			if ((st >= 200 && st < 300) || st == 409 ||
			    (st == 404 && op->kind == OP_DELETE))
				wrote(z, ver);
		}
		sbuf_adds(&fl->resp, "]}");
		superseded(z, fl);
	} else if (fl->phase == PH_BARRIER)
		barrier_answer(&z->call[slot], &fl->resp, how);
	else
		sbuf_adds(&fl->resp, "{\"failures\":[],\"timed_out\":false}");
	r = window_answer(&z->w, slot, NULL, status, z->now);
	check(r != STEP_END);
}

static void
report(struct fz *z)
{
	struct msg_pos d;
	struct jspan mark;
	int i, k;

	while (window_report(&z->w, &d, &mark)) {
		k = -1;
		if (d.present) {
			check(!z->any || d.pos > z->last);
			z->last = d.pos;
			z->any = 1;
			k = (int)d.pos;
		}
		if (mark.p)
			k = atoi(strstr(mark.p, "\"id\":\"") + 6);
		if (k >= 0) {
			check(k < z->nbound);
			for (i = 0; i < z->need[k]; i++)
				check(done(z, i));
		}
		window_retire(&z->w);
	}
}

/* send what is due; returns the slots now open as a bit set */
static unsigned
send(struct fz *z)
{
	struct http_call call;
	struct sbuf *resp;
	unsigned open = 0;
	int slot, i, n = 0;

	while (window_next(&z->w, z->now, 1, &slot, &call, &resp)) {
		check(slot >= 0 && slot < z->w.cap);
		z->call[slot] = call;
	}
	for (i = 0; i < z->w.cap; i++)
		if (z->w.fl[i].inflight) {
			open |= 1u << i;
			n++;
		}
	check(n == window_inflight(&z->w) && n <= z->w.open_max);
	return open;
}

static void
cut(struct fz *z, enum cut_reason why)
{
	int n;

	while ((n = batch_cut(&z->b, why)) > 0 &&
	    window_may_open(&z->w, &z->b, n))
		window_open(&z->w, &z->b, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz z;
	struct p2o_err err;
	unsigned open;
	int c, i, rounds;

	if (size < 2)
		return 0;
	/* the sink's lines about each failure would be most of the time */
	log_set_level(LOG_LVL_ERROR);
	memset(&z, 0, sizeof(z));
	z.p = data + 2;
	z.end = data + size;
	z.now = 1000;
	check(sink_init(&z.sink, target_module_find(NULL), "fuzz", &z.st,
	    NULL, &err) == 0);
	window_init(&z.w, 1 + data[0] % 4, &z.sink);
	batch_init(&z.b, z.sink.tm, 1 + data[1] % 5, 1 << 16);

	while (z.p < z.end) {
		c = byte(&z);
		switch (c % 6) {
		case 0:
		case 1:
			/* the writer's reading rule */
			if (!batch_full(&z.b) && z.b.first_barrier < 0)
				read_op(&z);
			break;
		case 2:
			cut(&z, (enum cut_reason)(c / 6 % 4));
			break;
		case 3:
			open = send(&z);
			if (open) {
				for (i = byte(&z) % z.w.cap;
				    !(open & (1u << i)); i = (i + 1) % z.w.cap)
					;
				answer(&z, i, byte(&z));
			}
			break;
		case 4:
			z.now += 100 + (c / 6) * 1000;
			break;
		default:
			report(&z);
			break;
		}
	}

	/* from here every answer is a success: all must drain */
	cut(&z, CUT_EOF);
	for (rounds = 0; rounds < 10000 && !window_empty(&z.w); rounds++) {
		z.now += 31000;
		open = send(&z);
		for (i = 0; i < z.w.cap; i++)
			if (open & (1u << i))
				answer(&z, i, 0);
		report(&z);
		cut(&z, CUT_EOF);
	}
	check(window_empty(&z.w));
	check(z.b.nops == 0);
	for (i = 0; i < z.nops; i++)
		check(done(&z, i));

	window_release(&z.w);
	batch_release(&z.b);
	sink_release(&z.sink);
	kcount_release(&z.st.toast_missing);
	return 0;
}
