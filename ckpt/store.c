/*
 * store.c - the checkpoint document of one stream (lib/source.c names it)
 * and what every document of the stream shares: the binding to the stream
 * (a document bound to another stream is refused), and reads and writes
 * through the target module's state operations (lib/target.h). Owns
 * writing the checkpoint with its position as the version, so it never
 * moves back even when two writers race. Knows no request of the target's;
 * never exits and never prints a credential.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "jscan.h"
#include "log.h"
#include "p2o.h"
#include "sbuf.h"
#include "xio.h"

void
ckpt_value_release(struct ckpt_value *v)
{
	free(v->text);
	memset(v, 0, sizeof(*v));
}

/*
 * Who writes the checkpoints: PG2OSYNC_INSTANCE_ID (the supervisor sets
 * "<host>:<pid>" for its children when the operator did not), else the
 * host's name. A label shown by status and ckpt get, so a printable word.
 */
static int
instance_id(struct ckpt_store *st)
{
	const char *v = getenv("PG2OSYNC_INSTANCE_ID");
	size_t n;

	if (v == NULL) {
		if (gethostname(st->instance, sizeof(st->instance)) == -1 ||
		    st->instance[0] == '\0')
			snprintf(st->instance, sizeof(st->instance), "unknown");
		st->instance[sizeof(st->instance) - 1] = '\0';
		return 0;
	}
	n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._:/@-");
	if (v[n] != '\0' || n == 0 || n > CKPT_INSTANCE_MAX)
		return p2o_fail(&st->err, P2O_EXIT_CONFIG, "PG2OSYNC_INSTANCE_ID "
		    "must be 1 to %d characters from a-z, A-Z, 0-9 and . _ : / "
		    "@ -", CKPT_INSTANCE_MAX);
	snprintf(st->instance, sizeof(st->instance), "%s", v);
	return 0;
}

int
ckpt_store_init(struct ckpt_store *st, const struct config *cf)
{
	memset(st, 0, sizeof(*st));
	if (instance_id(st) == -1)
		return -1;
	if (source_ident_init(&st->ident, cf, st->err.msg,
	    sizeof(st->err.msg)) == -1) {
		st->err.code = P2O_EXIT_CONFIG;
		return -1;
	}
	if (target_conn_open(&st->conn, cf, &st->err) == -1) {
		source_ident_release(&st->ident);
		return -1;
	}
	if (!target_can(st->conn.mod, TCAP_STATE_DOCS) &&
	    st->conn.state_dir == NULL) {
		p2o_fail(&st->err, P2O_EXIT_CONFIG, "target '%s' has no place "
		    "for the checkpoint", st->conn.mod->name);
		target_conn_release(&st->conn);
		source_ident_release(&st->ident);
		return -1;
	}
	st->ready = 1;
	return 0;
}

void
ckpt_store_release(struct ckpt_store *st)
{
	if (!st->ready)
		return;
	ckpt_load_release(st);
	target_conn_release(&st->conn);
	source_ident_release(&st->ident);
	st->ready = 0;
}

const char *
ckpt_place(const struct ckpt_store *st)
{
	return st->conn.mod->state_place;
}

/* the key of the stream's document with suffix */
static void
doc_key(const struct ckpt_store *st, const char *suffix, struct sbuf *key)
{
	sbuf_reset(key);
	sbuf_adds(key, st->ident.doc_id);
	if (suffix != NULL)
		sbuf_adds(key, suffix);
}

/* a string member that must equal want when present (documents from
 * earlier versions may lack it); 0 or -1 (66) */
static int
check_binding(struct ckpt_store *st, struct jspan src, const char *field,
    const char *want)
{
	struct jspan v;
	char got[256];

	if (!jobj_get(src, field, &v) || jspan_type(v) == J_NULL)
		return 0;
	if (jspan_type(v) != J_STRING || jstr_copy(v, got, sizeof(got)) == -1)
		return p2o_fail(&st->err, P2O_EXIT_CHECKPOINT, "checkpoint "
		    "'%s' has an unreadable '%s': refusing a foreign "
		    "checkpoint", st->ident.doc_id, field);
	if (strcmp(got, want) != 0)
		return p2o_fail(&st->err, P2O_EXIT_CHECKPOINT, "checkpoint "
		    "'%s' belongs to %s '%s', not '%s': refusing a foreign "
		    "checkpoint", st->ident.doc_id, field, got, want);
	return 0;
}

static int
check_bindings(struct ckpt_store *st, struct jspan src)
{
	int i;

	if (check_binding(st, src, "source", st->ident.kind) == -1)
		return -1;
	for (i = 0; i < st->ident.nbind; i++)
		if (check_binding(st, src, st->ident.bind_name[i],
		    st->ident.bind_value[i]) == -1)
			return -1;
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

int
ckpt_doc_get(struct ckpt_store *st, const char *suffix, const char *what,
    struct sbuf *doc, int *found)
{
	struct sbuf key = SBUF_INIT;
	struct jspan src;
	int rc;

	doc_key(st, suffix, &key);
	rc = st->conn.mod->ops->state_get(&st->conn, key.buf, doc, found,
	    &st->err);
	sbuf_release(&key);
	if (rc == -1)
		return p2o_err_prefix(&st->err, "%s", what);
	if (!*found)
		return 0;
	src.p = doc->buf;
	src.n = doc->len;
	return check_bindings(st, src);
}

/* the keys of the stream's documents with suffixes, in keys[] (heap) */
static char **
doc_keys(const struct ckpt_store *st, const char *const *suffixes, int n)
{
	struct sbuf key = SBUF_INIT;
	char **keys = xcalloc((size_t)n + 1, sizeof(*keys));
	int i;

	for (i = 0; i < n; i++) {
		doc_key(st, suffixes[i], &key);
		keys[i] = xstrdup(key.buf);
	}
	sbuf_release(&key);
	return keys;
}

static void
keys_free(char **keys, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

int
ckpt_docs_get(struct ckpt_store *st, const char *const *suffixes, int n,
    const char *what, struct sbuf *docs, int *found)
{
	const struct target_ops *o = st->conn.mod->ops;
	char **keys;
	struct jspan src;
	int i, rc = 0;

	if (n == 0)
		return 0;
	keys = doc_keys(st, suffixes, n);
	if (o->state_get_many != NULL)
		rc = o->state_get_many(&st->conn, (const char *const *)keys, n,
		    docs, found, &st->err);
	else
		for (i = 0; i < n && rc == 0; i++)
			rc = o->state_get(&st->conn, keys[i], &docs[i],
			    &found[i], &st->err);
	keys_free(keys, n);
	if (rc == -1)
		return p2o_err_prefix(&st->err, "%s", what);
	for (i = 0; i < n && rc == 0; i++) {
		if (!found[i])
			continue;
		src.p = docs[i].buf;
		src.n = docs[i].len;
		rc = check_bindings(st, src);
	}
	return rc;
}

int
ckpt_docs_put(struct ckpt_store *st, const char *const *suffixes,
    const struct sbuf *bodies, int n, const char *what)
{
	const struct target_ops *o = st->conn.mod->ops;
	char **keys;
	int i, conflict, rc = 0;

	if (n == 0)
		return 0;
	keys = doc_keys(st, suffixes, n);
	if (o->state_put_many != NULL)
		rc = o->state_put_many(&st->conn, (const char *const *)keys,
		    bodies, n, &st->err);
	else
		for (i = 0; i < n && rc == 0; i++)
			rc = o->state_put(&st->conn, keys[i], bodies[i].buf,
			    bodies[i].len, 0, &conflict, &st->err);
	keys_free(keys, n);
	return rc == -1 ? p2o_err_prefix(&st->err, "%s", what) : 0;
}

/* a write of the stream's document: version 0 plain, else never over a
 * higher one (*conflict) */
static int
doc_put(struct ckpt_store *st, const char *suffix, const char *what,
    const struct sbuf *body, uint64_t version, int *conflict)
{
	struct sbuf key = SBUF_INIT;
	int rc;

	doc_key(st, suffix, &key);
	rc = st->conn.mod->ops->state_put(&st->conn, key.buf, body->buf,
	    body->len, version, conflict, &st->err);
	sbuf_release(&key);
	return rc == -1 ? p2o_err_prefix(&st->err, "%s", what) : 0;
}

int
ckpt_doc_put(struct ckpt_store *st, const char *suffix, const char *what,
    const struct sbuf *body)
{
	int conflict;

	return doc_put(st, suffix, what, body, 0, &conflict);
}

/* a found checkpoint document -> *val */
static int
parse_source(struct ckpt_store *st, struct jspan src, struct ckpt_value *val)
{
	struct jspan v;

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
	if (jobj_get(src, "instance", &v) && jspan_type(v) == J_STRING)
		jstr_copy(v, val->instance, sizeof(val->instance));
	val->present = 1;
	return 0;
bad:
	return p2o_fail(&st->err, P2O_EXIT_CHECKPOINT, "checkpoint '%s' holds "
	    "no readable position (pos and text): refusing it",
	    st->ident.doc_id);
}

int
ckpt_store_get(struct ckpt_store *st, struct ckpt_value *val)
{
	struct sbuf doc = SBUF_INIT;
	struct jspan src;
	char what[160];
	int found, rc;

	memset(val, 0, sizeof(*val));
	snprintf(what, sizeof(what), "reading checkpoint '%s'",
	    st->ident.doc_id);
	if ((rc = ckpt_doc_get(st, NULL, what, &doc, &found)) == 0 && found) {
		src.p = doc.buf;
		src.n = doc.len;
		rc = parse_source(st, src, val);
	}
	if (rc == 0)
		st->bound = 1;
	sbuf_release(&doc);
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
	struct sbuf body = SBUF_INIT;
	struct ckpt_value cur = { 0 };
	char what[160], when[40];
	int rc, conflict;

	*newer = 0;
	snprintf(what, sizeof(what), "writing checkpoint '%s'",
	    st->ident.doc_id);
	/* the target compares versions as signed 64-bit numbers */
	if (pos > INT64_MAX)
		return p2o_fail(&st->err, P2O_EXIT_DATA, "%s: position %"
		    PRIu64 " does not fit a target version", what, pos);
	/* a checkpoint without its text could not be resumed from */
	if (text == NULL || *text == '\0')
		return p2o_fail(&st->err, P2O_EXIT_DATA, "%s: position %"
		    PRIu64 " comes without its text", what, pos);
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
	sbuf_adds(&body, ",\"instance\":");
	sbuf_add_jstr(&body, st->instance, strlen(st->instance));
	sbuf_addf(&body, ",\"updated_at\":\"%s\"}", when);

	if ((rc = doc_put(st, NULL, what, &body, pos, &conflict)) != 0 ||
	    !conflict)
		goto out;
	st->conflicts++;
	/*
	 * The target records a version >= pos. That can be a deleted
	 * checkpoint's tombstone, which covers nothing: only a stored
	 * checkpoint at or past pos may be taken as storing this one.
	 * Otherwise the tombstone is overwritten with a plain write.
	 */
	if ((rc = ckpt_store_get(st, &cur)) != 0)
		goto out;
	if (cur.present && cur.pos >= pos) {
		*newer = 1;
		goto out;
	}
	log_warnx("checkpoint '%s' was deleted from %s; writing it again",
	    st->ident.doc_id, ckpt_place(st));
	rc = doc_put(st, NULL, what, &body, 0, &conflict);
out:
	ckpt_value_release(&cur);
	sbuf_release(&body);
	return rc;
}
