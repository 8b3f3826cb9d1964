/*
 * writer.h - the writer stage: operation frames in, bulk requests out,
 * durable positions back to the supervisor.
 *
 * The data path keeps every document as the bytes it arrived in: a frame's
 * "doc" is copied once into the batch arena right behind its bulk action
 * line, and the first attempt of a bulk request is a prefix of that arena.
 */
#ifndef WRITER_H
#define WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "jscan.h"
#include "kcount.h"
#include "sbuf.h"

struct http_client;

enum op_kind {
	OP_INDEX = 1,
	OP_DELETE,
	OP_COMMIT,	/* boundary: its pos may be reported durable */
	OP_POS,		/* boundary without a transaction */
	OP_CLEAR,	/* barrier: refresh + delete_by_query on one index */
	OP_MARK		/* barrier: report "marked" once everything before is written */
};

/* a span inside the batch arena, stable across arena growth */
struct aspan {
	size_t	off, len;
};

struct op {
	enum op_kind kind;
	/* index/delete: the bulk entry (action line + LF [+ doc + LF]) */
	struct aspan entry;
	struct aspan action;	/* the action line without its LF */
	struct aspan doc;	/* the document, verbatim from the frame */
	struct aspan index, id, routing;	/* raw JSON strings in the action */
	char	*toast;		/* raw JSON array of field names, or NULL */
	char	*toast_id;	/* raw JSON string: the id to complete from when
				 * the key changed in this update, or NULL */
	char	*rel;		/* with toast: the source table, or NULL */
	char	*completed;	/* the document after TOAST completion */
	size_t	 completed_len;
	int	 written;	/* accepted by the target in the current flush */
	/* commit/pos */
	uint64_t pos;
	long long ts;		/* commit time in µs, -1 when absent */
	char	*text;		/* commit/pos: the position's text; clear: the
				 * index name; mark: the raw JSON object */
};

struct batch {
	struct sbuf arena;	/* bulk entries of the buffered index/delete ops */
	struct op *ops;
	int	 nops, cap;
	int	 ndocs;		/* index + delete ops buffered */
	int	 last_boundary;	/* index of the last commit/pos in ops, -1 */
	int	 first_barrier;	/* index of the first clear/mark in ops, -1 */
	int	 limit_docs;
	size_t	 limit_bytes;
};

/* why the main loop asks for a cut */
enum cut_reason {
	CUT_NONE,	/* input is still flowing: only full batches / barriers */
	CUT_IDLE,	/* nothing more is readable right now */
	CUT_EOF		/* end of input (or shutdown): send all that is complete */
};

struct writer_stats {
	uint64_t docs_indexed;
	uint64_t docs_deleted;
	uint64_t batches;
	uint64_t bulk_bytes;
	uint64_t sink_errors;
	uint64_t version_conflicts;
	uint64_t toast_completions;
	uint64_t clears;
	struct kcount toast_missing;	/* per source table */
};

/* batch.c */
void	batch_init(struct batch *, int limit_docs, size_t limit_bytes);
void	batch_release(struct batch *);
/* append one operation frame; 0, or -1 with err set (malformed operation) */
int	batch_add(struct batch *, const struct frame *, char *err, size_t errlen);
int	batch_full(const struct batch *);
/* how many leading ops to flush now (0 = keep buffering) */
int	batch_cut(const struct batch *, enum cut_reason);
/* the last commit/pos among ops [0, n), or NULL */
const struct op *batch_boundary(const struct batch *, int n);
/* drop ops [0, n) after they were flushed */
void	batch_consume(struct batch *, int n);
/* a span of the arena as a jspan (valid until the arena changes) */
struct jspan batch_span(const struct batch *, struct aspan);

/* bulk.c */
/* append the bulk entry for an index/delete frame's object; records the
 * spans (relative to out->len before the call) in op; -1 with err set */
int	bulk_add_entry(struct sbuf *out, struct jspan obj, int is_delete,
	    struct op *op, char *err, size_t errlen);
/* a bulk body with the not yet written data ops among [0, n); their indexes
 * go to sent[] (room for n). Returns the number of entries. */
int	bulk_body(const struct batch *, int n, struct sbuf *body, int *sent);

/* response.c */
enum item_verdict {
	ITEM_OK,	/* 2xx */
	ITEM_CONFLICT,	/* 409: the target holds a newer version: success */
	ITEM_NOTFOUND,	/* delete of an absent document: success */
	ITEM_RETRY,	/* 429 / 5xx: try again later */
	ITEM_REJECT	/* any other 4xx: the target will not take it as is */
};

struct item_result {
	enum item_verdict verdict;
	int	 status;
	char	 action[8];	/* "index", "delete", ... */
	char	 type[96];	/* error.type when present */
	char	 reason[320];	/* error.reason when present, truncated */
};

enum resp_verdict {
	RESP_ITEMS,	/* per-item results are in items[] */
	RESP_RETRY,	/* whole request: transient (429, 5xx, garbled) */
	RESP_AUTH,	/* 401 / 403 */
	RESP_REJECT	/* whole request refused (other 4xx) */
};

/* classify a _bulk response for nsent entries; why says what went wrong
 * for anything but RESP_ITEMS. Pure: no I/O, no logging. */
enum resp_verdict bulkresp_classify(long status, const char *body, size_t len,
	    int nsent, struct item_result *items, char *why, size_t whylen);
/* class of a non-bulk response status (refresh, delete_by_query, _mget) */
enum resp_verdict resp_status_class(long status);
/* 1 if a _delete_by_query response reports no failure and no timeout */
int	dbq_complete(const char *body, size_t len);
/* "type: reason" of an {"error":...} body, or a short excerpt of it */
void	resp_error_text(const char *body, size_t len, char *out, size_t outlen);

/* toast.c */
/* 1 if any index op among [0, n) needs TOAST completion */
int	toast_needed(const struct batch *, int n);
/* decide each completion's source. For ops [0, n) with toast, src[i] is
 * the index of an earlier op in the batch writing the same document, or -1
 * when the stored document must be read. Returns how many must be read. */
int	toast_plan(const struct batch *, int n, int *src);
/* the _mget body for the ops with toast and src[i] == -1; their indexes go
 * to asked[] in request order. Returns the number of docs asked. */
int	toast_mget_body(const struct batch *, int n, const int *src,
	    struct sbuf *body, int *asked);
/* parse an _mget response of nasked docs: found[i] = the _source span
 * (p == NULL when the document does not exist). -1 if garbled. */
int	toast_mget_parse(const char *body, size_t len, int nasked,
	    struct jspan *found);
/* doc with each listed field present in source but absent from doc copied
 * in verbatim; source.p == NULL copies nothing. Returns the fields copied,
 * -1 if doc, fields or source is not what it must be. */
int	toast_complete(struct sbuf *out, struct jspan doc, struct jspan fields,
	    struct jspan source);

/* sink.c - one flush at a time against the target */
enum step_result {
	STEP_DONE,	/* the flush is complete */
	STEP_NEXT,	/* progress: call again at once */
	STEP_WAIT,	/* failed: call again after backoff_ms */
	STEP_AUTH	/* 401/403: permanent */
};

struct flush {
	struct batch *b;
	int	 n;		/* ops [0, n) */
	int	 phase;
	int	*src, *asked, *sent;
	int	 nasked, nsent;
	struct item_result *items;
	long long started_us;	/* wall clock when its first request left */
	uint32_t logged[64];	/* hashes of refusals already logged */
	int	 nlogged;
};

struct sink {
	struct http_client *http;
	struct sbuf body, resp;
	struct writer_stats *stats;
	long long backoff_ms;	/* last wait; the main loop zeroes it on progress */
	long long down_since;	/* ms when the target became unavailable, 0 */
	long long down_logged;	/* ms of the last "unavailable" line */
	char	 err[512];	/* why the last step failed */
};

void	sink_init(struct sink *, struct http_client *, struct writer_stats *);
void	sink_release(struct sink *);
/* GET / until the target answers; STEP_DONE, STEP_WAIT or STEP_AUTH */
enum step_result sink_probe(struct sink *);
void	flush_begin(struct flush *, struct batch *, int n);
void	flush_release(struct flush *);
/* one request of the flush */
enum step_result flush_step(struct sink *, struct flush *);
/* next backoff delay: 100 ms doubling to 30 s, with jitter */
long long sink_backoff(long long *cur_ms);

#endif
