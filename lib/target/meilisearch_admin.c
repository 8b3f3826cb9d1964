/*
 * meilisearch_admin.c - the blocking operations of the Meilisearch target
 * for ckpt and the operator's commands: whether an index exists, its
 * creation waited for to the end of its task, and what Meilisearch has
 * nothing of (load settings to suspend, pipelines, mappings, a refresh:
 * a write counts only once its task succeeded, and then it is searchable).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "meilisearch.h"
#include "p2o.h"

int
ms_status_error(long status, const struct sbuf *resp, struct p2o_err *err)
{
	char why[400];

	ms_error_text(resp->buf, resp->len, why, sizeof(why));
	return p2o_fail(err, status == 401 || status == 403 ? P2O_EXIT_AUTH :
	    P2O_EXIT_TEMPFAIL, "HTTP %ld: %s", status, why);
}

int
ms_index_exists(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	long status;
	int rc;

	ms_index_path(&path, index, "");
	http_call_set(&call, "GET", path.buf, NULL, NULL, 0);
	rc = target_request(c, &call, &resp, &status, err);
	if (rc == 0)
		rc = status == 200 ? 1 : status == 404 ? 0 :
		    ms_status_error(status, &resp, err);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

int
ms_wait_task(struct target_conn *c, uint64_t task, char *code, size_t ccap,
    char *msg, size_t mcap, struct p2o_err *err)
{
	struct timespec ts;
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	long status, waited, wait_ms = MS_POLL_MS;
	int rc = -1, st;

	sbuf_addf(&path, "/tasks/%llu", (unsigned long long)task);
	http_call_set(&call, "GET", path.buf, NULL, NULL, 0);
	for (waited = 0; waited < MS_TASK_WAIT_MS; waited += wait_ms,
	    wait_ms = wait_ms * 2 > MS_POLL_MAX_MS ? MS_POLL_MAX_MS :
	    wait_ms * 2) {
		if (target_request(c, &call, &resp, &status, err) == -1)
			break;
		if (status != 200) {
			ms_status_error(status, &resp, err);
			break;
		}
		st = ms_task_state(&resp, code, ccap, msg, mcap);
		if (st == 1 || st == 2) {
			rc = st == 1;
			break;
		}
		if (st != 0) {
			p2o_fail(err, P2O_EXIT_TEMPFAIL, "task %llu did not "
			    "succeed", (unsigned long long)task);
			break;
		}
		ts.tv_sec = wait_ms / 1000;
		ts.tv_nsec = (wait_ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
	if (waited >= MS_TASK_WAIT_MS)
		p2o_fail(err, P2O_EXIT_TEMPFAIL, "task %llu still not done "
		    "after %d ms", (unsigned long long)task, MS_TASK_WAIT_MS);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

int
ms_index_create(struct target_conn *c, const char *index, const char *body,
    int *created, struct p2o_err *err)
{
	struct sbuf b = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	uint64_t task;
	char code[96], msg[320];
	long status;
	int rc;

	(void)body;
	*created = 0;
	/* asked first: a creation task for an index that is there would
	 * only fail (index_already_exists), in the task list for all to see */
	if ((rc = ms_index_exists(c, index, err)) != 0)
		return rc == 1 ? 0 : -1;
	sbuf_adds(&b, "{\"uid\":");
	sbuf_add_jstr(&b, index, strlen(index));
	sbuf_adds(&b, ",\"primaryKey\":\"" MS_PRIMARY_KEY "\"}");
	http_call_set(&call, "POST", "/indexes", "application/json", b.buf,
	    b.len);
	rc = target_request(c, &call, &resp, &status, err);
	if (rc == 0 && status != 202)
		rc = ms_status_error(status, &resp, err);
	else if (rc == 0 && !ms_task_uid(&resp, &task))
		rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "creating index '%s': "
		    "no taskUid in the answer", index);
	else if (rc == 0) {
		rc = ms_wait_task(c, task, code, sizeof(code), msg,
		    sizeof(msg), err);
		if (rc == 1)
			*created = 1;
		else if (rc == 0 && strcmp(code, "index_already_exists") != 0)
			rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "creating index "
			    "'%s': task %llu failed: %s", index,
			    (unsigned long long)task, code);
		rc = rc == -1 ? -1 : 0;
	}
	sbuf_release(&b);
	sbuf_release(&resp);
	return rc;
}

/* no refresh interval or replicas to suspend during a load: an existing
 * index has nothing of its own to restore ({}) */
int
ms_load_settings(struct target_conn *c, const char *index, struct sbuf *orig,
    int *found, struct p2o_err *err)
{
	int rc = ms_index_exists(c, index, err);

	*found = rc == 1;
	sbuf_reset(orig);
	if (rc == 1)
		sbuf_adds(orig, "{}");
	return rc == -1 ? -1 : 0;
}

int
ms_load_suspend(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	(void)c, (void)index, (void)err;
	return 0;
}

int
ms_load_restore(struct target_conn *c, const char *index, struct jspan orig,
    struct p2o_err *err)
{
	(void)c, (void)index, (void)orig, (void)err;
	return 0;
}

/* pipelines are refused at load (no TCAP_PIPELINES): none exists */
int
ms_pipeline_exists(struct target_conn *c, const char *name,
    struct p2o_err *err)
{
	(void)c, (void)name, (void)err;
	return 0;
}

int
ms_index_state(struct target_conn *c, const char *name,
    struct target_index_state *st, struct p2o_err *err)
{
	int rc = ms_index_exists(c, name, err);

	memset(st, 0, sizeof(*st));
	st->exists = rc == 1;
	return rc == -1 ? -1 : 0;
}

int
ms_mapping_conflicts(struct target_conn *c, const char *index,
    const char *body, struct sbuf *report, int *n, struct p2o_err *err)
{
	(void)c, (void)index, (void)body, (void)report, (void)err;
	*n = 0;
	return 0;
}

int
ms_refresh(struct target_conn *c, const char *indices, struct p2o_err *err)
{
	(void)c, (void)indices, (void)err;
	return 0;
}
