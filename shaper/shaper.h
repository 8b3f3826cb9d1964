/*
 * shaper.h - the shaper turns event frames (framing.md §4) into operation
 * frames (§5) using the sync sections of the configuration. It does no
 * network I/O of any kind.
 *
 * Modules:
 *   shape.c      one event in, its operations out: which documents a row
 *                has now and had before, and what to write and delete
 *   id.c         a document's identity (index, id, routing): the only
 *                code that turns row values into one
 *   canon.c      the canonical JSON of a row, which an append-only row is
 *                filed under the hash of
 *   doc.c        a document's body: projection, transforms, renames,
 *                constants, a fan-out element, a join field
 *   transform.c  the transform operations on one value
 *   pseudonym.c  AES-SIV (RFC 5297) and the pseudonym tokens made with it
 *   tombstone.c  the tombstone window and the TOAST window
 *   main.c       the loop: stdin, the load fd, stdout, stats
 */
#ifndef SHAPER_H
#define SHAPER_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "jscan.h"
#include "kcount.h"
#include "msg.h"
#include "sbuf.h"

/* where an event came from: the change stream or the loader's copy rows */
enum shape_source { SHAPE_STREAM, SHAPE_LOAD };

struct shape_counters {
	uint64_t rows_in;
	uint64_t ops_out;	/* every frame written, commits included */
	uint64_t rows_unmapped;	/* rows of a rel that has no sync section */
	uint64_t copies_dropped;	/* copy rows the stream had removed or
					 * written since */
};

/* tombstone.c: documents the stream removed or wrote since the load's
 * last mark */
struct tombstones {
	struct tomb_slot {
		char	*key;	/* index NUL id */
		size_t	 klen;
		uint64_t hash;
		uint64_t v;	/* the newest removal's or write's version */
		uint64_t gone;	/* the newest removal's, 0 when none */
	} *slot;
	size_t	 cap, n;
	struct tomb_clear {
		char	*rel;	/* the truncated table */
		uint64_t v;
	} *clears;
	int	 nclears;
};

/* tombstone.c: the TOAST window, unchanged out-of-line values the stream
 * could not complete yet because the copy that holds them is still to
 * come (a chain per row, ended by a write with every value or a delete) */
struct toastwin {
	struct tw_chain {
		char	*fields;	/* raw JSON array: the fields that have
					 * been markers all along */
		char	*index, *id, *routing;	/* the head, plain; routing
						 * NULL: none */
		uint64_t last_v;	/* the head's last write */
		int	 dead;
	} *chain;
	int	 nchain, capchain;
	struct tw_seg {
		char	*key;	/* index NUL id: an identity the row had */
		size_t	 klen;
		uint64_t hash;
		uint64_t from, to;	/* the versions it had it: [from, to) */
		int	 chain;
	} *seg;
	size_t	 cap, n;
};

/* a document for the TOAST window: plain index, id and routing (NULL:
 * none) */
struct twdoc {
	const char *index, *id, *routing;
	size_t	 ilen, idlen, rlen;
};

/*
 * The values a row is read through: a fan-out element first (an object's
 * members, or a scalar under its name), then the image, then a fallback
 * image (the before-image, for a column the new image lacks because its
 * unchanged TOAST value was not sent). skip names the fan-out column,
 * which the merged row does not have.
 */
struct view {
	struct jspan elem;	/* p NULL: no element */
	const char *elem_name;	/* a scalar element's field */
	struct jspan img;
	struct jspan fallback;	/* p NULL: none */
	const char *skip;
};

/* a document's identity */
struct ident {
	struct sbuf index, id, routing;
	int	 routed;	/* routing holds one */
	/* the last "key" an id was rendered from, as its bytes arrived, and
	 * its column names unescaped: a table's rows all carry the same, and
	 * reading it again for each was half the cost of an id */
	struct sbuf keyraw;	/* empty: none */
	char	**keycols;
	int	 nkeycols;
};

struct shaper {
	const struct config *cfg;
	struct shape_counters n;
	struct kcount drift;	/* schema drift events, per table */
	struct kcount truncates_skipped;	/* per table */
	struct kcount unconverted;	/* per "table<US>column" */
	struct kcount lookup_misses;	/* per "table<US>column" */
	struct tombstones tombs;	/* the tombstone window */
	struct toastwin toasts;		/* the TOAST window */
	int	 loading;	/* copies may still come: the windows are kept */
	uint64_t wave_v;		/* the newest copy's version since the
					 * load's last mark; 0 when none came */
	char	**key_json;	/* per section: its primary_key as the JSON
				 * array a row's "key" is, or NULL */
	/* scratch reused for every row: identities, document ids, the
	 * operation text */
	struct ident now, was;
	struct idlist {
		struct sbuf *id;
		struct sbuf *rt;	/* with own: each document's routing */
		int	 n, cap;
		int	 own;	/* each document has a routing of its own (a
				 * join child whose elements name parents) */
	} now_ids, was_ids;	/* the ids of a row's documents */
	struct fanlist {
		struct sbuf text;	/* each element's JSON, in a row */
		size_t	*end;		/* where each ends in text */
		int	 n, cap;
	} now_el, was_el;	/* a fan-out row's elements, now and before */
	struct sbuf parent;
	/* the rel the last row named, as its bytes arrived, with its
	 * section and name: a load's rows, and most of a stream's, name the
	 * table the row before named */
	struct relmemo {
		char	 raw[256];
		size_t	 rawn;		/* 0: none yet */
		const struct sync_section *sec;
		char	 name[256];
		size_t	 namelen;
	} lastrel;
	struct msg_in opin;	/* the operation being built, in the output */
	struct msg_ophead ophead;	/* its head up to the id, last time's */
	struct sbuf fields;	/* an index op's toast list, raw */
};

/* shape.c */
void	shaper_init(struct shaper *, const struct config *);
void	shaper_release(struct shaper *);
/* whether copy rows may still come (a load descriptor open); without,
 * neither window is kept */
void	shaper_load(struct shaper *, int open);
/* append the operation frames for one validated event object (kind is its
 * "k" string span; top its members as the frame reader noted them, or
 * NULL) to out. 0 on success; -1 on a bad event, with a message in err and
 * out left as it was before the call. */
int	shape_event(struct shaper *, enum shape_source, struct jspan obj,
	    struct jspan kind, const struct jtop *top, struct sbuf *out,
	    char *err, size_t errlen);

/* tombstone.c */
void	tomb_init(struct tombstones *);
void	tomb_release(struct tombstones *);
/* the stream deleted a document / truncated a table at version v */
void	tomb_delete(struct tombstones *, const char *index, size_t ilen,
	    const char *id, size_t idlen, uint64_t v);
/* the stream wrote a document at version v */
void	tomb_write(struct tombstones *, const char *index, size_t ilen,
	    const char *id, size_t idlen, uint64_t v);
void	tomb_clear(struct tombstones *, const char *rel, size_t rlen,
	    uint64_t v);
/* 1 if a copy of table rel's document at version v is older than a
 * removal or a stream write */
int	tomb_drops(const struct tombstones *, const char *rel, size_t rlen,
	    const char *index, size_t ilen, const char *id, size_t idlen,
	    uint64_t v);
/* forget everything (on release) */
void	tomb_forget(struct tombstones *);
/* a load mark after copies versioned v: a removal or write at or below v
 * is older than every copy still to come (the next wave reads a later
 * position), so only those above v are kept */
void	tomb_forget_upto(struct tombstones *, uint64_t v);
/* the newest removal of table rel's document the window knows of (its
 * delete, or the table's truncate), 0 when none */
uint64_t tomb_removed(const struct tombstones *, const char *rel,
	    size_t rlen, const char *index, size_t ilen, const char *id,
	    size_t idlen);
void	tw_init(struct toastwin *);
void	tw_release(struct toastwin *);
/* a stream write of dst at v with the unchanged fields (a raw JSON array)
 * to be completed from src's last write; before: src's newest removal */
void	tw_update(struct toastwin *, const struct twdoc *src, uint64_t before,
	    const struct twdoc *dst, struct jspan fields, uint64_t v);
/* a stream write of d with every value, or its delete: a chain ending in
 * d ends */
void	tw_gone(struct toastwin *, const struct twdoc *d);
/* chain k (a number tw_match gave) ends: its head was filled */
void	tw_end(struct toastwin *, int k);
/* the chains (up to max, into chains[]) a copy of d at version v holds
 * the values of: their heads are to be filled from it */
int	tw_match(const struct toastwin *, const struct twdoc *d, uint64_t v,
	    int *chains, int max);
/* a load mark after copies versioned v: chains whose head was written at
 * or below v are forgotten */
void	tw_forget_upto(struct toastwin *, uint64_t v);

/* id.c */
/* 1 and the value of name in the view, 0 when it has none */
int	view_get(const struct view *, const char *name, struct jspan *val);
/* append the document id (framing.md §7) rendered from the values in row
 * of the key columns named by keys (a JSON array of strings) to id, as
 * text, not yet JSON-quoted. 0, or -1 with a message naming the column. */
int	id_render(struct jspan keys, struct jspan row, struct sbuf *id,
	    char *err, size_t errlen);
/* the same through a view */
int	id_render_view(struct jspan keys, const struct view *, struct sbuf *id,
	    char *err, size_t errlen);
/* a template rendered from the view's values */
int	id_template(const struct tmpl *, const struct view *, struct sbuf *out,
	    char *err, size_t errlen);
/* an append-only row's id: the sha256 of its canonical JSON, in hex */
void	id_content(struct jspan row, struct sbuf *id);
/*
 * The identity of a row's document (not an append-only one): its index
 * (the template rendered, checked as an index name), its id (the id
 * template, else the key: keys is the row's or the section's primary_key
 * as a JSON array), its routing (the routing column, or a join child's
 * parent id). 0, or -1 with err naming what is wrong.
 */
int	id_ident(const struct config *, const struct sync_section *,
	    const struct view *, struct jspan keys, struct ident *,
	    char *err, size_t errlen);
/* a join child's parent id, from the child's parent column */
int	id_parent(const struct config *, const struct sync_section *child,
	    const struct view *, struct sbuf *out, char *err, size_t errlen);
/* the same from the parent's key itself (a fan-out element naming its
 * document's parent): a scalar, else -1 with err */
int	id_parent_of(const struct config *, const struct sync_section *child,
	    struct jspan key, struct sbuf *out, char *err, size_t errlen);
void	ident_init(struct ident *);
void	ident_release(struct ident *);
/* the same document? */
int	ident_same(const struct ident *, const struct ident *);

/* canon.c */
/* the canonical JSON text of a validated value (framing.md §7) */
void	canon_json(struct jspan v, struct sbuf *out);

/* doc.c */
/*
 * The document of one row (view: the new image, maybe a fan-out element;
 * parent_id: a join child's parent, or NULL) appended to op.
 */
void	doc_build(struct shaper *, const struct sync_section *,
	    const struct view *, const char *parent_id, struct sbuf *op,
	    const char *rel);
/* the target field names of the listed toast columns the document
 * carries, as an ML_TOAST list; 0 when none survives */
int	doc_toast(const struct sync_section *, struct jspan toast,
	    struct sbuf *op);

/* transform.c */
enum xf_result {
	XF_UNCONVERTED,	/* val appended as it arrived (a pseudonym: the
			 * fixed marker, never the value) */
	XF_CONVERTED,	/* converted, or already in the target shape */
	XF_MISSED	/* a lookup found no label: the value, or the
			 * default */
};
/* the transformed value of val appended to out */
enum xf_result xf_apply(const struct sync_transform *, struct jspan val,
	    struct sbuf *out);
/* what a pseudonym becomes when it cannot be made: never the value */
#define XF_PSEUDONYM_MARKER	"[unconvertible]"

/* pseudonym.c */
/* one part of the associated data S2V authenticates */
struct siv_ad {
	const unsigned char *p;
	size_t	 n;
};
/* SIV ‖ ciphertext of pt (ptlen bytes) under key (32 bytes: AES-128-SIV,
 * 64: AES-256-SIV) and the associated data ad[0..nad), into out (room
 * for 16 + ptlen bytes): 0, or -1 */
int	siv_seal(const unsigned char *key, size_t keylen,
	    const struct siv_ad *ad, int nad, const unsigned char *pt,
	    size_t ptlen, unsigned char *out);
/* the reverse of in (SIV ‖ ciphertext, len bytes) into out (len - 16
 * bytes): 0 when it authenticates, else -1 with out wiped */
int	siv_open(const unsigned char *key, size_t keylen,
	    const struct siv_ad *ad, int nad, const unsigned char *in,
	    size_t len, unsigned char *out);
/* the token of text (n bytes) under p's key and scope appended to out as
 * a JSON string: 1, or 0 with nothing appended (no key resolved, the
 * cipher failed) */
int	pseudonym_seal(const struct sync_pseudonym *, const char *text,
	    size_t n, struct sbuf *out);
/* is text a token p's key and scope made? */
int	pseudonym_is_token(const struct sync_pseudonym *, const char *text,
	    size_t n);

#endif
