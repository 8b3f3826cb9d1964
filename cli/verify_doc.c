/*
 * verify_doc.c - what pg2osync verify compares: a digest of a document's
 * content, the same whichever order its members are in and however its
 * strings are escaped (a TOAST completion appends members; the target
 * hands back what it stored), its numbers as written or, for a target that
 * keeps their values only, by value, and the table of documents by index and
 * id that the rows rendered fill and the stored documents are looked up
 * in. Pure: no I/O.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "xio.h"

#define FNV_INIT	14695981039346656037ull
#define FNV_PRIME	1099511628211ull

static uint64_t
mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

struct member {
	struct jspan k, v;
};

static int
by_key(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->k.n < y->k.n ? x->k.n : y->k.n;
	int c = memcmp(x->k.p, y->k.p, n);

	return c ? c : (x->k.n > y->k.n) - (x->k.n < y->k.n);
}

static uint64_t canon(uint64_t h, struct jspan v, int by_value);

/* a number by its value: an integer that fits 64 bits as its digits,
 * anything else as the double it parses to (an integral one as an
 * integer, so that 1000.0 is 1000) */
static uint64_t
canon_number(uint64_t h, struct jspan v)
{
	char small[64], *buf = small, out[40];
	long long i;
	int64_t si;
	uint64_t u;
	double d;

	if (jnum_i64(v, &si) == 0)
		snprintf(out, sizeof(out), "%lld", (long long)si);
	else if (jnum_u64(v, &u) == 0)
		snprintf(out, sizeof(out), "%llu", (unsigned long long)u);
	else {
		if (v.n >= sizeof(small))
			buf = xmalloc(v.n + 1);
		memcpy(buf, v.p, v.n);
		buf[v.n] = '\0';
		d = strtod(buf, NULL);
		if (buf != small)
			free(buf);
		i = (long long)d;
		if (fabs(d) < 9e18 && (double)i == d)
			snprintf(out, sizeof(out), "%lld", i);
		else
			snprintf(out, sizeof(out), "%.17g", d);
	}
	return mix(mix(h, "n", 1), out, strlen(out));
}

static uint64_t
canon_string(uint64_t h, struct jspan s)
{
	char small[256], *buf = small;
	size_t n;

	if (s.n > sizeof(small))
		buf = xmalloc(s.n);
	n = jstr_unescape(s, buf);
	h = mix(h, "s", 1);
	h = mix(h, buf, n);
	h = mix(h, "", 1);
	if (buf != small)
		free(buf);
	return h;
}

static uint64_t
canon(uint64_t h, struct jspan v, int by_value)
{
	struct member small[32], *m = small;
	struct jspan k, e;
	struct jiter it;
	int n = 0, cap = 32, i;

	switch (jspan_type(v)) {
	case J_OBJECT:
		jiter_init(&it, v);
		while (jiter_member(&it, &k, &e)) {
			if (n == cap) {
				cap *= 2;
				if (m == small) {
					m = xmalloc(cap * sizeof(*m));
					memcpy(m, small, sizeof(small));
				} else
					m = xrealloc(m, cap * sizeof(*m));
			}
			m[n].k = k;
			m[n++].v = e;
		}
		qsort(m, (size_t)n, sizeof(*m), by_key);
		h = mix(h, "{", 1);
		for (i = 0; i < n; i++) {
			h = canon_string(h, m[i].k);
			h = canon(h, m[i].v, by_value);
		}
		h = mix(h, "}", 1);
		if (m != small)
			free(m);
		return h;
	case J_ARRAY:
		jiter_init(&it, v);
		h = mix(h, "[", 1);
		while (jiter_elem(&it, &e))
			h = canon(mix(h, ",", 1), e, by_value);
		return mix(h, "]", 1);
	case J_STRING:
		return canon_string(h, v);
	case J_NUMBER:
		if (by_value)
			return canon_number(h, v);
		/* as written: the target keeps the bytes it was sent */
		return mix(mix(h, "n", 1), v.p, v.n);
	default:
		/* true, false, null */
		return mix(mix(h, "n", 1), v.p, v.n);
	}
}

uint64_t
vdoc_digest(struct jspan doc, int by_value)
{
	return canon(FNV_INIT, doc, by_value);
}

/* "index\0id", both unescaped, into key: its length, or -1 */
static int
key_of(struct jspan index, struct jspan id, char *key, size_t cap)
{
	size_t a, b;

	if (index.n + id.n + 1 > cap || jspan_type(index) != J_STRING ||
	    jspan_type(id) != J_STRING)
		return -1;
	a = jstr_unescape(index, key);
	key[a] = '\0';
	b = jstr_unescape(id, key + a + 1);
	return (int)(a + 1 + b);
}

void
vtab_init(struct vtab *t)
{
	memset(t, 0, sizeof(*t));
	sbuf_init(&t->keys);
	sbuf_init(&t->recs);
}

void
vtab_release(struct vtab *t)
{
	free(t->e);
	free(t->slot);
	sbuf_release(&t->keys);
	sbuf_release(&t->recs);
	memset(t, 0, sizeof(*t));
}

static void
grow(struct vtab *t)
{
	int i, j, n = t->nslot ? t->nslot * 2 : 1024;

	free(t->slot);
	t->slot = xmalloc((size_t)n * sizeof(*t->slot));
	for (i = 0; i < n; i++)
		t->slot[i] = -1;
	t->nslot = n;
	for (i = 0; i < t->n; i++) {
		for (j = (int)(t->e[i].h & (uint64_t)(n - 1)); t->slot[j] != -1;
		    j = (j + 1) & (n - 1))
			;
		t->slot[j] = i;
	}
}

static int *
find(struct vtab *t, const char *key, int len, uint64_t h)
{
	int j;

	for (j = (int)(h & (uint64_t)(t->nslot - 1)); t->slot[j] != -1;
	    j = (j + 1) & (t->nslot - 1)) {
		const struct ventry *e = &t->e[t->slot[j]];

		if (e->h == h && e->klen == (uint32_t)len &&
		    memcmp(t->keys.buf + e->koff, key, (size_t)len) == 0)
			break;
	}
	return &t->slot[j];
}

int
vtab_add(struct vtab *t, const struct msg_op *m)
{
	char key[2048];
	struct ventry *e;
	uint64_t h;
	int len, *s;

	if ((len = key_of(m->index, m->id, key, sizeof(key))) == -1)
		return -1;
	if ((t->n + 1) * 2 > t->nslot)
		grow(t);
	h = mix(FNV_INIT, key, (size_t)len);
	s = find(t, key, len, h);
	if (*s == -1) {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 1024;
			t->e = xrealloc(t->e, (size_t)t->cap * sizeof(*t->e));
		}
		*s = t->n++;
		e = &t->e[*s];
		memset(e, 0, sizeof(*e));
		e->h = h;
		e->koff = t->keys.len;
		e->klen = (uint32_t)len;
		sbuf_add(&t->keys, key, (size_t)len);
	}
	/* a later rendering of the same document is the one that counts,
	 * as it would be at the target */
	e = &t->e[*s];
	e->digest = vdoc_digest(m->doc, t->numbers_by_value);
	e->rec = (size_t)-1;
	return 0;
}

void
vtab_keep(struct vtab *t, struct ventry *e, const struct msg_op *m)
{
	/* what a repair writes: index, id, routing, pipeline, doc; an
	 * earlier copy of the entry's stays behind, unused */
	e->rec = t->recs.len;
	sbuf_addf(&t->recs, "%zu %zu %zu %zu %zu\n", m->index.n, m->id.n,
	    m->routing.p ? m->routing.n : 0,
	    m->pipeline.p ? m->pipeline.n : 0, m->doc.n);
	sbuf_add(&t->recs, m->index.p, m->index.n);
	sbuf_add(&t->recs, m->id.p, m->id.n);
	if (m->routing.p)
		sbuf_add(&t->recs, m->routing.p, m->routing.n);
	if (m->pipeline.p)
		sbuf_add(&t->recs, m->pipeline.p, m->pipeline.n);
	sbuf_add(&t->recs, m->doc.p, m->doc.n);
}

struct ventry *
vtab_get(struct vtab *t, struct jspan index, struct jspan id)
{
	char key[2048];
	int len, *s;

	if (t->nslot == 0 ||
	    (len = key_of(index, id, key, sizeof(key))) == -1)
		return NULL;
	s = find(t, key, len, mix(FNV_INIT, key, (size_t)len));
	return *s == -1 ? NULL : &t->e[*s];
}

void
vtab_name(const struct vtab *t, const struct ventry *e, char *buf,
    size_t len)
{
	const char *k = t->keys.buf + e->koff;
	size_t a = strlen(k);

	snprintf(buf, len, "%s/%.*s", k, (int)(e->klen - a - 1), k + a + 1);
}

int
vtab_write(const struct vtab *t, const struct ventry *e,
    struct target_write *w)
{
	const char *p;
	size_t n[5];
	char *end;
	int i;

	if (e->rec == (size_t)-1)
		return -1;
	p = t->recs.buf + e->rec;
	for (i = 0; i < 5; i++) {
		n[i] = strtoul(p, &end, 10);
		p = end + 1;
	}
	memset(w, 0, sizeof(*w));
	w->index.p = p;
	w->index.n = n[0];
	p += n[0];
	w->id.p = p;
	w->id.n = n[1];
	p += n[1];
	if (n[2]) {
		w->routing.p = p;
		w->routing.n = n[2];
		p += n[2];
	}
	if (n[3]) {
		w->pipeline.p = p;
		w->pipeline.n = n[3];
		p += n[3];
	}
	w->doc.p = p;
	w->doc.n = n[4];
	return 0;
}

void
olist_init(struct olist *l)
{
	memset(l, 0, sizeof(*l));
	sbuf_init(&l->buf);
}

void
olist_release(struct olist *l)
{
	free(l->o);
	sbuf_release(&l->buf);
}

void
olist_add(struct olist *l, const struct target_doc *d)
{
	struct orphan *o;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->o = xrealloc(l->o, (size_t)l->cap * sizeof(*l->o));
	}
	o = &l->o[l->n++];
	o->off = l->buf.len;
	o->ilen = d->index.n;
	o->idlen = d->id.n;
	o->rlen = d->routing.p ? d->routing.n : 0;
	sbuf_add(&l->buf, d->index.p, d->index.n);
	sbuf_add(&l->buf, d->id.p, d->id.n);
	if (d->routing.p)
		sbuf_add(&l->buf, d->routing.p, d->routing.n);
}

void
olist_delete(const struct olist *l, int i, struct target_write *w)
{
	const struct orphan *o = &l->o[i];

	memset(w, 0, sizeof(*w));
	w->del = 1;
	w->index.p = l->buf.buf + o->off;
	w->index.n = o->ilen;
	w->id.p = w->index.p + o->ilen;
	w->id.n = o->idlen;
	if (o->rlen) {
		w->routing.p = w->id.p + o->idlen;
		w->routing.n = o->rlen;
	}
}

/* a scan of a section's literal index name: every document found is
 * that name's, an alias's included (the hit names the index behind it) */
struct named_scan {
	int	(*fn)(void *, const struct target_doc *);
	void	*arg;
	struct sbuf name;	/* as a JSON string */
};

static int
as_named(void *arg, const struct target_doc *d)
{
	struct named_scan *ns = arg;
	struct target_doc nd = *d;

	nd.index.p = ns->name.buf;
	nd.index.n = ns->name.len;
	return ns->fn(ns->arg, &nd);
}

int
docs_scan(const struct config *cfg, const unsigned char *want,
    struct target_conn *tc, int (*fn)(void *, const struct target_doc *),
    void *arg, uint64_t *requests, struct p2o_err *e)
{
	const struct sync_section *s, *t;
	struct named_scan ns = { fn, arg, SBUF_INIT };
	const char *name;
	int i, j, dup, rc = 0;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (!want[i])
			continue;
		name = s->index_templated ? s->index_glob : s->index;
		for (dup = 0, j = 0; j < i && !dup; j++) {
			t = &cfg->syncs[j];
			dup = want[j] && strcmp(name, t->index_templated ?
			    t->index_glob : t->index) == 0;
		}
		if (dup)
			continue;
		sbuf_reset(&ns.name);
		sbuf_add_jstr(&ns.name, name, strlen(name));
		if ((rc = tc->mod->scan->scan(tc, name, s->index_templated ? fn :
		    as_named, s->index_templated ? arg : &ns, requests,
		    e)) == -1)
			break;
	}
	sbuf_release(&ns.name);
	return rc;
}
