/*
 * meilisearch_scan.c - every stored document of an index (or of the
 * indexes a glob matches) read back for pg2osync verify and reconcile:
 * POST /indexes/<uid>/documents/fetch in pages of PAGE. A document is
 * handed over with its id taken from the index's primary key (ours,
 * MS_PRIMARY_KEY, is left out of the document: the pipeline adds it).
 * A missing index holds no document.
 *
 * Pages are offsets into the index's documents, with no snapshot across
 * them: a document deleted while the scan reads shifts the ones after it
 * back, and the one at a page's edge would be missed. So the index's
 * updatedAt (a batch of tasks written moves it) is read before and after
 * a pass; when it moved, another pass hands over what the last one did
 * not see, up to PASSES passes (a document seen is handed over once, as
 * it was first read). A document changed or deleted meanwhile may be
 * handed over as it was: what the stream wrote since is the caller's to
 * weigh (verify --repair reads the rows again after it writes).
 *
 * Blocking on one connection; never logs, never exits.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meilisearch.h"
#include "p2o.h"

#define PAGE	1000
#define PASSES	3

/* the ids a scan handed over, "index\0id" */
struct seen {
	struct sbuf keys;
	size_t	*off;		/* open addressing into keys, 0: empty */
	size_t	 n, cap;
};

static uint64_t
key_hash(const char *k, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
	return h;
}

/* 1 when key was not there before (it is now) */
static int
seen_add(struct seen *s, const char *key, size_t n)
{
	size_t i, j, *old, oldcap;
	const char *k;

	if (s->n * 2 >= s->cap) {
		old = s->off, oldcap = s->cap;
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->off = xcalloc(s->cap, sizeof(*s->off));
		for (i = 0; i < oldcap; i++) {
			if (old[i] == 0)
				continue;
			k = s->keys.buf + old[i];
			j = key_hash(k + sizeof(size_t), *(const size_t *)
			    (const void *)k) & (s->cap - 1);
			while (s->off[j])
				j = (j + 1) & (s->cap - 1);
			s->off[j] = old[i];
		}
		free(old);
	}
	for (j = key_hash(key, n) & (s->cap - 1); s->off[j];
	    j = (j + 1) & (s->cap - 1)) {
		k = s->keys.buf + s->off[j];
		if (*(const size_t *)(const void *)k == n &&
		    memcmp(k + sizeof(size_t), key, n) == 0)
			return 0;
	}
	/* a record: its length, then the key; offset 0 stays "empty" */
	if (s->keys.len == 0)
		sbuf_add(&s->keys, "\0\0\0\0\0\0\0\0", sizeof(size_t));
	while (s->keys.len % sizeof(size_t))
		sbuf_addc(&s->keys, '\0');
	s->off[j] = s->keys.len;
	sbuf_add(&s->keys, &n, sizeof(n));
	sbuf_add(&s->keys, key, n);
	s->n++;
	return 1;
}

static void
seen_release(struct seen *s)
{
	sbuf_release(&s->keys);
	free(s->off);
	memset(s, 0, sizeof(*s));
}

static int
fail(long status, const struct sbuf *resp, const char *index,
    struct p2o_err *err)
{
	ms_status_error(status, resp, err);
	p2o_err_prefix(err, "reading index '%s'", index);
	return -1;
}

/*
 * The index's primary key (into pk) and the stamp of its last write (into
 * stamp): 1, 0 when there is no such index, -1 with err.
 */
static int
index_look(struct target_conn *c, const char *index, char *pk, size_t pkcap,
    struct sbuf *stamp, uint64_t *requests, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	struct jspan obj, v;
	long status;
	int rc;

	ms_index_path(&path, index, "");
	http_call_set(&call, "GET", path.buf, NULL, NULL, 0);
	(*requests)++;
	if ((rc = target_request(c, &call, &resp, &status, err)) == 0) {
		if (status == 404)
			rc = 0;
		else if (status != 200)
			rc = fail(status, &resp, index, err);
		else if (target_body_object(resp.buf, resp.len, &obj) == -1)
			rc = p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading index "
			    "'%s': GET /indexes/%s is not an index", index,
			    index);
		else {
			sbuf_reset(stamp);
			if (jobj_get(obj, "updatedAt", &v))
				sbuf_add(stamp, v.p, v.n);
			pk[0] = '\0';
			if (jobj_get(obj, "primaryKey", &v) &&
			    jspan_type(v) == J_STRING &&
			    jstr_copy(v, pk, pkcap) == -1)
				pk[0] = '\0';
			rc = 1;
		}
	}
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

struct scan {
	struct target_conn *c;
	const char *index;	/* plain uid */
	struct sbuf rawindex;	/* as a JSON string */
	char	 pk[256];	/* its primary key */
	struct seen seen;
	struct sbuf id, source, key;
	int	(*fn)(void *, const struct target_doc *);
	void	*arg;
	uint64_t *requests;
};

/* one stored document to fn, unless an earlier pass handed it over */
static int
hand_over(struct scan *sc, struct jspan doc, struct p2o_err *err)
{
	struct target_doc d;
	struct jspan k, v, idv = { NULL, 0 };
	struct jiter it;
	int n = 0;

	if (jiter_init(&it, doc) == -1)
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading index '%s': "
		    "a document that is not an object", sc->index);
	sbuf_reset(&sc->source);
	sbuf_addc(&sc->source, '{');
	while (jiter_member(&it, &k, &v)) {
		if (sc->pk[0] && jkey_is(k, sc->pk, strlen(sc->pk))) {
			idv = v;
			/* ours names the document and is no column */
			if (strcmp(sc->pk, MS_PRIMARY_KEY) == 0)
				continue;
		}
		if (n++)
			sbuf_addc(&sc->source, ',');
		sbuf_add(&sc->source, k.p, k.n);
		sbuf_addc(&sc->source, ':');
		sbuf_add(&sc->source, v.p, v.n);
	}
	sbuf_addc(&sc->source, '}');
	/* an id is a string or an integer: as a string, as ours are */
	sbuf_reset(&sc->id);
	if (jspan_type(idv) == J_STRING)
		sbuf_add(&sc->id, idv.p, idv.n);
	else if (jspan_type(idv) == J_NUMBER) {
		sbuf_addc(&sc->id, '"');
		sbuf_add(&sc->id, idv.p, idv.n);
		sbuf_addc(&sc->id, '"');
	} else
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading index '%s': "
		    "a document without its primary key '%s'", sc->index,
		    sc->pk);
	sbuf_reset(&sc->key);
	sbuf_add(&sc->key, sc->rawindex.buf, sc->rawindex.len);
	sbuf_addc(&sc->key, '\0');
	sbuf_add(&sc->key, sc->id.buf, sc->id.len);
	if (!seen_add(&sc->seen, sc->key.buf, sc->key.len))
		return 0;
	memset(&d, 0, sizeof(d));
	d.index.p = sc->rawindex.buf;
	d.index.n = sc->rawindex.len;
	d.id.p = sc->id.buf;
	d.id.n = sc->id.len;
	d.source.p = sc->source.buf;
	d.source.n = sc->source.len;
	return sc->fn(sc->arg, &d);
}

/* one pass over the index's pages: 0, or -1 with err */
static int
pass(struct scan *sc, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, body = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	struct jspan obj, arr, doc, v;
	struct jiter it;
	uint64_t total, offset = 0;
	long status;
	int n, rc = -1;

	ms_index_path(&path, sc->index, "/documents/fetch");
	for (;;) {
		sbuf_reset(&body);
		sbuf_addf(&body, "{\"offset\":%llu,\"limit\":%d}",
		    (unsigned long long)offset, PAGE);
		http_call_set(&call, "POST", path.buf, "application/json",
		    body.buf, body.len);
		(*sc->requests)++;
		if (target_request(sc->c, &call, &resp, &status, err) == -1)
			goto out;
		if (status == 404)	/* deleted meanwhile: no documents */
			break;
		if (status != 200) {
			fail(status, &resp, sc->index, err);
			goto out;
		}
		if (target_body_object(resp.buf, resp.len, &obj) == -1 ||
		    !jobj_get(obj, "results", &arr) ||
		    jiter_init(&it, arr) == -1 ||
		    !jobj_get(obj, "total", &v) || jnum_u64(v, &total) == -1) {
			p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading index '%s': "
			    "unusable documents/fetch answer", sc->index);
			goto out;
		}
		for (n = 0; jiter_elem(&it, &doc); n++)
			if (hand_over(sc, doc, err) == -1)
				goto out;
		offset += (uint64_t)n;
		if (n < PAGE || offset >= total)
			break;
	}
	rc = 0;
out:
	sbuf_release(&path);
	sbuf_release(&body);
	sbuf_release(&resp);
	return rc;
}

/* every document of one index, in passes until one saw no write land */
static int
scan_index(struct scan *sc, const char *index, struct p2o_err *err)
{
	struct sbuf before = SBUF_INIT, after = SBUF_INIT;
	int i, rc;

	sc->index = index;
	sbuf_reset(&sc->rawindex);
	sbuf_add_jstr(&sc->rawindex, index, strlen(index));
	rc = index_look(sc->c, index, sc->pk, sizeof(sc->pk), &before,
	    sc->requests, err);
	for (i = 0; rc == 1 && i < PASSES; i++) {
		if (pass(sc, err) == -1 || (rc = index_look(sc->c, index,
		    sc->pk, sizeof(sc->pk), &after, sc->requests, err)) == -1) {
			rc = -1;
			break;
		}
		if (rc == 0 || (after.len == before.len &&
		    memcmp(after.buf, before.buf, after.len) == 0))
			break;
		sbuf_reset(&before);
		sbuf_add(&before, after.buf, after.len);
	}
	sbuf_release(&before);
	sbuf_release(&after);
	return rc == -1 ? -1 : 0;
}

/* the uids of every index a glob matches, as NUL-separated names */
static int
index_glob(struct target_conn *c, const char *glob, struct sbuf *names,
    int *n, uint64_t *requests, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	struct jspan obj, arr, ix, v;
	struct jiter it;
	uint64_t total, offset = 0;
	char uid[512];
	long status;
	int got, rc = -1;

	*n = 0;
	for (;;) {
		sbuf_reset(&path);
		sbuf_addf(&path, "/indexes?offset=%llu&limit=%d",
		    (unsigned long long)offset, PAGE);
		http_call_set(&call, "GET", path.buf, NULL, NULL, 0);
		(*requests)++;
		if (target_request(c, &call, &resp, &status, err) == -1)
			goto out;
		if (status != 200) {
			fail(status, &resp, glob, err);
			goto out;
		}
		if (target_body_object(resp.buf, resp.len, &obj) == -1 ||
		    !jobj_get(obj, "results", &arr) ||
		    jiter_init(&it, arr) == -1 ||
		    !jobj_get(obj, "total", &v) || jnum_u64(v, &total) == -1) {
			p2o_fail(err, P2O_EXIT_TEMPFAIL, "listing the indexes "
			    "'%s' matches: unusable answer", glob);
			goto out;
		}
		for (got = 0; jiter_elem(&it, &ix); got++)
			if (jobj_get(ix, "uid", &v) &&
			    jstr_copy(v, uid, sizeof(uid)) == 0 &&
			    fnmatch(glob, uid, 0) == 0) {
				sbuf_add(names, uid, strlen(uid) + 1);
				(*n)++;
			}
		offset += (uint64_t)got;
		if (got < PAGE || offset >= total)
			break;
	}
	rc = 0;
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

static int
ms_scan(struct target_conn *c, const char *index,
    int (*fn)(void *, const struct target_doc *), void *arg,
    uint64_t *requests, struct p2o_err *err)
{
	struct scan sc;
	struct sbuf names = SBUF_INIT;
	const char *name;
	int n = 1, i, rc = 0;

	memset(&sc, 0, sizeof(sc));
	sc.c = c;
	sc.fn = fn;
	sc.arg = arg;
	sc.requests = requests;
	if (strchr(index, '*') != NULL)
		rc = index_glob(c, index, &names, &n, requests, err);
	else
		sbuf_add(&names, index, strlen(index) + 1);
	for (i = 0, name = names.buf; rc == 0 && i < n; i++,
	    name += strlen(name) + 1)
		rc = scan_index(&sc, name, err);
	seen_release(&sc.seen);
	sbuf_release(&sc.rawindex);
	sbuf_release(&sc.id);
	sbuf_release(&sc.source);
	sbuf_release(&sc.key);
	sbuf_release(&names);
	return rc;
}

const struct target_scan_ops ms_scan_ops = {
	.scan = ms_scan,
	.numbers_by_value = 1,
};
