/*
 * entry.h - the entry line of a module whose writes are not _bulk
 * (Meilisearch, Qdrant): what its encode writes and its write procedure
 * reads back (entry.c).
 */
#ifndef TARGET_ENTRY_H
#define TARGET_ENTRY_H

#include "target.h"

/* an entry as tentry_put wrote it: spans into the body */
struct tentry {
	size_t	 ioff, ilen;	/* raw JSON strings */
	size_t	 idoff, idlen;
	size_t	 doff, dlen;	/* the document, dlen 0 for a delete */
	int	 del;
};

/* entry.c */
/* w as one line, e's spans set:
 *   {"index":<index>,"id":<id>,"doc":<document>}  or  ..,"delete":true} */
void	tentry_put(struct sbuf *out, const struct target_write *w,
	    struct target_entry *e);
/* the line at body[at..] (*next: the one after it): 0, or -1 when it is
 * not one tentry_put wrote */
int	tentry_read(const char *body, size_t len, size_t at,
	    struct tentry *e, size_t *next);

#endif
