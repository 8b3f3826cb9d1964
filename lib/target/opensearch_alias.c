/*
 * opensearch_alias.c - what a rebuild needs of an OpenSearch or
 * Elasticsearch cluster (pg2osync reindex, switch-alias): the documents
 * an index holds once refreshed, an alias moved onto an index in one
 * _aliases request (its removals from every index it named and its
 * addition together: readers never see the name resolve to nothing or
 * to two indices), and an old index deleted. Blocking on one connection;
 * never logs, never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opensearch.h"
#include "p2o.h"

/* a non-2xx answer as err: 77 for refused credentials, 69 for a refusal
 * of the request itself, 75 for the rest */
static int
answer_fail(long status, const struct sbuf *resp, const char *what,
    struct p2o_err *err)
{
	enum target_answer a = os_answer_class(status, resp->buf, resp->len);
	char why[400];

	os_error_text(resp->buf, resp->len, why, sizeof(why));
	return p2o_fail(err, a == TA_AUTH ? P2O_EXIT_AUTH : a == TA_REFUSED ?
	    P2O_EXIT_REFUSED : P2O_EXIT_TEMPFAIL, "%s: HTTP %ld: %s", what,
	    status, why);
}

int
os_doc_count(struct target_conn *c, const char *index, uint64_t *n,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj, v;
	char what[600];
	int rc;

	*n = 0;
	snprintf(what, sizeof(what), "counting the documents of '%s'", index);
	/* a count sees only refreshed documents */
	if (os_refresh(c, index, err) == -1)
		return -1;
	os_index_path(&path, index, "/_count");
	if ((rc = os_get_object(c, path.buf, &resp, &obj, err)) == 0)
		rc = p2o_fail(err, P2O_EXIT_REFUSED, "%s: no such index",
		    what);
	else if (rc == 1 && (!jobj_get(obj, "count", &v) ||
	    jnum_u64(v, n) == -1))
		rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "%s: the answer has no "
		    "count", what);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc == 1 ? 0 : -1;
}

/* the indices an alias names now, as a comma list into was ("" none) */
static int
alias_indices(struct target_conn *c, const char *alias, struct sbuf *was,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj, key, val;
	struct jiter it;
	char name[512];
	int rc;

	sbuf_reset(was);
	sbuf_adds(&path, "/_alias/");
	http_escape(&path, alias, HTTP_KEEP_INDEX);
	rc = os_get_object(c, path.buf, &resp, &obj, err);
	if (rc == 1 && jiter_init(&it, obj) == 0)
		while (jiter_member(&it, &key, &val) == 1) {
			if (jstr_copy(key, name, sizeof(name)) == -1)
				continue;
			if (was->len)
				sbuf_addc(was, ',');
			sbuf_adds(was, name);
		}
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc == -1 ? -1 : 0;
}

static void
action(struct sbuf *b, const char *verb, const char *index,
    const char *alias)
{
	sbuf_addf(b, "%s{\"%s\":{\"index\":", b->buf[b->len - 1] == '[' ?
	    "" : ",", verb);
	sbuf_add_jstr(b, index, strlen(index));
	sbuf_adds(b, ",\"alias\":");
	sbuf_add_jstr(b, alias, strlen(alias));
	sbuf_adds(b, "}}");
}

int
os_alias_switch(struct target_conn *c, const char *alias, const char *index,
    struct sbuf *was, struct p2o_err *err)
{
	struct sbuf body = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	const char *p, *q;
	char one[512], what[600];
	long status;
	int rc = -1;

	if (alias_indices(c, alias, was, err) == -1)
		return -1;
	snprintf(what, sizeof(what), "moving alias '%s' onto '%s'", alias,
	    index);
	sbuf_adds(&body, "{\"actions\":[");
	for (p = was->buf; p != NULL && *p; p = *q ? q + 1 : q) {
		q = p + strcspn(p, ",");
		snprintf(one, sizeof(one), "%.*s", (int)(q - p), p);
		if (strcmp(one, index) != 0)
			action(&body, "remove", one, alias);
	}
	action(&body, "add", index, alias);
	sbuf_adds(&body, "]}");
	http_call_set(&call, "POST", "/_aliases", "application/json",
	    body.buf, body.len);
	if (target_request(c, &call, &resp, &status, err) == 0)
		rc = status >= 200 && status < 300 ? 0 :
		    answer_fail(status, &resp, what, err);
	sbuf_release(&body);
	sbuf_release(&resp);
	return rc;
}

int
os_index_delete(struct target_conn *c, const char *index, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	char what[600];
	long status;
	int rc = -1;

	snprintf(what, sizeof(what), "deleting index '%s'", index);
	/* one name, never a glob or a list: nothing else can go with it */
	sbuf_adds(&path, "/");
	http_escape(&path, index, "");
	http_call_set(&call, "DELETE", path.buf, NULL, NULL, 0);
	if (target_request(c, &call, &resp, &status, err) == 0)
		rc = (status >= 200 && status < 300) || status == 404 ? 0 :
		    answer_fail(status, &resp, what, err);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}
