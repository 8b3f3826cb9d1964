/*
 * strindex.h - an index from names to positions in an array the caller
 * owns (a configuration's sections by table, a metric's series by key):
 * open addressing over the names' hashes. Lists that were searched one
 * entry at a time grow with the number of tables, and ten thousand tables
 * made each search of every frame or row a ten-thousand-step walk (issue
 * 38). A slot holds a hash and a position only (8 bytes: the index is in
 * every process, for every table); the names stay in the caller's array,
 * read through name_of. A tag keeps names of different kinds apart in one
 * index (a counter's number beside its key).
 */
#ifndef STRINDEX_H
#define STRINDEX_H

#include <stddef.h>
#include <stdint.h>

/* the name and tag at position pos of the caller's array */
typedef const char *strindex_name_fn(const void *arg, int pos, int *tag);

struct strindex {
	struct strindex_slot {
		uint32_t hash;
		int	 pos;		/* -1: free */
	} *slot;
	size_t	 cap, n;		/* cap a power of two, n <= 3/4 cap */
	strindex_name_fn *name_of;
};

/* arg, given to every call, is what name_of reads the names from (the
 * owner of the array, which may have moved since the last call) */
void	strindex_init(struct strindex *, strindex_name_fn *);
/* the position filed under (tag, name[0..len)), or -1 */
int	strindex_get(const struct strindex *, const void *arg, int tag,
	    const char *name, size_t len);
/* files the name at pos (read through name_of); a name filed already
 * keeps its first position, which is returned (else pos) */
int	strindex_put(struct strindex *, const void *arg, int pos);
/* every entry gone, the memory kept for the next puts */
void	strindex_clear(struct strindex *);
void	strindex_release(struct strindex *);

#endif
