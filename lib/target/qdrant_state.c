/*
 * qdrant_state.c - the checkpoint and load progress in Qdrant itself: one
 * point per key in the collection QD_STATE (payload only, no vectors), its
 * id the UUIDv5 of the key, its payload {"key":..,"version":N,"doc":{..}}.
 * A write is an upsert with wait=true, answered once applied. Qdrant has
 * no conditional write, so a versioned write reads the stored version
 * first and never replaces a higher one; one process writes a stream's
 * state (the supervisor runs one ckpt), so nothing comes between the two.
 */
#include <stdio.h>
#include <string.h>

#include "qdrant.h"
#include "p2o.h"

static void
point_path(const char *key, const char *rest, struct sbuf *path)
{
	char uuid[37];

	qd_point_id(key, strlen(key), uuid);
	qd_collection_path(path, QD_STATE, "/points/");
	sbuf_adds(path, uuid);
	sbuf_adds(path, rest);
}

/* the stored payload's doc and version: 1, 0 none, -1 */
static int
read_state(struct target_conn *c, const char *key, struct sbuf *resp,
    struct jspan *doc, uint64_t *version, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT;
	struct http_call call;
	struct jspan obj, v, pl;
	long status;
	int rc;

	point_path(key, "", &path);
	http_call_set(&call, "GET", path.buf, NULL, NULL, 0);
	rc = target_request(c, &call, resp, &status, err);
	sbuf_release(&path);
	if (rc == -1)
		return -1;
	/* no such point, or no collection yet: nothing stored */
	if (status == 404)
		return 0;
	if (status != 200)
		return qd_status_error(status, resp, err);
	*version = 0;
	if (target_body_object(resp->buf, resp->len, &obj) == -1 ||
	    !jobj_get(obj, "result", &v) || !jobj_get(v, "payload", &pl) ||
	    !jobj_get(pl, "doc", doc) || jspan_type(*doc) != J_OBJECT)
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "state point '%s' in "
		    "collection '" QD_STATE "' has no doc object", key);
	if (jobj_get(pl, "version", &v))
		jnum_u64(v, version);
	return 1;
}

int
qd_state_get(struct target_conn *c, const char *key, struct sbuf *doc,
    int *found, struct p2o_err *err)
{
	struct sbuf resp = SBUF_INIT;
	struct jspan d;
	uint64_t v;
	int rc;

	*found = 0;
	sbuf_reset(doc);
	rc = read_state(c, key, &resp, &d, &v, err);
	if (rc == 1) {
		sbuf_add(doc, d.p, d.n);
		*found = 1;
	}
	sbuf_release(&resp);
	return rc == -1 ? -1 : 0;
}

int
qd_state_put(struct target_conn *c, const char *key, const char *body,
    size_t len, uint64_t version, int *conflict, struct p2o_err *err)
{
	struct sbuf resp = SBUF_INIT, b = SBUF_INIT, path = SBUF_INIT;
	struct http_call call;
	struct jspan d;
	uint64_t have = 0;
	char uuid[37];
	long status = 0;
	int rc = 0, created, attempt;

	*conflict = 0;
	if (version > 0 && (rc = read_state(c, key, &resp, &d, &have,
	    err)) == 1 && have > version) {
		*conflict = 1;
		goto out;
	}
	if (rc == -1)
		goto out;
	qd_point_id(key, strlen(key), uuid);
	sbuf_adds(&b, "{\"points\":[{\"id\":\"");
	sbuf_adds(&b, uuid);
	sbuf_adds(&b, "\",\"vector\":{},\"payload\":{\"key\":");
	sbuf_add_jstr(&b, key, strlen(key));
	sbuf_adds(&b, ",\"version\":");
	sbuf_add_u64(&b, version);
	sbuf_adds(&b, ",\"doc\":");
	sbuf_add(&b, body, len);
	sbuf_adds(&b, "}}]}");
	qd_collection_path(&path, QD_STATE, "/points?wait=true");
	http_call_set(&call, "PUT", path.buf, "application/json", b.buf,
	    b.len);
	/* the collection is made at the first write that finds it missing */
	for (attempt = 0; attempt < 2; attempt++) {
		if ((rc = target_request(c, &call, &resp, &status, err)) == -1)
			goto out;
		if (status != 404 || attempt > 0)
			break;
		c->state_ready = 0;
		if ((rc = qd_state_prepare(c, &created, err)) == -1)
			goto out;
	}
	rc = status >= 200 && status < 300 ? 0 :
	    qd_status_error(status, &resp, err);
out:
	sbuf_release(&resp);
	sbuf_release(&b);
	sbuf_release(&path);
	return rc == -1 ? -1 : 0;
}

int
qd_state_prepare(struct target_conn *c, int *created, struct p2o_err *err)
{
	*created = 0;
	if (c->state_ready)
		return 0;
	if (qd_index_create(c, QD_STATE, NULL, created, err) == -1)
		return -1;
	c->state_ready = 1;
	return 0;
}
