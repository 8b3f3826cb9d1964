/*
 * ckpt.h - ckpt: reads and writes the checkpoint of one stream, a document
 * in the target's hidden .pg2osync_meta index (docs/architecture.md "Where
 * state lives"), from the command line or as `ckpt serve` for the
 * supervisor. Source-neutral: a checkpoint is a position (an opaque u64,
 * the document's version) and the source's own text for it; what stream
 * it belongs to comes from lib/source.c.
 *
 * Modules:
 *   store.c  the checkpoint document in the target: read, bind, write;
 *            the requests and errors every document here shares
 *   load.c   load progress documents, and the index settings a load
 *            suspends and restores
 */
#ifndef CKPT_H
#define CKPT_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "http.h"
#include "jscan.h"
#include "msg.h"
#include "sbuf.h"
#include "source.h"

#define CKPT_INDEX	".pg2osync_meta"

/* store.c */

struct ckpt_value {
	int	 present;	/* 0: no checkpoint stored for this stream */
	uint64_t pos;
	char	*text;		/* the source's position text (heap) */
	char	 updated_at[40];	/* as stored; "" when absent */
};
void	ckpt_value_release(struct ckpt_value *);

struct ckpt_store {
	struct http_client http;
	struct source_ident ident;	/* doc id and binding */
	int	 ready;		/* initialised */
	int	 index_ready;	/* the index exists (checked or created) */
	int	 bound;		/* the stored document was checked against us */
	int	 conflicts;	/* puts a newer stored checkpoint outranked */
	char	 err[512];	/* the message after a non-zero return */
};

/*
 * Every function below returns 0 or an exit code of framing.md §8 with the
 * reason in st->err: 75 target unreachable or failing, 77 refused our
 * credentials, 66 the stored checkpoint belongs to another stream, 78 a
 * configuration ckpt cannot serve.
 */
int	ckpt_store_init(struct ckpt_store *, const struct config *);
void	ckpt_store_release(struct ckpt_store *);
int	ckpt_store_get(struct ckpt_store *, struct ckpt_value *);
/* stores pos/text; *newer is set when the target already held a later
 * checkpoint (a 409 on the external_gte version), which also counts as
 * stored because that checkpoint covers pos */
int	ckpt_store_put(struct ckpt_store *, uint64_t pos, const char *text,
	    int *newer);

/* the shared plumbing of store.c, for load.c */
int	ckpt_request(struct ckpt_store *, const char *what, const char *method,
	    const char *path, const char *body, size_t len, struct sbuf *resp,
	    long *status);
int	ckpt_status_error(struct ckpt_store *, const char *what, long status,
	    const struct sbuf *resp);
int	ckpt_body_object(const struct sbuf *resp, struct jspan *obj);
void	ckpt_error_type(const struct sbuf *resp, char *buf, size_t len);
int	ckpt_ensure_index(struct ckpt_store *, struct sbuf *resp);
/* /.pg2osync_meta/_doc/<stream id><suffix>, escaped */
void	ckpt_doc_path(const struct ckpt_store *, const char *suffix,
	    struct sbuf *out);
/* 0, or 66 when a stored document belongs to another stream */
int	ckpt_check_bindings(struct ckpt_store *, struct jspan src);
/* "source":…,"slot":… — the members that bind a document to the stream */
void	ckpt_bindings(const struct ckpt_store *, struct sbuf *body);
void	ckpt_iso_now(char *buf, size_t len);

/* load.c */

/*
 * The tables of the configuration whose load is not finished, as the body
 * of a load frame (msg_load_*) with the stored checkpoint cp, into j; suspends refresh and replicas on
 * the index of each (creating it when it does not exist yet, so the
 * originals can be read), after recording the originals in the table's
 * progress document, and restores them for a table whose load ended
 * without its restore. *ntables: how many tables need loading.
 */
int	ckpt_load_plan(struct ckpt_store *, const struct config *,
	    const struct msg_pos *cp, struct sbuf *j, int *ntables);
/* a mark the writer reported durable: its progress is stored; on the
 * table's last mark the index settings are restored first */
int	ckpt_load_mark(struct ckpt_store *, const struct config *,
	    const struct msg_mark *);

#endif
