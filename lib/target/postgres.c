/*
 * postgres.c - the PostgreSQL table target (target.flavor: postgres), for
 * vectors kept with pgvector beside the rows they came from. One table per
 * section, named by its index; a document's id is the table's one-column
 * key, its fields are the columns of the same names, and every row
 * carries the version it was written at (_version bigint), which an
 * upsert or a delete never goes back past.
 *
 * This file owns the module's table and what is pure: the names a table
 * may have, the check of a section's DDL (its mapping file), the entries
 * of a write, the requests of the data path and what their answers mean.
 * The statements themselves are postgres_exec.c's (the data path),
 * postgres_admin.c's (blocking, for ckpt and the verbs) and
 * postgres_rejects.c's (the quarantine of refused documents). Never makes a
 * request, logs or exits.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "http.h"
#include "p2o.h"
#include "pg/pgconn.h"
#include "postgres.h"
#include "entry.h"

#define NAME_MAX_BYTES	63	/* NAMEDATALEN - 1 */

enum target_answer
pgt_status_class(long status)
{
	if (status >= 200 && status < 300)
		return TA_OK;
	if (status == 401)
		return TA_AUTH;
	if (status == 400 || status == 404)
		return TA_REFUSED;
	return TA_RETRY;
}

void
pgt_error_text(const char *body, size_t len, char *out, size_t outlen)
{
	struct jspan obj = { body, len }, v;
	size_t off;

	if (outlen == 0)
		return;
	out[0] = '\0';
	if (len > 0 && jscan_validate(body, len, &off, NULL) == 0 &&
	    jspan_type(obj) == J_OBJECT && jobj_get(obj, "error", &v) &&
	    jspan_type(v) == J_STRING && jstr_copy(v, out, outlen) == 0)
		return;
	snprintf(out, outlen, "%.*s", (int)(len < 200 ? len : 200),
	    body ? body : "");
}

void
pgt_put_table(struct sbuf *out, const char *index)
{
	const char *dot = strchr(index, '.');
	char part[NAME_MAX_BYTES + 1];

	if (dot != NULL && (size_t)(dot - index) <= NAME_MAX_BYTES) {
		memcpy(part, index, (size_t)(dot - index));
		part[dot - index] = '\0';
		pgconn_put_ident(out, part);
		sbuf_addc(out, '.');
		index = dot + 1;
	}
	pgconn_put_ident(out, index);
}

/* a lowercase SQL name: what an unquoted name in the DDL folds to */
static int
plain_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > NAME_MAX_BYTES || !(islower((unsigned char)s[0]) ||
	    s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!(islower((unsigned char)s[i]) ||
		    isdigit((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

/* a table, or schema.table, of lowercase SQL names; one table a section */
static int
index_name(const char *text, enum target_name_part part, char *why,
    size_t whylen)
{
	const char *dot = strchr(text, '.');

	if (part != TNAME_WHOLE) {
		snprintf(why, whylen, "cannot be a template: target postgres "
		    "writes each section to one table, created from its DDL");
		return -1;
	}
	if (dot != NULL ? !plain_name(text, (size_t)(dot - text)) ||
	    !plain_name(dot + 1, strlen(dot + 1)) :
	    !plain_name(text, strlen(text))) {
		snprintf(why, whylen, "must be a table name, or schema.table, "
		    "of lowercase letters, digits and '_' (at most %d bytes "
		    "each, not starting with a digit)", NAME_MAX_BYTES);
		return -1;
	}
	return 0;
}

/*
 * The DDL of a section's table, read as far as the module relies on it:
 * one CREATE TABLE statement, of the section's table, whose columns hold
 * a one-column primary key (the document id) and _version bigint. The
 * rest (types, defaults, constraints, a vector(n) column) is the
 * server's to judge when it runs it.
 */
struct ddl {
	const char *p, *end;
};

static void
ddl_skip(struct ddl *d)
{
	for (;;) {
		while (d->p < d->end && isspace((unsigned char)*d->p))
			d->p++;
		if (d->end - d->p >= 2 && d->p[0] == '-' && d->p[1] == '-') {
			while (d->p < d->end && *d->p != '\n')
				d->p++;
			continue;
		}
		if (d->end - d->p >= 2 && d->p[0] == '/' && d->p[1] == '*') {
			const char *c = d->p + 2;

			while (c + 1 < d->end && !(c[0] == '*' && c[1] == '/'))
				c++;
			d->p = c + 1 < d->end ? c + 2 : d->end;
			continue;
		}
		return;
	}
}

/* the keyword kw next (case aside, whole word): 1 and past it */
static int
ddl_word(struct ddl *d, const char *kw)
{
	size_t n = strlen(kw);

	ddl_skip(d);
	if ((size_t)(d->end - d->p) < n || strncasecmp(d->p, kw, n) != 0 ||
	    (d->p + n < d->end && (isalnum((unsigned char)d->p[n]) ||
	    d->p[n] == '_')))
		return 0;
	d->p += n;
	return 1;
}

/* a name, quoted or not, as the server would read it (unquoted folds to
 * lowercase) into buf; 0, or -1 */
static int
ddl_name(struct ddl *d, char *buf, size_t cap)
{
	size_t n = 0;

	ddl_skip(d);
	if (d->p < d->end && *d->p == '"') {
		for (d->p++; d->p < d->end; d->p++) {
			if (*d->p == '"') {
				if (d->p + 1 < d->end && d->p[1] == '"')
					d->p++;
				else
					break;
			}
			if (n + 1 >= cap)
				return -1;
			buf[n++] = *d->p;
		}
		if (d->p >= d->end)
			return -1;
		d->p++;
	} else {
		while (d->p < d->end && (isalnum((unsigned char)*d->p) ||
		    *d->p == '_' || *d->p == '$')) {
			if (n + 1 >= cap)
				return -1;
			buf[n++] = (char)tolower((unsigned char)*d->p++);
		}
	}
	buf[n] = '\0';
	return n > 0 ? 0 : -1;
}

/* the end of the element of a column list starting at p: the next comma
 * or closing parenthesis outside parentheses and quotes */
static const char *
element_end(const char *p, const char *end)
{
	int depth = 0;
	char q;

	for (; p < end; p++) {
		if (*p == '\'' || *p == '"') {
			for (q = *p++; p < end && *p != q; p++)
				;
			if (p >= end)
				return end;
			continue;
		}
		if (*p == '(')
			depth++;
		else if (*p == ')' && depth-- == 0)
			return p;
		else if (*p == ',' && depth == 0)
			return p;
	}
	return end;
}

/* whether the words "primary key" stand in [p, end) outside parentheses */
static int
says_primary_key(const char *p, const char *end)
{
	struct ddl d = { p, end };

	while (d.p < d.end) {
		if (ddl_word(&d, "primary") && ddl_word(&d, "key"))
			return 1;
		while (d.p < d.end && !isspace((unsigned char)*d.p))
			d.p++;
	}
	return 0;
}

static int
check_ddl(const struct sync_section *s, const char *text, size_t len,
    char *why, size_t whylen)
{
	struct ddl d = { text, text + len }, e;
	char name[2 * NAME_MAX_BYTES + 2], col[NAME_MAX_BYTES + 1];
	char key[NAME_MAX_BYTES + 1] = "", type[16];
	const char *stop;
	int nkeys = 0, version = 0, n;

	if (!ddl_word(&d, "create") || !ddl_word(&d, "table")) {
		snprintf(why, whylen, "must hold one CREATE TABLE statement "
		    "(the section's table)");
		return -1;
	}
	e = d;
	if (!(ddl_word(&e, "if") && ddl_word(&e, "not") &&
	    ddl_word(&e, "exists")))
		e = d;
	d = e;
	if (ddl_name(&d, name, NAME_MAX_BYTES + 1) == -1) {
		snprintf(why, whylen, "names no table after CREATE TABLE");
		return -1;
	}
	if (d.p < d.end && *d.p == '.') {
		n = (int)strlen(name);
		name[n++] = '.';
		d.p++;
		if (ddl_name(&d, name + n, NAME_MAX_BYTES + 1) == -1) {
			snprintf(why, whylen, "names no table after its schema");
			return -1;
		}
	}
	if (strcmp(name, s->index) != 0) {
		snprintf(why, whylen, "creates table '%s', not the section's "
		    "'%s'", name, s->index);
		return -1;
	}
	ddl_skip(&d);
	if (d.p >= d.end || *d.p != '(') {
		snprintf(why, whylen, "has no column list after the table name");
		return -1;
	}
	d.p++;
	for (;;) {
		ddl_skip(&d);
		stop = element_end(d.p, d.end);
		if (stop >= d.end) {
			snprintf(why, whylen, "has a column list that does not "
			    "end");
			return -1;
		}
		e.p = d.p, e.end = stop;
		if (ddl_word(&e, "constraint"))
			ddl_name(&e, col, sizeof(col));
		if (ddl_word(&e, "primary") && ddl_word(&e, "key")) {
			/* a table constraint: one column in parentheses */
			ddl_skip(&e);
			if (e.p < e.end && *e.p == '(')
				e.p++;
			if (ddl_name(&e, key, sizeof(key)) == -1) {
				snprintf(why, whylen, "has a PRIMARY KEY "
				    "without a column");
				return -1;
			}
			ddl_skip(&e);
			nkeys += e.p < e.end && *e.p == ',' ? 2 : 1;
		} else if (e.p = d.p, e.end = stop, !ddl_word(&e, "unique") && !ddl_word(&e, "check") &&
		    !ddl_word(&e, "foreign") && !ddl_word(&e, "exclude") &&
		    !ddl_word(&e, "like") && !ddl_word(&e, "constraint")) {
			e.p = d.p, e.end = stop;
			if (ddl_name(&e, col, sizeof(col)) == -1) {
				snprintf(why, whylen, "has a column without a "
				    "name");
				return -1;
			}
			if (strcmp(col, PGT_VERSION_COL) == 0) {
				ddl_skip(&e);
				n = 0;
				while (e.p < e.end && n < (int)sizeof(type) - 1
				    && (isalnum((unsigned char)*e.p)))
					type[n++] = (char)tolower(
					    (unsigned char)*e.p++);
				type[n] = '\0';
				if (strcmp(type, "bigint") != 0 &&
				    strcmp(type, "int8") != 0) {
					snprintf(why, whylen, "declares column "
					    "'" PGT_VERSION_COL "' as '%s': it "
					    "must be bigint (the version each "
					    "row was written at)", type);
					return -1;
				}
				version = 1;
			}
			if (says_primary_key(e.p, e.end)) {
				snprintf(key, sizeof(key), "%s", col);
				nkeys++;
			}
		}
		d.p = stop + 1;
		if (*stop == ')')
			break;
	}
	ddl_skip(&d);
	while (d.p < d.end && *d.p != ';')
		d.p++;
	if (d.p < d.end) {
		d.p++;
		ddl_skip(&d);
	}
	if (d.p < d.end) {
		snprintf(why, whylen, "holds more than the CREATE TABLE "
		    "statement: one statement only");
		return -1;
	}
	if (nkeys != 1) {
		snprintf(why, whylen, "%s: the table needs a primary key of "
		    "one column, which takes the document id", nkeys ?
		    "has a primary key of more than one column" :
		    "declares no primary key");
		return -1;
	}
	if (strcmp(key, PGT_VERSION_COL) == 0) {
		snprintf(why, whylen, "makes '" PGT_VERSION_COL "' the primary "
		    "key: the key takes the document id");
		return -1;
	}
	if (!version) {
		snprintf(why, whylen, "has no column '" PGT_VERSION_COL " "
		    "bigint': every row keeps the version it was written at");
		return -1;
	}
	return 0;
}

/* the body a table is created with: its DDL, checked, as it is */
static int
index_body(const struct sync_section *s, const char *mapping, size_t len,
    char **body, char *why, size_t whylen)
{
	*body = NULL;
	if (mapping == NULL)
		return 0;
	if (check_ddl(s, mapping, len, why, whylen) == -1)
		return -1;
	*body = xstrndup(mapping, len);
	return 0;
}

static int
url_check(const char *url, char *why, size_t whylen)
{
	if (strncmp(url, "postgres://", 11) != 0 &&
	    strncmp(url, "postgresql://", 13) != 0) {
		snprintf(why, whylen, "must be a postgres:// or postgresql:// "
		    "url");
		return -1;
	}
	return 0;
}

static void
probe_call(struct http_call *call)
{
	http_call_set(call, "GET", "/probe", NULL, NULL, 0);
}

/* {"version":"17.2","num":170002,"vector":"0.8.0"|null} */
static enum target_answer
probe_answer(long status, const struct sbuf *resp, char *node,
    size_t nodelen, char *why, size_t whylen)
{
	enum target_answer a = pgt_status_class(status);
	struct jspan obj = { resp->buf, resp->len }, v, num;
	char version[32] = "", vector[32] = "";
	int64_t n = 0;
	size_t off;

	if (nodelen)
		node[0] = '\0';
	if (a != TA_OK) {
		pgt_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (resp->len == 0 || jscan_validate(resp->buf, resp->len, &off,
	    NULL) == -1 || !jobj_get(obj, "version", &v) ||
	    jstr_copy(v, version, sizeof(version)) == -1 ||
	    !jobj_get(obj, "num", &num) || jnum_i64(num, &n) == -1) {
		snprintf(why, whylen, "the server's version could not be read");
		return TA_RETRY;
	}
	if (jobj_get(obj, "vector", &v) && jspan_type(v) == J_STRING)
		jstr_copy(v, vector, sizeof(vector));
	if (n < PGT_MIN_VERSION_NUM) {
		snprintf(why, whylen, "target.flavor is postgres but the server "
		    "runs PostgreSQL %s; supported: %d and later", version,
		    PGT_MIN_VERSION_NUM / 10000);
		return TA_REFUSED;
	}
	snprintf(node, nodelen, "postgresql %s%s%s", version,
	    vector[0] ? ", pgvector " : "", vector);
	return TA_OK;
}

static void
create_call(const char *index, const char *body, struct sbuf *path,
    struct http_call *call)
{
	sbuf_reset(path);
	sbuf_adds(path, "/create/");
	sbuf_adds(path, index);
	http_call_set(call, "POST", path->buf, "application/sql", body,
	    body ? strlen(body) : 0);
}

static enum target_answer
create_answer(long status, const struct sbuf *resp, char *why,
    size_t whylen)
{
	enum target_answer a = pgt_status_class(status);

	if (status == 201)
		return TA_OK;
	if (a == TA_OK)
		return TA_EXISTS;
	pgt_error_text(resp->buf, resp->len, why, whylen);
	return a;
}

/*
 * An entry is one line of our own, read back by postgres_exec.c:
 *   {"t":<table>,"id":<id>,"v":N,"doc":<document>}
 *   {"t":<table>,"id":<id>,"v":N,"del":true}
 */
static int
encode(struct sbuf *out, const struct target_write *w,
    struct target_entry *e, struct p2o_err *err)
{
	size_t start = out->len;

	if (w->routing.p || (w->pipeline.p && !w->del))
		return p2o_fail(err, P2O_EXIT_CONFIG, "postgres takes no "
		    "routing and no pipeline");
	if (w->version > (uint64_t)INT64_MAX)
		return p2o_fail(err, P2O_EXIT_DATA, "version %llu does not "
		    "fit the bigint column '" PGT_VERSION_COL "'",
		    (unsigned long long)w->version);
	e->entry.off = e->head.off = start;
	sbuf_adds(out, "{\"t\":");
	target_span_add(out, w->index, &e->index);
	sbuf_adds(out, ",\"id\":");
	target_span_add(out, w->id, &e->id);
	sbuf_adds(out, ",\"v\":");
	sbuf_add_u64(out, w->version);
	tentry_end(out, w, e, start, ",\"del\":true}\n");
	return 0;
}

static void
bulk_call(const char *body, size_t len, struct http_call *call)
{
	http_call_set(call, "POST", "/bulk", "application/x-ndjson", body,
	    len);
}

/* {"items":[{"s":200},{"s":409},{"s":404},{"s":400,"r":"why"}]}: the
 * rows written, kept (a newer version is stored), absent (a delete),
 * refused */
static enum target_answer
bulk_answer(long status, const char *body, size_t len, int nsent,
    struct item_result *items, char *why, size_t whylen)
{
	enum target_answer a = pgt_status_class(status);
	struct jspan obj = { body, len }, arr, it, s, r;
	struct jiter ji;
	int64_t st;
	size_t off;
	int i = 0;

	if (a != TA_OK) {
		pgt_error_text(body, len, why, whylen);
		return a;
	}
	if (len == 0 || jscan_validate(body, len, &off, NULL) == -1 ||
	    !jobj_get(obj, "items", &arr) || jiter_init(&ji, arr) == -1) {
		snprintf(why, whylen, "the answer to a write holds no items");
		return TA_RETRY;
	}
	while (i < nsent && jiter_elem(&ji, &it)) {
		memset(&items[i], 0, sizeof(items[i]));
		if (!jobj_get(it, "s", &s) || jnum_i64(s, &st) == -1)
			st = 503;
		items[i].status = (int)st;
		items[i].verdict = st == 200 ? ITEM_OK : st == 409 ?
		    ITEM_CONFLICT : st == 404 ? ITEM_NOTFOUND : st == 400 ?
		    ITEM_REJECT : ITEM_RETRY;
		if (jobj_get(it, "d", &s))
			items[i].del = 1;
		if (jobj_get(it, "r", &r) && jspan_type(r) == J_STRING &&
		    jstr_copy(r, items[i].reason, sizeof(items[i].reason))
		    == -1)
			snprintf(items[i].reason, sizeof(items[i].reason),
			    "(a long reason)");
		if (st == 400)
			snprintf(items[i].type, sizeof(items[i].type),
			    "refused");
		i++;
	}
	if (i != nsent || jiter_elem(&ji, &it)) {
		snprintf(why, whylen, "the answer to a write has %s%d items "
		    "for %d writes", i == nsent ? "more than " : "", i, nsent);
		return TA_RETRY;
	}
	return TA_OK;
}

/* the stored rows of n documents, as documents (TOAST completion): one
 * line a document, {"t":<table>,"id":<id>} */
static void
read_call(const struct docref *refs, int n, struct sbuf *body,
    struct http_call *call)
{
	int i;

	sbuf_reset(body);
	for (i = 0; i < n; i++) {
		sbuf_adds(body, "{\"t\":");
		sbuf_add(body, refs[i].index, refs[i].ilen);
		sbuf_adds(body, ",\"id\":");
		sbuf_add(body, refs[i].id, refs[i].idlen);
		sbuf_adds(body, "}\n");
	}
	http_call_set(call, "POST", "/read", "application/x-ndjson",
	    body->buf, body->len);
}

/* {"docs":[{...}|null, ...]}: found[i] each stored row less its
 * _version, p NULL for none */
static enum target_answer
read_answer(long status, const struct sbuf *resp, int n, struct jspan *found,
    char *why, size_t whylen)
{
	enum target_answer a = pgt_status_class(status);
	struct jspan obj = { resp->buf, resp->len }, arr, d;
	struct jiter it;
	size_t off;
	int i = 0;

	if (a != TA_OK) {
		pgt_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (resp->len == 0 || jscan_validate(resp->buf, resp->len, &off,
	    NULL) == -1 || !jobj_get(obj, "docs", &arr) ||
	    jiter_init(&it, arr) == -1)
		goto bad;
	while (i < n && jiter_elem(&it, &d)) {
		found[i].p = jspan_type(d) == J_OBJECT ? d.p : NULL;
		found[i].n = found[i].p ? d.n : 0;
		i++;
	}
	if (i == n && !jiter_elem(&it, &d))
		return TA_OK;
bad:
	snprintf(why, whylen, "the answer to a read of stored rows is not "
	    "one for %d documents", n);
	return TA_RETRY;
}

/* a clear (truncate) is one DELETE of the rows at or below its version,
 * all of a table's or those whose column holds a value; a cascade would
 * need a join, which this module does not declare */
static void
proc_call(struct target_proc *p, struct http_call *call)
{
	sbuf_reset(&p->body);
	sbuf_adds(&p->body, "{\"t\":");
	sbuf_add_jstr(&p->body, p->index, strlen(p->index));
	if (p->field.p != NULL) {
		sbuf_adds(&p->body, ",\"f\":");
		sbuf_add(&p->body, p->field.p, p->field.n);
		sbuf_adds(&p->body, ",\"val\":");
		sbuf_add(&p->body, p->value.p, p->value.n);
	}
	sbuf_adds(&p->body, ",\"v\":");
	sbuf_add_u64(&p->body, p->version);
	sbuf_addc(&p->body, '}');
	http_call_set(call, "POST", "/clear", NULL, p->body.buf, p->body.len);
}

static enum target_answer
proc_answer(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a = pgt_status_class(status);
	struct jspan obj = { resp->buf, resp->len }, v;
	uint64_t n = 0;
	size_t off;

	if (p->kind != PROC_CLEAR || strpbrk(p->index, "*,") != NULL) {
		snprintf(why, whylen, "target postgres clears one table, not "
		    "'%s'%s", p->index, p->kind != PROC_CLEAR ?
		    " by a join cascade" : "");
		return TA_REFUSED;
	}
	if (status == 404) {
		p->gone = 1;
		return TA_OK;
	}
	if (a != TA_OK) {
		pgt_error_text(resp->buf, resp->len, why, whylen);
		return a;
	}
	if (resp->len > 0 && jscan_validate(resp->buf, resp->len, &off,
	    NULL) == 0 && jobj_get(obj, "deleted", &v))
		jnum_u64(v, &n);
	p->deleted += n;
	return TA_OK;
}

static const struct target_ops ops = {
	.index_name = index_name,
	.index_body = index_body,
	.mapping_file = NULL,
	.probe_call = probe_call,
	.probe_answer = probe_answer,
	.error_text = pgt_error_text,
	.create_call = create_call,
	.create_answer = create_answer,
	.encode = encode,
	.bulk_call = bulk_call,
	.bulk_answer = bulk_answer,
	.read_call = read_call,
	.read_answer = read_answer,
	.proc_call = proc_call,
	.proc_answer = proc_answer,
	.state_get = pgt_state_get,
	.state_put = pgt_state_put,
	.index_exists = pgt_index_exists,
	.index_create = pgt_index_create,
	.load_settings = pgt_load_settings,
	.load_suspend = pgt_load_suspend,
	.load_restore = pgt_load_restore,
	.state_prepare = pgt_state_prepare,
	.pipeline_exists = pgt_pipeline_exists,
	.index_state = pgt_index_state,
	.mapping_conflicts = pgt_mapping_conflicts,
	.refresh = pgt_refresh,
	.doc_count = pgt_doc_count,
	.index_delete = pgt_index_delete,
};

/* a table made from its DDL (a mapping file) and our state in a table
 * of its own; a document completed from its stored row (an unchanged
 * TOAST value); one transaction at a time, in order (no concurrent
 * writes), no routing, join, pipelines, aliases or swaps */
const struct target_module target_postgres = {
	.name = "postgres",
	.state_place = "table '" PGT_STATE_TABLE "'",
	.caps = TCAP_MAPPINGS | TCAP_STATE_DOCS | TCAP_COMPLETE_DOCS,
	.ops = &ops,
	.rejects = &pgt_rejects_ops,
	.rejects_place = "table '" PGT_REJECTS_TABLE "'",
	.transport = &pgt_transport,
	.url_check = url_check,
	.mapping_form = "a CREATE TABLE statement",
};
