/*
 * config_tree.h - one YAML document as a tree of line-numbered nodes, the
 * input of the schema walker (config_schema.h). Internal to lib/config*.c
 * and the tests that declare their own schema.
 */
#ifndef CONFIG_TREE_H
#define CONFIG_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

enum cnode_kind { CN_SCALAR, CN_MAP, CN_LIST };

/* no node: an unsigned 32-bit value, so that a size_t compared with it
 * and a node's first or next read into a size_t agree */
#define CN_NONE	UINT32_MAX
/* a document larger than this is refused, so that every offset and index
 * of a node fits in 32 bits: there are fewer nodes than bytes, and an
 * escape makes at most 3 bytes of text from 2, each scalar ending in a
 * NUL */
#define CTREE_MAX_BYTES	((size_t)1 << 30)

/*
 * 28 bytes: a configuration of ten thousand sections is some 100,000
 * nodes, and every stage parses it at start, so the tree was the largest
 * thing in each process's peak (8 MiB of 64-byte nodes, issue 38)
 */
struct cnode {
	uint32_t text;		/* CN_SCALAR: its bytes' offset in text */
	uint32_t len;
	uint32_t first;		/* first child or CN_NONE; a map's children
				   alternate key, value */
	uint32_t next;		/* next sibling or CN_NONE */
	uint32_t n;		/* how many children */
	int	 line;		/* 1-based, where the node starts */
	unsigned char kind;	/* enum cnode_kind */
	unsigned char null;	/* a plain "", "~" or "null" scalar */
	unsigned char has_nul;	/* the scalar holds a NUL byte */
	unsigned char plain;	/* written unquoted, as a YAML number or
				   boolean would be */
};

/* the nodes live in one array, so freeing never recurses */
struct ctree {
	struct cnode	*v;	/* v[0] is the root, when n > 0 */
	size_t		 n, cap;
	struct sbuf	 text;	/* every scalar, each NUL-terminated */
};

/* where messages go: "name:line: message" into err */
struct cmsg {
	const char	*name;
	char		*err;
	size_t		 errlen;
};

/* always -1; line 0 leaves the line out */
int	cmsg_err(struct cmsg *, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/*
 * 0 with the document in t (t->n == 0 when the input holds none), or -1
 * with the message in m: a syntax error anywhere first, then the first
 * anchor, alias, tag or second document. t is empty after a failure.
 */
int	ctree_parse(struct ctree *t, const char *buf, size_t len,
	    struct cmsg *m);
void	ctree_release(struct ctree *);

static inline const char *
ctree_str(const struct ctree *t, const struct cnode *n)
{
	return t->text.buf + n->text;
}

#endif
