/*
 * meilisearch.c - the Meilisearch 1.x target: its probe, index names,
 * errors, the entries of the data path, and the clear of an index. A
 * write is an asynchronous task: the request that adds or deletes
 * documents only enqueues one (202 and a taskUid), and the documents
 * count as written when the task succeeded - the writes of a flush are a
 * procedure of tasks, meilisearch_write.c.
 *
 * Meilisearch keeps no versions of ours: only one write request is open
 * at a time (no TCAP_CONCURRENT_WRITES, so engine.write_concurrency above
 * 1 is refused at load) and the index's one task queue orders them. Our
 * document id is the index's primary key (MS_PRIMARY_KEY), named on every
 * write (the first creates the index with it; ckpt's load creates it
 * ahead, meilisearch_admin.c).
 *
 * Pure: never makes a request, logs or exits (meilisearch_admin.c and
 * meilisearch_state.c hold the blocking operations).
 */
#include <stdio.h>
#include <string.h>

#include "meilisearch.h"
#include "entry.h"
#include "p2o.h"

/* {"message":"..","code":"..","type":"..","link":".."} */
void
ms_error_text(const char *body, size_t len, char *out, size_t outlen)
{
	struct jspan obj, v;
	char code[96] = "", msg[320] = "";

	if (body != NULL && target_body_object(body, len, &obj) == 0) {
		if (jobj_get(obj, "code", &v))
			target_copy_cut(v, code, sizeof(code));
		if (jobj_get(obj, "message", &v))
			target_copy_cut(v, msg, sizeof(msg));
	}
	if (code[0] || msg[0])
		snprintf(out, outlen, "%s%s%s", code, code[0] ? ": " : "",
		    msg);
	else
		snprintf(out, outlen, "%.*s", (int)(len > 200 ? 200 : len),
		    body ? body : "");
}

void
ms_index_path(struct sbuf *path, const char *index, const char *rest)
{
	sbuf_reset(path);
	sbuf_adds(path, "/indexes/");
	http_escape(path, index, "");
	sbuf_adds(path, rest);
}

int
ms_task_uid(const struct sbuf *resp, uint64_t *uid)
{
	struct jspan obj, v;

	return target_body_object(resp->buf, resp->len, &obj) == 0 &&
	    jobj_get(obj, "taskUid", &v) && jnum_u64(v, uid) == 0;
}

int
ms_task_view(struct jspan obj, char *code, size_t ccap, char *message,
    size_t mcap)
{
	struct jspan v, e;

	code[0] = message[0] = '\0';
	if (jspan_type(obj) != J_OBJECT || !jobj_get(obj, "status", &v) ||
	    jspan_type(v) != J_STRING)
		return -1;
	if (jstr_eq(v, "enqueued") || jstr_eq(v, "processing"))
		return 0;
	if (jstr_eq(v, "succeeded"))
		return 1;
	if (jstr_eq(v, "canceled"))
		return 3;
	if (!jstr_eq(v, "failed"))
		return -1;
	if (jobj_get(obj, "error", &e) && jspan_type(e) == J_OBJECT) {
		if (jobj_get(e, "code", &v))
			target_copy_cut(v, code, ccap);
		if (jobj_get(e, "message", &v))
			target_copy_cut(v, message, mcap);
	}
	return 2;
}

int
ms_task_state(const struct sbuf *resp, char *code, size_t ccap,
    char *message, size_t mcap)
{
	struct jspan obj;

	code[0] = message[0] = '\0';
	if (target_body_object(resp->buf, resp->len, &obj) == -1)
		return -1;
	return ms_task_view(obj, code, ccap, message, mcap);
}

/* index uids: letters, digits, '-' and '_', at most 400 bytes */
static int
index_name(const char *text, enum target_name_part part, char *why,
    size_t whylen)
{
	return target_name_chars(text, part, 400, "-_", "'-' and '_' (a "
	    "Meilisearch index uid)", why, whylen);
}

/* no mapping file (no TCAP_MAPPINGS) and no join: the defaults */
static int
index_body(const struct sync_section *s, const char *mapping, size_t len,
    char **body, char *why, size_t whylen)
{
	(void)s, (void)mapping, (void)len, (void)why, (void)whylen;
	*body = NULL;
	return 0;
}

static void
probe_call(struct http_call *call)
{
	http_call_set(call, "GET", "/version", NULL, NULL, 0);
}

/* {"commitSha":"..","commitDate":"..","pkgVersion":"1.11.3"} */
static enum target_answer
probe_answer(long status, const struct sbuf *resp, char *node,
    size_t nodelen, char *why, size_t whylen)
{
	enum target_answer a = target_status_class(status);
	struct jspan obj, v;

	if (nodelen)
		node[0] = '\0';
	if (a != TA_OK) {
		ms_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (target_body_object(resp->buf, resp->len, &obj) == -1 ||
	    !jobj_get(obj, "pkgVersion", &v)) {
		snprintf(why, whylen, "target.flavor is meilisearch but GET "
		    "/version is not a Meilisearch node's answer (no "
		    "pkgVersion)");
		return TA_REFUSED;
	}
	return target_node_major(v, MS_MAJOR, "meilisearch", "Meilisearch",
	    node, nodelen, why, whylen);
}

/* whether the index is there: a missing one is created by the first
 * write, which names our id as its primary key (a creation task here
 * would fail, index_already_exists, at every start of the writer) */
static void
create_call(const char *index, const char *body, struct sbuf *path,
    struct http_call *call)
{
	(void)body;
	ms_index_path(path, index, "");
	http_call_set(call, "GET", path->buf, NULL, NULL, 0);
}

static enum target_answer
create_answer(long status, const struct sbuf *resp, char *why,
    size_t whylen)
{
	enum target_answer a = target_status_class(status);

	if (status == 404)
		return TA_OK;
	if (a == TA_OK)
		return TA_EXISTS;
	ms_error_text(resp->buf, resp->len, why, whylen);
	return a;
}

/*
 * An entry is one line of our own, read back by the write procedure
 * (meilisearch_write.c):
 *   {"index":<uid>,"id":<id>,"doc":<document>}  or  ..,"delete":true}
 * A document with a member named as our primary key is refused: the
 * server takes the last of two members of one name, so that column's
 * value, not our id, would name the document.
 */
static int
encode(struct sbuf *out, const struct target_write *w,
    struct target_entry *e, struct p2o_err *err)
{
	struct jspan own;
	char name[800];

	if (w->routing.p || (w->pipeline.p && !w->del))
		return p2o_fail(err, P2O_EXIT_CONFIG, "meilisearch takes no "
		    "routing and no pipeline");
	if (!w->del && jobj_get(w->doc, MS_PRIMARY_KEY, &own)) {
		char ix[256], id[512];

		if (jstr_copy(w->index, ix, sizeof(ix)) == -1)
			snprintf(ix, sizeof(ix), "(long name)");
		if (jstr_copy(w->id, id, sizeof(id)) == -1)
			snprintf(id, sizeof(id), "(long id)");
		snprintf(name, sizeof(name), "%s/%s", ix, id);
		return p2o_fail(err, P2O_EXIT_DATA, "document '%s' has a "
		    "member '" MS_PRIMARY_KEY "', the attribute target "
		    "meilisearch keeps our document id in: rename that "
		    "column (sync.<name>.transform, or leave it out with "
		    "exclude_columns)", name);
	}
	tentry_put(out, w, e);
	return 0;
}

/* the answer to a request that enqueues a task (a write, a clear):
 * TA_NEXT with the task open, polled next; else the failure */
static enum target_answer
task_opened(struct target_proc *p, enum target_answer a,
    const struct sbuf *resp, const char *what, char *why, size_t whylen)
{
	if (a != TA_OK) {
		ms_error_text(resp->buf, resp->len, why, whylen);
		return a;
	}
	if (!ms_task_uid(resp, &p->task)) {
		snprintf(why, whylen, "the %s was answered without a taskUid",
		    what);
		return TA_RETRY;
	}
	p->task_open = 1;
	p->poll_ms = MS_POLL_MS;
	return TA_NEXT;
}

/* a poll of the open task that failed: retried. A 404 says the task is
 * gone, so its request is sent again (it adds or deletes the same
 * documents) */
static enum target_answer
poll_failed(struct target_proc *p, long status, enum target_answer a,
    const struct sbuf *resp, char *why, size_t whylen)
{
	ms_error_text(resp->buf, resp->len, why, whylen);
	if (status == 404)
		p->task_open = 0;
	return a == TA_AUTH ? TA_AUTH : TA_RETRY;
}

/* TOAST completion would read the stored documents back: not written
 * for this module (no TCAP_COMPLETE_DOCS: pg2osync validate fails such a
 * table without REPLICA IDENTITY FULL), so an unchanged TOAST value met
 * all the same is a refusal the operator sees */
static void
read_call(const struct docref *refs, int n, struct sbuf *body,
    struct http_call *call)
{
	(void)refs, (void)n, (void)body;
	http_call_set(call, "GET", "/health", NULL, NULL, 0);
}

static enum target_answer
read_answer(long status, const struct sbuf *resp, int n, struct jspan *found,
    char *why, size_t whylen)
{
	(void)status, (void)resp, (void)n, (void)found;
	snprintf(why, whylen, "target meilisearch does not read documents "
	    "back for an unchanged TOAST value; set REPLICA IDENTITY FULL on "
	    "the table");
	return TA_REFUSED;
}

/*
 * A clear of an index is one task deleting all its documents, polled to
 * its end; a clear by a field's value would need that field filterable,
 * and a cascade a join, neither of which this module declares.
 */
static void
proc_call(struct target_proc *p, struct http_call *call)
{
	if (p->task_open) {
		sbuf_reset(&p->path);
		sbuf_addf(&p->path, "/tasks/%llu",
		    (unsigned long long)p->task);
		http_call_set(call, "GET", p->path.buf, NULL, NULL, 0);
		return;
	}
	ms_index_path(&p->path, p->index, "/documents");
	http_call_set(call, "DELETE", p->path.buf, NULL, NULL, 0);
}

static enum target_answer
proc_answer(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a = target_status_class(status);
	char code[96], msg[320];

	p->poll_ms = 0;
	if (p->kind != PROC_CLEAR || p->field.p != NULL ||
	    strpbrk(p->index, "*,") != NULL) {
		snprintf(why, whylen, "target meilisearch clears a whole index "
		    "only, not '%s'%s", p->index, p->field.p ? " by a field" :
		    "");
		return TA_REFUSED;
	}
	if (!p->task_open) {
		if (status == 404) {
			p->gone = 1;
			return TA_OK;
		}
		return task_opened(p, a, resp, "clear", why, whylen);
	}
	if (a != TA_OK)
		return poll_failed(p, status, a, resp, why, whylen);
	switch (ms_task_state(resp, code, sizeof(code), msg, sizeof(msg))) {
	case 0:
		/* asked again after a back-off, doubling from MS_POLL_MS */
		p->poll_ms = MS_POLL_MS << (p->step < 5 ? p->step++ : 5);
		if (p->poll_ms > MS_POLL_MAX_MS)
			p->poll_ms = MS_POLL_MAX_MS;
		return TA_NEXT;
	case 1:
		p->task_open = 0;
		return TA_OK;
	case 2:
		p->task_open = 0;
		/* an index that is not there has no documents to clear */
		if (strcmp(code, "index_not_found") == 0) {
			p->gone = 1;
			return TA_OK;
		}
		snprintf(why, whylen, "clearing '%s': task %llu failed: %s: %s",
		    p->index, (unsigned long long)p->task, code, msg);
		return TA_REFUSED;
	default:
		p->task_open = 0;
		snprintf(why, whylen, "the clear's task %llu did not end",
		    (unsigned long long)p->task);
		return TA_RETRY;
	}
}

static const struct target_ops ops = {
	.index_name = index_name,
	.index_body = index_body,
	.mapping_file = NULL,
	.probe_call = probe_call,
	.probe_answer = probe_answer,
	.error_text = ms_error_text,
	.create_call = create_call,
	.create_answer = create_answer,
	.encode = encode,
	.write_call = ms_write_call,
	.write_answer = ms_write_answer,
	.read_call = read_call,
	.read_answer = read_answer,
	.proc_call = proc_call,
	.proc_answer = proc_answer,
	.state_get = ms_state_get,
	.state_put = ms_state_put,
	.index_exists = ms_index_exists,
	.index_create = ms_index_create,
	.load_settings = ms_load_settings,
	.load_suspend = ms_load_suspend,
	.load_restore = ms_load_restore,
	.state_prepare = ms_state_prepare,
	.pipeline_exists = ms_pipeline_exists,
	.index_state = ms_index_state,
	.mapping_conflicts = ms_mapping_conflicts,
	.refresh = ms_refresh,
	.doc_count = ms_doc_count,
	.index_swap = ms_index_swap,
	.index_delete = ms_index_delete,
};

/* writes are tasks, one queue orders them; no versions, routing, join,
 * pipelines, mapping files, aliases (a rebuild swaps two indexes
 * instead: meilisearch_rebuild.c), and no place of its own for our
 * state (target.state_dir holds it: meilisearch_state.c) */
const struct target_module target_meilisearch = {
	.name = "meilisearch",
	.state_place = "files under target.state_dir",
	.caps = TCAP_ASYNC_TASKS | TCAP_INDEX_SWAP,
	.ops = &ops,
	.scan = &ms_scan_ops,
	/* a Meilisearch key, master or API, is a bearer token */
	.api_key_scheme = "Bearer",
};
