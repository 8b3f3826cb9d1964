/*
 * meilisearch_rebuild.c - what a rebuild needs of Meilisearch (pg2osync
 * reindex, switch-alias). Meilisearch has no aliases: the documented way
 * to put a fresh index in front of readers is POST /swap-indexes, one
 * task that exchanges two indexes' documents, settings and task history
 * atomically, so the uid readers search keeps its name and the other uid
 * holds what it held before. Also the documents an index holds (its
 * stats' numberOfDocuments: a write counts once its task succeeded, and
 * then it is counted) and an index deleted, each waited for to the end of
 * its task. Blocking on one connection; never logs, never exits.
 */
#include <stdio.h>
#include <string.h>

#include "meilisearch.h"
#include "p2o.h"

/* a request that enqueues one task (202 and its taskUid), polled to its
 * end: 1 succeeded, 0 failed (code, msg), -1 (err) */
static int
run_task(struct target_conn *c, const struct http_call *call,
    const char *what, char *code, size_t ccap, char *msg, size_t mcap,
    struct p2o_err *err)
{
	struct sbuf resp = SBUF_INIT;
	uint64_t task;
	long status;
	int rc;

	rc = target_request(c, call, &resp, &status, err);
	if (rc == 0 && status != 202) {
		rc = ms_status_error(status, &resp, err);
		/* a request the server will never take is no outage */
		if (target_status_class(status) == TA_REFUSED)
			err->code = P2O_EXIT_REFUSED;
		p2o_err_prefix(err, "%s", what);
	} else if (rc == 0 && !ms_task_uid(&resp, &task))
		rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "%s: no taskUid in the "
		    "answer", what);
	else if (rc == 0)
		rc = ms_wait_task(c, task, code, ccap, msg, mcap, err);
	sbuf_release(&resp);
	return rc;
}

int
ms_doc_count(struct target_conn *c, const char *index, uint64_t *n,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	struct jspan obj, v;
	long status;
	int rc;

	*n = 0;
	ms_index_path(&path, index, "/stats");
	http_call_set(&call, "GET", path.buf, NULL, NULL, 0);
	rc = target_request(c, &call, &resp, &status, err);
	if (rc == 0 && status == 404)
		rc = p2o_fail(err, P2O_EXIT_REFUSED, "counting the documents "
		    "of '%s': no such index", index);
	else if (rc == 0 && status != 200)
		rc = ms_status_error(status, &resp, err);
	else if (rc == 0 && (target_body_object(resp.buf, resp.len, &obj) == -1 ||
	    !jobj_get(obj, "numberOfDocuments", &v) || jnum_u64(v, n) == -1))
		rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "counting the documents "
		    "of '%s': the stats have no numberOfDocuments", index);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

int
ms_index_swap(struct target_conn *c, const char *a, const char *b,
    struct p2o_err *err)
{
	struct sbuf body = SBUF_INIT;
	struct http_call call;
	char what[900], code[96], msg[320];
	int rc;

	snprintf(what, sizeof(what), "swapping '%s' and '%s'", a, b);
	sbuf_adds(&body, "[{\"indexes\":[");
	sbuf_add_jstr(&body, a, strlen(a));
	sbuf_adds(&body, ",");
	sbuf_add_jstr(&body, b, strlen(b));
	sbuf_adds(&body, "]}]");
	http_call_set(&call, "POST", "/swap-indexes", "application/json",
	    body.buf, body.len);
	rc = run_task(c, &call, what, code, sizeof(code), msg, sizeof(msg),
	    err);
	/* a failed swap changed nothing (the task is all or none): the
	 * server's reason, index_not_found for a missing one */
	if (rc == 0)
		rc = p2o_fail(err, P2O_EXIT_REFUSED, "%s: the swap task "
		    "failed: %s: %s", what, code, msg);
	sbuf_release(&body);
	return rc == 1 ? 0 : -1;
}

int
ms_index_delete(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT;
	struct http_call call;
	char what[600], code[96], msg[320];
	int rc;

	snprintf(what, sizeof(what), "deleting index '%s'", index);
	ms_index_path(&path, index, "");
	http_call_set(&call, "DELETE", path.buf, NULL, NULL, 0);
	rc = run_task(c, &call, what, code, sizeof(code), msg, sizeof(msg),
	    err);
	if (rc == 0 && strcmp(code, "index_not_found") == 0)
		rc = 1;
	else if (rc == 0)
		rc = p2o_fail(err, P2O_EXIT_REFUSED, "%s: the task failed: "
		    "%s: %s", what, code, msg);
	sbuf_release(&path);
	return rc == 1 ? 0 : -1;
}
