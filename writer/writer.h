/*
 * writer.h - the writer stage: operation frames in, bulk requests out,
 * durable positions back to the supervisor.
 *
 * The writer holds neutral operations and asks the target module
 * (lib/target.h) for every byte of the protocol: the entry of a write,
 * the requests of an index creation, a TOAST read, a barrier, and what
 * each answer means. It knows no URL path and no error type.
 *
 * The data path keeps every document as the bytes it arrived in: a frame's
 * "doc" is copied once into the batch arena right behind the head the
 * module encodes for it, and the first attempt of a bulk request is a
 * prefix of that arena.
 * A cut of the batch moves into a flush (one slot of the window) with its
 * arena, so up to write_concurrency flushes are being written at once,
 * each owning its operations, and they are reported in the order they were
 * cut. A flush written before an earlier one waits in its slot for the
 * report without taking a request's place: the window has twice as many
 * slots, and the bytes of every flush in it (its documents and its ops)
 * stay within write_concurrency batches of batch_max_bytes.
 */
#ifndef WRITER_H
#define WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "frame.h"
#include "http.h"
#include "jscan.h"
#include "kcount.h"
#include "msg.h"
#include "sbuf.h"
#include "target.h"

struct config;

enum op_kind {
	OP_INDEX = 1,
	OP_DELETE,
	OP_COMMIT,	/* boundary: its pos may be reported durable */
	OP_POS,		/* boundary without a transaction */
	OP_CLEAR,	/* barrier: every document of one index (or a glob
			 * of indices, or a join's half) deleted */
	OP_MARK,	/* "marked" once everything before is written */
	OP_CASCADE	/* barrier: a join parent's children found and
			 * deleted */
};

struct op {
	enum op_kind kind;
	/* index/delete: the entry the target module encoded (head, then
	 * the document), and the raw JSON strings inside it */
	struct aspan entry;
	struct aspan head;	/* the entry before the document */
	struct aspan doc;	/* the document, verbatim from the frame */
	struct aspan index, id, routing;	/* raw JSON strings in the head */
	struct aspan pipeline;	/* len 0: none */
	char	*refusal;	/* refused, to be quarantined: the target's
				 * words (quarantine.c), or NULL */
	char	*toast;		/* raw JSON array of field names, or NULL */
	char	*toast_id;	/* raw JSON string: the id to complete from when
				 * the key changed in this update, or NULL */
	char	*toast_index;	/* raw JSON strings: the index and routing to
				 * complete from when they changed, or NULL */
	char	*toast_routing;
	char	*rel;		/* with toast: the source table, or NULL */
	char	*completed;	/* the document after TOAST completion */
	size_t	 completed_len;
	uint64_t v;		/* index/delete, cascade: its version */
	int	 written;	/* accepted by the target */
	int	 fill;		/* index: a fill (framing.md §5): the stored
				 * document completed from doc, not doc */
	/* commit/pos */
	uint64_t pos;
	long long ts;		/* commit time in µs, 0 when absent */
	long long tx, rx, in;	/* commit: when the source sent it, the
				 * capture read it and the writer did, µs
				 * (0: absent) */
	char	*trace;		/* commit: its traceparent, or NULL */
	char	*text;		/* commit/pos: the position's text; clear,
				 * cascade: the index name (or glob); mark:
				 * the raw JSON object */
	struct op_barrier *bar;	/* clear, cascade: what it deletes */
};

/* kept apart from struct op, which the batch moves by the thousand */
struct op_barrier {
	/* clear: the field and value of the documents to delete (raw JSON;
	 * NULL: all); cascade: the children's relations (a raw JSON array)
	 * and the parent's id (raw JSON, and plain) */
	char	*field, *value;
	char	*children;
	char	*parent_id, *parent;
};

struct batch {
	const struct target_module *tm;	/* encodes the entries */
	/* with target.require_alias, the configuration whose sections'
	 * indices are aliases (NULL: none is); a rebuild's own index
	 * (pg2osync reindex) is no section's, and is written plainly */
	const struct config *aliases;
	struct sbuf arena;	/* bulk entries of the buffered index/delete ops */
	struct op *ops;
	int	 nops, cap;
	int	 ndocs;		/* index + delete ops buffered */
	int	 last_boundary;	/* index of the last commit/pos in ops, -1 */
	int	 first_barrier;	/* index of the first clear/mark in ops, -1 */
	int	 limit_docs;
	size_t	 limit_bytes;
	struct doctab {
		int	*slot;	/* op indexes, -1 empty; NULL: none */
		int	 nslot;
	} writers;		/* the last write of each document (docref.c),
				 * built when a later flush asks */
};

/* why the main loop asks for a cut */
enum cut_reason {
	CUT_NONE,	/* input is still flowing: only full batches / barriers */
	CUT_IDLE,	/* nothing more is readable right now */
	CUT_EOF,	/* end of input: send all that is left */
	CUT_STOP	/* stopping early: only complete transactions */
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
	uint64_t cascades;
	uint64_t indices_created;
	uint64_t halted;	/* flushes a refusal holds now (a gauge) */
	uint64_t doc_refusals;	/* documents refused, each attempt */
	struct kcount toast_missing;	/* per source table */
	struct kcount rejected;		/* quarantined, per source table */
};

/* batch.c */
void	batch_init(struct batch *, const struct target_module *,
	    int limit_docs, size_t limit_bytes);
void	batch_release(struct batch *);
/* append one operation frame; 0, or -1 with err set (malformed operation,
 * or one the target cannot take: 65) */
int	batch_add(struct batch *, const struct frame *, struct p2o_err *);
int	batch_full(const struct batch *);
/* how many leading ops to flush now (0 = keep buffering) */
int	batch_cut(const struct batch *, enum cut_reason);
/* the last commit/pos among ops [0, n), or NULL */
const struct op *batch_boundary(const struct batch *, int n);
/* what a written batch lets the writer report: 1 and the durable
 * position in *d (text borrowed from the batch; sent/at left 0) or 0 when
 * it holds none; *mark is the last op's mark object or { NULL, 0 } */
int	batch_report(const struct batch *, struct msg_pos *d,
	    struct jspan *mark);
/* drop ops [0, n) after they were flushed */
void	batch_consume(struct batch *, int n);
/* move ops [0, n) and their bytes into the empty batch to (which takes
 * the limits of from); the rest stays in from */
void	batch_move(struct batch *from, int n, struct batch *to);
/* a span of the arena as a jspan (valid until the arena changes) */
struct jspan batch_span(const struct batch *, struct aspan);

/* docref.c */
/* the document an index/delete op writes (struct docref, lib/target.h):
 * raw JSON bytes of its index, id and routing (old: the id a completion
 * reads, toast_id when present) */
struct docref docref_of(const struct batch *, const struct op *, int old);
/* FNV-1a over n bytes after h (HASH_INIT to start): the one hash of the
 * writer */
#define HASH_INIT	2166136261u
uint32_t hash_bytes(uint32_t h, const char *p, size_t n);
/* a table of documents for up to n ops of one batch */
void	doctab_init(struct doctab *, int n);
void	doctab_release(struct doctab *);
/* the entry of document r: an op index of b, or -1 to fill in */
int	*doctab_find(const struct doctab *, const struct batch *b,
	    const struct docref *r);
/* are the two under one routing? (documents are compared without it) */
int	docref_same_routing(const struct docref *, const struct docref *);
/* the last op of b writing document r, or -1 */
int	batch_last_write(struct batch *, const struct docref *r);

/* bulk.c - the bulk entries of the batch, in the target's encoding, and
 * the bodies made of them; no I/O */
/* append the entry of a decoded index/delete operation (the target
 * module encodes it); records the spans in op; -1 with err set when the
 * target could not take it */
int	bulk_add_entry(struct sbuf *out, const struct target_module *,
	    const struct msg_op *m, int require_alias, struct op *op,
	    struct p2o_err *);
/* the first attempt of ops [0, n): the arena itself when they are all
 * unwritten, uncompleted and one run of it; the number of entries, their
 * indexes in sent[], or -1 when the body must be built */
int	bulk_prefix(const struct batch *, int n, const char **body,
	    size_t *len, int *sent);
/* a bulk body with the not yet written data ops among [0, n); their indexes
 * go to sent[] (room for n). Returns the number of entries. */
int	bulk_body(const struct batch *, int n, struct sbuf *body, int *sent);

/* toast.c */
/* where a completion's fields come from */
struct toast_from {
	const struct batch *b;	/* the batch holding the source write, or
				 * NULL: read the stored document */
	int	 i;		/* the source op in b */
	int	 own;		/* b NULL, a move: the op's own stored
				 * document is read too, the source when the
				 * one it moved from is gone (a replay) */
};

/* 1 if any index op among [0, n) needs TOAST completion */
int	toast_needed(const struct batch *, int n);
/* decide the source of each completion still to do among ops [0, n) of
 * b: the last earlier op of b writing the same document, else the newest
 * write of it in the earlier flushes (earlier[], oldest first), else the
 * stored document. Returns how many must be read, or -1 when a source in
 * an earlier flush waits for its own completion (ask again later). */
int	toast_plan(const struct batch *b, int n,
	    struct batch *const *earlier, int nearlier,
	    struct toast_from *from);
/* 1 if op's document is final: no completion, or completed */
int	toast_settled(const struct op *);
/* the document op writes (completed or as it arrived), or p == NULL for
 * a delete: what a later completion copies from */
struct jspan toast_source(const struct batch *, const struct op *);
/* the documents to read for the ops with from[i].b == NULL still to
 * complete: where each was before its update into refs[] (then, with
 * from[i].own, the op's own document), the op indexes into asked[] (room
 * for 2 n), in request order. Returns the number asked. */
int	toast_refs(const struct batch *, int n, const struct toast_from *from,
	    struct docref *refs, int *asked);
/* doc with each listed field present in source but absent from doc copied
 * in verbatim; source.p == NULL copies nothing. Returns the fields copied,
 * -1 if doc, fields or source is not what it must be. */
int	toast_complete(struct sbuf *out, struct jspan doc, struct jspan fields,
	    struct jspan source);

/* sink.c - what one flush sends and what the answers mean; no I/O */
enum step_result {
	STEP_DONE,	/* the flush is complete */
	STEP_NEXT,	/* progress: ask for its next request */
	STEP_WAIT,	/* failed: ask again after a backoff */
	STEP_END	/* the writer must end, with the sink err's code: the
			 * target refused our credentials (77), the node is
			 * another engine than configured (78), or a retry
			 * limit of the configuration was reached (75) */
};

enum next_result {
	NEXT_SEND,	/* *call is the flush's next request */
	NEXT_DONE,	/* nothing left to send: the flush is written */
	NEXT_BLOCKED,	/* waiting for an earlier flush's completion */
	NEXT_FAILED	/* could not build it: back off (sink err: why) */
};

enum flush_phase { PH_CREATE, PH_TOAST, PH_BULK, PH_REJECTS, PH_BARRIER,
    PH_DONE };

/* what the writer does before its first write (quarantine.c) */
enum quarantine_step { Q_READY, Q_PREPARE, Q_COUNT };

/* a cut of the batch on its way to the target */
/* a flush's per-operation arrays: sent[], sized by flush_begin to its
 * cut, and those of a TOAST completion or a quarantine, made when one
 * needs them (flush_room). The verdicts of an answer are not among them:
 * the sink lends its own array to each answer (sink.items), since dozens
 * of flushes may wait on a target's task queue at once */
struct flush_arrays {
	int	*sent;
	int	 room;		/* entries of sent */
	struct toast_from *from;
	struct docref *refs;
	int	*asked;
	int	 troom;		/* entries of from (refs, asked: twice) */
};

struct flush {
	struct batch b;		/* its operations, moved from the input */
	uint64_t seq;		/* the order it was cut in */
	enum flush_phase phase;
	int	 inflight;	/* one of its requests is open */
	long long retry_at;	/* monotonic ms: backing off until then */
	long long poll_at;	/* monotonic ms: a task it waits for is
				 * asked about again then (not a backoff:
				 * a stop waits for it) */
	int	 tasking;	/* its writes are a task procedure under
				 * way (a target with TCAP_ASYNC_TASKS) */
	const char *task_body;	/* the entries that procedure writes */
	size_t	 task_len;
	long long backoff_ms;	/* its last backoff delay */
	int	 attempts;	/* failed attempts since it last progressed */
	long long failing_since;	/* monotonic ms of the first of them */
	int	 halted;	/* its last answer was a refusal */
	int	 refused;	/* it met a refusal since it was cut */
	long long started_us;	/* wall clock µs: its first request left */
	struct flush_arrays arr;
	int	 nasked, nsent;
	size_t	 sent_len;	/* bytes of the open bulk request */
	struct sbuf body, path, resp;
	uint32_t logged[64];	/* hashes of refusals already logged */
	int	 nlogged;
	struct target_proc proc;	/* the barrier it ends in */
	char	*creating;	/* the index being created */
};

struct sink {
	const struct target_module *tm;
	struct writer_stats *stats;
	const struct config *cfg;	/* which indices to create, and how */
	char	**known;	/* indices created or found existing */
	int	 nknown, capknown;
	const char *target;	/* the target's url, for messages */
	long long down_since;	/* ms when the target became unavailable, 0 */
	long long down_logged;	/* ms of the last "unavailable" line */
	struct sbuf probe_resp;
	/* the verdicts of the answer being read, one per entry it answers
	 * (an answer's own: flush_answer reads them before it returns) */
	struct item_result *items;
	int	 nitems;
	char	 node[64];	/* what the probe found there */
	struct p2o_err err;	/* why the last step failed (code 77 for
				 * refused credentials, else 75) */
	/* engine.retry_*: the limits of retrying one request (0: none) */
	int	 retry_max;
	long long retry_max_elapsed_ms;
	int	 probe_attempts;	/* the probe's failures in a row */
	long long probe_failing_since;
	/* engine.on_permanent_rejection: quarantine (quarantine.c) */
	int	 quarantine;
	int	 max_rejects;
	uint64_t rejects_held;	/* in the store at start-up, and taken since */
	char	*stream;	/* whose records they are (lib/source.h) */
	enum quarantine_step q_step;
};

/* 0, or -1 with err when the writer cannot write to the module's target */
int	sink_init(struct sink *, const struct target_module *,
	    const char *target, struct writer_stats *, const struct config *,
	    struct p2o_err *);
void	sink_release(struct sink *);
/* no answer is being read: its array of verdicts, sized to the largest
 * answer so far, is freed (sink_items makes it again) */
void	sink_trim(struct sink *);
/* is the target there? */
void	sink_probe_call(struct sink *, struct http_call *);
/* its answer (terr: the transport error, or NULL when a response arrived
 * in s->probe_resp): STEP_DONE, STEP_WAIT, or STEP_END (refused
 * credentials, or a retry limit reached) */
enum step_result sink_probe_answer(struct sink *, const char *terr,
	    long status);
/* the answer to a quarantine_start_call request (in s->probe_resp):
 * STEP_DONE ready, STEP_NEXT ask the next, STEP_WAIT or STEP_AUTH */
enum step_result sink_start_answer(struct sink *, const char *terr,
	    long status);
void	flush_init(struct flush *);
/* start the flush of the ops its batch now holds */
void	flush_begin(struct flush *, uint64_t seq);
/* the arrays of a TOAST completion or a quarantine, for every op */
void	flush_room(struct flush *);
struct flush_spare;
/* a retired flush's arena and arrays into an empty spare, and back into
 * a flush that holds none */
void	flush_keep(struct flush *, struct flush_spare *);
void	flush_reuse(struct flush *, struct flush_spare *);
void	flush_spare_release(struct flush_spare *);
/* drop its ops and free its buffers (window_retire keeps some in a
 * spare first, flush_keep) */
void	flush_reset(struct flush *);
void	flush_release(struct flush *);
/* its next request; earlier[] are the batches of the flushes cut before
 * it that are not reported yet, oldest first (a TOAST source may be in
 * them) */
enum next_result flush_next(struct sink *, struct flush *,
	    struct batch *const *earlier, int nearlier, struct http_call *);
/* the answer to the request flush_next asked for: terr is the transport
 * error or NULL, then status and fl->resp hold the response */
enum step_result flush_answer(struct sink *, struct flush *, const char *terr,
	    long status);
/* next backoff delay: engine.retry_backoff_ms (100 ms) doubling to 30 s,
 * with jitter */
long long sink_backoff(long long *cur_ms);
/* a request failed at now after *attempts failures before it (since
 * *since): counts it, and 1 with the sink err naming the limit when a
 * limit of the configuration ends the retries, else 0. what names the
 * request in the message. */
int	sink_retry_limit(struct sink *, int *attempts, long long *since,
	    long long now, const char *what);
/* "index/id" of op, for messages */
void	op_name(const struct batch *, const struct op *, char *buf,
	    size_t len);

/* quarantine.c - refused documents kept in the target's rejects store
 * instead of halting; pure, sink.c makes them steps */
/* the sink's quarantine from its configuration (sink_init): 0, or -1
 * with err (78: a target that keeps no refused documents) */
int	quarantine_init(struct sink *, struct p2o_err *);
/* the next start-up request (the store made ready, then counted) into
 * call, buf its buffer: 1, or 0 when there is none (Q_READY) */
int	quarantine_start_call(struct sink *, struct sbuf *buf,
	    struct http_call *);
/* its answer in s->probe_resp: TA_NEXT (ask the next), TA_OK (ready),
 * else the failure with why */
enum target_answer quarantine_start_answer(struct sink *, long status,
	    char *why, size_t whylen);
/* op was refused as it */
void	quarantine_note(struct op *, const struct item_result *it);
/* the refused ops of fl that fit under engine.max_rejects, counted: how
 * many (the others are to be sent again: halting) */
int	quarantine_take(struct sink *, struct flush *);
/* the request recording them */
void	quarantine_call(struct sink *, struct flush *, struct http_call *);
/* its answer: TA_OK and they count as written, else the failure */
enum target_answer quarantine_answer(struct sink *, struct flush *,
	    long status, char *why, size_t whylen);
/* 1 if an index/delete of fl is not written yet */
int	quarantine_unwritten(const struct flush *);

/* order.c - the in-order rule, pure: flushes finish in any order and are
 * reported in the order they were opened */
struct order {
	int	 cap;		/* at most this many open at once */
	uint64_t head;		/* the oldest flush not reported yet */
	uint64_t next;		/* the sequence number of the next one */
	unsigned char *done;	/* done[seq % cap] */
};

void	order_init(struct order *, int cap);
void	order_release(struct order *);
int	order_full(const struct order *);
int	order_empty(const struct order *);
/* open the next flush: its sequence number (order_full must be false) */
uint64_t order_open(struct order *);
/* flush seq is written */
void	order_finish(struct order *, uint64_t seq);
/* 1 if seq is open and not written yet */
int	order_pending(const struct order *, uint64_t seq);
/* 1 and *seq when the oldest open flush is written: it may be reported
 * now, and leaves the window */
int	order_pop(struct order *, uint64_t *seq);

/* window.c - the flushes open at once, pure: it says which request to
 * make on which slot and takes the answers; the caller does the I/O */
/*
 * The arena and arrays of retired flushes, kept for the next ones. A
 * load's bodies are all near batch_max_bytes and its item results half a
 * kilobyte an operation: freeing them and growing the next faulted every
 * page in afresh (on wide rows the writer's system time exceeded its user
 * time). They are kept only in place of what a flush held, so the writer
 * never holds more than at its busiest, and window_trim frees them once
 * the input is idle.
 */
#define WINDOW_SPARES	2
struct flush_spare {
	struct sbuf arena;
	struct flush_arrays arr;
	/* the answer's buffer: a bulk answer of a thousand entries is past
	 * glibc's mmap threshold (main.c), and one freed with every flush
	 * was mapped and faulted in afresh for the next, some 6,000 pages a
	 * 100,000 streamed rows */
	struct sbuf resp;
};

struct window {
	struct order ord;
	struct flush *fl;	/* fl[seq % cap]; slot i is fl[i] */
	int	 cap;		/* WINDOW_SLOTS(open_max): written flushes
				 * wait here for the ones before them */
	int	 open_max;	/* flushes not yet written, at most */
	int	 bytes_batches;	/* the flushes in it hold at most the bytes
				 * of as many batches */
	int	 barrier;	/* a flush ending in a clear is open */
	uint64_t reported_pos;	/* the last position window_report gave */
	int	 reported_any;
	struct sink *sink;
	struct batch **earlier;	/* scratch for flush_next */
	struct flush_spare spare[WINDOW_SPARES];
	int	 nspare;
};

/* the slots (and HTTP clients) a window of open_max needs: a flush that
 * is written stays until every flush before it is, and must not take a
 * request's place meanwhile */
#define WINDOW_SLOTS(open_max)	(2 * (open_max))
/* the flushes a window keeps unwritten at once: write_concurrency, or
 * WINDOW_TASK_DEPTH for a target whose writes are tasks (the later
 * flushes' wait in its queue while the first one's run, and the server
 * takes them in one batch; one flush sends writes at a time, and the
 * window holds the bytes of two batches at most, documents and ops). A
 * server's batch costs about the same whatever it holds, so the rate
 * follows the documents waiting in its queue: 32 lets small batches fill
 * it, and the bytes bound a load of narrow rows first (some 19 batches
 * of 1,000 in 4 MiB) */
#define WINDOW_TASK_DEPTH	32
int	window_depth(const struct target_module *, int write_concurrency);
/* open_max flushes unwritten at once (write_concurrency) */
void	window_init(struct window *, int open_max, struct sink *);
void	window_release(struct window *);
/* the input is idle and nothing is open: free the spare arenas */
void	window_trim(struct window *);
/* no new flush may open, whatever its size */
int	window_full(const struct window *);
int	window_empty(const struct window *);
/* may ops [0, n) of b become a flush now? */
int	window_may_open(const struct window *, const struct batch *, int n);
/* move ops [0, n) of b into a new flush */
void	window_open(struct window *, struct batch *b, int n);
/* the next request due at now: 1 with its slot, the call and the buffer
 * for the response. retry == 0: a flush backing off is not retried. */
int	window_next(struct window *, long long now, int retry, int *slot,
	    struct http_call *, struct sbuf **resp);
/* the answer of slot's request; STEP_END is the caller's to end on */
enum step_result window_answer(struct window *, int slot, const char *terr,
	    long status, long long now);
/* the oldest flush, when it and every one before it is written (report
 * it, then window_retire), or NULL */
const struct flush *window_head(const struct window *);
/* what that flush lets the writer report: 0 when there is no such flush;
 * else 1, d->present when it carries a position past the last one
 * reported (text borrowed from the flush; sent is when its first request
 * left) and mark when it ends in one. Then window_retire. */
int	window_report(struct window *, struct msg_pos *d,
	    struct jspan *mark);
void	window_retire(struct window *);
/* the earliest end of a backoff (monotonic ms), or 0 */
long long window_retry_at(const struct window *);
/* the earliest poll of a task, 0: none */
long long window_poll_at(const struct window *);
int	window_backing_off(const struct window *);
int	window_inflight(const struct window *);
/* index/delete operations open and not written yet */
int	window_unwritten(const struct window *);

#endif
