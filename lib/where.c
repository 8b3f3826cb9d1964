/*
 * where.c - the row filter's grammar, its evaluation on a row's JSON
 * values and its SQL rendering (where.h). Owns every rule about what the
 * filter accepts and what a comparison means, so that the shaper and the
 * loader cannot disagree. It computes no value and has no function calls:
 * a filter selects rows, nothing more. Never logs, never exits.
 *
 * Grammar (precedence low to high; keywords in any letter case):
 *   expr    := or
 *   or      := and { OR and }
 *   and     := not { AND not }
 *   not     := NOT not | pred
 *   pred    := '(' expr ')' | operand cmp operand
 *            | operand [NOT] IN '(' literal { ',' literal } ')'
 *            | operand IS [NOT] NULL
 *   operand := column | literal
 *   literal := 'string' | number | TRUE | FALSE
 *
 * Booleans: a boolean value (PostgreSQL's bool, a JSON true/false) against
 * TRUE/FALSE compares as a boolean, FALSE < TRUE. Against any other value
 * TRUE and FALSE are the numbers 1 and 0, which is what they are in MySQL,
 * where BOOLEAN is tinyint(1) and arrives as a number. A boolean value
 * against a string reads the string the way PostgreSQL reads a boolean
 * literal ('t', 'yes', 'off', ...); against a number it is unknown
 * (PostgreSQL has no boolean = integer).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where.h"

/* deeper nesting than anyone writes: counted on the parsed tree (a run
 * of one operator is one level, redundant parentheses none), so the SQL
 * rendering, which parenthesises every node, reads back under the same
 * limit */
#define WHERE_DEPTH_MAX	64
/* the parser's own recursion, for the stack: a rendering of a tree at
 * WHERE_DEPTH_MAX takes at most three parser levels per tree level */
#define WHERE_PARSE_MAX	(4 * WHERE_DEPTH_MAX)
#define WHERE_LEN_MAX	65536
/* comparisons: evaluation recurses along a chain of ANDs or ORs */
#define WHERE_TERMS_MAX	1000

enum wkind { W_OR, W_AND, W_NOT, W_CMP, W_IN, W_ISNULL };
enum wcmp { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE };
enum wopd { O_COLUMN, O_STRING, O_NUMBER, O_BOOL };
enum tv { TV_FALSE, TV_TRUE, TV_UNKNOWN };

struct operand {
	enum wopd kind;
	char	*text;		/* column name, string content, number,
				 * "1" or "0" for TRUE or FALSE */
	size_t	 len;		/* a string may hold NUL? never: refused */
};

struct wnode {
	enum wkind kind;
	struct wnode *a, *b;	/* OR, AND: both; NOT: a */
	enum wcmp cmp;
	int	 negated;	/* IN: NOT IN; ISNULL: IS NOT NULL */
	struct operand l, r;	/* CMP: both; IN, ISNULL: l */
	struct operand *list;	/* IN */
	int	 nlist;
};

struct where {
	struct wnode *root;
	char	**cols;
	int	 ncols;
};

/* ---- parsing ---- */

struct parser {
	const char *s, *p;
	char	*why;
	size_t	 whylen;
	int	 failed, depth, terms;
	struct where *w;
};

static const char *const reserved[] = {
	"and", "or", "not", "in", "is", "null",
	/* SQL the subset does not take: named so the message says so */
	"like", "ilike", "between", "exists", "select",
	"case", "when", "then", "else", "end", "any", "all", "some", "cast",
	"collate", "escape", "similar", "regexp", "rlike", "div", "mod",
	"xor", "distinct", "from", "as", "interval", "unknown", NULL
};

static int
perr(struct parser *ps, const char *fmt, const char *what)
{
	char msg[160];

	if (ps->failed)
		return -1;
	ps->failed = 1;
	snprintf(msg, sizeof(msg), fmt, what);
	snprintf(ps->why, ps->whylen, "is not supported: %s at byte %d; "
	    "'where' takes " WHERE_SUPPORTED, msg, (int)(ps->p - ps->s) + 1);
	return -1;
}

static void
skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
	    *ps->p == '\r')
		ps->p++;
}

static int
ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static int
ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

/* the length of the word at p, 0 when none */
static size_t
word_len(const char *p)
{
	size_t n = 0;

	if (!ident_start((unsigned char)p[0]))
		return 0;
	while (ident_char((unsigned char)p[n]))
		n++;
	return n;
}

static int
word_is(const char *p, size_t n, const char *kw)
{
	return strlen(kw) == n && strncasecmp(p, kw, n) == 0;
}

/* consume keyword kw if it is next */
static int
accept_kw(struct parser *ps, const char *kw)
{
	size_t n;

	skip_ws(ps);
	n = word_len(ps->p);
	if (n == 0 || !word_is(ps->p, n, kw))
		return 0;
	ps->p += n;
	return 1;
}

static int
accept_ch(struct parser *ps, char c)
{
	skip_ws(ps);
	if (*ps->p != c)
		return 0;
	ps->p++;
	return 1;
}

static void
free_operand(struct operand *o)
{
	free(o->text);
	o->text = NULL;
}

static void
free_node(struct wnode *n)
{
	int i;

	if (n == NULL)
		return;
	free_node(n->a);
	free_node(n->b);
	free_operand(&n->l);
	free_operand(&n->r);
	for (i = 0; i < n->nlist; i++)
		free_operand(&n->list[i]);
	free(n->list);
	free(n);
}

static void
note_column(struct where *w, const char *name)
{
	int i;

	for (i = 0; i < w->ncols; i++)
		if (strcmp(w->cols[i], name) == 0)
			return;
	w->cols = xrealloc(w->cols, (size_t)(w->ncols + 1) *
	    sizeof(*w->cols));
	w->cols[w->ncols++] = xstrdup(name);
}

/* a number literal: [-+]digits[.digits][e[-+]digits] or .digits... */
static size_t
number_len(const char *p)
{
	size_t n = 0, d = 0;

	if (p[n] == '-' || p[n] == '+')
		n++;
	while (isdigit((unsigned char)p[n]))
		n++, d++;
	if (p[n] == '.') {
		n++;
		while (isdigit((unsigned char)p[n]))
			n++, d++;
	}
	if (d == 0)
		return 0;
	if (p[n] == 'e' || p[n] == 'E') {
		size_t e = n + 1;

		if (p[e] == '-' || p[e] == '+')
			e++;
		if (!isdigit((unsigned char)p[e]))
			return 0;
		while (isdigit((unsigned char)p[e]))
			e++;
		n = e;
	}
	/* 12abc is not a number followed by a word */
	if (ident_char((unsigned char)p[n]) || p[n] == '.')
		return 0;
	return n;
}

static int
parse_string(struct parser *ps, struct operand *o)
{
	struct sbuf b = SBUF_INIT;
	const char *p = ps->p + 1;

	sbuf_add(&b, "", 0);
	for (;;) {
		if (*p == '\0') {
			sbuf_release(&b);
			return perr(ps, "%s", "a string literal without its "
			    "closing quote");
		}
		if (*p == '\'') {
			if (p[1] != '\'')
				break;
			p++;
		}
		/* MySQL reads a backslash as an escape, PostgreSQL does
		 * not: a literal holding one would mean two things */
		if (*p == '\\') {
			ps->p = p;
			sbuf_release(&b);
			return perr(ps, "%s", "a backslash in a string literal "
			    "(the two databases read it differently)");
		}
		sbuf_addc(&b, *p++);
	}
	ps->p = p + 1;
	o->kind = O_STRING;
	o->text = b.buf;
	o->len = b.len;
	return 0;
}

static int
parse_literal(struct parser *ps, struct operand *o)
{
	size_t n;

	skip_ws(ps);
	if (*ps->p == '\'')
		return parse_string(ps, o);
	n = word_len(ps->p);
	if (n > 0 && (word_is(ps->p, n, "true") || word_is(ps->p, n, "false"))) {
		o->kind = O_BOOL;
		o->text = xstrdup(tolower((unsigned char)*ps->p) == 't' ? "1" :
		    "0");
		o->len = 1;
		ps->p += n;
		return 0;
	}
	if ((n = number_len(ps->p)) > 0) {
		o->kind = O_NUMBER;
		o->text = xstrndup(ps->p, n);
		o->len = n;
		ps->p += n;
		return 0;
	}
	return -1;
}

static int
parse_operand(struct parser *ps, struct operand *o)
{
	size_t n;
	int i;

	skip_ws(ps);
	if (parse_literal(ps, o) == 0)
		return 0;
	if (ps->failed)
		return -1;
	if ((n = word_len(ps->p)) == 0) {
		if (*ps->p == '"' || *ps->p == '`')
			return perr(ps, "%s", "a quoted column name (write "
			    "the name as the source names it, unquoted)");
		if (*ps->p == '\0')
			return perr(ps, "%s", "the end of the expression where "
			    "a column name or a literal belongs");
		return perr(ps, "'%.1s' where a column name or a literal "
		    "belongs", ps->p);
	}
	for (i = 0; reserved[i]; i++)
		if (word_is(ps->p, n, reserved[i])) {
			char kw[16];

			snprintf(kw, sizeof(kw), "%.*s", (int)n, ps->p);
			return perr(ps, "'%s' where a column name or a literal "
			    "belongs", kw);
		}
	skip_ws(ps);
	if (ps->p[n] == '(' || (ps->p[n] == ' ' && ps->p[n + 1] == '(')) {
		char fn[32];

		snprintf(fn, sizeof(fn), "%.*s", (int)(n > 24 ? 24 : n), ps->p);
		return perr(ps, "a function call '%s(...)'", fn);
	}
	o->kind = O_COLUMN;
	o->text = xstrndup(ps->p, n);
	o->len = n;
	note_column(ps->w, o->text);
	ps->p += n;
	return 0;
}

static int
parse_cmp(struct parser *ps, enum wcmp *c)
{
	static const struct {
		const char *s;
		enum wcmp c;
	} ops[] = {
		{ "<=", C_LE }, { ">=", C_GE }, { "<>", C_NE }, { "!=", C_NE },
		{ "=", C_EQ }, { "<", C_LT }, { ">", C_GT },
	};
	size_t i;

	skip_ws(ps);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strncmp(ps->p, ops[i].s, strlen(ops[i].s)) == 0) {
			ps->p += strlen(ops[i].s);
			*c = ops[i].c;
			return 0;
		}
	return -1;
}

static struct wnode *parse_or(struct parser *);

static struct wnode *
node_new(enum wkind k)
{
	struct wnode *n = xcalloc(1, sizeof(*n));

	n->kind = k;
	return n;
}

static struct wnode *
parse_in(struct parser *ps, struct wnode *n)
{
	struct operand o;

	n->kind = W_IN;
	if (!accept_ch(ps, '(')) {
		perr(ps, "%s", "IN without '(' and a list of literals");
		free_node(n);
		return NULL;
	}
	do {
		memset(&o, 0, sizeof(o));
		if (parse_literal(ps, &o) == -1) {
			perr(ps, "%s", "something other than a string, number or "
			    "boolean literal in an IN list");
			free_node(n);
			return NULL;
		}
		n->list = xrealloc(n->list, (size_t)(n->nlist + 1) *
		    sizeof(*n->list));
		n->list[n->nlist++] = o;
	} while (accept_ch(ps, ','));
	if (!accept_ch(ps, ')')) {
		perr(ps, "%s", "an IN list without its ')'");
		free_node(n);
		return NULL;
	}
	return n;
}

static struct wnode *
parse_pred(struct parser *ps)
{
	struct wnode *n;

	if (accept_ch(ps, '(')) {
		if ((n = parse_or(ps)) == NULL)
			return NULL;
		if (!accept_ch(ps, ')')) {
			perr(ps, "%s", "a '(' without its ')'");
			free_node(n);
			return NULL;
		}
		return n;
	}
	if (++ps->terms > WHERE_TERMS_MAX) {
		perr(ps, "%s", "more than 1000 comparisons");
		return NULL;
	}
	n = node_new(W_CMP);
	if (parse_operand(ps, &n->l) == -1) {
		free_node(n);
		return NULL;
	}
	if (accept_kw(ps, "is")) {
		n->kind = W_ISNULL;
		n->negated = accept_kw(ps, "not");
		if (!accept_kw(ps, "null")) {
			perr(ps, "%s", "IS without NULL or NOT NULL");
			free_node(n);
			return NULL;
		}
		return n;
	}
	if (accept_kw(ps, "not")) {
		n->negated = 1;
		if (!accept_kw(ps, "in")) {
			perr(ps, "%s", "NOT after an operand without IN");
			free_node(n);
			return NULL;
		}
		return parse_in(ps, n);
	}
	if (accept_kw(ps, "in"))
		return parse_in(ps, n);
	if (parse_cmp(ps, &n->cmp) == -1) {
		char word[32];
		size_t wl;

		skip_ws(ps);
		wl = word_len(ps->p);
		snprintf(word, sizeof(word), "%.*s", (int)(wl ? (wl > 24 ? 24 :
		    wl) : 1), ps->p);
		if (*ps->p == '\0')
			perr(ps, "%s", "an operand without a comparison");
		else
			perr(ps, "'%s' where a comparison belongs", word);
		free_node(n);
		return NULL;
	}
	if (parse_operand(ps, &n->r) == -1) {
		free_node(n);
		return NULL;
	}
	return n;
}

static struct wnode *
parse_not(struct parser *ps)
{
	struct wnode *n, *a;

	if (++ps->depth > WHERE_PARSE_MAX) {
		perr(ps, "%s", "parentheses and NOTs nested deeper than 256 levels");
		return NULL;
	}
	if (accept_kw(ps, "not")) {
		if ((a = parse_not(ps)) == NULL)
			return NULL;
		n = node_new(W_NOT);
		n->a = a;
	} else
		n = parse_pred(ps);
	ps->depth--;
	return n;
}

static struct wnode *
parse_binary(struct parser *ps, enum wkind k)
{
	struct wnode *l, *r, *n;

	l = k == W_OR ? parse_binary(ps, W_AND) : parse_not(ps);
	if (l == NULL)
		return NULL;
	while (accept_kw(ps, k == W_OR ? "or" : "and")) {
		r = k == W_OR ? parse_binary(ps, W_AND) : parse_not(ps);
		if (r == NULL) {
			free_node(l);
			return NULL;
		}
		n = node_new(k);
		n->a = l;
		n->b = r;
		l = n;
	}
	return l;
}

static struct wnode *
parse_or(struct parser *ps)
{
	struct wnode *n;

	if (++ps->depth > WHERE_PARSE_MAX) {
		perr(ps, "%s", "parentheses and NOTs nested deeper than 256 levels");
		return NULL;
	}
	n = parse_binary(ps, W_OR);
	ps->depth--;
	return n;
}

/* levels of NOT, AND and OR above the deepest comparison; a chain of one
 * operator counts once, as its rendering writes it once */
static int
tree_depth(const struct wnode *n, enum wkind chain)
{
	int a, b;

	switch (n->kind) {
	case W_NOT:
		return 1 + tree_depth(n->a, W_NOT);
	case W_AND:
	case W_OR:
		a = tree_depth(n->a, n->kind);
		b = tree_depth(n->b, n->kind);
		return (a > b ? a : b) + (chain == n->kind ? 0 : 1);
	default:
		return 0;
	}
}

struct where *
where_parse(const char *s, char *why, size_t len)
{
	struct parser ps;
	struct where *w = xcalloc(1, sizeof(*w));

	memset(&ps, 0, sizeof(ps));
	ps.s = ps.p = s;
	ps.why = why;
	ps.whylen = len;
	ps.w = w;
	if (strlen(s) > WHERE_LEN_MAX) {
		snprintf(why, len, "must be at most %d bytes long",
		    WHERE_LEN_MAX);
		where_free(w);
		return NULL;
	}
	w->root = parse_or(&ps);
	if (w->root != NULL) {
		skip_ws(&ps);
		if (*ps.p == ';')
			perr(&ps, "%s", "';'");
		else if (*ps.p != '\0')
			perr(&ps, "'%.12s' after a complete expression", ps.p);
		else if (tree_depth(w->root, W_CMP) > WHERE_DEPTH_MAX)
			perr(&ps, "%s", "nesting deeper than 64 levels");
	}
	if (ps.failed) {
		where_free(w);
		return NULL;
	}
	return w;
}

int
where_check(const char *s, char *why, size_t len)
{
	struct where *w;

	if ((w = where_parse(s, why, len)) == NULL)
		return -1;
	where_free(w);
	return 0;
}

void
where_free(struct where *w)
{
	int i;

	if (w == NULL)
		return;
	free_node(w->root);
	for (i = 0; i < w->ncols; i++)
		free(w->cols[i]);
	free(w->cols);
	free(w);
}

int
where_ncolumns(const struct where *w)
{
	return w->ncols;
}

const char *
where_column(const struct where *w, int i)
{
	return w->cols[i];
}

/* ---- numbers ---- */

/* a number's significant digits and the power of ten of its last one */
struct dec {
	int	 neg, zero;
	const char *ip, *fp;	/* integer and fraction digits */
	size_t	 in, fn;
	long	 exp;		/* of the last fraction digit */
	size_t	 lead;		/* leading zeros to skip in ip .. fp */
	size_t	 nsig;		/* significant digits after that */
};

/* JSON's number grammar, plus a leading '+' and a bare ".5"/"5.": what a
 * database prints for numeric, decimal and floating point columns */
static int
dec_parse(const char *s, size_t n, struct dec *d)
{
	size_t i = 0, k, total;
	long e = 0;
	int eneg = 0;

	memset(d, 0, sizeof(*d));
	if (i < n && (s[i] == '-' || s[i] == '+'))
		d->neg = s[i++] == '-';
	d->ip = s + i;
	while (i < n && isdigit((unsigned char)s[i]))
		i++, d->in++;
	if (i < n && s[i] == '.') {
		i++;
		d->fp = s + i;
		while (i < n && isdigit((unsigned char)s[i]))
			i++, d->fn++;
	}
	if (d->in + d->fn == 0)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		if (i == n || !isdigit((unsigned char)s[i]))
			return -1;
		for (; i < n && isdigit((unsigned char)s[i]); i++)
			if (e < 100000000L)
				e = e * 10 + (s[i] - '0');
	}
	if (i != n)
		return -1;
	d->exp = (eneg ? -e : e) - (long)d->fn;
	/* digit k of the concatenation ip.fp */
	total = d->in + d->fn;
	for (k = 0; k < total; k++) {
		char c = k < d->in ? d->ip[k] : d->fp[k - d->in];

		if (c != '0')
			break;
	}
	d->lead = k;
	d->nsig = total - k;
	/* trailing zeros count as digits with a lower exponent: drop them */
	while (d->nsig > 0) {
		k = d->lead + d->nsig - 1;
		if ((k < d->in ? d->ip[k] : d->fp[k - d->in]) != '0')
			break;
		d->nsig--;
		d->exp++;
	}
	d->zero = d->nsig == 0;
	return 0;
}

static char
dec_digit(const struct dec *d, size_t i)
{
	size_t k = d->lead + i;

	return k < d->in ? d->ip[k] : d->fp[k - d->in];
}

/* |a| vs |b| for non-zero numbers */
static int
dec_cmp_abs(const struct dec *a, const struct dec *b)
{
	long ma = (long)a->nsig + a->exp, mb = (long)b->nsig + b->exp;
	size_t i, n;
	char x, y;

	/* the power of ten of the leading digit decides first */
	if (ma != mb)
		return ma < mb ? -1 : 1;
	n = a->nsig > b->nsig ? a->nsig : b->nsig;
	for (i = 0; i < n; i++) {
		x = i < a->nsig ? dec_digit(a, i) : '0';
		y = i < b->nsig ? dec_digit(b, i) : '0';
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

int
where_numcmp(const char *as, size_t an, const char *bs, size_t bn)
{
	struct dec a, b;
	int r;

	if (dec_parse(as, an, &a) == -1 || dec_parse(bs, bn, &b) == -1)
		return 2;
	if (a.zero && b.zero)
		return 0;
	if (a.zero)
		return b.neg ? 1 : -1;
	if (b.zero)
		return a.neg ? -1 : 1;
	if (a.neg != b.neg)
		return a.neg ? -1 : 1;
	r = dec_cmp_abs(&a, &b);
	return a.neg ? -r : r;
}

/* ---- evaluation ---- */

/* a value as the comparison sees it */
struct val {
	enum { V_NULL, V_STRING, V_NUMBER, V_BOOL, V_OTHER } kind;
	const char *p;		/* the string's bytes, the number's text */
	size_t	 n;
	int	 b;		/* V_BOOL: 1 true, 0 false */
	int	 literal;	/* V_BOOL: written TRUE or FALSE */
	char	*heap;		/* an unescaped string */
};

static void
val_of_json(struct jspan j, struct val *v)
{
	memset(v, 0, sizeof(*v));
	switch (jspan_type(j)) {
	case J_NULL:
		v->kind = V_NULL;
		return;
	case J_STRING:
		v->kind = V_STRING;
		if (memchr(j.p + 1, '\\', j.n - 2) == NULL) {
			v->p = j.p + 1;
			v->n = j.n - 2;
			return;
		}
		v->heap = xmalloc(j.n);
		v->n = jstr_unescape(j, v->heap);
		v->p = v->heap;
		return;
	case J_NUMBER:
		v->kind = V_NUMBER;
		v->p = j.p;
		v->n = j.n;
		return;
	case J_TRUE:
	case J_FALSE:
		v->kind = V_BOOL;
		v->b = jspan_type(j) == J_TRUE;
		return;
	default:
		v->kind = V_OTHER;
		return;
	}
}

static void
val_of(const struct operand *o, where_get_fn get, void *arg, struct val *v)
{
	struct jspan j;

	memset(v, 0, sizeof(*v));
	switch (o->kind) {
	case O_COLUMN:
		if (!get(arg, o->text, &j)) {
			v->kind = V_NULL;
			return;
		}
		val_of_json(j, v);
		return;
	case O_STRING:
		v->kind = V_STRING;
		break;
	case O_NUMBER:
		v->kind = V_NUMBER;
		break;
	case O_BOOL:
		v->kind = V_BOOL;
		v->b = o->text[0] == '1';
		v->literal = 1;
		break;
	}
	v->p = o->text;
	v->n = o->len;
}

static int
bytecmp(const struct val *a, const struct val *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	int r = memcmp(a->p, b->p, n);

	if (r != 0)
		return r < 0 ? -1 : 1;
	return a->n == b->n ? 0 : a->n < b->n ? -1 : 1;
}

/*
 * A string as PostgreSQL reads a boolean literal: true/false, yes/no,
 * on/off, 1/0, or a prefix that names one of them alone, in any case and
 * with blanks around it. 1 or 0, or -1 when it is none of them (where
 * the server would refuse the comparison).
 */
static int
bool_of_text(const char *p, size_t n)
{
	static const struct {
		const char *word;
		int	 value;
		size_t	 least;	/* letters a prefix needs: "o" is ambiguous */
	} words[] = {
		{ "true", 1, 1 }, { "false", 0, 1 }, { "yes", 1, 1 },
		{ "no", 0, 1 }, { "on", 1, 2 }, { "off", 0, 2 },
	};
	size_t i;

	while (n > 0 && isspace((unsigned char)*p))
		p++, n--;
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	if (n == 1 && (*p == '1' || *p == '0'))
		return *p == '1';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (n >= words[i].least && n <= strlen(words[i].word) &&
		    strncasecmp(p, words[i].word, n) == 0)
			return words[i].value;
	return -1;
}

/* -1, 0, 1, or 2 when the two cannot be compared (unknown) */
static int
compare(const struct val *a, const struct val *b)
{
	const struct val *bv, *other;
	struct val num;
	int x;

	if (a->kind == V_NULL || b->kind == V_NULL || a->kind == V_OTHER ||
	    b->kind == V_OTHER)
		return 2;
	if (a->kind == V_STRING && b->kind == V_STRING)
		return bytecmp(a, b);
	if (a->kind == V_BOOL && b->kind == V_BOOL)
		return a->b == b->b ? 0 : a->b < b->b ? -1 : 1;
	if (a->kind != V_BOOL && b->kind != V_BOOL)
		return where_numcmp(a->p, a->n, b->p, b->n);
	bv = a->kind == V_BOOL ? a : b;
	other = a->kind == V_BOOL ? b : a;
	if (bv->literal) {
		/* MySQL's TRUE and FALSE: the numbers 1 and 0 */
		memset(&num, 0, sizeof(num));
		num.kind = V_NUMBER;
		num.p = bv->b ? "1" : "0";
		num.n = 1;
		return bv == a ? compare(&num, other) : compare(other, &num);
	}
	if (other->kind == V_NUMBER)
		return 2;
	if ((x = bool_of_text(other->p, other->n)) == -1)
		return 2;
	if (bv->b == x)
		return 0;
	return (bv == a ? bv->b < x : x < bv->b) ? -1 : 1;
}

static enum tv
cmp_result(enum wcmp c, int r)
{
	int t;

	if (r == 2)
		return TV_UNKNOWN;
	switch (c) {
	case C_EQ: t = r == 0; break;
	case C_NE: t = r != 0; break;
	case C_LT: t = r < 0; break;
	case C_LE: t = r <= 0; break;
	case C_GT: t = r > 0; break;
	default: t = r >= 0; break;
	}
	return t ? TV_TRUE : TV_FALSE;
}

static enum tv
eval(const struct wnode *n, where_get_fn get, void *arg)
{
	struct val a, b;
	enum tv x, y;
	int i, r;

	switch (n->kind) {
	case W_OR:
		x = eval(n->a, get, arg);
		if (x == TV_TRUE)
			return TV_TRUE;
		y = eval(n->b, get, arg);
		if (y == TV_TRUE)
			return TV_TRUE;
		return x == TV_UNKNOWN || y == TV_UNKNOWN ? TV_UNKNOWN :
		    TV_FALSE;
	case W_AND:
		x = eval(n->a, get, arg);
		if (x == TV_FALSE)
			return TV_FALSE;
		y = eval(n->b, get, arg);
		if (y == TV_FALSE)
			return TV_FALSE;
		return x == TV_UNKNOWN || y == TV_UNKNOWN ? TV_UNKNOWN :
		    TV_TRUE;
	case W_NOT:
		x = eval(n->a, get, arg);
		return x == TV_UNKNOWN ? x : x == TV_TRUE ? TV_FALSE : TV_TRUE;
	case W_ISNULL:
		val_of(&n->l, get, arg, &a);
		x = (a.kind == V_NULL) != n->negated ? TV_TRUE : TV_FALSE;
		free(a.heap);
		return x;
	case W_CMP:
		val_of(&n->l, get, arg, &a);
		val_of(&n->r, get, arg, &b);
		x = cmp_result(n->cmp, compare(&a, &b));
		free(a.heap);
		free(b.heap);
		return x;
	case W_IN:
		val_of(&n->l, get, arg, &a);
		x = TV_FALSE;
		for (i = 0; i < n->nlist && x != TV_TRUE; i++) {
			val_of(&n->list[i], get, arg, &b);
			r = compare(&a, &b);
			if (r == 0)
				x = TV_TRUE;
			else if (r == 2)
				x = TV_UNKNOWN;
		}
		free(a.heap);
		if (n->negated && x != TV_UNKNOWN)
			x = x == TV_TRUE ? TV_FALSE : TV_TRUE;
		return x;
	}
	return TV_UNKNOWN;
}

int
where_match(const struct where *w, where_get_fn get, void *arg)
{
	return eval(w->root, get, arg) == TV_TRUE;
}

/* ---- SQL ---- */

static int
sql_operand(const struct operand *o, struct sbuf *out, where_quote_fn q,
    void *arg)
{
	char *s;

	if (o->kind == O_NUMBER) {
		sbuf_adds(out, o->text);
		return 0;
	}
	/* both servers spell them so; MySQL reads them as 1 and 0 */
	if (o->kind == O_BOOL) {
		sbuf_adds(out, o->text[0] == '1' ? "TRUE" : "FALSE");
		return 0;
	}
	if ((s = q(arg, o->text, o->kind == O_COLUMN)) == NULL)
		return -1;
	sbuf_adds(out, s);
	free(s);
	return 0;
}

static int sql_node(const struct wnode *, struct sbuf *, where_quote_fn,
    void *);

/* a run of one operator as one parenthesised list: a long chain does not
 * become a nesting the parser would refuse reading it back */
static int
sql_chain(const struct wnode *n, enum wkind k, struct sbuf *out,
    where_quote_fn q, void *arg)
{
	if (n->kind != k)
		return sql_node(n, out, q, arg);
	if (sql_chain(n->a, k, out, q, arg) == -1)
		return -1;
	sbuf_adds(out, k == W_OR ? " OR " : " AND ");
	return sql_chain(n->b, k, out, q, arg);
}

static int
sql_node(const struct wnode *n, struct sbuf *out, where_quote_fn q,
    void *arg)
{
	static const char *const cmps[] = { "=", "<>", "<", "<=", ">",
	    ">=" };
	int i;

	sbuf_addc(out, '(');
	switch (n->kind) {
	case W_OR:
	case W_AND:
		if (sql_chain(n, n->kind, out, q, arg) == -1)
			return -1;
		break;
	case W_NOT:
		sbuf_adds(out, "NOT ");
		if (sql_node(n->a, out, q, arg) == -1)
			return -1;
		break;
	case W_ISNULL:
		if (sql_operand(&n->l, out, q, arg) == -1)
			return -1;
		sbuf_adds(out, n->negated ? " IS NOT NULL" : " IS NULL");
		break;
	case W_CMP:
		if (sql_operand(&n->l, out, q, arg) == -1)
			return -1;
		sbuf_addf(out, " %s ", cmps[n->cmp]);
		if (sql_operand(&n->r, out, q, arg) == -1)
			return -1;
		break;
	case W_IN:
		if (sql_operand(&n->l, out, q, arg) == -1)
			return -1;
		sbuf_adds(out, n->negated ? " NOT IN (" : " IN (");
		for (i = 0; i < n->nlist; i++) {
			if (i > 0)
				sbuf_adds(out, ", ");
			if (sql_operand(&n->list[i], out, q, arg) == -1)
				return -1;
		}
		sbuf_addc(out, ')');
		break;
	}
	sbuf_addc(out, ')');
	return 0;
}

int
where_sql(const struct where *w, struct sbuf *out, where_quote_fn q,
    void *arg)
{
	return sql_node(w->root, out, q, arg);
}
