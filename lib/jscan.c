/*
 * jscan.c - the strict JSON validator and the span readers built on it.
 * Owns the RFC 8259 grammar, UTF-8 checking and string unescaping for the
 * whole project. It never allocates while validating and never builds a
 * tree: spans point into the caller's bytes. The span readers trust that
 * jscan_validate accepted their input and do not re-check it.
 */
#include <stdint.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "swar.h"

#define JSCAN_DEPTH_MAX	512

typedef const unsigned char *uptr;

/* bytes a string holds as they are: printable ASCII but '"' and '\\' */
static const unsigned char str_plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5B] = 1, [0x5D ... 0x7F] = 1,
};

static const unsigned char is_ws[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1,
};

static inline uptr
skip_ws(uptr p, uptr end)
{
	/* frames are compact: a byte above the space ends it at once */
	while (p < end && *p <= ' ' && is_ws[*p])
		p++;
	return p;
}

static int
hex4(uptr p, unsigned *out)
{
	unsigned v = 0, d;
	int i;

	for (i = 0; i < 4; i++) {
		if (p[i] >= '0' && p[i] <= '9')
			d = p[i] - '0';
		else if ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')
			d = (p[i] | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

struct verr {
	uptr	 at;
	const char *why;
};

#define FAIL(pos, msg) do { e->at = (pos); e->why = (msg); return NULL; } while (0)

/* p is just past the opening quote; returns just past the closing one */
static uptr
scan_string_slow(uptr p, uptr end, struct verr *e)
{
	unsigned cp, lo;
	unsigned char c, l, h;

	for (;;) {
		p = swar_json_plain(p, end);
		while (p < end && str_plain[*p])
			p++;
		if (p >= end)
			FAIL(p, "unterminated string");
		c = *p;
		if (c == '"')
			return p + 1;
		if (c == '\\') {
			if (end - p < 2)
				FAIL(p, "unterminated string");
			switch (p[1]) {
			case '"': case '\\': case '/': case 'b':
			case 'f': case 'n': case 'r': case 't':
				p += 2;
				continue;
			case 'u':
				break;
			default:
				FAIL(p, "invalid escape");
			}
			if (end - p < 6 || hex4(p + 2, &cp) < 0)
				FAIL(p, "invalid \\u escape");
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				FAIL(p, "lone low surrogate");
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (end - p < 12 || p[6] != '\\' || p[7] != 'u' ||
				    hex4(p + 8, &lo) < 0 ||
				    lo < 0xDC00 || lo > 0xDFFF)
					FAIL(p, "unpaired high surrogate");
				p += 12;
			} else
				p += 6;
			continue;
		}
		if (c < 0x20)
			FAIL(p, "control character in string");
		/* c >= 0x80: one UTF-8 sequence, RFC 3629 table 4 */
		l = 0x80;
		h = 0xBF;
		if (c >= 0xC2 && c <= 0xDF) {
			if (end - p < 2 || (p[1] & 0xC0) != 0x80)
				FAIL(p, "invalid UTF-8");
			p += 2;
		} else if (c >= 0xE0 && c <= 0xEF) {
			if (c == 0xE0)
				l = 0xA0;
			else if (c == 0xED)
				h = 0x9F;
			if (end - p < 3 || p[1] < l || p[1] > h ||
			    (p[2] & 0xC0) != 0x80)
				FAIL(p, "invalid UTF-8");
			p += 3;
		} else if (c >= 0xF0 && c <= 0xF4) {
			if (c == 0xF0)
				l = 0x90;
			else if (c == 0xF4)
				h = 0x8F;
			if (end - p < 4 || p[1] < l || p[1] > h ||
			    (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
				FAIL(p, "invalid UTF-8");
			p += 4;
		} else
			FAIL(p, "invalid UTF-8");
	}
}

/* the digits from p on: just past the last */
static inline uptr
skip_digits(uptr p, uptr end)
{
	while (p < end && (unsigned)(*p - '0') < 10)
		p++;
	return p;
}

/* a number's fraction and exponent, from the '.' or 'e' at p; start is
 * the number's first byte, where an error points */
static uptr
scan_fraction(uptr p, uptr end, uptr start, struct verr *e)
{
	if (*p == '.') {
		p++;
		if (p >= end || (unsigned)(*p - '0') >= 10)
			FAIL(start, "invalid number");
		p = skip_digits(p, end);
	}
	if (p < end && (*p | 0x20) == 'e') {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || (unsigned)(*p - '0') >= 10)
			FAIL(start, "invalid number");
		p = skip_digits(p, end);
	}
	return p;
}

/* p is at a number's '-' or first digit; returns just past it. An
 * integer, what the stages write, is one branch and one loop. */
static inline uptr
scan_number(uptr p, uptr end, struct verr *e)
{
	uptr start = p;

	if (*p == '-')
		p++;
	if (p < end && (unsigned)(*p - '1') < 9)
		p = skip_digits(p + 1, end);
	else if (p < end && *p == '0') {
		p++;
		if (p < end && (unsigned)(*p - '0') < 10)
			FAIL(start, "leading zero in number");
	} else
		FAIL(start, "invalid number");
	if (p < end && (*p == '.' || (*p | 0x20) == 'e'))
		return scan_fraction(p, end, start, e);
	return p;
}

/* inline, so that the compare is of a constant's few bytes */
static inline __attribute__((always_inline)) uptr
scan_literal(uptr p, uptr end, const char *lit, size_t n, struct verr *e)
{
	if ((size_t)(end - p) < n || memcmp(p, lit, n) != 0)
		FAIL(p, "invalid literal");
	return p + n;
}

#undef FAIL

/* scan_string_slow, with the common case inline: a member name or a
 * short value whose first special byte is its closing quote */
static inline __attribute__((always_inline)) uptr
scan_string(uptr p, uptr end, struct verr *e)
{
#ifdef __SSE2__
	unsigned m;

	/* most strings end within sixteen bytes: their end found without
	 * the loop's bookkeeping */
	if (end - p >= 16) {
		if ((m = swar_json_mask16(p)) != 0) {
			p += __builtin_ctz(m);
			if (*p == '"')
				return p + 1;
			return scan_string_slow(p, end, e);
		}
		p += 16;
	}
#endif
	p = swar_json_plain(p, end);
	/* the last few bytes of a frame, which the word scans leave */
	while (p < end && str_plain[*p])
		p++;
	if (p < end && *p == '"')
		return p + 1;
	return scan_string_slow(p, end, e);
}

int
jscan_validate(const char *s, size_t n, size_t *err_off, const char **why)
{
	return jscan_validate_top(s, n, NULL, err_off, why);
}

/* a member name and its ':', from just past the '{' or ',' before it: the
 * value's first byte, the name's span in *key and *keyn; NULL on error */
static inline __attribute__((always_inline)) uptr
member_name(uptr p, uptr end, uptr *key, size_t *keyn, struct verr *e)
{
	if (p >= end || *p != '"') {
		p = skip_ws(p, end);
		if (p >= end) {
			e->at = p;
			e->why = "unexpected end of input";
			return NULL;
		}
		if (*p != '"') {
			e->at = p;
			e->why = "expected a member name";
			return NULL;
		}
	}
	*key = p;
	if ((p = scan_string(p + 1, end, e)) == NULL)
		return NULL;
	*keyn = p - *key;
	if (p < end && *p == ':')
		p++;
	else {
		p = skip_ws(p, end);
		if (p >= end || *p != ':') {
			e->at = p;
			e->why = p >= end ? "unexpected end of input" :
			    "expected ':'";
			return NULL;
		}
		p++;
	}
	if (p >= end || *p <= ' ') {
		p = skip_ws(p, end);
		if (p >= end) {
			e->at = p;
			e->why = "unexpected end of input";
			return NULL;
		}
	}
	return p;
}

/* after a value in a container closed by close: 1 past a ',', 0 past
 * the closing byte, -1 on error (what the container expected in *e) */
static inline __attribute__((always_inline)) int
after_value(uptr *pp, uptr end, unsigned char close, const char *expect,
    struct verr *e)
{
	uptr p = *pp;

	if (p < end && *p == ',') {
		*pp = p + 1;
		return 1;
	}
	p = skip_ws(p, end);
	if (p >= end || (*p != ',' && *p != close)) {
		e->at = p;
		e->why = p >= end ? "unexpected end of input" : expect;
		return -1;
	}
	*pp = p + 1;
	return *p == ',';
}

/*
 * One pass, a state per place in the grammar, and where a value ends the
 * container it ends in: the outermost object (whose members are noted),
 * another object, an array, or none. The stack of open containers is read
 * only when one closes, and a compact frame's ',' and ':' are taken before
 * any whitespace is looked for. The errors, and the bytes they point at,
 * are those of the grammar read token by token.
 */
int
jscan_validate_top(const char *s, size_t n, struct jtop *top,
    size_t *err_off, const char **why)
{
	enum { IN_NONE, IN_ROOT, IN_OBJECT, IN_ARRAY };
	uptr p = (uptr)s, end = p + n, root, vend, ks, kp = NULL, vp = NULL;
	/* one bit per open container: 1 object, 0 array */
	uint64_t stack[JSCAN_DEPTH_MAX / 64];
	struct verr e = { NULL, NULL };
	struct jtop unused;
	size_t kn = 0, ksn;
	int depth = 0, in = IN_NONE, nt = 0, over = 0;

	/* the outermost object's members are noted into a scratch when the
	 * caller does not want them: no test of top on the way */
	if (top == NULL)
		top = &unused;
	top->n = 0;
	top->complete = 0;
	top->obj.p = NULL;
	top->obj.n = 0;

#define ERR(pos, msg)	do { e.at = (pos); e.why = (msg); goto fail; } while (0)

	root = p = skip_ws(p, end);
	if (p >= end)
		ERR(p, "unexpected end of input");

value:	/* at a value's first byte: a string or a number, most often */
	if (*p == '"') {
		if ((p = scan_string(p + 1, end, &e)) == NULL)
			goto fail;
		goto scalar_end;
	}
	if ((unsigned)(*p - '0') < 10 || *p == '-') {
		if ((p = scan_number(p, end, &e)) == NULL)
			goto fail;
		goto scalar_end;
	}
	switch (*p) {
	case '{':
		if (depth == JSCAN_DEPTH_MAX)
			ERR(p, "nesting deeper than 512");
		stack[depth >> 6] |= 1ULL << (depth & 63);
		depth++;
		p = skip_ws(p + 1, end);
		in = depth == 1 ? IN_ROOT : IN_OBJECT;
		if (p < end && *p == '}') {
			p++;
			goto closed;
		}
		if (in == IN_ROOT)
			goto root_key;
		goto key;
	case '[':
		if (depth == JSCAN_DEPTH_MAX)
			ERR(p, "nesting deeper than 512");
		stack[depth >> 6] &= ~(1ULL << (depth & 63));
		depth++;
		in = IN_ARRAY;
		p = skip_ws(p + 1, end);
		if (p < end && *p == ']') {
			p++;
			goto closed;
		}
		if (p >= end)
			ERR(p, "unexpected end of input");
		goto value;
	case 't':
		if ((p = scan_literal(p, end, "true", 4, &e)) == NULL)
			goto fail;
		break;
	case 'f':
		if ((p = scan_literal(p, end, "false", 5, &e)) == NULL)
			goto fail;
		break;
	case 'n':
		if ((p = scan_literal(p, end, "null", 4, &e)) == NULL)
			goto fail;
		break;
	default:
		ERR(p, "unexpected character");
	}
scalar_end:	/* a scalar ended at p, in the container that was open */
	switch (in) {
	case IN_ROOT:
		goto root_member_end;
	case IN_OBJECT:
		goto member_end;
	case IN_ARRAY:
		goto elem_end;
	default:
		goto done;
	}

root_member_end:	/* a member of the outermost object ended at p */
	if (nt < JTOP_MAX) {
		top->key[nt].p = (const char *)kp;
		top->key[nt].n = kn;
		top->val[nt].p = (const char *)vp;
		top->val[nt].n = p - vp;
		nt++;
	} else
		over = 1;
	switch (after_value(&p, end, '}', "expected ',' or '}'", &e)) {
	case 1:
		goto root_key;
	case 0:
		goto closed;
	default:
		goto fail;
	}

member_end:	/* a member of another object ended at p */
	switch (after_value(&p, end, '}', "expected ',' or '}'", &e)) {
	case 1:
		goto key;
	case 0:
		goto closed;
	default:
		goto fail;
	}

elem_end:	/* an element ended at p */
	switch (after_value(&p, end, ']', "expected ',' or ']'", &e)) {
	case 1:
		goto elem;
	case 0:
		goto closed;
	default:
		goto fail;
	}

closed:	/* a container closed just before p */
	if (--depth == 0)
		goto done;
	if (stack[(depth - 1) >> 6] >> ((depth - 1) & 63) & 1) {
		if (depth == 1) {
			in = IN_ROOT;
			goto root_member_end;
		}
		in = IN_OBJECT;
		goto member_end;
	}
	in = IN_ARRAY;
	goto elem_end;

elem:	/* past an array's ',' */
	if (p >= end || *p <= ' ') {
		p = skip_ws(p, end);
		if (p >= end)
			ERR(p, "unexpected end of input");
	}
	goto value;

root_key:	/* past the outermost object's '{' or ',' */
	if ((p = member_name(p, end, &kp, &kn, &e)) == NULL)
		goto fail;
	vp = p;
	goto value;

key:	/* past another object's '{' or ',' */
	if ((p = member_name(p, end, &ks, &ksn, &e)) == NULL)
		goto fail;
	goto value;

done:
	vend = p;
	p = skip_ws(p, end);
	if (p != end)
		ERR(p, "unexpected data after the value");
	top->obj.p = (const char *)root;
	top->obj.n = vend - root;
	top->n = nt;
	top->complete = *root == '{' && !over;
	return 0;

fail:
	top->n = nt;
	if (err_off)
		*err_off = e.at - (uptr)s;
	if (why)
		*why = e.why;
	return -1;
#undef ERR
}

/* p is just past the opening quote of a valid string */
static uptr
skip_string(uptr p, uptr end)
{
	for (;;) {
		p = swar_json_plain(p, end);
		while (p < end && *p != '"' && *p != '\\')
			p++;
		if (p >= end)
			return end;
		if (*p == '"')
			return p + 1;
		p += 2;
	}
}

/* p is at the first byte of a valid value; returns just past it */
static uptr
skip_value(uptr p, uptr end)
{
	int depth = 0;

	switch (*p) {
	case '"':
		return skip_string(p + 1, end);
	case '{':
	case '[':
		while (p < end) {
			switch (*p) {
			case '"':
				p = skip_string(p + 1, end);
				continue;
			case '{':
			case '[':
				depth++;
				break;
			case '}':
			case ']':
				if (--depth == 0)
					return p + 1;
				break;
			}
			p++;
		}
		return end;
	default:
		while (p < end && !is_ws[*p] && *p != ',' && *p != '}' &&
		    *p != ']')
			p++;
		return p;
	}
}

int
jiter_init(struct jiter *it, struct jspan c)
{
	if (c.p == NULL || c.n < 2 || (c.p[0] != '{' && c.p[0] != '['))
		return -1;
	it->p = c.p + 1;
	it->end = c.p + c.n - 1;
	it->first = 1;
	return 0;
}

/* position on the next element: past the comma unless it is the first;
 * NULL at the end */
static uptr
iter_next(struct jiter *it)
{
	uptr p = (uptr)it->p, end = (uptr)it->end;

	p = skip_ws(p, end);
	if (!it->first && p < end && *p == ',')
		p = skip_ws(p + 1, end);
	if (p >= end)
		return NULL;
	it->first = 0;
	return p;
}

int
jiter_member(struct jiter *it, struct jspan *key, struct jspan *val)
{
	uptr p, end = (uptr)it->end, q;

	if ((p = iter_next(it)) == NULL || *p != '"')
		return 0;
	q = skip_string(p + 1, end);
	key->p = (const char *)p;
	key->n = q - p;
	p = skip_ws(q, end);
	if (p < end && *p == ':')
		p = skip_ws(p + 1, end);
	if (p >= end)
		return 0;
	q = skip_value(p, end);
	val->p = (const char *)p;
	val->n = q - p;
	it->p = (const char *)q;
	return 1;
}

int
jiter_elem(struct jiter *it, struct jspan *val)
{
	uptr p, q;

	if ((p = iter_next(it)) == NULL)
		return 0;
	q = skip_value(p, (uptr)it->end);
	val->p = (const char *)p;
	val->n = q - p;
	it->p = (const char *)q;
	return 1;
}

int
jobj_get(struct jspan obj, const char *name, struct jspan *val)
{
	struct jiter it;
	struct jspan k, v;
	size_t len = strlen(name);

	if (obj.n == 0 || obj.p[0] != '{' || jiter_init(&it, obj) < 0)
		return 0;
	/* the bytes decide; only a member name longer than the name can be
	 * an escaped spelling of it (an escape is longer than its byte) */
	while (jiter_member(&it, &k, &v))
		if ((k.n == len + 2 && memcmp(k.p + 1, name, len) == 0) ||
		    (k.n > len + 2 && memchr(k.p + 1, '\\', k.n - 2) != NULL &&
		    jstr_eq(k, name))) {
			*val = v;
			return 1;
		}
	return 0;
}

int
jkey_is(struct jspan key, const char *name, size_t len)
{
	/* the bytes decide, unless the name was written with escapes (legal
	 * JSON that no stage writes) */
	if (key.n == len + 2 && memcmp(key.p + 1, name, len) == 0)
		return 1;
	return memchr(key.p, '\\', key.n) != NULL && jstr_eq(key, name);
}

/* the first member named names[i] into vals[i]. A name the stages wrote
 * has no escapes: compared byte for byte, inline; a name with a backslash
 * is unescaped only when no name matched it that way. */
struct picker {
	const char *const *names;
	int	 n, left;
	int	 next;	/* the name after the last one found: tried first */
	struct jspan *vals;
};

static void
picker_init(struct picker *pk, const char *const *names, int n,
    struct jspan *vals)
{
	int i;

	pk->names = names;
	pk->n = n;
	pk->left = n;
	pk->next = 0;
	pk->vals = vals;
	for (i = 0; i < n; i++)
		vals[i].p = NULL, vals[i].n = 0;
}

/* the kl bytes at k (no NUL among them: JSON refuses raw control
 * characters in a string) spell name exactly */
static inline int
name_is(const char *k, size_t kl, const char *name)
{
	size_t i;

	for (i = 0; i < kl; i++)
		if (name[i] != k[i])
			return 0;
	return name[kl] == '\0';
}

/* names[i] may take the member whose name is the kl bytes at kc: still
 * unfound and spelled the same. The first bytes are compared before the
 * rest: most names a member is offered to differ there. */
static inline int
picker_takes(const struct picker *pk, int i, const char *kc, size_t kl)
{
	const char *nm = pk->names[i];

	if (kl == 0)
		return nm[0] == '\0' && pk->vals[i].p == NULL;
	return nm[0] == kc[0] && pk->vals[i].p == NULL &&
	    name_is(kc + 1, kl - 1, nm + 1);
}

/* inline in the two loops that offer members: a call's own cost was a
 * third of an offer */
static inline __attribute__((always_inline)) void
picker_offer(struct picker *pk, struct jspan k, struct jspan v)
{
	const char *kc = k.p + 1;
	size_t kl = k.n - 2, j;
	int i;

	/* readers list the names in the order the stages write them: the
	 * name after the last one found is most often the next member, and
	 * else one a little further on (the optional members between were
	 * not written), so the search goes on forward from there */
	for (i = pk->next; i < pk->n; i++)
		if (picker_takes(pk, i, kc, kl))
			goto found;
	for (i = 0; i < pk->next && i < pk->n; i++)
		if (picker_takes(pk, i, kc, kl))
			goto found;
	/* a name the stages wrote has no escape: most members no reader
	 * asked for ("k") end here, after a few bytes looked at */
	for (j = 0; j < kl && kc[j] != '\\'; j++)
		;
	if (j == kl)
		return;
	for (i = 0; i < pk->n; i++)
		if (pk->vals[i].p == NULL && jstr_eq(k, pk->names[i]))
			goto found;
	return;
found:
	pk->vals[i] = v;
	pk->left--;
	pk->next = i + 1;
}

void
jtop_pick(const struct jtop *top, struct jspan obj, const char *const *names,
    int n, struct jspan *vals)
{
	struct picker pk;
	int j;

	if (top == NULL || !top->complete || top->obj.p != obj.p ||
	    top->obj.n != obj.n) {
		jobj_pick(obj, names, n, vals);
		return;
	}
	picker_init(&pk, names, n, vals);
	for (j = 0; j < top->n && pk.left > 0; j++)
		picker_offer(&pk, top->key[j], top->val[j]);
}

static inline unsigned
jnames_hash(size_t len, unsigned char first)
{
	/* names sharing a hash are chained; msg.c's lists of row and
	 * operation members share none */
	return (first * 2u + (unsigned)len * 3u) & (JNAMES_HASH - 1);
}

/* the index of nm's names: once, by whoever asks first (a second asker
 * waits the few hundred instructions it takes) */
static void
jnames_build(struct jnames *nm)
{
	int expect = 0, i;
	unsigned h;

	if (!__atomic_compare_exchange_n(&nm->ready, &expect, 1, 0,
	    __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&nm->ready, __ATOMIC_ACQUIRE) != 2)
			;
		return;
	}
	memset(nm->head, -1, sizeof(nm->head));
	/* backwards, so that each chain lists its names in order */
	for (i = (nm->n < JNAMES_MAX ? nm->n : JNAMES_MAX) - 1; i >= 0; i--) {
		nm->len[i] = (unsigned char)strlen(nm->names[i]);
		nm->word[i] = 0;
		memcpy(&nm->word[i], nm->names[i], nm->len[i] < 8 ?
		    nm->len[i] : 8);
		h = jnames_hash(nm->len[i], (unsigned char)nm->names[i][0]);
		nm->next[i] = nm->head[h];
		nm->head[h] = (signed char)i;
	}
	__atomic_store_n(&nm->ready, 2, __ATOMIC_RELEASE);
}

/* the n bytes at k (n at most 8, and eight bytes readable at k) equal
 * the name whose first eight bytes are w, zero padded */
static inline int
word_is(const char *k, size_t n, uint64_t w)
{
	uint64_t x;

	memcpy(&x, k, 8);
	if (n < 8)
		x &= (1ULL << (n * 8)) - 1;
	return x == w;
}

void
jtop_pickn(const struct jtop *top, struct jspan obj, struct jnames *nm,
    struct jspan *vals)
{
	const char *kc, *name, *objend = obj.p + obj.n;
	size_t kl, c;
	int i, j, left = nm->n, ntop;

	if (__atomic_load_n(&nm->ready, __ATOMIC_ACQUIRE) != 2)
		jnames_build(nm);
	if (nm->n > JNAMES_MAX || top == NULL || !top->complete ||
	    top->obj.p != obj.p || top->obj.n != obj.n) {
		jtop_pick(top, obj, nm->names, nm->n, vals);
		return;
	}
	for (i = 0; i < nm->n; i++)
		vals[i].p = NULL, vals[i].n = 0;
	ntop = top->n;
	for (j = 0; j < ntop && left > 0; j++) {
		kc = top->key[j].p + 1;
		kl = top->key[j].n - 2;
		for (i = nm->head[jnames_hash(kl, kl ? (unsigned char)kc[0] :
		    0)]; i >= 0; i = nm->next[i]) {
			if (nm->len[i] != kl)
				continue;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			/* a short name in one load, where the object has
			 * eight bytes from the member's name on */
			if (kl <= 8 && objend - kc >= 8) {
				if (word_is(kc, kl, nm->word[i]))
					break;
				continue;
			}
#endif
			name = nm->names[i];
			for (c = 0; c < kl && name[c] == kc[c]; c++)
				;
			if (c == kl)
				break;
		}
		if (i >= 0) {
			/* the first member of a name is the one */
			if (vals[i].p == NULL) {
				vals[i] = top->val[j];
				left--;
			}
			continue;
		}
		/* spelled with an escape (legal JSON no stage writes)? A
		 * short name is looked at inline: "k" is in every frame */
		for (c = 0; c < kl && kc[c] != '\\'; c++)
			;
		if (c == kl)
			continue;
		for (i = 0; i < nm->n; i++)
			if (vals[i].p == NULL && jstr_eq(top->key[j],
			    nm->names[i])) {
				vals[i] = top->val[j];
				left--;
				break;
			}
	}
}

void
jobj_pick(struct jspan obj, const char *const *names, int n,
    struct jspan *vals)
{
	struct picker pk;
	struct jiter it;
	struct jspan k, v;

	picker_init(&pk, names, n, vals);
	if (obj.n == 0 || obj.p[0] != '{' || jiter_init(&it, obj) < 0)
		return;
	while (pk.left > 0 && jiter_member(&it, &k, &v))
		picker_offer(&pk, k, v);
}

static size_t
put_utf8(unsigned cp, unsigned char *o)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xC0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3F);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xE0 | cp >> 12;
		o[1] = 0x80 | ((cp >> 6) & 0x3F);
		o[2] = 0x80 | (cp & 0x3F);
		return 3;
	}
	o[0] = 0xF0 | cp >> 18;
	o[1] = 0x80 | ((cp >> 12) & 0x3F);
	o[2] = 0x80 | ((cp >> 6) & 0x3F);
	o[3] = 0x80 | (cp & 0x3F);
	return 4;
}

/* decode the escape whose backslash is at *pp into o (at most 4 bytes) */
static size_t
unescape_one(uptr *pp, uptr end, unsigned char *o)
{
	uptr p = *pp;
	unsigned cp = 0, lo = 0;

	if (end - p < 2) {
		*pp = end;
		return 0;
	}
	switch (p[1]) {
	case 'b':	*o = '\b'; break;
	case 'f':	*o = '\f'; break;
	case 'n':	*o = '\n'; break;
	case 'r':	*o = '\r'; break;
	case 't':	*o = '\t'; break;
	case 'u':
		if (end - p < 6 || hex4(p + 2, &cp) < 0) {
			*pp = end;
			return 0;
		}
		p += 6;
		if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 &&
		    p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 &&
		    lo >= 0xDC00 && lo <= 0xDFFF) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			p += 6;
		}
		*pp = p;
		return put_utf8(cp, o);
	default:	*o = p[1]; break;	/* " \ / */
	}
	*pp = p + 2;
	return 1;
}

/* unescape the string span's content into o (room for cap bytes); the
 * decoded length, or SIZE_MAX when it does not fit */
static size_t
unescape(struct jspan str, unsigned char *o, size_t cap)
{
	uptr p = (uptr)str.p + 1, end = (uptr)str.p + str.n - 1, bs;
	unsigned char tmp[4];
	size_t len = 0, k;

	if (str.n < 2 || str.p[0] != '"')
		return SIZE_MAX;
	while (p < end) {
		bs = memchr(p, '\\', end - p);
		if (bs == NULL)
			bs = end;
		if ((size_t)(bs - p) > cap - len)
			return SIZE_MAX;
		memcpy(o + len, p, bs - p);
		len += bs - p;
		p = bs;
		if (p >= end)
			break;
		k = unescape_one(&p, end, tmp);
		if (k > cap - len)
			return SIZE_MAX;
		memcpy(o + len, tmp, k);
		len += k;
	}
	return len;
}

int
jstr_eq(struct jspan str, const char *s)
{
	uptr p = (uptr)str.p + 1, end = (uptr)str.p + str.n - 1;
	const unsigned char *q = (const unsigned char *)s;
	unsigned char tmp[4];
	size_t slen, k, run;

	if (str.n < 2 || str.p[0] != '"')
		return 0;
	slen = strlen(s);
	if (memchr(p, '\\', end - p) == NULL)
		return (size_t)(end - p) == slen && memcmp(p, s, slen) == 0;
	while (p < end) {
		if (*p != '\\') {
			run = 1;
			while (p + run < end && p[run] != '\\')
				run++;
			if (run > slen || memcmp(p, q, run) != 0)
				return 0;
			p += run;
			q += run;
			slen -= run;
			continue;
		}
		k = unescape_one(&p, end, tmp);
		if (k > slen || memcmp(tmp, q, k) != 0)
			return 0;
		q += k;
		slen -= k;
	}
	return slen == 0;
}

int
jstr_copy(struct jspan str, char *buf, size_t cap)
{
	size_t n;

	if (cap == 0)
		return -1;
	n = unescape(str, (unsigned char *)buf, cap - 1);
	if (n == SIZE_MAX) {
		buf[0] = '\0';
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

size_t
jstr_unescape(struct jspan str, char *out)
{
	size_t n = unescape(str, (unsigned char *)out, str.n);

	return n == SIZE_MAX ? 0 : n;
}

const char *
jstr_text(struct jspan str, size_t *n, char **heap)
{
	*heap = NULL;
	*n = str.n - 2;
	/* most values have no escapes: their bytes are the text */
	if (memchr(str.p + 1, '\\', *n) == NULL)
		return str.p + 1;
	*heap = xmalloc(str.n);
	*n = jstr_unescape(str, *heap);
	return *heap;
}

char *
jstr_dup(struct jspan str)
{
	/* unescaping never makes a string longer than its raw bytes */
	size_t cap = str.n >= 2 ? str.n - 2 : 0, n;
	char *s = xmalloc(cap + 1);

	n = unescape(str, (unsigned char *)s, cap);
	if (n == SIZE_MAX)
		n = 0;
	s[n] = '\0';
	return s;
}

int
jnum_u64(struct jspan num, uint64_t *out)
{
	uint64_t v = 0;
	unsigned d;
	size_t i;

	if (num.p == NULL || num.n == 0 || (num.n > 1 && num.p[0] == '0'))
		return -1;
	/* nineteen digits cannot overflow: a version is checked digit by
	 * digit only */
	if (num.n <= 19) {
		for (i = 0; i < num.n; i++) {
			d = (unsigned char)num.p[i] - '0';
			if (d > 9)
				return -1;
			v = v * 10 + d;
		}
		*out = v;
		return 0;
	}
	for (i = 0; i < num.n; i++) {
		d = (unsigned char)num.p[i] - '0';
		if (d > 9)
			return -1;
		/* v * 10 + d overflows: no division per digit */
		if (v >= UINT64_MAX / 10 && (v > UINT64_MAX / 10 ||
		    d > UINT64_MAX % 10))
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int
jnum_i64(struct jspan num, int64_t *out)
{
	struct jspan mag = num;
	uint64_t v;
	int neg = 0;

	if (num.p != NULL && num.n > 0 && num.p[0] == '-') {
		neg = 1;
		mag.p++;
		mag.n--;
	}
	if (jnum_u64(mag, &v) < 0)
		return -1;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -1;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > INT64_MAX)
			return -1;
		*out = (int64_t)v;
	}
	return 0;
}
