/*
 * store.c - the checkpoint document of one stream in the target:
 * .pg2osync_meta/_doc/<stream id> (lib/source.c names it). Owns creating
 * that hidden index,
 * refusing a document bound to another stream, and writing with the
 * position as an external_gte version so a checkpoint never moves back even
 * when two writers race. Never exits and never prints a credential.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt.h"
#include "jscan.h"
#include "log.h"
#include "p2o.h"
#include "sbuf.h"
#include "xio.h"

#define INDEX_BODY \
	"{\"settings\":{\"index\":{\"number_of_shards\":1," \
	"\"auto_expand_replicas\":\"0-1\",\"hidden\":true}}," \
	"\"mappings\":{\"dynamic\":false,\"properties\":{" \
	"\"source\":{\"type\":\"keyword\"},\"pos\":{\"type\":\"long\"}," \
	"\"updated_at\":{\"type\":\"date\"}}}}"

void
ckpt_value_release(struct ckpt_value *v)
{
	free(v->text);
	memset(v, 0, sizeof(*v));
}

int
ckpt_store_init(struct ckpt_store *st, const struct config *cf)
{
	memset(st, 0, sizeof(*st));
	if (cf->target_url == NULL) {
		snprintf(st->err, sizeof(st->err), "%s: target.url: missing",
		    cf->path);
		return P2O_EXIT_CONFIG;
	}
	if (source_ident_init(&st->ident, cf, st->err, sizeof(st->err)) == -1)
		return P2O_EXIT_CONFIG;
	if (http_init(&st->http, cf->target_url, cf->target_username,
	    cf->target_password) == -1) {
		snprintf(st->err, sizeof(st->err), "target: %s", st->http.err);
		source_ident_release(&st->ident);
		return P2O_EXIT_CONFIG;
	}
	st->ready = 1;
	return 0;
}

void
ckpt_store_release(struct ckpt_store *st)
{
	if (!st->ready)
		return;
	http_release(&st->http);
	source_ident_release(&st->ident);
	st->ready = 0;
}

/* the document path; the id is escaped so no configuration can reach
 * into another path */
void
ckpt_doc_path(const struct ckpt_store *st, const char *suffix,
    struct sbuf *out)
{
	struct sbuf id = SBUF_INIT;
	const char *p;

	sbuf_adds(&id, st->ident.doc_id);
	if (suffix != NULL)
		sbuf_adds(&id, suffix);
	sbuf_adds(out, "/" CKPT_INDEX "/_doc/");
	for (p = id.buf; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-_.~:", c))
			sbuf_addc(out, (char)c);
		else
			sbuf_addf(out, "%%%02X", c);
	}
	sbuf_release(&id);
}

/* the response as a validated JSON object span; 0 or -1 */
int
ckpt_body_object(const struct sbuf *resp, struct jspan *obj)
{
	const char *p = resp->buf, *end;
	size_t off;
	const char *why;

	if (resp->len == 0)
		return -1;
	end = p + resp->len;
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\n' ||
	    end[-1] == '\r' || end[-1] == '\t'))
		end--;
	if (p == end || jscan_validate(p, (size_t)(end - p), &off, &why) == -1)
		return -1;
	obj->p = p;
	obj->n = (size_t)(end - p);
	return jspan_type(*obj) == J_OBJECT ? 0 : -1;
}

/* error.type of an OpenSearch error body into buf, or "" */
void
ckpt_error_type(const struct sbuf *resp, char *buf, size_t len)
{
	struct jspan obj, e, t;

	buf[0] = '\0';
	if (ckpt_body_object(resp, &obj) == -1 || !jobj_get(obj, "error", &e))
		return;
	if (jspan_type(e) == J_OBJECT && jobj_get(e, "type", &t) &&
	    jspan_type(t) == J_STRING)
		jstr_copy(t, buf, len);
}

/* a failed request: the exit code its status means, the message in err */
int
ckpt_status_error(struct ckpt_store *st, const char *what, long status,
    const struct sbuf *resp)
{
	char type[128], reason[256] = "";
	struct jspan obj, e, r;

	ckpt_error_type(resp, type, sizeof(type));
	if (ckpt_body_object(resp, &obj) == 0 && jobj_get(obj, "error", &e) &&
	    jspan_type(e) == J_OBJECT && jobj_get(e, "reason", &r) &&
	    jspan_type(r) == J_STRING)
		jstr_copy(r, reason, sizeof(reason));
	snprintf(st->err, sizeof(st->err), "%s: HTTP %ld%s%s%s%s", what,
	    status, type[0] ? " " : "", type, reason[0] ? ": " : "", reason);
	if (status == 401 || status == 403)
		return P2O_EXIT_AUTH;
	return P2O_EXIT_TEMPFAIL;
}

int
ckpt_request(struct ckpt_store *st, const char *what, const char *method,
    const char *path, const char *body, size_t len, struct sbuf *resp,
    long *status)
{
	sbuf_reset(resp);
	if (http_request(&st->http, method, path, NULL, body, len, resp,
	    status) == -1) {
		snprintf(st->err, sizeof(st->err), "%s: %s", what,
		    st->http.err);
		return P2O_EXIT_TEMPFAIL;
	}
	return 0;
}

int
ckpt_ensure_index(struct ckpt_store *st, struct sbuf *resp)
{
	char type[128];
	long status;
	int rc;

	if (st->index_ready)
		return 0;
	rc = ckpt_request(st, "checking index '" CKPT_INDEX "'", "HEAD",
	    "/" CKPT_INDEX, NULL, 0, resp, &status);
	if (rc != 0)
		return rc;
	if (status == 200) {
		st->index_ready = 1;
		return 0;
	}
	if (status != 404)
		return ckpt_status_error(st, "checking index '" CKPT_INDEX "'",
		    status, resp);
	rc = ckpt_request(st, "creating index '" CKPT_INDEX "'", "PUT",
	    "/" CKPT_INDEX, INDEX_BODY, strlen(INDEX_BODY), resp, &status);
	if (rc != 0)
		return rc;
	ckpt_error_type(resp, type, sizeof(type));
	/* another writer may have created it between our two requests */
	if (status == 200 ||
	    (status == 400 && strcmp(type, "resource_already_exists_exception")
	    == 0)) {
		if (status == 200)
			log_info("created index '" CKPT_INDEX "'");
		st->index_ready = 1;
		return 0;
	}
	return ckpt_status_error(st, "creating index '" CKPT_INDEX "'", status,
	    resp);
}

/* a string member that must equal want when present (documents from
 * earlier versions may lack it); 0 or 66 */
static int
check_binding(struct ckpt_store *st, struct jspan src, const char *field,
    const char *want)
{
	struct jspan v;
	char got[256];

	if (!jobj_get(src, field, &v) || jspan_type(v) == J_NULL)
		return 0;
	if (jspan_type(v) != J_STRING || jstr_copy(v, got, sizeof(got)) == -1) {
		snprintf(st->err, sizeof(st->err), "checkpoint '%s' has an "
		    "unreadable '%s': refusing a foreign checkpoint",
		    st->ident.doc_id, field);
		return P2O_EXIT_CHECKPOINT;
	}
	if (strcmp(got, want) != 0) {
		snprintf(st->err, sizeof(st->err), "checkpoint '%s' belongs to "
		    "%s '%s', not '%s': refusing a foreign checkpoint",
		    st->ident.doc_id, field, got, want);
		return P2O_EXIT_CHECKPOINT;
	}
	return 0;
}

int
ckpt_check_bindings(struct ckpt_store *st, struct jspan src)
{
	int i, rc;

	if ((rc = check_binding(st, src, "source", st->ident.kind)) != 0)
		return rc;
	for (i = 0; i < st->ident.nbind; i++)
		if ((rc = check_binding(st, src, st->ident.bind_name[i],
		    st->ident.bind_value[i])) != 0)
			return rc;
	return 0;
}

void
ckpt_bindings(const struct ckpt_store *st, struct sbuf *body)
{
	int i;

	sbuf_adds(body, "\"source\":");
	sbuf_add_jstr(body, st->ident.kind, strlen(st->ident.kind));
	for (i = 0; i < st->ident.nbind; i++) {
		sbuf_addf(body, ",\"%s\":", st->ident.bind_name[i]);
		sbuf_add_jstr(body, st->ident.bind_value[i],
		    strlen(st->ident.bind_value[i]));
	}
}

/* _source of a found document -> *val, after the binding check */
static int
parse_source(struct ckpt_store *st, struct jspan src, struct ckpt_value *val)
{
	struct jspan v;
	int rc;

	if ((rc = ckpt_check_bindings(st, src)) != 0)
		return rc;
	memset(val, 0, sizeof(*val));
	if (!jobj_get(src, "pos", &v) || jnum_u64(v, &val->pos) == -1)
		goto bad;
	/* documents written before positions were source-neutral hold the
	 * text as "lsn" */
	if ((!jobj_get(src, "text", &v) && !jobj_get(src, "lsn", &v)) ||
	    jspan_type(v) != J_STRING || v.n <= 2)
		goto bad;
	val->text = jstr_dup(v);
	if (jobj_get(src, "updated_at", &v) && jspan_type(v) == J_STRING)
		jstr_copy(v, val->updated_at, sizeof(val->updated_at));
	val->present = 1;
	return 0;
bad:
	snprintf(st->err, sizeof(st->err), "checkpoint '%s' holds no readable "
	    "position (pos and text): refusing it", st->ident.doc_id);
	return P2O_EXIT_CHECKPOINT;
}

int
ckpt_store_get(struct ckpt_store *st, struct ckpt_value *val)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj, src;
	char type[128], what[160];
	long status;
	int rc;

	memset(val, 0, sizeof(*val));
	snprintf(what, sizeof(what), "reading checkpoint '%s'",
	    st->ident.doc_id);
	ckpt_doc_path(st, NULL, &path);
	if ((rc = ckpt_request(st, what, "GET", path.buf, NULL, 0, &resp,
	    &status)) != 0)
		goto out;
	if (status == 404) {
		ckpt_error_type(&resp, type, sizeof(type));
		/* found:false means the index is there, the document not */
		st->index_ready = strcmp(type, "index_not_found_exception") != 0;
		st->bound = 1;
		goto out;
	}
	if (status != 200) {
		rc = ckpt_status_error(st, what, status, &resp);
		goto out;
	}
	st->index_ready = 1;
	if (ckpt_body_object(&resp, &obj) == -1 || !jobj_get(obj, "_source", &src) ||
	    jspan_type(src) != J_OBJECT) {
		snprintf(st->err, sizeof(st->err), "%s: the response holds no "
		    "document", what);
		rc = P2O_EXIT_TEMPFAIL;
		goto out;
	}
	if ((rc = parse_source(st, src, val)) == 0)
		st->bound = 1;
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

void
ckpt_iso_now(char *buf, size_t len)
{
	long long us = now_us_wall();
	time_t t = (time_t)(us / 1000000);
	struct tm tm;
	char s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", s, (int)(us / 1000 % 1000));
}

int
ckpt_store_put(struct ckpt_store *st, uint64_t pos, const char *text,
    int *newer)
{
	struct sbuf path = SBUF_INIT, body = SBUF_INIT, resp = SBUF_INIT;
	struct ckpt_value cur = { 0 };
	char what[160], when[40];
	long status;
	int rc, attempt, plain = 0;

	*newer = 0;
	snprintf(what, sizeof(what), "writing checkpoint '%s'",
	    st->ident.doc_id);
	/* the target compares versions as signed 64-bit numbers */
	if (pos > INT64_MAX) {
		snprintf(st->err, sizeof(st->err), "%s: position %" PRIu64
		    " does not fit a target version", what, pos);
		return P2O_EXIT_DATA;
	}
	/* a checkpoint without its text could not be resumed from */
	if (text == NULL || *text == '\0') {
		snprintf(st->err, sizeof(st->err), "%s: position %" PRIu64
		    " comes without its text", what, pos);
		return P2O_EXIT_DATA;
	}
	/* never overwrite another stream's document, even a newer one */
	if (!st->bound) {
		rc = ckpt_store_get(st, &cur);
		ckpt_value_release(&cur);
		if (rc != 0)
			return rc;
	}
	ckpt_iso_now(when, sizeof(when));
	sbuf_addc(&body, '{');
	ckpt_bindings(st, &body);
	sbuf_adds(&body, ",\"pos\":");
	sbuf_add_u64(&body, pos);
	sbuf_adds(&body, ",\"text\":");
	sbuf_add_jstr(&body, text, strlen(text));
	sbuf_addf(&body, ",\"updated_at\":\"%s\"}", when);
	ckpt_doc_path(st, NULL, &path);
	sbuf_addf(&path, "?version=%" PRIu64 "&version_type=external_gte", pos);

	for (attempt = 0; attempt < 2; attempt++) {
		if ((rc = ckpt_ensure_index(st, &resp)) != 0)
			goto out;
		if ((rc = ckpt_request(st, what, "PUT", path.buf, body.buf,
		    body.len, &resp, &status)) != 0)
			goto out;
		if (status == 200 || status == 201)
			goto out;
		if (status == 409 && !plain) {
			st->conflicts++;
			/*
			 * 409: the target records a version >= pos. That can
			 * be a deleted checkpoint's tombstone, which covers
			 * nothing: only a stored checkpoint at or past pos
			 * may be taken as storing this one. Otherwise the
			 * tombstone is overwritten with a plain write.
			 */
			ckpt_value_release(&cur);
			if ((rc = ckpt_store_get(st, &cur)) != 0)
				goto out;
			if (cur.present && cur.pos >= pos) {
				*newer = 1;
				goto out;
			}
			log_warnx("checkpoint '%s' was deleted from '%s'; "
			    "writing it again", st->ident.doc_id, CKPT_INDEX);
			plain = 1;
			sbuf_reset(&path);
			ckpt_doc_path(st, NULL, &path);
			attempt--;
			continue;
		}
		/* the index vanished under us: create it again, once.
		 * Writing without it would auto-create a visible index
		 * with guessed mappings */
		if (status == 404) {
			st->index_ready = 0;
			continue;
		}
		break;
	}
	rc = ckpt_status_error(st, what, status, &resp);
out:
	ckpt_value_release(&cur);
	sbuf_release(&path);
	sbuf_release(&body);
	sbuf_release(&resp);
	return rc;
}
