/*
 * pgoutput.c - decodes pgoutput messages (protocol version 1, text tuples)
 * into event frames: commit, row, truncate, drift. It owns the relation
 * and type caches and the open transaction's state. It never does I/O and
 * never trusts a length: every field is bounds-checked against the
 * message, and a message that does not parse leaves the caches, the
 * transaction and the output as they were.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "msg.h"
#include "nestread.h"
#include "p2o.h"
#include "capture-pg.h"

/* a cursor over one message */
struct rd {
	const unsigned char *p;
	size_t	 n, i;
};

/* one column of a TupleData */
struct tupcol {
	char	 kind;		/* 'n' null, 'u' unchanged TOAST, 't' text */
	const char *val;
	size_t	 len;
};

static int
get_u8(struct rd *r, uint8_t *v)
{
	if (r->n - r->i < 1)
		return -1;
	*v = r->p[r->i++];
	return 0;
}

static int
get_u16(struct rd *r, uint16_t *v)
{
	if (r->n - r->i < 2)
		return -1;
	*v = (uint16_t)(r->p[r->i] << 8 | r->p[r->i + 1]);
	r->i += 2;
	return 0;
}

static int
get_u32(struct rd *r, uint32_t *v)
{
	const unsigned char *b = r->p + r->i;

	if (r->n - r->i < 4)
		return -1;
	*v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
	r->i += 4;
	return 0;
}

static int
get_u64(struct rd *r, uint64_t *v)
{
	uint32_t hi, lo;

	if (r->n - r->i < 8)
		return -1;
	get_u32(r, &hi);
	get_u32(r, &lo);
	*v = (uint64_t)hi << 32 | lo;
	return 0;
}

/* a NUL-terminated string that must end inside the message */
static int
get_str(struct rd *r, const char **s)
{
	const unsigned char *nul;

	nul = memchr(r->p + r->i, '\0', r->n - r->i);
	if (nul == NULL)
		return -1;
	*s = (const char *)r->p + r->i;
	r->i = (size_t)(nul - r->p) + 1;
	return 0;
}

static int
truncated(struct pgo_decoder *d, char type)
{
	return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL,
	    "malformed pgoutput '%c' message: truncated", type);
}

static int
at_end(struct pgo_decoder *d, struct rd *r, char type)
{
	if (r->i == r->n)
		return 0;
	return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL,
	    "malformed pgoutput '%c' message: %zu unexpected trailing bytes",
	    type, r->n - r->i);
}

/* framing.md §3: microseconds since the Unix epoch */
static int64_t
unix_us(uint64_t pgtime)
{
	return (int64_t)(pgtime + (uint64_t)PG_EPOCH_OFFSET_US);
}

static void
rel_clear(struct pgo_rel *rel)
{
	int i;

	for (i = 0; i < rel->ncols; i++)
		free(rel->cols[i].name);
	free(rel->cols);
	free(rel->keys);
	free(rel->qname);
	free(rel->child);
	memset(rel, 0, sizeof(*rel));
}

static void
keydef_clear(struct pgo_keydef *k)
{
	int i;

	for (i = 0; i < k->ncols; i++)
		free(k->cols[i]);
	free(k->cols);
	free(k->qname);
}

void
pgo_init(struct pgo_decoder *d)
{
	memset(d, 0, sizeof(*d));
	sbuf_init(&d->json);
}

void
pgo_release(struct pgo_decoder *d)
{
	size_t i;

	for (i = 0; i < d->nrels; i++)
		rel_clear(&d->rels[i]);
	free(d->rels);
	for (i = 0; i < d->ntypes; i++)
		free(d->types[i].qname);
	free(d->types);
	for (i = 0; i < d->nkeydefs; i++)
		keydef_clear(&d->keydefs[i]);
	free(d->keydefs);
	for (i = 0; i < d->nfollows; i++) {
		free(d->follows[i].child);
		free(d->follows[i].parent);
		for (int j = 0; j < d->follows[i].ncols; j++)
			free(d->follows[i].cols[j]);
		free(d->follows[i].cols);
	}
	free(d->follows);
	sbuf_release(&d->json);
	memset(d, 0, sizeof(*d));
}

const struct pgo_rel *
pgo_rel_find(const struct pgo_decoder *d, uint32_t oid)
{
	size_t i;

	for (i = 0; i < d->nrels; i++)
		if (d->rels[i].oid == oid)
			return &d->rels[i];
	return NULL;
}

static struct pgo_rel *
rel_lookup(struct pgo_decoder *d, uint32_t oid)
{
	return (struct pgo_rel *)pgo_rel_find(d, oid);
}

static int
col_index(const struct pgo_rel *rel, const char *name)
{
	int i;

	for (i = 0; i < rel->ncols; i++)
		if (strcmp(rel->cols[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * The key rows carry: what pgoutput flagged, in column order, unless the
 * caller registered the primary key. That matters for REPLICA IDENTITY
 * FULL, where every column is flagged. With the default identity or an
 * identity index, old tuples carry only the flagged columns, so a
 * registered key is used only when each of its columns is flagged: it
 * gives key order, or the key of a followed child whose identity holds
 * more than its parent's key.
 */
static void
rel_set_keys(struct pgo_decoder *d, struct pgo_rel *rel)
{
	const struct pgo_keydef *kd = NULL;
	size_t i;
	int j, ix, nflagged = 0, ok = 1;

	free(rel->keys);
	rel->keys = xcalloc((size_t)rel->ncols + 1, sizeof(int));
	rel->nkeys = 0;
	for (j = 0; j < rel->ncols; j++)
		if (rel->cols[j].key)
			nflagged++;
	for (i = 0; i < d->nkeydefs; i++)
		if (strcmp(d->keydefs[i].qname, rel->qname) == 0)
			kd = &d->keydefs[i];
	if (kd && kd->ncols > 0 && kd->ncols <= rel->ncols &&
	    (rel->ident == 'f' || kd->ncols <= nflagged)) {
		for (j = 0; j < kd->ncols && ok; j++) {
			ix = col_index(rel, kd->cols[j]);
			if (ix < 0 || rel->cols[ix].skip ||
			    (rel->ident != 'f' && !rel->cols[ix].key))
				ok = 0;
			else
				rel->keys[j] = ix;
		}
		if (ok) {
			rel->nkeys = kd->ncols;
			return;
		}
	}
	for (j = 0; j < rel->ncols; j++)
		if (rel->cols[j].key && !rel->cols[j].skip)
			rel->keys[rel->nkeys++] = j;
}

void
pgo_follow(struct pgo_decoder *d, const char *child, const char *parent,
    const char *const *cols, int ncols)
{
	struct pgo_follow *f;
	int j;

	d->follows = xrealloc(d->follows, (d->nfollows + 1) *
	    sizeof(*d->follows));
	f = &d->follows[d->nfollows++];
	f->child = xstrdup(child);
	f->parent = xstrdup(parent);
	f->ncols = ncols;
	f->cols = xcalloc((size_t)ncols + 1, sizeof(char *));
	for (j = 0; j < ncols; j++)
		f->cols[j] = xstrdup(cols[j]);
}

/* how many children are followed under parent */
static int
follow_parent(const struct pgo_decoder *d, const char *parent)
{
	size_t i;
	int n = 0;

	for (i = 0; i < d->nfollows; i++)
		n += strcmp(d->follows[i].parent, parent) == 0;
	return n;
}

static const struct pgo_follow *
follow_find(const struct pgo_decoder *d, const char *child)
{
	size_t i;

	for (i = 0; i < d->nfollows; i++)
		if (strcmp(d->follows[i].child, child) == 0)
			return &d->follows[i];
	return NULL;
}

/* a followed child's relation: filed under its parent, with the
 * parent's columns only */
static void
rel_follow(const struct pgo_follow *f, struct pgo_rel *rel)
{
	int i, j;

	rel->child = rel->qname;
	rel->qname = xstrdup(f->parent);
	for (i = 0; i < rel->ncols; i++) {
		for (j = 0; j < f->ncols; j++)
			if (strcmp(f->cols[j], rel->cols[i].name) == 0)
				break;
		rel->cols[i].skip = j == f->ncols;
	}
}

void
pgo_allow_keyless(struct pgo_decoder *d, const char *qname)
{
	size_t i;

	for (i = 0; i < d->nkeydefs; i++)
		if (strcmp(d->keydefs[i].qname, qname) == 0) {
			d->keydefs[i].keyless = 1;
			return;
		}
	pgo_set_key(d, qname, NULL, 0);
	d->keydefs[d->nkeydefs - 1].keyless = 1;
}

static int
keyless_ok(const struct pgo_decoder *d, const char *qname)
{
	size_t i;

	for (i = 0; i < d->nkeydefs; i++)
		if (strcmp(d->keydefs[i].qname, qname) == 0)
			return d->keydefs[i].keyless;
	return 0;
}

void
pgo_set_key(struct pgo_decoder *d, const char *qname,
    const char *const *cols, int ncols)
{
	struct pgo_keydef *kd = NULL;
	size_t i;
	int j;

	for (i = 0; i < d->nkeydefs; i++)
		if (strcmp(d->keydefs[i].qname, qname) == 0) {
			kd = &d->keydefs[i];
			keydef_clear(kd);
		}
	if (kd == NULL) {
		d->keydefs = xrealloc(d->keydefs,
		    (d->nkeydefs + 1) * sizeof(*d->keydefs));
		kd = &d->keydefs[d->nkeydefs++];
		kd->keyless = 0;
	}
	kd->qname = xstrdup(qname);
	kd->ncols = ncols > 0 ? ncols : 0;
	kd->cols = xcalloc((size_t)kd->ncols + 1, sizeof(char *));
	for (j = 0; j < kd->ncols; j++)
		kd->cols[j] = xstrdup(cols[j]);
	for (i = 0; i < d->nrels; i++)
		if (strcmp(d->rels[i].qname, qname) == 0)
			rel_set_keys(d, &d->rels[i]);
}

static void
json_names(struct sbuf *j, enum msg_list which, const char *const *names,
    size_t n)
{
	size_t i;

	msg_list_begin(j, which);
	for (i = 0; i < n; i++)
		msg_list_item(j, names[i], strlen(names[i]));
	msg_list_end(j);
}

/* schema drift: what a replaced Relation changed in the column layout */
static void
emit_drift(struct pgo_decoder *d, const struct pgo_rel *old,
    const struct pgo_rel *new, struct sbuf *out)
{
	const char **added, **removed, **retyped;
	size_t na = 0, nr = 0, nt = 0;
	int i, ix;

	added = xcalloc((size_t)new->ncols + 1, sizeof(char *));
	retyped = xcalloc((size_t)new->ncols + 1, sizeof(char *));
	removed = xcalloc((size_t)old->ncols + 1, sizeof(char *));
	for (i = 0; i < new->ncols; i++) {
		ix = col_index(old, new->cols[i].name);
		if (ix < 0)
			added[na++] = new->cols[i].name;
		else if (old->cols[ix].typoid != new->cols[i].typoid)
			retyped[nt++] = new->cols[i].name;
	}
	for (i = 0; i < old->ncols; i++)
		if (col_index(new, old->cols[i].name) < 0)
			removed[nr++] = old->cols[i].name;
	if (na + nr + nt > 0) {
		msg_drift_begin(&d->json, new->qname, strlen(new->qname));
		json_names(&d->json, ML_ADDED, added, na);
		json_names(&d->json, ML_REMOVED, removed, nr);
		json_names(&d->json, ML_RETYPED, retyped, nt);
		msg_end(out, &d->json);
		d->n.drift++;
	}
	free(added);
	free(removed);
	free(retyped);
}

static int
decode_relation(struct pgo_decoder *d, struct rd *r, struct sbuf *out)
{
	struct pgo_rel rel, *old;
	const struct pgo_follow *f;
	const char *nsp, *name;
	uint16_t ncols;
	uint8_t ident, flags;
	uint32_t typoid, typmod;
	int i;

	memset(&rel, 0, sizeof(rel));
	if (get_u32(r, &rel.oid) < 0 || get_str(r, &nsp) < 0 ||
	    get_str(r, &name) < 0 || get_u8(r, &ident) < 0 ||
	    get_u16(r, &ncols) < 0)
		return truncated(d, 'R');
	if (ident != 'd' && ident != 'n' && ident != 'f' && ident != 'i')
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "malformed "
		    "pgoutput 'R' message: replica identity 0x%02x", ident);
	rel.ident = (char)ident;
	/* each column takes at least 10 bytes: refuse a count that lies */
	if ((size_t)ncols * 10 > r->n - r->i)
		return truncated(d, 'R');
	rel.cols = xcalloc((size_t)ncols + 1, sizeof(*rel.cols));
	for (i = 0; i < ncols; i++) {
		const char *cname;

		if (get_u8(r, &flags) < 0 || get_str(r, &cname) < 0 ||
		    get_u32(r, &typoid) < 0 || get_u32(r, &typmod) < 0) {
			rel.ncols = i;
			rel_clear(&rel);
			return truncated(d, 'R');
		}
		rel.cols[i].name = xstrdup(cname);
		rel.cols[i].key = flags & 1;
		rel.cols[i].typoid = typoid;
		rel.cols[i].typmod = (int32_t)typmod;
		rel.ncols = i + 1;
	}
	if (at_end(d, r, 'R') < 0) {
		rel_clear(&rel);
		return -1;
	}
	/* an empty namespace is pg_catalog (proto.c) */
	sbuf_reset(&d->json);
	sbuf_addf(&d->json, "%s.%s", *nsp ? nsp : "pg_catalog", name);
	rel.qname = xstrdup(d->json.buf);
	if ((f = follow_find(d, rel.qname)) != NULL)
		rel_follow(f, &rel);
	rel_set_keys(d, &rel);

	old = rel_lookup(d, rel.oid);
	if (old) {
		emit_drift(d, old, &rel, out);
		rel_clear(old);
	} else {
		if (d->nrels == d->caprels) {
			d->caprels = d->caprels ? 2 * d->caprels : 16;
			d->rels = xrealloc(d->rels,
			    d->caprels * sizeof(*d->rels));
		}
		old = &d->rels[d->nrels++];
	}
	*old = rel;
	return 0;
}

static int
decode_type(struct pgo_decoder *d, struct rd *r)
{
	const char *nsp, *name;
	uint32_t oid;
	size_t i;

	if (get_u32(r, &oid) < 0 || get_str(r, &nsp) < 0 ||
	    get_str(r, &name) < 0)
		return truncated(d, 'Y');
	if (at_end(d, r, 'Y') < 0)
		return -1;
	sbuf_reset(&d->json);
	sbuf_addf(&d->json, "%s.%s", *nsp ? nsp : "pg_catalog", name);
	for (i = 0; i < d->ntypes; i++)
		if (d->types[i].oid == oid) {
			free(d->types[i].qname);
			d->types[i].qname = xstrdup(d->json.buf);
			return 0;
		}
	if (d->ntypes == d->captypes) {
		d->captypes = d->captypes ? 2 * d->captypes : 16;
		d->types = xrealloc(d->types, d->captypes * sizeof(*d->types));
	}
	d->types[d->ntypes].oid = oid;
	d->types[d->ntypes].qname = xstrdup(d->json.buf);
	d->ntypes++;
	return 0;
}

/* TupleData into cols[rel->ncols]; values point into the message */
static int
read_tuple(struct pgo_decoder *d, struct rd *r, char type,
    const struct pgo_rel *rel, struct tupcol *cols)
{
	uint16_t n;
	uint32_t len;
	uint8_t kind;
	int i;

	if (get_u16(r, &n) < 0)
		return truncated(d, type);
	if (n != rel->ncols)
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput '%c' "
		    "message for '%s' has %u columns, its relation %d", type,
		    rel->qname, n, rel->ncols);
	for (i = 0; i < n; i++) {
		if (get_u8(r, &kind) < 0)
			return truncated(d, type);
		cols[i].kind = (char)kind;
		cols[i].val = NULL;
		cols[i].len = 0;
		switch (kind) {
		case 'n':
		case 'u':
			break;
		case 't':
			if (get_u32(r, &len) < 0 || len > r->n - r->i)
				return truncated(d, type);
			cols[i].val = (const char *)r->p + r->i;
			cols[i].len = len;
			r->i += len;
			break;
		case 'b':
			return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput "
			    "sent a binary value for '%s'.'%s', which was not "
			    "requested", rel->qname, rel->cols[i].name);
		default:
			return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "malformed "
			    "pgoutput '%c' message: column kind 0x%02x", type,
			    kind);
		}
	}
	return 0;
}

static void
json_tuple(struct sbuf *j, enum msg_image which, const struct pgo_rel *rel,
    const struct tupcol *cols, int skip_null)
{
	int i;

	msg_image_begin(j, which);
	for (i = 0; i < rel->ncols; i++) {
		if (cols[i].kind == 'u' || (skip_null && cols[i].kind == 'n') ||
		    rel->cols[i].skip)
			continue;
		msg_column(j, rel->cols[i].name, strlen(rel->cols[i].name));
		if (cols[i].kind == 'n')
			sbuf_adds(j, "null");
		else
			pgtype_to_json(rel->cols[i].typoid, cols[i].val,
			    cols[i].len, j);
	}
	msg_image_end(j);
}

/* one image of a decoded row, as the re-read asks for its values */
struct tup_image {
	const struct pgo_rel *rel;
	const struct tupcol *cols;
};

static int
tup_text(const void *img, const char *col, struct sbuf *out)
{
	const struct tup_image *t = img;
	int i;

	for (i = 0; i < t->rel->ncols; i++)
		if (strcmp(t->rel->cols[i].name, col) == 0) {
			if (t->cols[i].kind != 't')
				return 0;
			sbuf_add(out, t->cols[i].val, t->cols[i].len);
			return 1;
		}
	return 0;
}

/* a row the commit-time re-read takes: 1 when its frame goes out too */
static int
nested(struct pgo_decoder *d, const struct pgo_rel *rel, char type,
    const struct tupcol *newt, const struct tupcol *oldt)
{
	struct tup_image nt = { rel, newt }, ot = { rel, oldt };
	struct nest_image ni = { tup_text, &nt }, oi = { tup_text, &ot };

	return nestread_row(d->nest, rel->qname, type == 'D' ? NULL : &ni,
	    oldt ? &oi : NULL);
}

/* I, U, D: one row frame */
static int
decode_row(struct pgo_decoder *d, struct rd *r, char type, struct sbuf *out)
{
	const struct pgo_rel *rel;
	struct tupcol *newt = NULL, *oldt = NULL;
	uint32_t oid;
	uint8_t marker;
	char oldkind = 0;
	int i, ntoast = 0, rc = -1;

	if (!d->in_txn)
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput '%c' "
		    "message outside a transaction", type);
	if (get_u32(r, &oid) < 0 || get_u8(r, &marker) < 0)
		return truncated(d, type);
	if ((rel = pgo_rel_find(d, oid)) == NULL)
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput '%c' "
		    "message for relation %" PRIu32 " that no Relation message "
		    "described", type, oid);
	if (rel->nkeys == 0 && !keyless_ok(d, rel->qname))
		return p2o_fail(&d->err, P2O_EXIT_REFUSED, "table '%s' has no "
		    "primary key or replica identity", rel->qname);

	newt = xcalloc((size_t)rel->ncols + 1, sizeof(*newt));
	oldt = xcalloc((size_t)rel->ncols + 1, sizeof(*oldt));
	if (type != 'I' && (marker == 'K' || marker == 'O')) {
		oldkind = (char)marker;
		if (read_tuple(d, r, type, rel, oldt) < 0)
			goto done;
		if (type == 'U' && get_u8(r, &marker) < 0) {
			truncated(d, type);
			goto done;
		}
	}
	if (type == 'D') {
		if (oldkind == 0) {
			p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "malformed "
			    "pgoutput 'D' message: tuple marker 0x%02x",
			    marker);
			goto done;
		}
	} else {
		if (marker != 'N') {
			p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "malformed "
			    "pgoutput '%c' message: tuple marker 0x%02x", type,
			    marker);
			goto done;
		}
		if (read_tuple(d, r, type, rel, newt) < 0)
			goto done;
	}
	if (at_end(d, r, type) < 0)
		goto done;

	for (i = 0; type != 'D' && i < rel->ncols; i++) {
		if (newt[i].kind != 'u' || rel->cols[i].skip)
			continue;
		if (type == 'I') {
			p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput 'I' "
			    "message for '%s' has an unchanged-TOAST column "
			    "'%s'", rel->qname, rel->cols[i].name);
			goto done;
		}
		/* REPLICA IDENTITY FULL: the old row has the value */
		if (oldkind == 'O' && oldt[i].kind == 't')
			newt[i] = oldt[i];
		else
			ntoast++;
	}

	if (d->nest != NULL && !nested(d, rel, type, newt,
	    oldkind ? oldt : NULL)) {
		d->txn_n++;
		rc = 0;
		goto done;
	}
	/* built in out itself: a wide row's values are copied once */
	msg_row_begin_in(out, &d->row_in, type == 'I' ? 'i' : type == 'U' ?
	    'u' : 'd', rel->qname, strlen(rel->qname), d->txn_lsn);
	msg_list_begin(out, ML_KEY);
	for (i = 0; i < rel->nkeys; i++) {
		const char *kname = rel->cols[rel->keys[i]].name;

		msg_list_item(out, kname, strlen(kname));
	}
	msg_list_end(out);
	if (type != 'D')
		json_tuple(out, MI_NEW, rel, newt, 0);
	/* a 'K' tuple sends the key and NULL for every other column */
	if (oldkind)
		json_tuple(out, MI_OLD, rel, oldt, oldkind == 'K');
	if (ntoast) {
		msg_list_begin(out, ML_TOAST);
		for (i = 0; i < rel->ncols; i++)
			if (newt[i].kind == 'u' && !rel->cols[i].skip)
				msg_list_item(out, rel->cols[i].name,
				    strlen(rel->cols[i].name));
		msg_list_end(out);
	}
	msg_end_in(out, &d->row_in);

	d->txn_n++;
	if (type == 'I')
		d->n.inserts++;
	else if (type == 'U')
		d->n.updates++;
	else
		d->n.deletes++;
	rc = 0;
done:
	free(newt);
	free(oldt);
	return rc;
}

/* the name rels[i] is filed under, once, or NULL for a repeat */
static const char *
first_name(const struct pgo_rel *const *rels, uint32_t i)
{
	uint32_t k;

	for (k = 0; k < i; k++)
		if (strcmp(rels[k]->qname, rels[i]->qname) == 0)
			return NULL;
	return rels[i]->qname;
}

/* 1 when the truncated relations name every table of parent's followed
 * tree, the parent itself included */
static int
whole_tree(const struct pgo_decoder *d, const char *parent,
    const struct pgo_rel *const *rels, uint32_t n)
{
	size_t f;
	uint32_t k;
	int found;

	for (found = 0, k = 0; k < n && !found; k++)
		found = rels[k]->child == NULL &&
		    strcmp(rels[k]->qname, parent) == 0;
	if (!found)
		return 0;
	for (f = 0; f < d->nfollows; f++) {
		if (strcmp(d->follows[f].parent, parent) != 0)
			continue;
		for (found = 0, k = 0; k < n && !found; k++)
			found = rels[k]->child != NULL &&
			    strcmp(rels[k]->child, d->follows[f].child) == 0;
		if (!found)
			return 0;
	}
	return 1;
}

static int
decode_truncate(struct pgo_decoder *d, struct rd *r, struct sbuf *out)
{
	const struct pgo_rel **rels;
	const char *name;
	uint32_t nrels, oid, i;
	uint8_t options;
	int rc = -1;

	if (!d->in_txn)
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput 'T' "
		    "message outside a transaction");
	if (get_u32(r, &nrels) < 0 || get_u8(r, &options) < 0)
		return truncated(d, 'T');
	if (nrels > (r->n - r->i) / 4)
		return truncated(d, 'T');
	if ((r->n - r->i) != (size_t)nrels * 4)
		return at_end(d, r, 'T');
	rels = xcalloc((size_t)nrels + 1, sizeof(*rels));
	for (i = 0; i < nrels; i++) {
		get_u32(r, &oid);
		if ((rels[i] = pgo_rel_find(d, oid)) == NULL) {
			p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput 'T' "
			    "message for relation %" PRIu32 " that no "
			    "Relation message described", oid);
			goto done;
		}
	}
	/* a followed tree's index holds every table's rows: only a
	 * truncate of all of them says what it holds now */
	for (i = 0; i < nrels; i++) {
		if (rels[i]->child == NULL && follow_parent(d,
		    rels[i]->qname) == 0)
			continue;
		if (!whole_tree(d, rels[i]->qname, rels, nrels)) {
			p2o_fail(&d->err, P2O_EXIT_REFUSED, "a TRUNCATE of "
			    "'%s' without the rest of its inheritance tree: "
			    "the index of '%s' holds the rows of every table "
			    "in it, and cannot lose only these; truncate the "
			    "parent (which truncates its children), or drop "
			    "the replication slot and load the table again",
			    rels[i]->child ? rels[i]->child : rels[i]->qname,
			    rels[i]->qname);
			goto done;
		}
	}
	for (i = 0; d->nest != NULL && i < nrels; i++)
		nestread_truncate(d->nest, rels[i]->qname);
	msg_truncate_begin(&d->json, d->txn_lsn);
	msg_list_begin(&d->json, ML_RELS);
	for (i = 0; i < nrels; i++)
		if ((name = first_name(rels, i)) != NULL)
			msg_list_item(&d->json, name, strlen(name));
	msg_list_end(&d->json);
	msg_end(out, &d->json);
	d->txn_n++;
	d->n.truncates++;
	rc = 0;
done:
	free(rels);
	return rc;
}

int
pgo_flush(struct pgo_decoder *d, struct sbuf *out)
{
	char lsnbuf[32], tp[TRACE_PARENT_LEN];
	size_t mark = out->len;

	/* a burst closes between transactions only: in the middle of one
	 * (the socket ran dry between its messages) its parent keys are
	 * already noted, and reading them now, before its commit is
	 * visible, would write the parents without it and consume the keys
	 * its own commit needs. Its commit joins the burst instead */
	if (!d->held || d->in_txn)
		return 0;
	p2o_err_clear(&d->err);
	if (nestread_commit(d->nest, d->held_v, out, &d->txn_n,
	    &d->err) == -1) {
		out->len = mark;
		return -1;
	}
	lsn_format(d->held_end, lsnbuf);
	msg_put_commit(out, d->held_end, lsnbuf, d->held_ts, d->txn_n,
	    d->held_tx, d->held_rx, trace_batch_commit(&d->trace, d->txn_n,
	    d->held_end, lsnbuf, tp));
	d->last_commit = d->held_end;
	d->held = 0;
	d->txn_n = 0;
	return 0;
}

int
pgo_decode(struct pgo_decoder *d, const unsigned char *msg, size_t len,
    struct sbuf *out)
{
	struct rd r = { msg, len, 1 };
	uint64_t lsn, end, ts;
	uint32_t xid, mlen;
	uint8_t flags;
	const char *s;
	char lsnbuf[32], tp[TRACE_PARENT_LEN];
	size_t mark = out->len;
	int rc = 0;

	p2o_err_clear(&d->err);
	if (len == 0)
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "empty pgoutput "
		    "message");
	/* a batch's span starts at its Begin and counts what it took */
	if (d->in_txn || msg[0] == 'B')
		trace_batch_add(&d->trace, len);

	switch (msg[0]) {
	case 'B':
		if (get_u64(&r, &lsn) < 0 || get_u64(&r, &ts) < 0 ||
		    get_u32(&r, &xid) < 0)
			return truncated(d, 'B');
		if (at_end(d, &r, 'B') < 0)
			return -1;
		if (d->in_txn)
			return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput "
			    "Begin of xid %" PRIu32 " inside xid %" PRIu32, xid,
			    d->txn_xid);
		d->in_txn = 1;
		d->txn_lsn = lsn;
		d->txn_ts = unix_us(ts);
		d->txn_xid = xid;
		/* a held commit's rows are counted by the frame that
		 * will close them with this one */
		if (!d->held)
			d->txn_n = 0;
		return 0;

	case 'C':
		if (get_u8(&r, &flags) < 0 || get_u64(&r, &lsn) < 0 ||
		    get_u64(&r, &end) < 0 || get_u64(&r, &ts) < 0)
			return truncated(d, 'C');
		if (at_end(d, &r, 'C') < 0)
			return -1;
		if (!d->in_txn)
			return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput "
			    "Commit outside a transaction");
		d->in_txn = 0;
		d->n.commits++;
		/*
		 * The parents its rows named go ahead of the commit: the
		 * position is acknowledged only once they are written. They
		 * are read once for every commit decoded until pgo_flush (a
		 * burst the server had already sent), so the commit is held;
		 * while one is, every later commit is held with it (the
		 * parents wait until nestread_commit).
		 */
		if (d->nest != NULL && nestread_pending(d->nest)) {
			d->held = 1;
			d->held_v = d->txn_lsn;
			d->held_end = end;
			d->held_ts = unix_us(ts);
			d->held_tx = d->tx_us;
			d->held_rx = d->rx_us;
			if (nestread_hold(d->nest, d->txn_xid))
				return pgo_flush(d, out);
			return 0;
		}
		lsn_format(end, lsnbuf);
		msg_put_commit(out, end, lsnbuf, unix_us(ts), d->txn_n,
		    d->tx_us, d->rx_us, trace_batch_commit(&d->trace,
		    d->txn_n, end, lsnbuf, tp));
		d->last_commit = end;
		return 0;

	case 'O':	/* Origin: where a replicated txn came from; not ours */
		if (get_u64(&r, &lsn) < 0 || get_str(&r, &s) < 0)
			return truncated(d, 'O');
		return at_end(d, &r, 'O');

	case 'R':
		rc = decode_relation(d, &r, out);
		break;

	case 'Y':
		return decode_type(d, &r);

	case 'I':
	case 'U':
	case 'D':
		rc = decode_row(d, &r, (char)msg[0], out);
		break;

	case 'T':
		rc = decode_truncate(d, &r, out);
		break;

	case 'M':	/* pg_logical_emit_message(): counted, not forwarded */
		if (get_u8(&r, &flags) < 0 || get_u64(&r, &lsn) < 0 ||
		    get_str(&r, &s) < 0 || get_u32(&r, &mlen) < 0 ||
		    mlen > r.n - r.i)
			return truncated(d, 'M');
		r.i += mlen;
		if (at_end(d, &r, 'M') < 0)
			return -1;
		d->n.messages++;
		return 0;

	case 'S':
	case 'E':
	case 'c':
	case 'A':
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput sent a "
		    "streamed transaction message '%c', but streaming was not "
		    "requested", msg[0]);

	case 'b':
	case 'P':
	case 'K':
	case 'r':
	case 'p':
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "pgoutput sent a "
		    "two-phase message '%c', but two-phase was not requested",
		    msg[0]);

	default:
		return p2o_fail(&d->err, P2O_EXIT_TEMPFAIL, "unknown pgoutput "
		    "message type 0x%02x", msg[0]);
	}
	if (rc < 0) {
		out->len = mark;
		if (out->cap)
			out->buf[mark] = '\0';
	}
	return rc;
}
