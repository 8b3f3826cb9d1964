/*
 * shaper.h - the shaper turns event frames (framing.md §4) into operation
 * frames (§5) using the sync sections of the configuration. It does no
 * network I/O of any kind.
 */
#ifndef SHAPER_H
#define SHAPER_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "jscan.h"
#include "kcount.h"
#include "sbuf.h"

/* where an event came from: the change stream or the loader's copy rows */
enum shape_source { SHAPE_STREAM, SHAPE_LOAD };

struct shape_counters {
	uint64_t rows_in;
	uint64_t ops_out;	/* every frame written, commits included */
	uint64_t rows_unmapped;	/* rows of a rel that has no sync section */
	uint64_t copies_dropped;	/* copy rows the stream had removed */
};

/* tombstone.c: documents the stream removed since the load's last mark */
struct tombstones {
	struct tomb_slot {
		char	*key;	/* index NUL id */
		size_t	 klen;
		uint64_t hash;
		uint64_t v;	/* the newest removal's version */
	} *slot;
	size_t	 cap, n;
	struct tomb_clear {
		char	*index;
		uint64_t v;
	} *clears;
	int	 nclears;
};

struct shaper {
	const struct config *cfg;
	struct shape_counters n;
	struct kcount drift;	/* schema drift events, per table */
	struct tombstones tombs;	/* the tombstone window */
	/* scratch reused for every row: rendered ids, the operation text */
	struct sbuf id, old_id, op;
};

/* shape.c */
void	shaper_init(struct shaper *, const struct config *);
void	shaper_release(struct shaper *);
/* append the operation frames for one validated event object (kind is its
 * "k" string span) to out. 0 on success; -1 on a bad event, with a message
 * in err and out left as it was before the call. */
int	shape_event(struct shaper *, enum shape_source, struct jspan obj,
	    struct jspan kind, struct sbuf *out, char *err, size_t errlen);

/* tombstone.c */
void	tomb_init(struct tombstones *);
void	tomb_release(struct tombstones *);
/* the stream deleted a document / cleared an index at version v */
void	tomb_delete(struct tombstones *, const char *index, size_t ilen,
	    const char *id, size_t idlen, uint64_t v);
void	tomb_clear(struct tombstones *, const char *index, size_t ilen,
	    uint64_t v);
/* 1 if a copy of the document at version v is older than a removal */
int	tomb_drops(const struct tombstones *, const char *index, size_t ilen,
	    const char *id, size_t idlen, uint64_t v);
/* a load mark: nothing recorded before it can matter any more */
void	tomb_forget(struct tombstones *);

/* id.c */
/* append the document id (framing.md §7) rendered from the values in row
 * of the key columns named by keys (a JSON array of strings) to id, as
 * text, not yet JSON-quoted. 0, or -1 with a message naming the column. */
int	id_render(struct jspan keys, struct jspan row, struct sbuf *id,
	    char *err, size_t errlen);

#endif
