/*
 * helper.c - what /synced asks of the servers, in a helper process of the
 * supervisor's (aux.c) that keeps its connections between requests: the
 * source's position now, and a refresh of the target's indices.
 *
 * The position is the source's pos_now (source_ops.h): one the capture
 * is sure to reach even on a quiet server - on PostgreSQL that of a
 * logical message written for it, on MySQL and MariaDB the binlog's file
 * and offset now.
 *
 * The requests and answers are frames private to this file, which owns
 * both ends: {"k":"ask","what":"source_now"|"refresh","seq":N} in,
 * {"k":"answer","seq":N,"text":...} or {"k":"answer","seq":N,"error":...}
 * out, in order. The helper never exits the supervisor and the supervisor
 * never waits for it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "frame.h"
#include "http.h"
#include "jscan.h"
#include "log.h"
#include "p2o.h"
#include "source_ops.h"
#include "supervisor.h"
#include "target.h"
#include "xio.h"

static const char *const asks[] = {
	[ASK_SOURCE_NOW] = "source_now",
	[ASK_REFRESH] = "refresh",
};

/* ---- the helper process ---- */

struct helper {
	const struct config *cf;
	void	*src;		/* the source's connection (pos_now) */
	struct target_conn tc;
	int	 have_tc;
	char	*indices;	/* every index the sections write, a list */
};

/* "a,b,events-*": every index and template the sections claim */
static char *
index_list(const struct config *cf)
{
	struct sbuf b = SBUF_INIT;
	const char *name, *p;
	size_t n;
	int i;

	for (i = 0; i < cf->nsyncs; i++) {
		name = cf->syncs[i].index_templated ? cf->syncs[i].index_glob :
		    cf->syncs[i].index;
		n = strlen(name);
		/* a shared index once */
		for (p = b.buf; p != NULL && (p = strstr(p, name)) != NULL;
		    p += n)
			if ((p == b.buf || p[-1] == ',') &&
			    (p[n] == ',' || p[n] == '\0'))
				break;
		if (p != NULL)
			continue;
		if (b.len > 0)
			sbuf_addc(&b, ',');
		sbuf_adds(&b, name);
	}
	return b.buf ? b.buf : xstrdup("");
}

/* the source's position now, on a connection kept between asks */
static int
source_now(struct helper *h, struct sbuf *text, struct p2o_err *e)
{
	return source_ops_of(h->cf)->pos_now(h->cf, &h->src, text, e);
}

static int
refresh(struct helper *h, struct p2o_err *e)
{
	if (!h->have_tc) {
		if (target_conn_open(&h->tc, h->cf, e) == -1)
			return -1;
		h->have_tc = 1;
	}
	/* a module without the operation: refresh=true cannot be kept */
	if (h->tc.mod->ops->refresh == NULL)
		return p2o_fail(e, P2O_EXIT_CONFIG, "target '%s' offers no "
		    "refresh: /synced?refresh=true cannot be answered; ask "
		    "without refresh", h->tc.mod->name);
	return h->tc.mod->ops->refresh(&h->tc, h->indices, e);
}

static void
answer(struct sbuf *out, uint64_t seq, const char *text, const char *error)
{
	struct sbuf j = SBUF_INIT;

	sbuf_adds(&j, "{\"k\":\"answer\",\"seq\":");
	sbuf_add_u64(&j, seq);
	sbuf_adds(&j, error ? ",\"error\":" : ",\"text\":");
	sbuf_add_jstr(&j, error ? error : text, strlen(error ? error : text));
	sbuf_addc(&j, '}');
	frame_put(out, j.buf, j.len);
	sbuf_release(&j);
}

static int
helper_main(void *arg)
{
	struct sv *sv = arg;
	struct helper h = { .cf = &sv->cf };
	struct frame_reader rd;
	struct frame f;
	struct sbuf out = SBUF_INIT, text = SBUF_INIT;
	struct jspan what, seqv;
	struct p2o_err e;
	uint64_t seq;
	int r, rc;

	if (http_global_init() == -1)
		return P2O_EXIT_INTERNAL;
	h.indices = index_list(h.cf);
	frame_reader_init(&rd, P2O_FD_IN, "the supervisor");
	while ((r = frame_read(&rd, &f)) == 1) {
		if (!jobj_get(f.obj, "what", &what) ||
		    !jobj_get(f.obj, "seq", &seqv) || jnum_u64(seqv, &seq) == -1)
			continue;
		sbuf_reset(&text);
		p2o_err_clear(&e);
		if (jstr_eq(what, asks[ASK_SOURCE_NOW]))
			rc = source_now(&h, &text, &e);
		else
			rc = refresh(&h, &e);
		answer(&out, seq, text.buf ? text.buf : "", rc == 0 ? NULL :
		    e.msg);
		if (frame_flush(P2O_FD_OUT, &out) == -1)
			break;
	}
	frame_reader_release(&rd);
	sbuf_release(&out);
	sbuf_release(&text);
	source_ops_of(h.cf)->pos_close(h.src);
	if (h.have_tc)
		target_conn_release(&h.tc);
	free(h.indices);
	return P2O_EXIT_OK;
}

/* ---- the supervisor's side ---- */

/* the oldest ask out: answers come in the order asks went */
static void
pop_ask(struct sv *sv, enum sv_ask *what, uint64_t *seq)
{
	*what = sv->helper_what_out[0];
	*seq = sv->helper_seq_out[0];
	sv->helper_ask--;
	memmove(sv->helper_seq_out, sv->helper_seq_out + 1,
	    (size_t)sv->helper_ask * sizeof(sv->helper_seq_out[0]));
	memmove(sv->helper_what_out, sv->helper_what_out + 1,
	    (size_t)sv->helper_ask * sizeof(sv->helper_what_out[0]));
}

static void
on_frame(struct sv *sv, const struct frame *f)
{
	struct jspan seqv, v;
	enum sv_ask what;
	uint64_t seq, got;
	char *s;

	if (!jobj_get(f->obj, "seq", &seqv) || jnum_u64(seqv, &got) == -1)
		return;
	if (sv->helper_ask == 0 || got != sv->helper_seq_out[0]) {
		log_warnx("%s: an answer to an ask it was not given",
		    sv->aux[SV_AUX_HELPER].ops->name);
		return;
	}
	pop_ask(sv, &what, &seq);
	if (jobj_get(f->obj, "error", &v)) {
		s = jstr_dup(v);
		sv_synced_answered(sv, what, seq, NULL, s);
	} else if (jobj_get(f->obj, "text", &v)) {
		s = jstr_dup(v);
		sv_synced_answered(sv, what, seq, s, NULL);
	} else {
		s = NULL;
		sv_synced_answered(sv, what, seq, NULL, "an answer without "
		    "a text");
	}
	free(s);
}

/* every ask it had not answered is answered with why */
static void
on_end(struct sv *sv, int code)
{
	enum sv_ask what;
	uint64_t seq;
	char why[128];

	snprintf(why, sizeof(why), "the supervisor's helper ended (%s %d)",
	    code < 0 ? "signal" : "exit code", code < 0 ? -code : code);
	if (code != 0 && code != -SIGTERM)
		log_warnx("%s", why);
	while (sv->helper_ask > 0) {
		pop_ask(sv, &what, &seq);
		sv_synced_answered(sv, what, seq, NULL, why);
	}
}

static const struct sv_aux_ops helper_ops = {
	.name = "the supervisor's helper",
	.on_frame = on_frame,
	.on_end = on_end,
};

uint64_t
sv_helper_ask(struct sv *sv, enum sv_ask what, char *err, size_t errlen)
{
	struct sbuf j = SBUF_INIT;
	uint64_t seq;

	if (sv->helper_ask >= SV_HELPER_ASKS) {
		snprintf(err, errlen, "too many requests wait for the source");
		return 0;
	}
	if (!sv_aux_running(sv, SV_AUX_HELPER) &&
	    sv_aux_start(sv, SV_AUX_HELPER, &helper_ops, helper_main, sv, err,
	    errlen) == -1)
		return 0;
	seq = ++sv->helper_seq;
	sbuf_adds(&j, "{\"k\":\"ask\",\"what\":");
	sbuf_add_jstr(&j, asks[what], strlen(asks[what]));
	sbuf_adds(&j, ",\"seq\":");
	sbuf_add_u64(&j, seq);
	sbuf_addc(&j, '}');
	frame_put(sv_aux_out(sv, SV_AUX_HELPER), j.buf, j.len);
	sbuf_release(&j);
	sv->helper_seq_out[sv->helper_ask] = seq;
	sv->helper_what_out[sv->helper_ask++] = what;
	return seq;
}

void
sv_helper_forget(struct sv *sv)
{
	/* the next ask starts one that reads the configuration as it is */
	if (sv_aux_running(sv, SV_AUX_HELPER))
		sv_aux_stop(sv, SV_AUX_HELPER);
}
