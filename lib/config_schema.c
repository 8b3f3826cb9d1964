/*
 * config_schema.c - the one walker over configuration tables
 * (config_schema.h): checks every value against its key's kind, stores it,
 * fills defaults, records the line of every key it saw, runs the finish
 * rules and frees it all again. Owns the generic messages ("unknown key",
 * "duplicate key", "missing required key", "must be ...") and the path
 * naming in them.
 *
 * It walks a tree built first (config_tree.c) rather than libyaml's events:
 * a syntax error anywhere is then reported before any complaint about
 * content, and a list's or map's size is known before its array is
 * allocated. The walker recurses only as deep as the tables nest; deeper
 * YAML is a kind error at the first node a table does not expect.
 *
 * Every key seen is recorded by its path in a hash table: duplicate and
 * required keys are found there, and so are the lines finish rules ask
 * for, without a scan per question.
 *
 * It knows no section and never exits; a check or finish rule says what is
 * wrong with a value, never quotes a value that may be a secret.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_schema.h"
#include "config_tree.h"
#include "sbuf.h"

struct seen {
	size_t	 path;		/* offset in walk.names */
	int	 line;
};

struct pending {
	const struct cs_node *s;
	void	*base;
	size_t	 path;		/* offset in walk.names */
	int	 line;
};

struct cs_walk {
	struct cmsg	 m;
	void		*base;		/* the root's structure */
	struct ctree	 t;
	struct sbuf	 path;		/* of the node being read */
	struct sbuf	 names;		/* paths of seen and pending */
	struct sbuf	 scratch;	/* cs_line's formatted path */
	struct seen	*seen;
	size_t		 nseen, capseen;
	size_t		*slot;		/* index + 1 into seen, 0 = free */
	size_t		 nslot;		/* a power of 2 */
	struct pending	*pend;
	size_t		 npend, cappend;
};

static int walk(struct cs_walk *, size_t, const struct cs_node *, void *,
    int);

int
cs_err(struct cs_walk *w, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cmsg_err(&w->m, line, "%s", msg);
}

const char *
cs_name(const struct cs_walk *w)
{
	return w->m.name;
}

void *
cs_base(const struct cs_walk *w)
{
	return w->base;
}

/* "'path' must ..." or, at the top, "the configuration must ..." */
static int
bad(struct cs_walk *w, int line, const char *what)
{
	if (w->path.len == 0)
		return cs_err(w, line, "the configuration %s", what);
	return cs_err(w, line, "'%s' %s", w->path.buf, what);
}

static const struct cnode *
node(const struct cs_walk *w, size_t i)
{
	return &w->t.v[i];
}

static const char *
text(const struct cs_walk *w, size_t i)
{
	return ctree_str(&w->t, node(w, i));
}

static void *
at(void *base, size_t off)
{
	return (char *)base + off;
}

/* a name that would read as more than one step is written ["name"], so
 * that every path, in a message or given to cs_line, names one place */
void
cs_path_add(struct sbuf *path, const char *name)
{
	const char *c;

	if (name[strcspn(name, ".[]\"\\")] == '\0') {
		if (path->len > 0)
			sbuf_addc(path, '.');
		sbuf_adds(path, name);
		return;
	}
	sbuf_adds(path, "[\"");
	for (c = name; *c; c++) {
		if (*c == '"' || *c == '\\')
			sbuf_addc(path, '\\');
		sbuf_addc(path, *c);
	}
	sbuf_adds(path, "\"]");
}

/* path += ".name" (or "name" at the top); returns the length to pop to */
static size_t
push_key(struct cs_walk *w, const char *name)
{
	size_t len = w->path.len;

	cs_path_add(&w->path, name);
	return len;
}

static size_t
push_index(struct cs_walk *w, size_t i)
{
	size_t len = w->path.len;

	sbuf_addf(&w->path, "[%zu]", i);
	return len;
}

static void
pop(struct cs_walk *w, size_t len)
{
	w->path.len = len;
	w->path.buf[len] = '\0';
}

static size_t
save_path(struct cs_walk *w)
{
	size_t off = w->names.len;

	sbuf_add(&w->names, w->path.buf, w->path.len + 1);
	return off;
}

/* FNV-1a */
static size_t
hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

/* the slot holding path, or the free one it would go in */
static size_t *
slot_of(const struct cs_walk *w, const char *path)
{
	size_t i, *sl;

	for (i = hash(path) & (w->nslot - 1);; i = (i + 1) & (w->nslot - 1)) {
		sl = &w->slot[i];
		if (*sl == 0 ||
		    strcmp(w->names.buf + w->seen[*sl - 1].path, path) == 0)
			return sl;
	}
}

/* the line path was seen on, or 0 */
static int
seen_line(const struct cs_walk *w, const char *path)
{
	size_t *sl;

	if (w->nslot == 0)
		return 0;
	sl = slot_of(w, path);
	return *sl ? w->seen[*sl - 1].line : 0;
}

/* at most half full, so a probe always ends on a free slot */
static void
grow_slots(struct cs_walk *w)
{
	size_t i;

	if (2 * (w->nseen + 1) <= w->nslot)
		return;
	free(w->slot);
	w->nslot = w->nslot ? w->nslot * 2 : 64;
	w->slot = xcalloc(w->nslot, sizeof(*w->slot));
	for (i = 0; i < w->nseen; i++)
		*slot_of(w, w->names.buf + w->seen[i].path) = i + 1;
}

/* the current path was seen on line; it is new (duplicates are refused
 * before this) */
static void
record(struct cs_walk *w, int line)
{
	if (w->nseen == w->capseen) {
		w->capseen = w->capseen ? w->capseen * 2 : 32;
		w->seen = xrealloc(w->seen, w->capseen * sizeof(*w->seen));
	}
	grow_slots(w);
	w->seen[w->nseen].path = save_path(w);
	w->seen[w->nseen].line = line;
	*slot_of(w, w->path.buf) = ++w->nseen;
}

int
cs_line(struct cs_walk *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	sbuf_reset(&w->scratch);
	sbuf_grow(&w->scratch, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(w->scratch.buf, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return seen_line(w, w->scratch.buf);
}

int
cs_parse_ll(const char *s, long long *out)
{
	char *end;

	if (!isdigit((unsigned char)s[0]) &&
	    !((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1])))
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	return 0;
}

/* "5242880", "5MiB", "512 KiB", "5MB": KB/MB/GB are powers of 1000,
 * KiB/MiB/GiB powers of 1024, as their names say */
static int
parse_size(const char *s, unsigned long long *out)
{
	static const struct {
		const char *unit;
		unsigned long long mult;
	} units[] = {
		{ "", 1 }, { "b", 1 },
		{ "kb", 1000ULL }, { "mb", 1000ULL * 1000 },
		{ "gb", 1000ULL * 1000 * 1000 },
		{ "kib", 1ULL << 10 }, { "mib", 1ULL << 20 },
		{ "gib", 1ULL << 30 },
	};
	unsigned long long v = 0;
	size_t i;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (ULLONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
	}
	while (*s == ' ')
		s++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(s, units[i].unit) != 0)
			continue;
		if (v > ULLONG_MAX / units[i].mult)
			return -1;
		*out = v * units[i].mult;
		return 0;
	}
	return -1;
}

/* what a value of kind s must be, for messages */
static const char *
expectation(const struct cs_node *s, char *buf, size_t len)
{
	const char *const *c;
	size_t n;

	if (s->expect)
		return s->expect;
	switch (s->kind) {
	case CS_STR:
		return "must be a non-empty string";
	case CS_INT:
	case CS_ULONG:
		if (s->max == (s->kind == CS_INT ? INT_MAX : LLONG_MAX))
			snprintf(buf, len, "must be an integer >= %lld",
			    s->min);
		else
			snprintf(buf, len,
			    "must be an integer between %lld and %lld",
			    s->min, s->max);
		return buf;
	case CS_BOOL:
		return "must be true or false";
	case CS_SIZE:
		snprintf(buf, len, "must be a byte count between %lld and "
		    "%lld, as an integer or a string such as \"5MiB\"",
		    s->min, s->max);
		return buf;
	case CS_ENUM:
		n = (size_t)snprintf(buf, len, "must be one of");
		for (c = s->choices; *c && n < len; c++)
			n += (size_t)snprintf(buf + n, len - n, "%s %s",
			    c == s->choices ? "" : ",", *c);
		return buf;
	case CS_LIST:
		if (s->elem->kind == CS_STRUCT)
			return "must be a non-empty list of mappings";
		if (s->elem->kind == CS_STR || s->elem->kind == CS_ENUM)
			return "must be a non-empty list of strings";
		return "must be a non-empty list";
	case CS_MAP:
	case CS_STRUCT:
		return "must be a mapping";
	}
	return "is invalid";
}

static int
expected(struct cs_walk *w, int line, const struct cs_node *s)
{
	char buf[256];

	return bad(w, line, expectation(s, buf, sizeof(buf)));
}

static void
set_str(void *base, const struct cs_node *s, const char *v)
{
	char **dst = at(base, s->off);

	free(*dst);
	*dst = xstrdup(v);
}

/* store scalar v (from the file or a default) as s says */
static int
store(struct cs_walk *w, const struct cs_node *s, void *base, const char *v,
    int line)
{
	char why[256];
	const char *const *c;
	long long ll;
	unsigned long long ull;

	switch (s->kind) {
	case CS_STR:
		if (*v == '\0')
			break;
		if (s->check && s->check(v, why, sizeof(why)) == -1)
			return bad(w, line, why);
		set_str(base, s, v);
		return 0;
	case CS_ENUM:
		for (c = s->choices; *c; c++)
			if (strcmp(v, *c) == 0)
				break;
		if (*c == NULL)
			break;
		set_str(base, s, v);
		return 0;
	case CS_INT:
		if (cs_parse_ll(v, &ll) == -1 || ll < s->min || ll > s->max)
			break;
		*(int *)at(base, s->off) = (int)ll;
		return 0;
	case CS_ULONG:
		if (cs_parse_ll(v, &ll) == -1 || ll < s->min || ll > s->max)
			break;
		*(unsigned long *)at(base, s->off) = (unsigned long)ll;
		return 0;
	case CS_BOOL:
		if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			break;
		*(int *)at(base, s->off) = *v == 't';
		return 0;
	case CS_SIZE:
		if (parse_size(v, &ull) == -1 ||
		    ull < (unsigned long long)s->min ||
		    ull > (unsigned long long)s->max)
			break;
		*(size_t *)at(base, s->off) = (size_t)ull;
		return 0;
	default:
		break;
	}
	return expected(w, line, s);
}

static int
walk_scalar(struct cs_walk *w, size_t ni, const struct cs_node *s,
    void *base)
{
	const struct cnode *n = node(w, ni);

	if (n->kind != CN_SCALAR || n->null)
		return expected(w, n->line, s);
	if (n->has_nul)
		return bad(w, n->line, "must not contain a NUL byte");
	if (s->typed)
		*(int *)at(base, s->plain_off) = n->plain;
	return store(w, s, base, text(w, ni), n->line);
}

/* a usable key: a string scalar (non-empty if nonempty) */
static int
is_key(const struct cs_walk *w, size_t ki, int nonempty)
{
	const struct cnode *k = node(w, ki);

	return k->kind == CN_SCALAR && !k->null && !k->has_nul &&
	    (!nonempty || k->len > 0);
}

static int
key_err(struct cs_walk *w, int line, int nonempty)
{
	const char *what = nonempty ? "non-empty strings" : "strings";

	if (w->path.len == 0)
		return cs_err(w, line, "keys must be %s", what);
	return cs_err(w, line, "keys in '%s' must be %s", w->path.buf, what);
}

static const struct cs_node *
table_key(const struct cs_node *keys, const char *name)
{
	for (; keys->name; keys++)
		if (strcmp(keys->name, name) == 0)
			return keys;
	return NULL;
}

static void
defer(struct cs_walk *w, const struct cs_node *s, void *base, int line)
{
	if (w->npend == w->cappend) {
		w->cappend = w->cappend ? w->cappend * 2 : 16;
		w->pend = xrealloc(w->pend, w->cappend * sizeof(*w->pend));
	}
	w->pend[w->npend].s = s;
	w->pend[w->npend].base = base;
	w->pend[w->npend].path = save_path(w);
	w->pend[w->npend++].line = line;
}

/* line is where the mapping's key is, for missing keys */
static int
walk_struct(struct cs_walk *w, size_t ni, const struct cs_node *s,
    void *base, int line)
{
	const struct cnode *n = node(w, ni);
	const struct cs_node *key;
	void *sbase = at(base, s->off);
	size_t k, v, len;
	int rc;

	if (n->kind != CN_MAP)
		return expected(w, n->line, s);
	for (k = n->first; k != CN_NONE; k = node(w, v)->next) {
		v = node(w, k)->next;
		if (!is_key(w, k, 0))
			return key_err(w, node(w, k)->line, 0);
		len = push_key(w, text(w, k));
		if ((key = table_key(s->keys, text(w, k))) == NULL)
			return cs_err(w, node(w, k)->line, "unknown key '%s'",
			    w->path.buf);
		if (seen_line(w, w->path.buf))
			return cs_err(w, node(w, k)->line, "duplicate key '%s'",
			    w->path.buf);
		record(w, node(w, k)->line);
		rc = walk(w, v, key, sbase, node(w, k)->line);
		pop(w, len);
		if (rc == -1)
			return -1;
	}
	for (key = s->keys; key->name; key++) {
		if (!key->required)
			continue;
		len = push_key(w, key->name);
		if (!seen_line(w, w->path.buf))
			return cs_err(w, line, "missing required key '%s'",
			    w->path.buf);
		pop(w, len);
	}
	if (s->finish)
		defer(w, s, sbase, line);
	return 0;
}

static int defaults(struct cs_walk *, const struct cs_node *, void *);

/* a new element of list or map s at index i of n, or NULL if a default
 * failed; counted at once, so a release after a failure frees it */
static void *
element(struct cs_walk *w, const struct cs_node *s, void *base, size_t i,
    size_t n, int line)
{
	char **arr = at(base, s->off);
	int *count = at(base, s->count_off);
	void *e;

	if (i == 0) {
		*arr = xcalloc(n, s->elem_size);
		*count = 0;
	}
	e = *arr + i * s->elem_size;
	(*count)++;
	if (s->has_line)
		*(int *)at(e, s->line_off) = line;
	record(w, line);
	return defaults(w, s->elem, e) == -1 ? NULL : e;
}

static int
walk_map(struct cs_walk *w, size_t ni, const struct cs_node *s, void *base)
{
	const struct cnode *n = node(w, ni);
	size_t k, v, i, len;
	void *e;
	int rc, line;

	if (n->kind != CN_MAP)
		return expected(w, n->line, s);
	if (n->n == 0)
		return bad(w, n->line, s->empty ? s->empty :
		    "must hold at least one entry");
	for (i = 0, k = n->first; k != CN_NONE; i++, k = node(w, v)->next) {
		v = node(w, k)->next;
		line = node(w, k)->line;
		if (!is_key(w, k, 1))
			return key_err(w, line, 1);
		len = push_key(w, text(w, k));
		if (seen_line(w, w->path.buf))
			return cs_err(w, line, "duplicate key '%s'",
			    w->path.buf);
		if ((e = element(w, s, base, i, n->n / 2, line)) == NULL)
			return -1;
		*(char **)at(e, s->name_off) = xstrdup(text(w, k));
		rc = walk(w, v, s->elem, e, line);
		pop(w, len);
		if (rc == -1)
			return -1;
	}
	return 0;
}

static int
walk_list(struct cs_walk *w, size_t ni, const struct cs_node *s, void *base)
{
	const struct cnode *n = node(w, ni);
	size_t c, d, i, len;
	void *e;
	int rc;

	if (n->kind != CN_LIST || n->n == 0)
		return n->kind == CN_LIST && s->empty ?
		    bad(w, n->line, s->empty) : expected(w, n->line, s);
	for (i = 0, c = n->first; c != CN_NONE; i++, c = node(w, c)->next) {
		len = push_index(w, i);
		if ((e = element(w, s, base, i, n->n, node(w, c)->line)) ==
		    NULL)
			return -1;
		rc = walk(w, c, s->elem, e, node(w, c)->line);
		pop(w, len);
		if (rc == -1)
			return -1;
		if (!s->distinct || node(w, c)->kind != CN_SCALAR)
			continue;
		for (d = n->first; d != c; d = node(w, d)->next)
			if (strcmp(text(w, d), text(w, c)) == 0)
				return cs_err(w, node(w, c)->line,
				    "'%s' lists '%s' twice", w->path.buf,
				    text(w, c));
	}
	return 0;
}

/* does node ni have the shape kind s reads? */
static int
fits(const struct cs_walk *w, size_t ni, const struct cs_node *s)
{
	enum cnode_kind k = node(w, ni)->kind;

	switch (s->kind) {
	case CS_LIST:
		return k == CN_LIST;
	case CS_MAP:
	case CS_STRUCT:
		return k == CN_MAP;
	default:
		return k == CN_SCALAR;
	}
}

/* where key s's value lives: base, or what its via pointer points to,
 * made now if make (else NULL when there is none) */
static void *
via(const struct cs_node *s, void *base, int make)
{
	void **p;

	if (s->via_size == 0)
		return base;
	p = at(base, s->via_off);
	if (*p == NULL && make)
		*p = xcalloc(1, s->via_size);
	return *p;
}

const void *
cs_via(const struct cs_node *s, const void *base)
{
	/* what a NULL pointer reads as: nothing set */
	static const union {
		max_align_t a;
		char	 c[1024];
	} none;
	const void *p;

	if (s->via_size == 0)
		return base;
	p = *(void *const *)((const char *)base + s->via_off);
	if (p != NULL)
		return p;
	/* a larger structure would read past none */
	return s->via_size <= sizeof(none) ? &none : NULL;
}

/* ni is the value of key s (line: the key's line) */
static int
walk(struct cs_walk *w, size_t ni, const struct cs_node *s, void *base,
    int line)
{
	base = via(s, base, 1);
	if (s->alt != NULL && !fits(w, ni, s) && fits(w, ni, s->alt))
		s = s->alt;
	switch (s->kind) {
	case CS_LIST:
		return walk_list(w, ni, s, base);
	case CS_MAP:
		return walk_map(w, ni, s, base);
	case CS_STRUCT:
		return walk_struct(w, ni, s, base, line);
	default:
		return walk_scalar(w, ni, s, base);
	}
}

/* a broken default is a broken table: its message names no line */
static int
defaults(struct cs_walk *w, const struct cs_node *s, void *base)
{
	const struct cs_node *k;
	size_t len;
	int rc;

	if (s->kind != CS_STRUCT)
		return s->def ? store(w, s, base, s->def, 0) : 0;
	for (k = s->keys; k->name; k++) {
		if (k->via_size != 0)
			continue;
		len = push_key(w, k->name);
		rc = defaults(w, k, at(base, s->off));
		pop(w, len);
		if (rc == -1)
			return -1;
	}
	return 0;
}

static void
release(const struct cs_node *s, void *base)
{
	const struct cs_node *k;
	char **p;
	int *count, i;

	if ((base = via(s, base, 0)) == NULL)
		return;
	p = at(base, s->off);
	/* the other spelling stores elsewhere in the same base */
	if (s->alt != NULL)
		release(s->alt, base);
	switch (s->kind) {
	case CS_STR:
	case CS_ENUM:
		free(*p);
		*p = NULL;
		return;
	case CS_LIST:
	case CS_MAP:
		count = at(base, s->count_off);
		for (i = 0; i < *count; i++) {
			if (s->kind == CS_MAP)
				free(*(char **)at(*p + i * s->elem_size,
				    s->name_off));
			release(s->elem, *p + i * s->elem_size);
		}
		free(*p);
		*p = NULL;
		*count = 0;
		return;
	case CS_STRUCT:
		/* first, while the keys' values it derived from are there */
		if (s->release)
			s->release(at(base, s->off));
		for (k = s->keys; k->name; k++)
			release(k, at(base, s->off));
		/* the structures its keys lived in, once all are gone */
		for (k = s->keys; k->name; k++)
			if (k->via_size != 0) {
				free(*(void **)at(at(base, s->off),
				    k->via_off));
				*(void **)at(at(base, s->off), k->via_off) =
				    NULL;
			}
		return;
	default:
		return;
	}
}

void
cs_release(const struct cs_node *root, void *base)
{
	release(root, base);
}

static int
finish_all(struct cs_walk *w)
{
	const struct pending *pd;
	size_t i;

	for (i = 0; i < w->npend; i++) {
		pd = &w->pend[i];
		if (pd->s->finish(w, pd->base, w->names.buf + pd->path,
		    pd->line) == -1)
			return -1;
	}
	return 0;
}

int
cs_load(const struct cs_node *root, void *base, const char *name,
    const char *buf, size_t len, char *err, size_t errlen)
{
	struct cs_walk w;
	const struct cnode *n;
	int rc = -1;

	memset(&w, 0, sizeof(w));
	w.base = base;
	w.m.name = name;
	w.m.err = err;
	w.m.errlen = errlen;
	if (errlen)
		err[0] = '\0';
	sbuf_add(&w.path, "", 0);
	if (defaults(&w, root, base) == -1 ||
	    ctree_parse(&w.t, buf, len, &w.m) == -1)
		goto out;
	n = w.t.n > 0 ? node(&w, 0) : NULL;
	if (n == NULL || (n->kind == CN_SCALAR && n->null)) {
		cs_err(&w, n ? n->line : 1, "the configuration is empty");
		goto out;
	}
	/* a missing top-level key is reported on line 1 */
	if (walk(&w, 0, root, base, 1) == -1)
		goto out;
	/* the finish rules read the lines recorded, never the tree: it goes
	 * before they add what they derive, which with ten thousand
	 * sections is megabytes on top of the tree's own (issue 38) */
	ctree_release(&w.t);
	if (finish_all(&w) == -1)
		goto out;
	rc = 0;
out:
	ctree_release(&w.t);
	sbuf_release(&w.path);
	sbuf_release(&w.names);
	sbuf_release(&w.scratch);
	free(w.seen);
	free(w.slot);
	free(w.pend);
	return rc;
}
