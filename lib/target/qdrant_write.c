/*
 * qdrant_write.c - the writes of a flush as Qdrant requests, the module's
 * write procedure (write_call / write_answer, lib/target.h).
 *
 * A body is first reduced to what it leaves behind: each document's last
 * entry alone, so the upserts and deletes of one collection name
 * different points and may go in one request in any order. Then one
 * request per collection, in the order the collections first appear:
 * POST /collections/<c>/points/batch?wait=true with an upsert of its
 * points and a delete of its point ids, answered once both are applied.
 * Qdrant applies a batch's operations one after the other and does not
 * undo the first when the second fails, and it names no point in a
 * refusal: a collection's request refused as a whole (400, 422) is sent
 * again one entry a request, so that the refusal lands on the document
 * that earned it and the others are written. Sending again what was
 * applied is harmless: an upsert replaces a point by the same state, a
 * delete of a point already gone deletes nothing.
 *
 * A write to a collection that does not exist (404) deleted nothing,
 * which is what a delete asked for; an upsert there is refused (the
 * writer creates each collection before its first write, so one missing
 * was deleted behind our back). An entry a later one replaced gets that
 * one's verdict. The procedure ends when every collection is answered;
 * a request that failed otherwise is asked again as it was.
 *
 * Pure: never makes a request, logs or exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qdrant.h"
#include "entry.h"
#include "p2o.h"

enum group_state { G_UNSENT, G_SPLIT, G_DONE };

/* the entries of one collection */
struct qd_group {
	size_t	 ioff, ilen;	/* its name, a raw JSON string in body */
	enum group_state state;
	int	 next;		/* G_SPLIT: the entry sent alone next */
};

/* what the procedure planned for its body, in proc->plan */
struct qd_plan {
	int	 nent, ngroup;
	size_t	 groups_off;	/* the entries follow the plan (a group is
				 * their unit), then the groups */
	int	 sending;	/* the group the last request wrote */
	int	 alone;		/* the entry it carried alone, -1: all */
};

static struct qd_plan *
plan_of(const struct target_proc *p)
{
	return p->plan.len ? (struct qd_plan *)(void *)p->plan.buf : NULL;
}

static struct tentry *
ents_of(struct qd_plan *pl)
{
	return (struct tentry *)(void *)(pl + 1);
}

static struct qd_group *
groups_of(struct qd_plan *pl)
{
	return (struct qd_group *)(void *)((char *)pl + pl->groups_off);
}

static int
same_span(const char *body, size_t aoff, size_t alen, size_t boff,
    size_t blen)
{
	return alen == blen && memcmp(body + aoff, body + boff, alen) == 0;
}

/* the plan of body: its entries, each document's last one, a group per
 * collection for those. -1 when an entry is not one encode wrote */
static int
plan(struct target_proc *p, const char *body, size_t len)
{
	struct qd_plan *pl;
	struct tentry *ents, *e;
	struct qd_group *groups;
	int n, i, k, ngroup = 0;

	n = tentry_plan(&p->plan, sizeof(*pl), sizeof(*groups), body, len);
	if (n == -1)
		return -1;
	pl = plan_of(p);
	pl->nent = n;
	pl->groups_off = tentry_units_at(sizeof(*pl), n);
	ents = ents_of(pl);
	groups = groups_of(pl);
	for (i = 0; i < n; i++) {
		e = &ents[i];
		e->unit = -1;
		if (e->last != i)
			continue;
		for (k = ngroup - 1; k >= 0; k--)
			if (same_span(body, groups[k].ioff, groups[k].ilen,
			    e->ioff, e->ilen))
				break;
		if (k < 0) {
			k = ngroup++;
			groups[k].ioff = e->ioff;
			groups[k].ilen = e->ilen;
			groups[k].state = G_UNSENT;
		}
		e->unit = k;
	}
	pl->ngroup = ngroup;
	pl->alone = -1;
	return 0;
}

/* the point id of our id (a raw JSON string), quoted */
static void
add_id(struct sbuf *out, const char *id, size_t idlen)
{
	char uuid[37], *text;
	size_t tlen;

	text = xmalloc(idlen + 1);
	tlen = jstr_unescape((struct jspan){ id, idlen }, text);
	qd_point_id(text, tlen, uuid);
	free(text);
	sbuf_addc(out, '"');
	sbuf_adds(out, uuid);
	sbuf_addc(out, '"');
}

void
qd_add_point(struct sbuf *out, const char *id, size_t idlen,
    const char *doc, size_t dlen)
{
	struct jspan d = { doc, dlen }, key, val, vecs = { NULL, 0 };
	struct jiter it;

	sbuf_adds(out, "{\"id\":");
	add_id(out, id, idlen);
	sbuf_adds(out, ",\"vector\":");
	jobj_get(d, QD_VECTORS, &vecs);
	if (vecs.p != NULL && jspan_type(vecs) == J_OBJECT)
		sbuf_add(out, vecs.p, vecs.n);
	else
		sbuf_adds(out, "{}");
	sbuf_adds(out, ",\"payload\":{\"" QD_ID_FIELD "\":");
	sbuf_add(out, id, idlen);
	if (jiter_init(&it, d) == 0)
		while (jiter_member(&it, &key, &val)) {
			if (jkey_is(key, QD_VECTORS, sizeof(QD_VECTORS) - 1))
				continue;
			sbuf_addc(out, ',');
			sbuf_add(out, key.p, key.n);
			sbuf_addc(out, ':');
			sbuf_add(out, val.p, val.n);
		}
	sbuf_adds(out, "}}");
}

/* the entries of group k (only entry `alone` when it is not -1) as one
 * operation of kind del, appended to p->body; 1 when there was any */
static int
add_operation(struct qd_plan *pl, const char *body, int k, int alone,
    int del, struct sbuf *out)
{
	struct tentry *ents = ents_of(pl), *e;
	int i, n = 0;

	for (i = 0; i < pl->nent; i++) {
		e = &ents[i];
		if (e->unit != k || e->del != del || (alone != -1 &&
		    i != alone))
			continue;
		if (n++ == 0)
			sbuf_adds(out, del ? "{\"delete\":{\"points\":[" :
			    "{\"upsert\":{\"points\":[");
		else
			sbuf_addc(out, ',');
		if (del)
			add_id(out, body + e->idoff, e->idlen);
		else
			qd_add_point(out, body + e->idoff, e->idlen,
			    body + e->doff, e->dlen);
	}
	if (n)
		sbuf_adds(out, "]}}");
	return n > 0;
}

/* the next request: the next collection's writes, or the next entry of
 * one whose request was refused as a whole */
void
qd_write_call(struct target_proc *p, const char *body, size_t len,
    struct http_call *call)
{
	struct qd_plan *pl = plan_of(p);
	struct qd_group *g;
	struct jspan name;
	char coll[512];
	int k;

	if (pl == NULL && plan(p, body, len) == -1) {
		/* not ours: answered as refused by write_answer */
		http_call_set(call, "GET", "/", NULL, NULL, 0);
		return;
	}
	pl = plan_of(p);
	for (k = 0; k < pl->ngroup; k++)
		if (groups_of(pl)[k].state != G_DONE)
			break;
	if (k == pl->ngroup) {
		/* nothing left: only a caller that ignored TA_OK asks */
		http_call_set(call, "GET", "/", NULL, NULL, 0);
		return;
	}
	g = &groups_of(pl)[k];
	pl->sending = k;
	pl->alone = g->state == G_SPLIT ? g->next : -1;
	sbuf_reset(&p->body);
	sbuf_adds(&p->body, "{\"operations\":[");
	if (add_operation(pl, body, k, pl->alone, 0, &p->body))
		sbuf_addc(&p->body, ',');
	if (!add_operation(pl, body, k, pl->alone, 1, &p->body))
		p->body.len--;	/* the comma after the upsert */
	sbuf_adds(&p->body, "]}");
	name.p = body + g->ioff;
	name.n = g->ilen;
	if (jstr_copy(name, coll, sizeof(coll)) == -1)
		coll[0] = '\0';
	qd_collection_path(&p->path, coll, "/points/batch?wait=true");
	http_call_set(call, "POST", p->path.buf, "application/json",
	    p->body.buf, p->body.len);
}

/* the verdicts of the entries the last request carried, kept in the
 * procedure (proc->items, one per entry) until every collection is
 * answered: the caller's items[] are written in that last answer only */
static void
answered(struct target_proc *p, struct qd_plan *pl, long status,
    const char *why, int nsent)
{
	struct tentry *ents = ents_of(pl), *e;
	struct item_result *items;
	int i;

	if (p->items == NULL)
		p->items = xcalloc((size_t)pl->nent, sizeof(*p->items));
	items = p->items;

	for (i = 0; i < pl->nent && i < nsent; i++) {
		e = &ents[i];
		if (e->unit != pl->sending || (pl->alone != -1 &&
		    i != pl->alone))
			continue;
		if (status >= 200 && status < 300)
			tentry_verdict(&items[i], e->del, ITEM_OK, status, "",
			    "");
		else if (status == 404 && e->del)
			tentry_verdict(&items[i], 1, ITEM_NOTFOUND, status,
			    "", "");
		else
			tentry_verdict(&items[i], e->del, ITEM_REJECT, status,
			    status == 404 ? "collection_not_found" :
			    "wrong_input", why);
	}
}

/* the group's next entry to send alone after entry i, or G_DONE */
static void
split_next(struct qd_plan *pl, struct qd_group *g, int after)
{
	struct tentry *ents = ents_of(pl);
	int i;

	for (i = after + 1; i < pl->nent; i++)
		if (ents[i].unit == pl->sending) {
			g->state = G_SPLIT;
			g->next = i;
			return;
		}
	g->state = G_DONE;
}

static int
group_size(struct qd_plan *pl, int k)
{
	struct tentry *ents = ents_of(pl);
	int i, n = 0;

	for (i = 0; i < pl->nent; i++)
		n += ents[i].unit == k;
	return n;
}

enum target_answer
qd_write_answer(struct target_proc *p, long status, const struct sbuf *resp,
    const char *body, size_t len, int nsent, struct item_result *items,
    char *why, size_t whylen)
{
	enum target_answer a = target_status_class(status);
	struct qd_plan *pl = plan_of(p);
	struct qd_group *g;
	int i;

	(void)body, (void)len;
	p->poll_ms = 0;
	if (pl == NULL) {
		snprintf(why, whylen, "a write the module did not encode");
		return TA_REFUSED;
	}
	g = &groups_of(pl)[pl->sending];
	if (a != TA_OK)
		qd_error_text(resp->buf, resp->len, why, whylen);
	if (a == TA_RETRY || a == TA_AUTH)
		return a;
	if (a == TA_REFUSED && status != 404 && pl->alone == -1 &&
	    group_size(pl, pl->sending) > 1) {
		/* which of them: each alone, from the first */
		split_next(pl, g, -1);
		return TA_NEXT;
	}
	answered(p, pl, status, why, nsent);
	if (pl->alone != -1)
		split_next(pl, g, pl->alone);
	else
		g->state = G_DONE;
	for (i = 0; i < pl->ngroup; i++)
		if (groups_of(pl)[i].state != G_DONE)
			return TA_NEXT;
	for (i = 0; i < pl->nent && i < nsent; i++)
		items[i] = p->items[i];
	free(p->items);
	p->items = NULL;
	tentry_replaced(ents_of(pl), pl->nent < nsent ? pl->nent : nsent,
	    items);
	return TA_OK;
}
