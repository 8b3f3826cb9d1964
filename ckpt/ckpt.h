/*
 * ckpt.h - ckpt: reads and writes the checkpoint of one stream, a state
 * document the target module keeps (the hidden .pg2osync_meta index on
 * OpenSearch; docs/architecture.md "Where state lives"), from the command
 * line or as `ckpt serve` for the supervisor. Source-neutral: a checkpoint
 * is a position (an opaque u64, the document's version) and the source's
 * own text for it; what stream it belongs to comes from lib/source.c.
 * Target-neutral: every request is the target module's (lib/target.h).
 *
 * Modules:
 *   store.c  the checkpoint document: read, bind, write; the binding and
 *            the reads and writes every document of the stream shares
 *   load.c   load progress documents, and the index settings a load
 *            suspends and restores
 */
#ifndef CKPT_H
#define CKPT_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "err.h"
#include "jscan.h"
#include "msg.h"
#include "sbuf.h"
#include "source.h"
#include "target.h"

/* store.c */

/* PG2OSYNC_INSTANCE_ID at most this long */
#define CKPT_INSTANCE_MAX	128

struct ckpt_value {
	int	 present;	/* 0: no checkpoint stored for this stream */
	uint64_t pos;
	char	*text;		/* the source's position text (heap) */
	char	 updated_at[40];	/* as stored; "" when absent */
	char	 instance[CKPT_INSTANCE_MAX + 1];	/* the process that wrote
					 * it; "" when the document predates
					 * the field */
};
void	ckpt_value_release(struct ckpt_value *);

struct ckpt_store {
	struct target_conn conn;
	struct source_ident ident;	/* doc id and binding */
	int	 ready;		/* initialised */
	int	 bound;		/* the stored document was checked against us */
	int	 conflicts;	/* puts a newer stored checkpoint outranked */
	/* who writes: PG2OSYNC_INSTANCE_ID, else the host's name, recorded
	 * in every checkpoint written so that two processes writing one
	 * stream can be told apart */
	char	 instance[CKPT_INSTANCE_MAX + 1];
	/* what the last load plan left to do (load.c), so that a mark is
	 * stored without a read first: per sync section (nplan of them, 0
	 * before a plan) whether its load is still running, and the
	 * originals of its index (heap JSON, NULL: none recorded) */
	int	 nplan;
	int	*loading;
	char	**originals;
	/* per section the first section of its index (group_first), and per
	 * such first section how many of its group still load: whether a
	 * mark is its index's last is known without a walk of every section
	 * (which, mark after mark, grew with the square of the tables) */
	int	*group;
	int	*left;
	struct p2o_err err;	/* why the last call returned -1 */
};

/*
 * Every function below returns 0, or -1 with the reason in st->err and its
 * framing.md §8 exit code: 75 target unreachable or failing, 77 refused
 * our credentials, 66 the stored checkpoint belongs to another stream,
 * 78 a configuration ckpt cannot serve.
 */
int	ckpt_store_init(struct ckpt_store *, const struct config *);
void	ckpt_store_release(struct ckpt_store *);
int	ckpt_store_get(struct ckpt_store *, struct ckpt_value *);
/* stores pos/text; *newer is set when the target already held a later
 * checkpoint (the stored version is higher), which also counts as
 * stored because that checkpoint covers pos */
int	ckpt_store_put(struct ckpt_store *, uint64_t pos, const char *text,
	    int *newer);
/* where the target keeps the documents, for messages */
const char *ckpt_place(const struct ckpt_store *);

/* what store.c shares with load.c */
/* the stream's document with key suffix (NULL: the checkpoint) into doc,
 * found 0 when there is none, after the binding check */
int	ckpt_doc_get(struct ckpt_store *, const char *suffix, const char *what,
	    struct sbuf *doc, int *found);
/* the stream's document with key suffix, written plainly */
int	ckpt_doc_put(struct ckpt_store *, const char *suffix, const char *what,
	    const struct sbuf *body);
/* the same for n documents at once (docs[i], found[i] for suffixes[i];
 * bodies[i] written under suffixes[i]), in as few requests as the target
 * takes */
int	ckpt_docs_get(struct ckpt_store *, const char *const *suffixes, int n,
	    const char *what, struct sbuf *docs, int *found);
int	ckpt_docs_put(struct ckpt_store *, const char *const *suffixes,
	    const struct sbuf *bodies, int n, const char *what);
/* "source":…,"slot":… — the members that bind a document to the stream */
void	ckpt_bindings(const struct ckpt_store *, struct sbuf *body);
void	ckpt_iso_now(char *buf, size_t len);

/* load.c */

/*
 * The tables of the configuration whose load is not finished, as the body
 * of a load frame (msg_load_*) with the stored checkpoint cp, into j;
 * suspends the index settings a load suspends on the index of each
 * (creating it when it does not exist yet, so the originals can be read),
 * after recording the originals in the table's progress document, and
 * restores them for a table whose load ended without its restore. An
 * index several sections write is handled once for all of them: suspended
 * while any of them loads, restored when none does. Every progress
 * document is read in one request and those that change written in one.
 * *ntables: how many tables need loading.
 */
/*
 * The position is gone (a lost slot, a purged binlog): every table's
 * progress is forgotten, so the next plan loads each one again from the
 * start. The suspended originals are kept.
 */
int	ckpt_load_forget(struct ckpt_store *, const struct config *);
/*
 * A full load never deletes: the documents of rows deleted while the
 * position was gone are removed by a sweep once every table is loaded
 * again. Its marker is a state document, set by ckpt_load_forget and
 * cleared when the supervisor says the sweep is done (a crash before that
 * sweeps again).
 */
int	ckpt_sweep_pending(struct ckpt_store *, int *pending);
int	ckpt_sweep_mark(struct ckpt_store *, int pending);
int	ckpt_load_plan(struct ckpt_store *, const struct config *,
	    const struct msg_pos *cp, struct sbuf *j, int *ntables);
/* a mark the writer reported durable: its progress is stored; on the
 * table's last mark the index settings are restored first, when no other
 * section writing the index is still loading */
int	ckpt_load_mark(struct ckpt_store *, const struct config *,
	    const struct msg_mark *);
/*
 * Marks stored together: the ckpt serve loop takes the marks that arrived
 * together (the loader keeps several tables' marks open) and writes their
 * progress documents in one request, instead of one request a mark.
 * A mark that needs more than its own document written - no plan to
 * know its section by, or its index restored - is stored alone
 * (ckpt_load_mark), after the marks before it.
 */
struct writes;
struct ckpt_marks {
	struct writes *w;	/* the documents */
	int	*fin;		/* the sections whose last mark it holds */
	int	 n, nfin;	/* marks added; of them last ones */
};
/* 1 when m must be stored by ckpt_load_mark, after the marks before it */
int	ckpt_load_mark_alone(struct ckpt_store *, const struct config *,
	    const struct msg_mark *);
/* m's progress document, added to b (a mark ckpt_load_mark_alone let
 * through) */
void	ckpt_load_marks_add(struct ckpt_store *, const struct config *,
	    const struct msg_mark *, struct ckpt_marks *);
/* every document of b, in as few requests as the target takes; b is
 * kept (a failure is retried with it) until ckpt_load_marks_release */
int	ckpt_load_marks_store(struct ckpt_store *, const struct config *,
	    struct ckpt_marks *);
void	ckpt_load_marks_release(struct ckpt_marks *);
/* what the plan kept (ckpt_store_release calls it) */
void	ckpt_load_release(struct ckpt_store *);

#endif
