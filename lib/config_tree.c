/*
 * config_tree.c - reads the configuration's YAML with libyaml's event API
 * into a tree of line-numbered nodes (config_tree.h). Owns every message
 * about the form of the file: syntax errors in libyaml's wording, anchors,
 * aliases, tags and a second document, all refused here so that nothing
 * later has to think about shared nodes or retyped scalars.
 *
 * It knows no key and judges no value; it never exits. Open containers are
 * kept on a heap stack, so deep nesting costs memory, never C stack.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config_tree.h"
#include "sbuf.h"

struct open {
	size_t	 node;
	size_t	 last;		/* its last child so far, or CN_NONE */
};

struct build {
	struct ctree	*t;
	struct cmsg	*m;
	const char	*buf;		/* the whole input, for reader errors */
	size_t		 len;
	struct open	*stack;
	size_t		 depth, cap;
	int		 docs;
	int		 refused;	/* m->err holds the first form error */
};

int
cmsg_err(struct cmsg *m, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->errlen == 0)
		return -1;
	if (line > 0)
		n = snprintf(m->err, m->errlen, "%s:%d: ", m->name, line);
	else
		n = snprintf(m->err, m->errlen, "%s: ", m->name);
	if (n < 0 || (size_t)n >= m->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(m->err + n, m->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* a reader error (bad encoding) has an offset but no mark */
static int
offset_line(const struct build *b, size_t off)
{
	size_t i;
	int line = 1;

	for (i = 0; i < off && i < b->len; i++)
		if (b->buf[i] == '\n')
			line++;
	return line;
}

/* end of input after a final newline is "the line after the last":
 * name the last one instead */
static int
mark_line(const struct build *b, const yaml_mark_t *mk)
{
	if (mk->index >= b->len && mk->column == 0 && mk->line > 0)
		return (int)mk->line;
	return (int)mk->line + 1;
}

static int
syntax_error(struct build *b, const yaml_parser_t *yp)
{
	const char *problem = yp->problem ? yp->problem : "invalid yaml";
	int line, cline;

	if (yp->error == YAML_READER_ERROR)
		return cmsg_err(b->m, offset_line(b, yp->problem_offset), "%s",
		    problem);
	line = mark_line(b, &yp->problem_mark);
	cline = mark_line(b, &yp->context_mark);
	if (yp->context && cline != line)
		return cmsg_err(b->m, line, "%s (%s that started on line %d)",
		    problem, yp->context, cline);
	return cmsg_err(b->m, line, "%s", problem);
}

static int
ev_line(const yaml_event_t *ev)
{
	return (int)ev->start_mark.line + 1;
}

/* the first form error wins; parsing goes on to find syntax errors */
static void
refuse(struct build *b, int line, const char *msg)
{
	if (b->refused)
		return;
	b->refused = 1;
	cmsg_err(b->m, line, "%s", msg);
}

static int
is_null(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return *s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	    strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* a new node, attached as the last child of the innermost open container */
static struct cnode *
add(struct build *b, enum cnode_kind kind, const yaml_event_t *ev)
{
	struct ctree *t = b->t;
	struct open *o;
	struct cnode *n;
	size_t i;

	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	i = t->n++;	/* below CN_NONE: CTREE_MAX_BYTES */
	n = &t->v[i];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->line = ev_line(ev);
	n->first = n->next = CN_NONE;
	if (b->depth > 0) {
		o = &b->stack[b->depth - 1];
		if (o->last == CN_NONE)
			t->v[o->node].first = i;
		else
			t->v[o->last].next = i;
		o->last = i;
		t->v[o->node].n++;
	}
	return n;
}

static void
push(struct build *b, enum cnode_kind kind, const yaml_event_t *ev)
{
	add(b, kind, ev);
	if (b->depth == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 16;
		b->stack = xrealloc(b->stack, b->cap * sizeof(*b->stack));
	}
	b->stack[b->depth].node = b->t->n - 1;
	b->stack[b->depth].last = CN_NONE;
	b->depth++;
}

static void
scalar(struct build *b, const yaml_event_t *ev)
{
	struct cnode *n = add(b, CN_SCALAR, ev);
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;

	n->null = is_null(ev);
	n->has_nul = strlen(s) != len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->text = (uint32_t)b->t->text.len;
	n->len = (uint32_t)len;
	sbuf_add(&b->t->text, s, len);
	sbuf_addc(&b->t->text, '\0');
}

/* one event into the tree, or the reason the file's form is refused */
static void
take(struct build *b, const yaml_event_t *ev)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->docs++ > 0)
			refuse(b, ev_line(ev),
			    "only one yaml document is allowed");
		return;
	case YAML_ALIAS_EVENT:
		refuse(b, ev_line(ev), "anchors and aliases are not supported");
		return;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (!b->refused)
			b->depth--;
		return;
	default:
		return;
	}
	if (anchor)
		refuse(b, ev_line(ev), "anchors and aliases are not supported");
	else if (tag)
		refuse(b, ev_line(ev), "tags are not supported");
	if (b->refused)
		return;
	if (ev->type == YAML_SCALAR_EVENT)
		scalar(b, ev);
	else
		push(b, ev->type == YAML_MAPPING_START_EVENT ? CN_MAP : CN_LIST,
		    ev);
}

int
ctree_parse(struct ctree *t, const char *buf, size_t len, struct cmsg *m)
{
	struct build b;
	yaml_parser_t yp;
	yaml_event_t ev;
	int done = 0, rc = 0;

	memset(t, 0, sizeof(*t));
	if (len > CTREE_MAX_BYTES)
		return cmsg_err(m, 0, "larger than %zu MiB",
		    CTREE_MAX_BYTES >> 20);
	memset(&b, 0, sizeof(b));
	b.t = t;
	b.m = m;
	b.buf = buf;
	b.len = len;
	if (!yaml_parser_initialize(&yp))
		return cmsg_err(m, 0, "cannot initialise the yaml parser");
	yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&yp, &ev)) {
			rc = syntax_error(&b, &yp);
			break;
		}
		take(&b, &ev);
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	free(b.stack);
	if (rc == 0 && b.refused)
		rc = -1;
	if (rc == -1)
		ctree_release(t);
	return rc;
}

void
ctree_release(struct ctree *t)
{
	free(t->v);
	sbuf_release(&t->text);
	memset(t, 0, sizeof(*t));
}
