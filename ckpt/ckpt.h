/*
 * ckpt.h - ckpt: reads and writes the checkpoint of one stream, a document
 * in the target's hidden .pg2osync_meta index (docs/architecture.md "Where
 * state lives"), from the command line or as `ckpt serve` for the
 * supervisor. Source-neutral: a checkpoint is a position (an opaque u64,
 * the document's version) and the source's own text for it; what stream
 * it belongs to comes from lib/source.c.
 *
 * Modules:
 *   store.c  the checkpoint document in the target: read, bind, write
 */
#ifndef CKPT_H
#define CKPT_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "http.h"
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

#endif
