/*
 * jscan.h - a strict, allocation-free JSON validator and scanner.
 *
 * The data path never builds a tree: a frame is validated once (jscan_validate)
 * and then read through spans that point into the frame's own bytes, so a
 * document can be copied into a bulk body without re-encoding it. All the
 * span functions below require input that jscan_validate accepted.
 */
#ifndef JSCAN_H
#define JSCAN_H

#include <stddef.h>
#include <stdint.h>

enum jtype { J_INVALID, J_OBJECT, J_ARRAY, J_STRING, J_NUMBER, J_TRUE,
	J_FALSE, J_NULL };

struct jspan {
	const char *p;	/* first byte of the value (the quote, for a string) */
	size_t	n;	/* bytes of the value, nothing around it */
};

/* RFC 8259: exactly one value with optional surrounding whitespace, UTF-8
 * checked, nesting at most 512 deep. 0 if valid; else -1 and *err_off / *why
 * tell where and what. */
int	jscan_validate(const char *s, size_t n, size_t *err_off,
	    const char **why);

/* The members of the outermost object, noted while it is validated, so a
 * reader that picks a frame's members does not walk the frame a second
 * time (for an operation, that second walk crossed the whole document). */
#define JTOP_MAX	16
struct jtop {
	struct jspan obj;	/* the value validated, whitespace trimmed */
	int	n;		/* members noted */
	int	complete;	/* obj is an object and all its members are noted */
	struct jspan key[JTOP_MAX], val[JTOP_MAX];
};
/* jscan_validate, and *top filled as above (complete = 0 on failure, on a
 * value that is not an object, on more than JTOP_MAX members) */
int	jscan_validate_top(const char *s, size_t n, struct jtop *top,
	    size_t *err_off, const char **why);

/* the type a span's first byte says: inline, a reader asks it of every
 * member it takes */
static inline enum jtype
jspan_type(struct jspan v)
{
	if (v.p == NULL || v.n == 0)
		return J_INVALID;
	switch (v.p[0]) {
	case '{':	return J_OBJECT;
	case '[':	return J_ARRAY;
	case '"':	return J_STRING;
	case 't':	return J_TRUE;
	case 'f':	return J_FALSE;
	case 'n':	return J_NULL;
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return J_NUMBER;
	default:
		return J_INVALID;
	}
}

/* iterate over an object's members / an array's elements */
struct jiter {
	const char *p, *end;
	int	first;
};
int	jiter_init(struct jiter *, struct jspan container);	/* -1 if not obj/arr */
/* 1 and the member (key is the raw string span incl. quotes), 0 at the end */
int	jiter_member(struct jiter *, struct jspan *key, struct jspan *val);
int	jiter_elem(struct jiter *, struct jspan *val);

/* find a member of an object by its (unescaped) name: 1 found, 0 absent */
int	jobj_get(struct jspan obj, const char *name, struct jspan *val);
/* several members in one pass: vals[i] is the first member named names[i],
 * or { NULL, 0 } when absent. A frame whose document is most of its bytes
 * is then skipped once, not once per member looked up after it. */
void	jobj_pick(struct jspan obj, const char *const *names, int n,
	    struct jspan *vals);
/* jobj_pick(obj, ...), answered from the noted members when top (which may
 * be NULL) holds all of them and was noted from this very obj */
void	jtop_pick(const struct jtop *top, struct jspan obj,
	    const char *const *names, int n, struct jspan *vals);
/*
 * A reader's member names, indexed for jtop_pickn: a member is told by a
 * hash of its length and first byte and one compare, not offered to each
 * name in turn (an operation has fourteen). Declared static with
 * JNAMES(list) and built at its first use; the names are distinct, at
 * most JNAMES_MAX, and hold no backslash.
 */
#define JNAMES_MAX	32
#define JNAMES_HASH	64
struct jnames {
	const char *const *names;
	int	 n;
	int	 ready;		/* 0 not built, 1 being built, 2 built */
	unsigned char len[JNAMES_MAX];
	uint64_t word[JNAMES_MAX];	/* a name's first eight bytes, zero
					 * padded, as a load reads them */
	signed char head[JNAMES_HASH];	/* the first name of a hash, -1 */
	signed char next[JNAMES_MAX];	/* the next of the same hash, -1 */
};
#define JNAMES(list)	{ (list), (int)(sizeof(list) / sizeof((list)[0])), \
	0, { 0 }, { 0 }, { 0 }, { 0 } }
/* jtop_pick(top, obj, nm->names, nm->n, vals), the same answers */
void	jtop_pickn(const struct jtop *top, struct jspan obj, struct jnames *nm,
	    struct jspan *vals);
/* a member name span equals name (fast on unescaped names) */
int	jkey_is(struct jspan key, const char *name, size_t len);

/* 1 if the string span's unescaped content equals s */
int	jstr_eq(struct jspan str, const char *s);
/* unescape a string span into a NUL-terminated heap copy (xmalloc) */
char	*jstr_dup(struct jspan str);
/* unescape into out, which has room for str.n bytes (unescaping never
 * lengthens a string); the length, NUL bytes included */
size_t	jstr_unescape(struct jspan str, char *out);
/* a string span's text, *n bytes: its own bytes when it holds no escape,
 * else unescaped into *heap (xmalloc'd, the caller frees it; NULL when
 * none was needed) */
const char *jstr_text(struct jspan str, size_t *n, char **heap);
/* unescape into buf (NUL-terminated); -1 if it does not fit */
int	jstr_copy(struct jspan str, char *buf, size_t cap);
/* an unsigned integer without sign, fraction or exponent, fitting 64 bits */
int	jnum_u64(struct jspan num, uint64_t *out);
int	jnum_i64(struct jspan num, int64_t *out);

#endif
