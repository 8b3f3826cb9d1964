/*
 * entry.h - the entry line of a module whose writes are not _bulk
 * (Meilisearch, Qdrant; PostgreSQL's own line ends alike): what its
 * encode writes and its write procedure reads back (entry.c).
 */
#ifndef TARGET_ENTRY_H
#define TARGET_ENTRY_H

#include "target.h"

/* an entry as tentry_put wrote it: spans into the body */
struct tentry {
	/* a body is a flush's arena: 32 bits of offset (struct aspan), and
	 * a plan holds one of these per entry */
	uint32_t ioff, ilen;	/* raw JSON strings */
	uint32_t idoff, idlen;
	uint32_t doff, dlen;	/* the document, dlen 0 for a delete */
	int	 del;
	int	 last;	/* tentry_plan: the entry whose write it ends as
			 * (itself: its document's last entry) */
	int	 unit;	/* the module's: what writes it (a task, a
			 * collection's request), -1: replaced */
};

/* entry.c */
/* w as one line, e's spans set:
 *   {"index":<index>,"id":<id>,"doc":<document>}  or  ..,"delete":true} */
void	tentry_put(struct sbuf *out, const struct target_write *w,
	    struct target_entry *e);
/* the rest of a line whose head members (e->entry.off, e->index and e->id
 * set) were written from start: delmark (its closing brace and newline
 * included) for a delete, else ,"doc":<document>}; e's spans set */
void	tentry_end(struct sbuf *out, const struct target_write *w,
	    struct target_entry *e, size_t start, const char *delmark);
/* the line at body[at..] (*next: the one after it): 0, or -1 when it is
 * not one tentry_put wrote */
int	tentry_read(const char *body, size_t len, size_t at,
	    struct tentry *e, size_t *next);

/*
 * The entries of body laid out in plan (reset first): head bytes of the
 * caller's own, then the entries, each with its last set, then room for
 * one unit of unitsize bytes an entry at tentry_units_at (plan->len, the
 * end of the entries, when unitsize is 0), so nothing moves once filled;
 * all zeroed but the entries. The number of entries, or -1 (plan left
 * empty) when there are none or a line is not one tentry_put wrote.
 */
int	tentry_plan(struct sbuf *plan, size_t head, size_t unitsize,
	    const char *body, size_t len);
/* where a plan of n entries after head bytes keeps its units: past the
 * entries (36 bytes each), rounded up for a unit holding 64-bit members */
size_t	tentry_units_at(size_t head, int n);
/* an entry's verdict: type and reason cut to their fields */
void	tentry_verdict(struct item_result *it, int del, enum item_verdict v,
	    long status, const char *type, const char *reason);
/* each of the first n entries a later one replaced ends as that one did:
 * its verdict in items[], with its own del */
void	tentry_replaced(const struct tentry *ents, int n,
	    struct item_result *items);

#endif
