/*
 * id.c - a document's identity: its id (framing.md §7), its index and its
 * routing. The only code that turns row values into an identity, so a
 * streamed row, a copied row and every delete - a plain one, a move's, a
 * fan-out element's, a row leaving the filter - can never disagree about
 * one. It reads raw values, before any projection or transform, through a
 * view (shaper.h), and never invents an identity: a NULL or missing value
 * is an error naming the column.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shaper.h"

/* column names are at most 64 bytes in PostgreSQL and MySQL; a longer one
 * still works, through the heap */
#define NAME_BUF	256

void
ident_init(struct ident *d)
{
	sbuf_init(&d->index);
	sbuf_init(&d->id);
	sbuf_init(&d->routing);
	d->routed = 0;
	sbuf_init(&d->keyraw);
	d->keycols = NULL;
	d->nkeycols = 0;
}

static void
keycols_forget(struct ident *d)
{
	int i;

	for (i = 0; i < d->nkeycols; i++)
		free(d->keycols[i]);
	free(d->keycols);
	d->keycols = NULL;
	d->nkeycols = 0;
	sbuf_reset(&d->keyraw);
}

void
ident_release(struct ident *d)
{
	sbuf_release(&d->index);
	sbuf_release(&d->id);
	sbuf_release(&d->routing);
	keycols_forget(d);
	sbuf_release(&d->keyraw);
}

static int
same_buf(const struct sbuf *a, const struct sbuf *b)
{
	return a->len == b->len && (a->len == 0 ||
	    memcmp(a->buf, b->buf, a->len) == 0);
}

int
ident_same(const struct ident *a, const struct ident *b)
{
	return same_buf(&a->index, &b->index) && same_buf(&a->id, &b->id) &&
	    a->routed == b->routed && same_buf(&a->routing, &b->routing);
}

int
view_get(const struct view *v, const char *name, struct jspan *val)
{
	if (v->elem.p != NULL) {
		if (jspan_type(v->elem) == J_OBJECT) {
			if (jobj_get(v->elem, name, val))
				return 1;
		} else if (strcmp(name, v->elem_name) == 0) {
			*val = v->elem;
			return 1;
		}
	}
	if (v->skip != NULL && strcmp(name, v->skip) == 0)
		return 0;
	if (v->img.p != NULL && jobj_get(v->img, name, val))
		return 1;
	return v->fallback.p != NULL && jobj_get(v->fallback, name, val);
}

/* the text of one value; composite keys escape the separator */
static void
add_value(struct sbuf *id, struct jspan v, int escape)
{
	const char *s = v.p;
	size_t n = v.n, i;
	char *heap = NULL;

	if (jspan_type(v) == J_STRING)
		s = jstr_text(v, &n, &heap);
	if (!escape) {
		sbuf_add(id, s, n);
	} else {
		for (i = 0; i < n; i++) {
			if (s[i] == '%')
				sbuf_add(id, "%25", 3);
			else if (s[i] == '|')
				sbuf_add(id, "%7C", 3);
			else
				sbuf_addc(id, s[i]);
		}
	}
	free(heap);
}

/* a string value whose text would stop at a NUL byte cannot be an id */
static int
has_nul_escape(struct jspan v)
{
	return jspan_type(v) == J_STRING && memmem(v.p, v.n, "\\u0000", 6);
}

/* the value of column name, or -1 with why: missing, null, NUL */
static int
get_value(const struct view *v, const char *name, struct jspan *val,
    char *err, size_t errlen)
{
	int found = view_get(v, name, val);

	if (found && jspan_type(*val) != J_NULL && !has_nul_escape(*val))
		return 0;
	snprintf(err, errlen, "column '%s' is %s", name, !found ? "missing" :
	    jspan_type(*val) == J_NULL ? "null" :
	    "a string holding a NUL character");
	return -1;
}

int
id_render_view(struct jspan keys, const struct view *v, struct sbuf *id,
    char *err, size_t errlen)
{
	struct jiter it;
	struct jspan name, val;
	char buf[NAME_BUF], *heapname, why[NAME_BUF + 64];
	const char *cname;
	int nkeys = 0, rc;

	if (jspan_type(keys) != J_ARRAY || jiter_init(&it, keys) == -1) {
		snprintf(err, errlen, "\"key\" is not an array");
		return -1;
	}
	/* one key column is rendered as is; several are escaped, so count */
	while (jiter_elem(&it, &name))
		nkeys++;
	if (nkeys == 0) {
		snprintf(err, errlen, "\"key\" names no column");
		return -1;
	}

	jiter_init(&it, keys);
	for (int i = 0; jiter_elem(&it, &name); i++) {
		if (jspan_type(name) != J_STRING) {
			snprintf(err, errlen, "\"key\" holds a non-string");
			return -1;
		}
		heapname = NULL;
		cname = buf;
		if (jstr_copy(name, buf, sizeof(buf)) == -1)
			cname = heapname = jstr_dup(name);
		rc = get_value(v, cname, &val, why, sizeof(why));
		free(heapname);
		if (rc == -1) {
			snprintf(err, errlen, "key %s", why);
			return -1;
		}
		if (i > 0)
			sbuf_addc(id, '|');
		/* an array or object key (a PostgreSQL int[] key, say) is
		 * rendered as its JSON text, which the capture writes compact */
		add_value(id, val, nkeys > 1);
	}
	return 0;
}

/* d's key columns for keys: those of the last rows when its bytes are
 * theirs, else read from it; -1 when keys is not an array of at least one
 * string (id_render_view then says what is wrong, as it always has) */
static int
key_columns(struct ident *d, struct jspan keys)
{
	struct jiter it;
	struct jspan name;
	int n = 0;

	if (d->keyraw.len > 0 && d->keyraw.len == keys.n &&
	    memcmp(d->keyraw.buf, keys.p, keys.n) == 0)
		return 0;
	keycols_forget(d);
	if (jspan_type(keys) != J_ARRAY || jiter_init(&it, keys) == -1)
		return -1;
	while (jiter_elem(&it, &name)) {
		if (jspan_type(name) != J_STRING)
			return -1;
		n++;
	}
	if (n == 0)
		return -1;
	d->keycols = xcalloc((size_t)n, sizeof(*d->keycols));
	jiter_init(&it, keys);
	while (jiter_elem(&it, &name))
		d->keycols[d->nkeycols++] = jstr_dup(name);
	sbuf_add(&d->keyraw, keys.p, keys.n);
	return 0;
}

/* id_render_view with d's key columns, the same id and errors */
static int
id_render_key(struct ident *d, struct jspan keys, const struct view *v,
    char *err, size_t errlen)
{
	struct jspan val;
	char why[NAME_BUF + 64];
	int i;

	if (key_columns(d, keys) == -1)
		return id_render_view(keys, v, &d->id, err, errlen);
	for (i = 0; i < d->nkeycols; i++) {
		if (get_value(v, d->keycols[i], &val, why, sizeof(why)) == -1) {
			snprintf(err, errlen, "key %s", why);
			return -1;
		}
		if (i > 0)
			sbuf_addc(&d->id, '|');
		add_value(&d->id, val, d->nkeycols > 1);
	}
	return 0;
}

int
id_render(struct jspan keys, struct jspan row, struct sbuf *id, char *err,
    size_t errlen)
{
	struct view v = { { NULL, 0 }, NULL, row, { NULL, 0 }, NULL };

	if (jspan_type(row) != J_OBJECT) {
		snprintf(err, errlen, "row image is not an object");
		return -1;
	}
	return id_render_view(keys, &v, id, err, errlen);
}

int
id_template(const struct tmpl *t, const struct view *v, struct sbuf *out,
    char *err, size_t errlen)
{
	struct jspan val;
	int i;

	for (i = 0; i < t->nparts; i++) {
		if (!t->parts[i].column) {
			sbuf_adds(out, t->parts[i].text);
			continue;
		}
		if (get_value(v, t->parts[i].text, &val, err, errlen) == -1)
			return -1;
		add_value(out, val, 0);
	}
	return 0;
}

void
id_content(struct jspan row, struct sbuf *id)
{
	static const char hex[] = "0123456789abcdef";
	struct sbuf c = SBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	canon_json(row, &c);
	/* the digest cannot fail on a buffer in memory */
	EVP_Digest(c.buf, c.len, md, &mdlen, EVP_sha256(), NULL);
	for (i = 0; i < mdlen; i++) {
		sbuf_addc(id, hex[md[i] >> 4]);
		sbuf_addc(id, hex[md[i] & 15]);
	}
	sbuf_release(&c);
}

/* the id of parent section p whose key column is val: its template names
 * one column (config.c), so val stands for every column part */
static void
put_parent_id(const struct sync_section *p, struct jspan val,
    struct sbuf *out)
{
	int i;

	for (i = 0; i < p->id_t.nparts; i++) {
		if (p->id_t.parts[i].column)
			add_value(out, val, 0);
		else
			sbuf_adds(out, p->id_t.parts[i].text);
	}
}

int
id_parent_of(const struct config *cfg, const struct sync_section *child,
    struct jspan val, struct sbuf *out, char *err, size_t errlen)
{
	const struct sync_more *more = sync_more(child);
	const struct sync_section *p = &cfg->syncs[more->join.parent_sec];

	/* an element naming its parent is one key: a scalar, never absent */
	if (jspan_type(val) == J_NULL || jspan_type(val) == J_OBJECT ||
	    jspan_type(val) == J_ARRAY || has_nul_escape(val)) {
		snprintf(err, errlen, "join: a fan_out element of column '%s' "
		    "is %s, and 'parent: {element}' needs each element to be "
		    "its parent's key", more->fan_out.column,
		    jspan_type(val) == J_NULL ? "null" : jspan_type(val) ==
		    J_OBJECT ? "an object" : jspan_type(val) == J_ARRAY ?
		    "an array" : "a string holding a NUL character");
		return -1;
	}
	put_parent_id(p, val, out);
	return 0;
}

int
id_parent(const struct config *cfg, const struct sync_section *child,
    const struct view *v, struct sbuf *out, char *err, size_t errlen)
{
	const struct sync_more *more = sync_more(child);
	const struct sync_section *p = &cfg->syncs[more->join.parent_sec];
	struct jspan val;
	char why[NAME_BUF + 64];

	/* the parent's id template names one column (config.c): the
	 * child's parent column stands for it */
	if (get_value(v, more->join.column, &val, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "join: %s", why);
		return -1;
	}
	put_parent_id(p, val, out);
	return 0;
}

int
id_ident(const struct config *cfg, const struct sync_section *sec,
    const struct view *v, struct jspan keys, struct ident *d, char *err,
    size_t errlen)
{
	const struct sync_more *more = sync_more(sec);
	char why[512];
	struct jspan val;

	sbuf_reset(&d->index);
	sbuf_reset(&d->id);
	sbuf_reset(&d->routing);
	d->routed = 0;
	if (!sec->index_templated)
		sbuf_adds(&d->index, sec->index);
	else {
		if (id_template(&sec->index_t, v, &d->index, why,
		    sizeof(why)) == -1) {
			snprintf(err, errlen, "index: %s", why);
			return -1;
		}
		sbuf_add(&d->index, "", 0);
		if (config_check_index_name(cfg, d->index.buf, why,
		    sizeof(why)) == -1) {
			snprintf(err, errlen, "index: the template renders "
			    "'%.200s', which is not an index name: it %s",
			    d->index.buf, why);
			return -1;
		}
	}
	if (sec->append_only)
		/* the same row hashes the same from every path: a replay is
		 * the same document */
		id_content(v->img, &d->id);
	else if (sec->id != NULL) {
		if (id_template(&sec->id_t, v, &d->id, why, sizeof(why)) == -1) {
			snprintf(err, errlen, "id: %s", why);
			return -1;
		}
	} else if (id_render_key(d, keys, v, err, errlen) == -1)
		return -1;
	if (more->routing != NULL) {
		/* the target refuses an empty routing, and a fallback to the
		 * default shard would hide the document from routed reads */
		if (get_value(v, more->routing, &val, why, sizeof(why)) == -1) {
			snprintf(err, errlen, "routing: %s", why);
			return -1;
		}
		add_value(&d->routing, val, 0);
		if (d->routing.len == 0) {
			snprintf(err, errlen, "routing: column '%s' is empty",
			    more->routing);
			return -1;
		}
		d->routed = 1;
	} else if (sec->has_join && more->join.parent != NULL &&
	    !more->join.by_element) {
		/* (a child whose elements name parents is routed per element,
		 * shape.c) */
		if (id_parent(cfg, sec, v, &d->routing, err, errlen) == -1)
			return -1;
		d->routed = 1;
	}
	return 0;
}
