/*
 * qdrant_admin.c - the blocking operations of the Qdrant target for ckpt
 * and the operator's commands: whether a collection exists, its creation,
 * the check of an existing collection's vectors against its mapping file
 * (pg2osync validate), and what Qdrant has nothing of (load settings to
 * suspend, pipelines, a refresh: a write is answered with wait=true only
 * once applied, and then it is searchable).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qdrant.h"
#include "p2o.h"

int
qd_status_error(long status, const struct sbuf *resp, struct p2o_err *err)
{
	char why[400];

	qd_error_text(resp->buf, resp->len, why, sizeof(why));
	return p2o_fail(err, status == 401 || status == 403 ? P2O_EXIT_AUTH :
	    P2O_EXIT_TEMPFAIL, "HTTP %ld: %s", status, why);
}

/* GET /collections/<name>: 1 with its answer in resp, 0 none, -1 */
static int
collection_info(struct target_conn *c, const char *name, struct sbuf *resp,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT;
	struct http_call call;
	long status;
	int rc;

	qd_collection_path(&path, name, "");
	http_call_set(&call, "GET", path.buf, NULL, NULL, 0);
	rc = target_request(c, &call, resp, &status, err);
	if (rc == 0)
		rc = status == 200 ? 1 : status == 404 ? 0 :
		    qd_status_error(status, resp, err);
	sbuf_release(&path);
	return rc;
}

int
qd_index_exists(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	struct sbuf resp = SBUF_INIT;
	int rc = collection_info(c, index, &resp, err);

	sbuf_release(&resp);
	return rc;
}

int
qd_index_create(struct target_conn *c, const char *index, const char *body,
    int *created, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	const char *b = qd_create_body(body);
	char why[400];
	long status;
	int rc;

	*created = 0;
	qd_collection_path(&path, index, "");
	http_call_set(&call, "PUT", path.buf, "application/json", b,
	    strlen(b));
	rc = target_request(c, &call, &resp, &status, err);
	if (rc == 0 && status >= 200 && status < 300)
		*created = 1;
	else if (rc == 0) {
		qd_error_text(resp.buf, resp.len, why, sizeof(why));
		if (!(status == 409 || (status == 400 &&
		    strstr(why, "already exists"))))
			rc = p2o_fail(err, status == 401 || status == 403 ?
			    P2O_EXIT_AUTH : status >= 400 && status < 500 &&
			    status != 408 && status != 429 ? P2O_EXIT_REFUSED :
			    P2O_EXIT_TEMPFAIL, "creating collection '%s': "
			    "HTTP %ld: %s", index, status, why);
	}
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

/* Qdrant builds its indexes as points arrive and has no refresh interval
 * or replica count a load would gain by suspending: an existing
 * collection has nothing of its own to restore ({}) */
int
qd_load_settings(struct target_conn *c, const char *index, struct sbuf *orig,
    int *found, struct p2o_err *err)
{
	int rc = qd_index_exists(c, index, err);

	*found = rc == 1;
	sbuf_reset(orig);
	if (rc == 1)
		sbuf_adds(orig, "{}");
	return rc == -1 ? -1 : 0;
}

int
qd_load_suspend(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	(void)c, (void)index, (void)err;
	return 0;
}

int
qd_load_restore(struct target_conn *c, const char *index, struct jspan orig,
    struct p2o_err *err)
{
	(void)c, (void)index, (void)orig, (void)err;
	return 0;
}

/* pipelines are refused at load (no TCAP_PIPELINES): none exists */
int
qd_pipeline_exists(struct target_conn *c, const char *name,
    struct p2o_err *err)
{
	(void)c, (void)name, (void)err;
	return 0;
}

int
qd_index_state(struct target_conn *c, const char *name,
    struct target_index_state *st, struct p2o_err *err)
{
	int rc = qd_index_exists(c, name, err);

	memset(st, 0, sizeof(*st));
	st->exists = rc == 1;
	return rc == -1 ? -1 : 0;
}

/* one named vector of the file (want) against the collection's (have,
 * p NULL: it has none of that name): how many of its size and distance
 * differ, each described in report */
static int
vector_conflict(struct jspan name, struct jspan want, struct jspan have,
    struct sbuf *report)
{
	static const char *const keys[] = { "size", "distance" };
	struct jspan a, b;
	char nm[128];
	int n = 0;
	size_t k;

	if (jstr_copy(name, nm, sizeof(nm)) == -1)
		snprintf(nm, sizeof(nm), "(long name)");
	if (have.p == NULL) {
		sbuf_addf(report, "%svector '%s' is not in the collection",
		    report->len ? "; " : "", nm);
		return 1;
	}
	for (k = 0; k < 2; k++) {
		if (!jobj_get(want, keys[k], &a))
			continue;
		if (!jobj_get(have, keys[k], &b)) {
			b.p = "none";
			b.n = 4;
		} else if (a.n == b.n && memcmp(a.p, b.p, a.n) == 0)
			continue;
		sbuf_addf(report, "%svector '%s' has %s %.*s, the file %.*s",
		    report->len ? "; " : "", nm, keys[k], (int)b.n, b.p,
		    (int)a.n, a.p);
		n++;
	}
	return n;
}

/* the named vectors of the file that the existing collection lacks or
 * configures otherwise (size, distance); no collection is no conflict */
int
qd_mapping_conflicts(struct target_conn *c, const char *index,
    const char *body, struct sbuf *report, int *n, struct p2o_err *err)
{
	struct sbuf resp = SBUF_INIT;
	struct jspan file, fvecs, obj, v, have, key, want, one;
	struct jiter it;
	int rc;

	*n = 0;
	sbuf_reset(report);
	if (body == NULL || target_body_object(body, strlen(body), &file) == -1 ||
	    !jobj_get(file, "vectors", &fvecs) || jiter_init(&it, fvecs) == -1)
		return 0;
	if ((rc = collection_info(c, index, &resp, err)) != 1) {
		sbuf_release(&resp);
		return rc;
	}
	have.p = NULL;
	have.n = 0;
	if (target_body_object(resp.buf, resp.len, &obj) == 0 &&
	    jobj_get(obj, "result", &v) && jobj_get(v, "config", &v) &&
	    jobj_get(v, "params", &v) && jobj_get(v, "vectors", &v))
		have = v;
	while (jiter_member(&it, &key, &want)) {
		char *name = jstr_dup(key);

		one.p = NULL;
		one.n = 0;
		if (have.p != NULL && jspan_type(have) == J_OBJECT)
			jobj_get(have, name, &one);
		free(name);
		*n += vector_conflict(key, want, one, report);
	}
	sbuf_release(&resp);
	return 0;
}

/* a write is answered (wait=true) once applied, and searchable then */
int
qd_refresh(struct target_conn *c, const char *indices, struct p2o_err *err)
{
	(void)c, (void)indices, (void)err;
	return 0;
}
