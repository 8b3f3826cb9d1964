/*
 * meilisearch_write.c - the writes of a flush as Meilisearch tasks, the
 * module's write procedure (write_call / write_answer, lib/target.h).
 *
 * A real server writes and syncs its store once per batch of tasks (on
 * these machines 0.5 to 2 s whatever the batch holds), and batches on its
 * own the tasks of an index that wait in its queue, applying one index's
 * tasks in the order they were enqueued. So a body is first reduced to
 * what it leaves behind: each document's last entry alone, the adds of an
 * index in one task and its deletes in another (their documents differ,
 * so the two may land in either order). Every task is sent before any is
 * asked about; then one GET /tasks?uids= asks about all still open,
 * again after a back-off (MS_POLL_MS doubling to MS_POLL_MAX_MS) while one
 * is enqueued or processing.
 *
 * The procedure ends when every task has ended, and writes the verdicts
 * of its entries then, all at once, from each task's end as it was kept:
 * many procedures wait on the server's queue at once, and none holds an
 * entry's verdict meanwhile. An entry counts as
 * written only when its task succeeded (a delete whose index does not
 * exist deleted nothing, which is what it asked for); a failed task
 * refuses the document its error names - its other documents were not
 * written either and are to be retried - or, naming none, all of its
 * documents, with the task's code and message; the documents of a task
 * canceled or gone from the queue are to be retried too. An entry a later
 * one replaced gets the later one's verdict. Once every task is enqueued
 * the procedure says so (sent_all) and sends nothing that writes again: a
 * caller may start the next flush's tasks behind these, and what is to be
 * written again is its to send, after what it sent since.
 *
 * Pure: never makes a request, logs or exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meilisearch.h"
#include "entry.h"
#include "p2o.h"

enum task_state { T_UNSENT, T_OPEN, T_DONE };

/* one task of the procedure */
struct ms_task {
	size_t	 ioff, ilen;	/* its index uid, a raw JSON string in body */
	int	 del;		/* a delete-batch, else an addition */
	enum task_state state;
	uint64_t uid;
	/* T_DONE: how it ended (ms_task_view; -1 gone from the queue), and
	 * a failure's code and message: the verdicts of its entries are
	 * written from these once every task has ended */
	int	 st;
	char	 code[96], msg[320];
};

/* what the procedure planned for its body, in proc->plan */
struct ms_plan {
	int	 nent, ntask;
	size_t	 tasks_off;	/* the entries follow the plan (a task is
				 * their unit), then the tasks (as many as
				 * it has: an entry's worth of room each
				 * would double the plan) */
	int	 polled;	/* the last request asked about the tasks */
	int	 sending;	/* the task the last request enqueued */
	long	 backoff_ms;	/* the next poll's delay */
};

static struct ms_plan *
plan_of(const struct target_proc *p)
{
	return p->plan.len ? (struct ms_plan *)(void *)p->plan.buf : NULL;
}

static struct tentry *
ents_of(struct ms_plan *pl)
{
	return (struct tentry *)(void *)(pl + 1);
}

static struct ms_task *
tasks_of(struct ms_plan *pl)
{
	return (struct ms_task *)(void *)((char *)pl + pl->tasks_off);
}

/*
 * The plan of body: its entries, each document's last one, and a task per
 * index and kind for those. -1 when an entry is not one encode wrote.
 */
static int
plan(struct target_proc *p, const char *body, size_t len)
{
	struct ms_plan *pl;
	struct tentry *ents, *e;
	struct ms_task *tasks = NULL, *t;
	int n, i, k, ntask = 0, cap = 0;

	if ((n = tentry_plan(&p->plan, sizeof(*pl), 0, body, len)) == -1)
		return -1;
	pl = plan_of(p);
	pl->nent = n;
	pl->tasks_off = p->plan.len;	/* tentry_units_at: aligned */
	ents = ents_of(pl);
	for (i = 0; i < n; i++) {
		e = &ents[i];
		e->unit = -1;
		if (e->last != i)
			continue;
		for (k = ntask - 1; k >= 0; k--) {
			t = &tasks[k];
			if (t->del == e->del && t->ilen == e->ilen &&
			    memcmp(body + t->ioff, body + e->ioff, e->ilen) == 0)
				break;
		}
		if (k < 0) {
			if (ntask == cap) {
				cap = cap ? 2 * cap : 4;
				tasks = xrealloc(tasks, (size_t)cap *
				    sizeof(*tasks));
			}
			k = ntask++;
			memset(&tasks[k], 0, sizeof(tasks[k]));
			tasks[k].ioff = e->ioff;
			tasks[k].ilen = e->ilen;
			tasks[k].del = e->del;
			tasks[k].state = T_UNSENT;
		}
		e->unit = k;
	}
	/* the tasks behind the ents (the plan may move: pl again) */
	sbuf_add(&p->plan, (const char *)tasks, (size_t)ntask * sizeof(*tasks));
	free(tasks);
	pl = plan_of(p);
	pl->ntask = ntask;
	pl->backoff_ms = MS_POLL_MS;
	return 0;
}

/* a document with our id as its primary key, ahead of its own members
 * (encode refused a document with a member of that name) */
static void
add_doc(struct sbuf *out, const char *id, size_t idlen, const char *doc,
    size_t dlen)
{
	size_t i = 1;

	sbuf_adds(out, "{\"" MS_PRIMARY_KEY "\":");
	sbuf_add(out, id, idlen);
	while (i < dlen && (doc[i] == ' ' || doc[i] == '\n' ||
	    doc[i] == '\t' || doc[i] == '\r'))
		i++;
	if (i < dlen && doc[i] != '}')
		sbuf_addc(out, ',');
	sbuf_add(out, doc + 1, dlen - 1);
}

static int
first_unsent(struct ms_plan *pl)
{
	struct ms_task *tasks = tasks_of(pl);
	int k;

	for (k = 0; k < pl->ntask; k++)
		if (tasks[k].state == T_UNSENT)
			return k;
	return -1;
}

/* task k's request: the documents of its entries, or their ids */
static void
send_task(struct target_proc *p, const char *body, int k,
    struct http_call *call)
{
	struct ms_plan *pl = plan_of(p);
	struct tentry *ents = ents_of(pl), *e;
	struct ms_task *t = &tasks_of(pl)[k];
	struct jspan index = { body + t->ioff, t->ilen };
	char uid[512];
	int i, n = 0;

	sbuf_reset(&p->body);
	sbuf_addc(&p->body, '[');
	for (i = 0; i < pl->nent; i++) {
		e = &ents[i];
		if (e->unit != k)
			continue;
		if (n++)
			sbuf_addc(&p->body, ',');
		if (t->del)
			sbuf_add(&p->body, body + e->idoff, e->idlen);
		else
			add_doc(&p->body, body + e->idoff, e->idlen,
			    body + e->doff, e->dlen);
	}
	sbuf_addc(&p->body, ']');
	if (jstr_copy(index, uid, sizeof(uid)) == -1)
		uid[0] = '\0';
	ms_index_path(&p->path, uid, t->del ? "/documents/delete-batch" :
	    "/documents?primaryKey=" MS_PRIMARY_KEY);
	http_call_set(call, "POST", p->path.buf, "application/json",
	    p->body.buf, p->body.len);
	pl->polled = 0;
	pl->sending = k;
}

/* the next request: the next task not sent yet, else one question about
 * every task still open */
void
ms_write_call(struct target_proc *p, const char *body, size_t len,
    struct http_call *call)
{
	struct ms_plan *pl = plan_of(p);
	struct ms_task *tasks;
	int k, n = 0;

	if (pl == NULL && plan(p, body, len) == -1) {
		/* not ours: answered as refused by write_answer */
		http_call_set(call, "GET", "/health", NULL, NULL, 0);
		return;
	}
	pl = plan_of(p);
	if ((k = first_unsent(pl)) != -1) {
		send_task(p, body, k, call);
		return;
	}
	tasks = tasks_of(pl);
	sbuf_reset(&p->path);
	sbuf_adds(&p->path, "/tasks?uids=");
	for (k = 0; k < pl->ntask; k++)
		if (tasks[k].state == T_OPEN)
			sbuf_addf(&p->path, "%s%llu", n++ ? "," : "",
			    (unsigned long long)tasks[k].uid);
	sbuf_addf(&p->path, "&limit=%d", n);
	http_call_set(call, "GET", p->path.buf, NULL, NULL, 0);
	pl->polled = 1;
}

static void
set_item(struct item_result *it, int del, enum item_verdict v,
    const char *type, const char *reason)
{
	/* a task's end has no HTTP status: the one its verdict stands for */
	tentry_verdict(it, del, v, v == ITEM_OK ? 200 : v == ITEM_NOTFOUND ?
	    404 : v == ITEM_RETRY ? 503 : 400, type, reason);
}

/* the entry of task k that a failure's message names (`<id>`, the id as
 * JSON, as Meilisearch quotes one), or -1 */
static int
named_entry(struct ms_plan *pl, const char *body, int k, const char *msg)
{
	struct tentry *ents = ents_of(pl), *e;
	const char *q;
	size_t ml = strlen(msg);
	int i;

	for (i = 0; i < pl->nent; i++) {
		e = &ents[i];
		if (e->unit != k)
			continue;
		for (q = msg; (q = memchr(q, '`', ml - (size_t)(q - msg)))
		    != NULL; q++)
			if ((size_t)(msg + ml - q) > e->idlen + 1 &&
			    memcmp(q + 1, body + e->idoff, e->idlen) == 0 &&
			    q[1 + e->idlen] == '`')
				return i;
	}
	return -1;
}

/* task k ended (st as ms_task_view says, -1: gone from the queue) */
static void
task_ended(struct ms_plan *pl, int k, int st, const char *code,
    const char *msg)
{
	struct ms_task *t = &tasks_of(pl)[k];

	t->state = T_DONE;
	t->st = st;
	snprintf(t->code, sizeof(t->code), "%s", code);
	snprintf(t->msg, sizeof(t->msg), "%s", msg);
}

/* every task ended: the verdicts of the entries of task k */
static void
task_verdicts(struct ms_plan *pl, const char *body, int k, int nsent,
    struct item_result *items)
{
	struct tentry *ents = ents_of(pl);
	struct ms_task *t = &tasks_of(pl)[k];
	const char *code = t->code;
	char reason[400], other[400];
	int i, named = -1, st = t->st;

	if (st == 3 || st == -1)
		/* canceled by someone, or deleted from the queue before we
		 * saw it end: its documents are owed */
		snprintf(other, sizeof(other), "not written: task %llu %s",
		    (unsigned long long)t->uid, st == 3 ? "was canceled" :
		    "is no longer in the task queue");
	if (st == 2 && !(t->del && strcmp(code, "index_not_found") == 0)) {
		snprintf(reason, sizeof(reason), "%s (task %llu)", t->msg,
		    (unsigned long long)t->uid);
		named = named_entry(pl, body, k, t->msg);
		if (named != -1)
			snprintf(other, sizeof(other), "not written: task %llu "
			    "failed on another document",
			    (unsigned long long)t->uid);
	}
	for (i = 0; i < pl->nent && i < nsent; i++) {
		if (ents[i].unit != k)
			continue;
		if (st == 1)
			set_item(&items[i], t->del, ITEM_OK, "", "");
		else if (st == 3 || st == -1)
			set_item(&items[i], t->del, ITEM_RETRY, "not_written",
			    other);
		else if (t->del && strcmp(code, "index_not_found") == 0)
			/* no index, so no such document: what was asked */
			set_item(&items[i], 1, ITEM_NOTFOUND, "", "");
		else if (named == -1 || named == i)
			set_item(&items[i], t->del, ITEM_REJECT,
			    code[0] ? code : "task_failed", reason);
		else
			set_item(&items[i], t->del, ITEM_RETRY, "not_written",
			    other);
	}
}

/* the delay before the next question, doubling up to MS_POLL_MAX_MS */
static long
next_wait(struct ms_plan *pl)
{
	long ms = pl->backoff_ms;

	pl->backoff_ms = ms * 2 > MS_POLL_MAX_MS ? MS_POLL_MAX_MS : ms * 2;
	return ms;
}

/* the answer to a poll: each task's end. TA_OK when all have ended, else
 * TA_NEXT (a back-off first) */
static enum target_answer
tasks_answer(struct target_proc *p, const struct sbuf *resp,
    const char *body, int nsent, struct item_result *items, char *why,
    size_t whylen)
{
	struct ms_plan *pl = plan_of(p);
	struct ms_task *tasks = tasks_of(pl);
	struct tentry *ents = ents_of(pl);
	struct jspan obj, arr, task, v;
	struct jiter it;
	uint64_t uid;
	char code[96], msg[320];
	int k, st, open = 0, *seen;

	if (target_body_object(resp->buf, resp->len, &obj) == -1 ||
	    !jobj_get(obj, "results", &arr) || jiter_init(&it, arr) == -1) {
		snprintf(why, whylen, "GET /tasks is not a list of tasks: %.200s",
		    resp->buf);
		return TA_RETRY;
	}
	seen = xcalloc((size_t)pl->ntask, sizeof(*seen));
	while (jiter_elem(&it, &task)) {
		if (!jobj_get(task, "uid", &v) || jnum_u64(v, &uid) == -1)
			continue;
		for (k = 0; k < pl->ntask; k++)
			if (tasks[k].state == T_OPEN && tasks[k].uid == uid)
				break;
		if (k == pl->ntask)
			continue;
		seen[k] = 1;
		st = ms_task_view(task, code, sizeof(code), msg, sizeof(msg));
		if (st > 0)
			task_ended(pl, k, st, code, msg);
	}
	for (k = 0; k < pl->ntask; k++) {
		if (tasks[k].state == T_OPEN && !seen[k])
			task_ended(pl, k, -1, "", "");
		open += tasks[k].state != T_DONE;
	}
	free(seen);
	if (open) {
		p->poll_ms = next_wait(pl);
		return TA_NEXT;
	}
	/* items[] only now, all at once: the caller may lend an array to
	 * each answer rather than keep one per procedure under way */
	for (k = 0; k < pl->ntask; k++)
		task_verdicts(pl, body, k, nsent, items);
	tentry_replaced(ents, pl->nent < nsent ? pl->nent : nsent, items);
	return TA_OK;
}

enum target_answer
ms_write_answer(struct target_proc *p, long status, const struct sbuf *resp,
    const char *body, size_t len, int nsent, struct item_result *items,
    char *why, size_t whylen)
{
	enum target_answer a = target_status_class(status);
	struct ms_plan *pl = plan_of(p);
	struct ms_task *t;

	(void)len;
	p->poll_ms = 0;
	if (pl == NULL) {
		snprintf(why, whylen, "a write the module did not encode");
		return TA_REFUSED;
	}
	if (a != TA_OK) {
		ms_error_text(resp->buf, resp->len, why, whylen);
		/* a poll that failed is only asked again */
		return pl->polled && a == TA_REFUSED ? TA_RETRY : a;
	}
	if (pl->polled)
		return tasks_answer(p, resp, body, nsent, items, why, whylen);
	t = &tasks_of(pl)[pl->sending];
	if (!ms_task_uid(resp, &t->uid)) {
		snprintf(why, whylen, "the write was answered without a "
		    "taskUid");
		return TA_RETRY;
	}
	t->state = T_OPEN;
	/* the first question after the last task is sent; the documents
	 * they carried are the server's now: their copy goes (held by every
	 * procedure waiting for its tasks, it would be a second copy of the
	 * window's bodies) */
	if (first_unsent(pl) == -1) {
		p->sent_all = 1;
		p->poll_ms = next_wait(pl);
		sbuf_release(&p->body);
	}
	return TA_NEXT;
}
