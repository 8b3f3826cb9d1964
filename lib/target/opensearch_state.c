/*
 * opensearch_state.c - what ckpt keeps in OpenSearch and the index
 * settings a load suspends, blocking on one connection: our documents in
 * the hidden index .pg2osync_meta (created on the first write with one
 * shard, auto-expanding replicas, hidden from `*` searches, and a mapping
 * that indexes nothing it was not told to), written with an external_gte
 * version when the caller gives one so a document never goes back, and
 * read and written many at a time (one _mget, one _bulk) for a load plan;
 * the existence and creation of an index; a load's refresh_interval and
 * number_of_replicas, read, suspended and restored.
 *
 * Every failure returns -1 with the exit code it means (77 for refused
 * credentials, 75 for anything a later attempt may get past) and the
 * target's words; the caller says what it was doing. Logs only the
 * creation of the state index; never exits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "opensearch.h"
#include "p2o.h"

#define STATE_INDEX_BODY \
	"{\"settings\":{\"index\":{\"number_of_shards\":1," \
	"\"auto_expand_replicas\":\"0-1\",\"hidden\":true}}," \
	"\"mappings\":{\"dynamic\":false,\"properties\":{" \
	"\"source\":{\"type\":\"keyword\"},\"pos\":{\"type\":\"long\"}," \
	"\"updated_at\":{\"type\":\"date\"}}}}"

static const char suspend_body[] = "{\"index\":{\"refresh_interval\":"
    "\"-1\",\"number_of_replicas\":0}}";

/*
 * How long a state write may wait. A node keeps a write it cannot apply
 * yet and tries it again at each new cluster state until the request's
 * timeout, a minute by default, and only then answers: a promoted primary
 * not in primary mode yet answered 500 retry_on_primary_exception after
 * 60 s (a node cut from the primary's node, 500
 * node_not_connected_exception). A checkpoint waited that minute, however
 * soon the shard recovered, and the drain of a SIGTERM, a minute too,
 * ended before its first answer. STATE_WAIT has the node answer after 5 s
 * instead (measured: 5.2 s), and ckpt tries again. A primary waiting for
 * a cluster manager to drop a lost copy holds the write past any timeout
 * (about 100 s, until the cluster formed again): each attempt is bounded
 * at STATE_CALL_MS, after which the client leaves that node for the next.
 */
#define STATE_WAIT	"5s"
#define STATE_CALL_MS	15000L

/* a read of an index whose shard is not started yet, tried again this
 * often: 2 s in all */
#define SHARD_WAIT_TRIES	40
#define SHARD_WAIT_NAP_MS	50

/* a failed request: the code its status means, the target's words */
static int
status_error(long status, const struct sbuf *resp, struct p2o_err *err)
{
	char type[128], reason[256];

	os_error(resp->buf, resp->len, type, sizeof(type), reason,
	    sizeof(reason));
	/* a block (a full disk) is waited out like any outage */
	return p2o_fail(err, os_answer_class(status, resp->buf, resp->len) ==
	    TA_AUTH ? P2O_EXIT_AUTH : P2O_EXIT_TEMPFAIL, "HTTP %ld%s%s%s%s",
	    status,
	    type[0] ? " " : "", type, reason[0] ? ": " : "", reason);
}

/*
 * GET path: 1 and the answer's object in obj (pointing into resp), 0 on a
 * 404 (resp holds its body), -1 with err for anything else
 */
static int
get_object(struct target_conn *c, const char *path, struct sbuf *resp,
    struct jspan *obj, struct p2o_err *err)
{
	struct timespec nap = { 0, SHARD_WAIT_NAP_MS * 1000000L };
	struct http_call call;
	char type[128], reason[8];
	long status;
	int tries = 0;

	http_call_set(&call, "GET", path, NULL, NULL, 0);
	for (;;) {
		if (target_request(c, &call, resp, &status, err) == -1)
			return -1;
		if (status != 503 || ++tries > SHARD_WAIT_TRIES)
			break;
		/* an index another writer has just created answers so
		 * until its shard is started: moments, not an outage */
		os_error(resp->buf, resp->len, type, sizeof(type), reason,
		    sizeof(reason));
		if (strcmp(type, "no_shard_available_action_exception") != 0)
			break;
		nanosleep(&nap, NULL);
	}
	if (status == 404)
		return 0;
	if (status != 200)
		return status_error(status, resp, err);
	if (target_body_object(resp->buf, resp->len, obj) == -1)
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "the answer is not "
		    "a JSON object");
	return 1;
}

static void
doc_path(struct sbuf *path, const char *key)
{
	sbuf_reset(path);
	sbuf_adds(path, "/" OS_STATE_INDEX "/_doc/");
	/* escaped: no key can reach into another path */
	http_escape(path, key, HTTP_KEEP_ID);
}

int
os_state_get(struct target_conn *c, const char *key, struct sbuf *doc,
    int *found, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj, src;
	char type[128], reason[8];
	int rc;

	*found = 0;
	sbuf_reset(doc);
	doc_path(&path, key);
	if ((rc = get_object(c, path.buf, &resp, &obj, err)) == 0) {
		os_error(resp.buf, resp.len, type, sizeof(type), reason,
		    sizeof(reason));
		/* found:false says the index is there, the document not */
		c->state_ready = strcmp(type, "index_not_found_exception") != 0;
	} else if (rc == 1) {
		c->state_ready = 1;
		if (!jobj_get(obj, "_source", &src) ||
		    jspan_type(src) != J_OBJECT)
			rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "the response "
			    "holds no document");
		else {
			sbuf_add(doc, src.p, src.n);
			*found = 1;
			rc = 0;
		}
	}
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

static int
state_index(struct target_conn *c, struct p2o_err *err)
{
	int created;

	if (c->state_ready)
		return 0;
	if (os_index_create(c, OS_STATE_INDEX, STATE_INDEX_BODY, &created,
	    err) == -1)
		return p2o_err_prefix(err, "creating index '" OS_STATE_INDEX
		    "'");
	if (created)
		log_info("created index '" OS_STATE_INDEX "'");
	c->state_ready = 1;
	return 0;
}

int
os_state_put(struct target_conn *c, const char *key, const char *body,
    size_t len, uint64_t version, int *conflict, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	long status = 0;
	int attempt, rc = -1;

	*conflict = 0;
	doc_path(&path, key);
	sbuf_adds(&path, "?timeout=" STATE_WAIT);
	if (version > 0)
		sbuf_addf(&path, "&version=%" PRIu64
		    "&version_type=external_gte", version);
	for (attempt = 0; attempt < 2; attempt++) {
		if (state_index(c, err) == -1)
			goto out;
		http_call_set(&call, "PUT", path.buf, NULL, body, len);
		call.timeout_ms = STATE_CALL_MS;
		if (target_request(c, &call, &resp, &status, err) == -1)
			goto out;
		if (status == 200 || status == 201) {
			rc = 0;
			goto out;
		}
		if (status == 409 && version > 0) {
			*conflict = 1;
			rc = 0;
			goto out;
		}
		/* the index vanished under us: create it again, once.
		 * Writing without it would auto-create a visible index
		 * with guessed mappings */
		if (status != 404)
			break;
		c->state_ready = 0;
	}
	status_error(status, &resp, err);
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

int
os_index_exists(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	long status;
	int rc = -1;

	os_index_path(&path, index, "");
	http_call_set(&call, "HEAD", path.buf, NULL, NULL, 0);
	if (target_request(c, &call, &resp, &status, err) == 0)
		rc = status == 200 ? 1 : status == 404 ? 0 :
		    status_error(status, &resp, err);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

int
os_index_create(struct target_conn *c, const char *index, const char *body,
    int *created, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	char why[8];
	long status;
	int rc = -1;

	*created = 0;
	os_create_call(index, body, &path, &call);
	if (target_request(c, &call, &resp, &status, err) == -1)
		goto out;
	switch (os_create_answer(status, &resp, why, sizeof(why))) {
	case TA_OK:
		*created = 1;
		/* FALLTHROUGH */
	case TA_EXISTS:
		rc = 0;
		break;
	default:
		status_error(status, &resp, err);
		break;
	}
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

/* {"<index>":{"settings":{"index.refresh_interval":"5s",...}}} as
 * {"refresh_interval":...,"number_of_replicas":...}, null where the index
 * has none of its own: restored, null means the target's default again */
int
os_load_settings(struct target_conn *c, const char *index,
    struct sbuf *orig, int *found, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj, ix, settings, v, name;
	struct jiter it;
	int rc, n = 0;

	*found = 0;
	sbuf_reset(orig);
	os_index_path(&path, index, "/_settings?flat_settings=true");
	if ((rc = get_object(c, path.buf, &resp, &obj, err)) != 1)
		goto out;
	/* an alias answers under the index it names: one index is the
	 * load's, whose settings the alias's own suspend and restore reach */
	if (!jobj_get(obj, index, &ix)) {
		jiter_init(&it, obj);
		while (jiter_member(&it, &name, &v))
			if (n++ == 0)
				ix = v;
		if (n != 1) {
			rc = p2o_fail(err, P2O_EXIT_REFUSED, "'%s' names %d "
			    "indices: a load writes through a name of one",
			    index, n);
			goto out;
		}
	}
	if (jspan_type(ix) != J_OBJECT ||
	    !jobj_get(ix, "settings", &settings) ||
	    jspan_type(settings) != J_OBJECT) {
		rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "unexpected response");
		goto out;
	}
	sbuf_adds(orig, "{\"refresh_interval\":");
	if (jobj_get(settings, "index.refresh_interval", &v))
		sbuf_add(orig, v.p, v.n);
	else
		sbuf_adds(orig, "null");
	sbuf_adds(orig, ",\"number_of_replicas\":");
	if (jobj_get(settings, "index.number_of_replicas", &v))
		sbuf_add(orig, v.p, v.n);
	else
		sbuf_adds(orig, "null");
	sbuf_addc(orig, '}');
	*found = 1;
	rc = 0;
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

static int
put_settings(struct target_conn *c, const char *index, const char *body,
    size_t len, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	long status;
	int rc;

	os_index_path(&path, index, "/_settings");
	http_call_set(&call, "PUT", path.buf, NULL, body, len);
	rc = target_request(c, &call, &resp, &status, err);
	if (rc == 0 && status != 200)
		rc = status_error(status, &resp, err);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

int
os_load_suspend(struct target_conn *c, const char *index,
    struct p2o_err *err)
{
	return put_settings(c, index, suspend_body, sizeof(suspend_body) - 1,
	    err);
}

int
os_load_restore(struct target_conn *c, const char *index, struct jspan orig,
    struct p2o_err *err)
{
	struct sbuf body = SBUF_INIT;
	int rc;

	sbuf_adds(&body, "{\"index\":");
	sbuf_add(&body, orig.p, orig.n);
	sbuf_addc(&body, '}');
	rc = put_settings(c, index, body.buf, body.len, err);
	sbuf_release(&body);
	return rc;
}

int
os_state_prepare(struct target_conn *c, int *created, struct p2o_err *err)
{
	*created = 0;
	if (os_index_create(c, OS_STATE_INDEX, STATE_INDEX_BODY, created,
	    err) == -1)
		return p2o_err_prefix(err, "creating index '" OS_STATE_INDEX
		    "'");
	c->state_ready = 1;
	return 0;
}

int
os_get_object(struct target_conn *c, const char *path, struct sbuf *resp,
    struct jspan *obj, struct p2o_err *err)
{
	return get_object(c, path, resp, obj, err);
}

/* keys per request of the batched reads and writes: a load plan of a
 * thousand sections is two or four requests, none of them huge */
#define STATE_BATCH	500
/* and bytes of documents per _bulk (progress with many bounds is large) */
#define STATE_BATCH_BYTES	(4u << 20)

/* the JSON strings of keys [from, to) into ids, each a docref of the
 * state index */
static void
state_refs(const char *const *keys, int from, int to, struct sbuf *ids,
    struct docref *refs)
{
	static const char ix[] = "\"" OS_STATE_INDEX "\"";
	size_t *off = xcalloc((size_t)(to - from), sizeof(*off));
	int i;

	sbuf_reset(ids);
	for (i = from; i < to; i++) {
		off[i - from] = ids->len;
		sbuf_add_jstr(ids, keys[i], strlen(keys[i]));
	}
	for (i = from; i < to; i++) {
		refs[i - from] = (struct docref){ .index = ix,
		    .ilen = sizeof(ix) - 1, .id = ids->buf + off[i - from],
		    .idlen = (i + 1 < to ? off[i + 1 - from] : ids->len) -
		    off[i - from] };
	}
	free(off);
}

int
os_state_get_many(struct target_conn *c, const char *const *keys, int n,
    struct sbuf *docs, int *found, struct p2o_err *err)
{
	struct sbuf ids = SBUF_INIT, body = SBUF_INIT, resp = SBUF_INIT;
	struct docref *refs = xcalloc(STATE_BATCH, sizeof(*refs));
	struct jspan *got = xcalloc(STATE_BATCH, sizeof(*got));
	struct http_call call;
	char why[256];
	long status;
	int from, to, i, rc = 0;

	for (from = 0; from < n && rc == 0; from = to) {
		to = n - from > STATE_BATCH ? from + STATE_BATCH : n;
		state_refs(keys, from, to, &ids, refs);
		/* a realtime read, as GET is: a write just answered is seen */
		os_read_call(refs, to - from, &body, &call);
		if ((rc = target_request(c, &call, &resp, &status, err)) != 0)
			break;
		switch (os_read_answer(status, &resp, to - from, got, why,
		    sizeof(why))) {
		case TA_OK:
			break;
		case TA_AUTH:
			rc = p2o_fail(err, P2O_EXIT_AUTH, "HTTP %ld %s", status,
			    why);
			continue;
		default:
			rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "HTTP %ld %s",
			    status, why);
			continue;
		}
		for (i = from; i < to; i++) {
			sbuf_reset(&docs[i]);
			found[i] = got[i - from].p != NULL;
			if (found[i])
				sbuf_add(&docs[i], got[i - from].p,
				    got[i - from].n);
		}
	}
	free(refs);
	free(got);
	sbuf_release(&ids);
	sbuf_release(&body);
	sbuf_release(&resp);
	return rc;
}

/*
 * The items of a _bulk answer for n writes: 0 when each was written, 1
 * when one met a missing index (the state index deleted under us), -1
 * with err for any other failure or an answer that is not one for n.
 */
static int
bulk_items(long status, const struct sbuf *resp, int n, struct p2o_err *err)
{
	struct item_result *items = xcalloc((size_t)n, sizeof(*items));
	char why[320];
	int i, rc = 0;

	switch (os_bulk_answer(status, resp->buf, resp->len, n, items, why,
	    sizeof(why))) {
	case TA_OK:
		for (i = 0; i < n && rc == 0; i++) {
			if (items[i].verdict == ITEM_OK)
				continue;
			if (items[i].status == 404)
				rc = 1;
			else
				rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "HTTP %d "
				    "%s: %s", items[i].status, items[i].type,
				    items[i].reason);
		}
		break;
	case TA_AUTH:
		rc = p2o_fail(err, P2O_EXIT_AUTH, "HTTP %ld %s", status, why);
		break;
	default:
		rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "HTTP %ld %s", status,
		    why);
		break;
	}
	free(items);
	return rc;
}

int
os_state_put_many(struct target_conn *c, const char *const *keys,
    const struct sbuf *bodies, int n, struct p2o_err *err)
{
	struct sbuf body = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	long status;
	int from, to, attempt, rc = 0;

	for (from = 0; from < n && rc == 0; from = to) {
		sbuf_reset(&body);
		for (to = from; to < n && to - from < STATE_BATCH &&
		    (to == from || body.len < STATE_BATCH_BYTES); to++) {
			sbuf_adds(&body, "{\"index\":{\"_index\":\""
			    OS_STATE_INDEX "\",\"_id\":");
			sbuf_add_jstr(&body, keys[to], strlen(keys[to]));
			sbuf_adds(&body, "}}\n");
			sbuf_add(&body, bodies[to].buf, bodies[to].len);
			sbuf_addc(&body, '\n');
		}
		for (attempt = 0; attempt < 2; attempt++) {
			if ((rc = state_index(c, err)) != 0)
				break;
			os_bulk_call(body.buf, body.len, &call);
			if ((rc = target_request(c, &call, &resp, &status,
			    err)) != 0)
				break;
			/* the index vanished under us: created again, once,
			 * as a single write does */
			if ((rc = bulk_items(status, &resp, to - from,
			    err)) != 1)
				break;
			c->state_ready = 0;
		}
		if (rc == 1)
			rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "index '"
			    OS_STATE_INDEX "' is gone after its creation");
	}
	sbuf_release(&body);
	sbuf_release(&resp);
	return rc;
}
