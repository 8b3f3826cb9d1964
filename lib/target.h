/*
 * target.h - the search engine documents are written to, behind one table
 * of operations. Everything that knows a URL path, a request body, an
 * error type or the bulk action line of an engine lives in that engine's
 * module (lib/target/<engine>*.c); the writer and ckpt hold neutral
 * operations and ask the module to encode them, and ask what a target can
 * do from its capabilities, never which engine it is.
 *
 * Two kinds of operation:
 *
 *  - the data path (the writer), pure: the module builds a request
 *    (struct http_call) and reads its answer; the caller does the I/O on
 *    its own connections and its own clock, so none of it needs a socket
 *    to test. A barrier of several requests (a clear, a join cascade) is a
 *    procedure the module steps through one request at a time.
 *  - state and administration (ckpt), blocking on one connection
 *    (struct target_conn): the state documents (checkpoint, load progress)
 *    and the index settings a load suspends.
 *
 * Over the data path's own calls, target.c keeps the one blocking write
 * of documents for the operator's commands (target_write_all): the bulk
 * request or the write procedure, as the module has one, with the
 * writer's verdicts and retries.
 *
 * Two tables beside the main one, each NULL for a target without it: the
 * quarantine of refused documents (struct target_rejects_ops: the writer
 * records, pg2osync rejects lists and replays) and the read-back of every
 * stored document (struct target_scan_ops: pg2osync verify).
 *
 * A target whose writes are asynchronous tasks (TCAP_ASYNC_TASKS,
 * Meilisearch) writes through a procedure (write_call / write_answer) that
 * sends its tasks and polls each to its end; one whose state lives
 * outside the engine (no TCAP_STATE_DOCS) implements state_get /
 * state_put on its own storage (target.state_dir).
 */
#ifndef TARGET_H
#define TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "http.h"
#include "jscan.h"
#include "sbuf.h"

struct config;
struct sync_section;

/*
 * What a target can do, declared as data by its module. The configuration
 * is checked against it at load (config_target.c: each key that needs a
 * capability, refused with its file:line and the reason); the programs ask
 * target_can() where a behaviour depends on one.
 */
enum target_cap {
	/* keeps the higher of two versions of a document (never goes back
	 * to an older one, whichever write lands last) */
	TCAP_EXTERNAL_VERSIONS	= 1 << 0,
	/* several write requests may be open at once and complete in any
	 * order, each durable when answered */
	TCAP_CONCURRENT_WRITES	= 1 << 1,
	/* a document can be routed to a shard by a value of its own */
	TCAP_ROUTING		= 1 << 2,
	/* parent and child documents in one index, and a search for a
	 * parent's children */
	TCAP_JOIN		= 1 << 3,
	/* an ingest pipeline named on each write computes fields */
	TCAP_PIPELINES		= 1 << 4,
	/* an index is created with a mapping of field types */
	TCAP_MAPPINGS		= 1 << 5,
	/* a write is accepted as a task whose success must be asked for
	 * before it counts as durable */
	TCAP_ASYNC_TASKS	= 1 << 6,
	/* documents of our own (checkpoint, load progress) can be kept in
	 * the target itself */
	TCAP_STATE_DOCS		= 1 << 7,
	/* a name readers use can be moved to another index atomically */
	TCAP_ALIASES		= 1 << 8,
	/* two indexes can exchange their contents (and names) atomically:
	 * a rebuild without aliases swaps a fresh index with the live one */
	TCAP_INDEX_SWAP		= 1 << 9,
	/* a document written without fields its update left unchanged
	 * (PostgreSQL's unchanged out-of-line TOAST values) is completed
	 * from the stored copy (read_call / read_answer); without it such a
	 * table needs REPLICA IDENTITY FULL, which sends every value */
	TCAP_COMPLETE_DOCS	= 1 << 10,
	/* several nodes serve one store of documents: any of them takes any
	 * request (target.urls) */
	TCAP_NODES		= 1 << 11,
};
#define TCAP_ALL	((1u << 12) - 1)

/* a span of an arena (offsets stay valid when the arena grows). 32 bits
 * are enough: an arena holds at most batch_max_bytes (1 GiB at most) and
 * one frame past it (P2O_FRAME_MAX), and the writer keeps seven spans in
 * each of its ops, tens of thousands of which may wait on a target's
 * task queue */
struct aspan {
	uint32_t off, len;
};

/* the document an operation writes: raw JSON strings (quotes included) of
 * its index, id and routing (rlen 0: none), compared as bytes */
struct docref {
	const char *index, *id, *routing;
	size_t	 ilen, idlen, rlen;
};

/* one index or delete, as the writer hands it to the module */
struct target_write {
	int	 del;		/* a delete (no document) */
	struct jspan index, id;	/* raw JSON strings */
	struct jspan routing;	/* raw JSON string, p NULL: none */
	struct jspan pipeline;	/* raw JSON string, p NULL: none */
	struct jspan doc;	/* an index: the document as it arrived */
	uint64_t version;	/* 0: none, a plain write (poll mode) */
	int	 require_alias;	/* an index: refused unless its index name
				 * is an alias (target.require_alias) */
};

/* where encode put a write in the arena: the entry is head, document,
 * tail; the raw index, id and routing lie inside the head */
struct target_entry {
	struct aspan entry;	/* all of it */
	struct aspan head;	/* before the document (a delete: all) */
	struct aspan doc;	/* the document, len 0 for a delete */
	struct aspan index, id, routing;
	struct aspan pipeline;	/* the raw JSON string, len 0: none (left
				 * 0 by a module that has no pipelines) */
};

/*
 * A refused document kept in the target's quarantine (engine.
 * on_permanent_rejection: quarantine) instead of halting: what the write
 * was, so that `pg2osync rejects --replay` can send it again as it was.
 */
struct target_reject {
	int	 del;		/* a delete (no document) */
	struct jspan index, id;	/* raw JSON strings */
	struct jspan routing, pipeline;	/* raw JSON strings, p NULL: none */
	struct jspan doc;	/* an index: the document as it was sent */
	uint64_t version;	/* the external version it was written with */
	const char *position;	/* the position covering it, NULL: unknown
				 * (a transaction split across flushes) */
	const char *table;	/* its source table, NULL: unknown */
	const char *reason;	/* the target's words */
	const char *stream;	/* the stream it came from (lib/source.h's
				 * doc_id): pipelines sharing a target each
				 * count and list their own */
};

/* records read back from the quarantine (rejects_read), oldest version
 * first; their spans and strings point into the blocks of mem */
struct target_rejects {
	struct target_reject *r;
	char	**key;		/* each record's key in the store, plain */
	int	 n, cap;
	uint64_t total;		/* records held, however many were read */
	char	**mem;		/* heap blocks the records point into */
	int	 nmem, capmem;
};

/* what the target said about one write of a bulk request */
enum item_verdict {
	ITEM_OK,	/* written */
	ITEM_CONFLICT,	/* the target holds a newer version: success */
	ITEM_NOTFOUND,	/* delete of an absent document: success */
	ITEM_RETRY,	/* try again later */
	ITEM_REJECT	/* the target will not take it as it is */
};

struct item_result {
	enum item_verdict verdict;
	int	 del;		/* the item was a delete */
	int	 status;
	char	 type[96];	/* the target's error type, when given */
	char	 reason[320];	/* its reason, truncated */
};

/* what an answer means for the request as a whole */
enum target_answer {
	TA_OK,		/* done; a bulk answer's items are read */
	TA_EXISTS,	/* a creation found it there already: done too */
	TA_NEXT,	/* a procedure's request done: ask for its next */
	TA_RETRY,	/* transient: busy, failing, garbled; ask again */
	TA_REFUSED,	/* not as it is asked (a mapping, a bad request;
			 * a probe: a node of another engine or version) */
	TA_AUTH		/* our credentials were refused: permanent */
};

/* a barrier of several requests, stepped through by the module */
enum proc_kind {
	PROC_CLEAR = 1,	/* every document of an index (or a glob of
			 * them), or those whose field has a value, at
			 * or below a truncate's version */
	PROC_CASCADE	/* the children of a join parent, deleted at the
			 * parent delete's version */
};

struct target_proc {
	enum proc_kind kind;
	const char *index;	/* plain: the index name or glob */
	struct jspan field, value;	/* clear: raw JSON, p NULL: all */
	struct jspan children;	/* cascade: the children's relations,
				 * a raw JSON array of strings */
	const char *parent;	/* cascade: the parent's id, plain */
	struct jspan parent_id;	/* and as a raw JSON string */
	uint64_t version;	/* the deletes' version: the truncate's, the
				 * parent delete's */
	int	 gone;		/* the index was not there: nothing done */
	/* the module's */
	int	 step;
	struct sbuf path, body, query, scroll;
	int	 npage;		/* deletes in the page being sent; a
				 * write procedure: entries of its task */
	/* a target whose writes are tasks (TCAP_ASYNC_TASKS): the task
	 * waited for, where the entries of the next run begin, how many
	 * are done; and a delay the caller waits before the next request
	 * (0: none), set by an answer that found a task still running */
	uint64_t task;
	int	 task_open;
	size_t	 at, next_at;
	int	 done;
	long	 poll_ms;
	/* a write procedure's own memory (the module's): what it planned
	 * for the body, kept until the procedure ends */
	struct sbuf plan;
	/* a write procedure: every request that writes is answered, what
	 * is left only asks about them (set by the module). A target whose
	 * writes are tasks applies one index's tasks in the order they were
	 * sent, so another procedure may start writing behind this one */
	int	 sent_all;
	/* after an answer that wrote a page of deletes: its items and
	 * bytes, for the caller's counters (it zeroes page_done); a write
	 * procedure may keep its verdicts here until its last answer
	 * (target_proc_reset frees them) */
	int	 page_done;
	size_t	 page_bytes;
	struct item_result *items;
	/* the documents its deletes removed, and those they left because
	 * they are newer than its version, for the log */
	uint64_t deleted, newer;
};

/* which part of an index name a text is (index_name) */
enum target_name_part {
	TNAME_WHOLE,	/* all of it: a literal index, or a rendered one */
	TNAME_HEAD,	/* a template's literal text at its start */
	TNAME_INSIDE	/* a template's literal text after a placeholder */
};

/* what a column's values need of an index field, for a mapping file
 * written before the first document (init --mappings): the target names
 * the type */
enum target_field_kind {
	TF_KEYWORD,	/* the text whole and exact: times, enums, decimals
			 * kept digit for digit */
	TF_TEXT,	/* words searched, the whole text kept beside them */
	TF_BOOLEAN,
	TF_BYTE,
	TF_SHORT,
	TF_INTEGER,
	TF_LONG,
	TF_UNSIGNED_LONG,
	TF_FLOAT,
	TF_DOUBLE,
	TF_SCALED,	/* a decimal kept as value * factor in 64 bits */
	TF_DATE,	/* to the millisecond */
	TF_DATE_NANOS,	/* a finer fraction */
	TF_OBJECT,	/* JSON whose members become fields */
	TF_FLAT,	/* JSON kept as one field: no field per member */
	TF_BINARY	/* base64 */
};
struct target_field {
	const char *name;
	enum target_field_kind kind;
	long long factor;	/* TF_SCALED: 10^scale */
};

/* a blocking connection to the target, for ckpt */
struct target_conn {
	const struct target_module *mod;
	struct http_client http;
	int	 state_ready;	/* the module's: its state store exists */
	const char *state_dir;	/* target.state_dir, for a target that
				 * keeps its state in files (NULL: none) */
};

/* what a write to an index name would meet (index_state) */
struct target_index_state {
	int	 exists;	/* an index or an alias has the name */
	int	 alias;		/* it is an alias */
	int	 nindices;	/* an alias: the indices it names */
	int	 write_index;	/* an alias: one of them takes its writes */
	int	 closed;	/* a closed index */
	char	 blocked[64];	/* the setting that blocks writes, or "" */
};

struct target_ops {
	/* the configuration's questions, pure. Is text (or the part of a
	 * name it is) a valid index name here: 0, or -1 with why ("must be
	 * lowercase"). The body the index of section s is created with,
	 * into *body (NULL: the target's defaults; the caller frees it):
	 * from its mapping file's JSON (mapping, len) when it has one, else
	 * what the section itself needs (a join parent's relations); -1 with
	 * why when the file cannot be one, or contradicts the names the
	 * section's documents carry */
	int	(*index_name)(const char *text, enum target_name_part,
		    char *why, size_t whylen);
	int	(*index_body)(const struct sync_section *s,
		    const char *mapping, size_t len, char **body, char *why,
		    size_t whylen);
	/* a section's mapping file for these fields, appended to out (what
	 * index_body reads back); NULL: the target takes no mapping file */
	void	(*mapping_file)(const struct target_field *, int n,
		    struct sbuf *out);

	/* the node: is it there, and what is it (into node, for the
	 * log); TA_OK, TA_RETRY or TA_AUTH with why, TA_REFUSED when it
	 * is not the engine or a major version the module serves */
	void	(*probe_call)(struct http_call *);
	enum target_answer (*probe_answer)(long status, const struct sbuf *resp,
		    char *node, size_t nodelen, char *why, size_t whylen);
	/* "type: reason" of an error answer, else an excerpt of it */
	void	(*error_text)(const char *body, size_t len, char *out,
		    size_t outlen);

	/* an index created with body (NULL: the target's defaults); path is
	 * the caller's buffer the call points into. TA_OK created, TA_EXISTS,
	 * TA_RETRY, TA_REFUSED or TA_AUTH, the target's words in why */
	void	(*create_call)(const char *index, const char *body,
		    struct sbuf *path, struct http_call *);
	enum target_answer (*create_answer)(long status,
		    const struct sbuf *resp, char *why, size_t whylen);

	/* a write's entry appended to arena; -1 (err) when the target
	 * cannot take it */
	int	(*encode)(struct sbuf *arena, const struct target_write *,
		    struct target_entry *, struct p2o_err *);
	/* the request of a body of entries */
	void	(*bulk_call)(const char *body, size_t len, struct http_call *);
	/* its answer for nsent entries: TA_OK with items[] filled, else
	 * TA_RETRY, TA_REFUSED or TA_AUTH with why. Pure. */
	enum target_answer (*bulk_answer)(long status, const char *body,
		    size_t len, int nsent, struct item_result *items,
		    char *why, size_t whylen);

	/* a target whose writes are tasks (TCAP_ASYNC_TASKS, bulk_call and
	 * bulk_answer NULL): the writes of a body of entries as a procedure
	 * (the caller resets proc before the first call and keeps body
	 * unchanged until the end), its next request, and what its answer
	 * means: TA_NEXT go on (after proc->poll_ms), TA_OK done with
	 * items[] of the nsent entries filled, else TA_RETRY, TA_REFUSED or
	 * TA_AUTH with why (the next call goes on where it stopped). Only
	 * the answer that returns TA_OK writes items[], all of them at once,
	 * so the caller may lend each answer the same array rather than keep
	 * one per procedure under way (the writer keeps dozens). A task
	 * is done only when it succeeded. The module may send several tasks
	 * before it asks about any, and may write a document once for
	 * several entries of it (its last state): an entry whose write a
	 * later one replaced gets that one's verdict. Once it set sent_all
	 * it sends nothing that writes: what must be written again is an
	 * item to retry (ITEM_RETRY), left to the caller. */
	void	(*write_call)(struct target_proc *, const char *body,
		    size_t len, struct http_call *);
	enum target_answer (*write_answer)(struct target_proc *, long status,
		    const struct sbuf *resp, const char *body, size_t len,
		    int nsent, struct item_result *items, char *why,
		    size_t whylen);

	/* stored documents read back (TOAST completion): the request for n
	 * documents into body, and its answer: found[i] the stored
	 * document (p NULL: none); TA_OK, TA_RETRY or TA_AUTH */
	void	(*read_call)(const struct docref *refs, int n,
		    struct sbuf *body, struct http_call *);
	enum target_answer (*read_answer)(long status, const struct sbuf *resp,
		    int n, struct jspan *found, char *why, size_t whylen);

	/* a barrier: the next request of proc, and what its answer means:
	 * TA_OK the procedure is done, TA_NEXT it goes on, TA_RETRY /
	 * TA_REFUSED / TA_AUTH with why */
	void	(*proc_call)(struct target_proc *, struct http_call *);
	enum target_answer (*proc_answer)(struct target_proc *, long status,
		    const struct sbuf *resp, char *why, size_t whylen);

	/* state documents, blocking: key names the document; a stored
	 * document's object into doc (found 0: none); a write with version
	 * 0 is plain, else it never replaces a higher version (conflict 1
	 * when the target holds one). 0 or -1 with err */
	int	(*state_get)(struct target_conn *, const char *key,
		    struct sbuf *doc, int *found, struct p2o_err *);
	int	(*state_put)(struct target_conn *, const char *key,
		    const char *body, size_t len, uint64_t version,
		    int *conflict, struct p2o_err *);
	/* the same for many documents at once, in as few requests as the
	 * target allows (a load plan reads and writes one per section):
	 * docs[i] and found[i] for keys[i]; plain writes of bodies[i] under
	 * keys[i], done when 0 is returned. NULL: one state_get / state_put
	 * per document */
	int	(*state_get_many)(struct target_conn *, const char *const *keys,
		    int n, struct sbuf *docs, int *found, struct p2o_err *);
	int	(*state_put_many)(struct target_conn *, const char *const *keys,
		    const struct sbuf *bodies, int n, struct p2o_err *);

	/* an index, blocking: 1 exists / 0 not / -1; creation as
	 * create_call (*created 0 when it was there) */
	int	(*index_exists)(struct target_conn *, const char *index,
		    struct p2o_err *);
	int	(*index_create)(struct target_conn *, const char *index,
		    const char *body, int *created, struct p2o_err *);
	/* the settings a load suspends: what the index has of its own, as
	 * an object the caller stores and hands back to restore (found 0
	 * when the index does not exist); suspend; restore */
	int	(*load_settings)(struct target_conn *, const char *index,
		    struct sbuf *orig, int *found, struct p2o_err *);
	int	(*load_suspend)(struct target_conn *, const char *index,
		    struct p2o_err *);
	int	(*load_restore)(struct target_conn *, const char *index,
		    struct jspan orig, struct p2o_err *);

	/* the place state documents are kept, made ready before the first
	 * write would (pg2osync bootstrap): *created 0 when it was there */
	int	(*state_prepare)(struct target_conn *, int *created,
		    struct p2o_err *);
	/*
	 * Looks that change nothing, for the operator's commands (pg2osync
	 * validate): an ingest pipeline exists (1, 0, -1); what a write to a
	 * name would meet; the fields an existing index maps otherwise than
	 * a creation body does (each described in report, *n of them; no
	 * index is no conflict). 0 or -1 with err.
	 */
	int	(*pipeline_exists)(struct target_conn *, const char *name,
		    struct p2o_err *);
	int	(*index_state)(struct target_conn *, const char *name,
		    struct target_index_state *, struct p2o_err *);
	int	(*mapping_conflicts)(struct target_conn *, const char *index,
		    const char *body, struct sbuf *report, int *n,
		    struct p2o_err *);

	/* read-your-writes, blocking: the indices (a comma list, globs
	 * allowed; none matching is no error) refreshed, so that a search
	 * made after it sees every write accepted before it. 0 or -1 */
	int	(*refresh)(struct target_conn *, const char *indices,
		    struct p2o_err *);

	/*
	 * A rebuild (pg2osync reindex, switch-alias), blocking; NULL for a
	 * target that offers none. The documents an index holds, refreshed
	 * first. With TCAP_ALIASES: the name readers use (alias) made to
	 * resolve to index alone, atomically - it never resolves to nothing
	 * or to both in between - with what it resolved to before into was
	 * (a comma list, "" when it did not exist). With TCAP_INDEX_SWAP:
	 * two existing indexes exchange their documents and settings
	 * atomically, waited for to its end (a missing one fails, 69). An
	 * index deleted (one name, never a pattern; a missing one is no
	 * error). 0 or -1 with err.
	 */
	int	(*doc_count)(struct target_conn *, const char *index,
		    uint64_t *n, struct p2o_err *);
	int	(*alias_switch)(struct target_conn *, const char *alias,
		    const char *index, struct sbuf *was, struct p2o_err *);
	int	(*index_swap)(struct target_conn *, const char *a,
		    const char *b, struct p2o_err *);
	int	(*index_delete)(struct target_conn *, const char *index,
		    struct p2o_err *);
};

/*
 * The quarantine of refused documents, a table of its own: a target
 * without one (target_module.rejects NULL) cannot take
 * engine.on_permanent_rejection: quarantine. The data path (the writer),
 * pure: the store made ready (its answer is create_answer's); the count
 * of records it holds for a stream (TA_OK with *n, 0 when there is no
 * store yet; TA_RETRY or TA_AUTH with why; body is the caller's buffer
 * the call points into); n records written durably and visible to the
 * next count (TA_OK when every one is stored, else TA_RETRY, TA_REFUSED
 * or TA_AUTH with why). Blocking, for pg2osync rejects: up to limit
 * records of a stream, oldest version first, and their total (into set,
 * which the caller releases with target_rejects_release); the records of
 * n keys removed. 0 or -1 with err.
 */
struct target_rejects_ops {
	void	(*prepare_call)(struct sbuf *path, struct http_call *);
	void	(*count_call)(const char *stream, struct sbuf *body,
		    struct http_call *);
	enum target_answer (*count_answer)(long status,
		    const struct sbuf *resp, uint64_t *n, char *why,
		    size_t whylen);
	void	(*call)(const struct target_reject *, int n,
		    struct sbuf *body, struct http_call *);
	enum target_answer (*answer)(long status, const struct sbuf *resp,
		    int n, char *why, size_t whylen);
	int	(*read)(struct target_conn *, const char *stream, int limit,
		    struct target_rejects *set, struct p2o_err *);
	int	(*clear)(struct target_conn *, char *const *keys, int n,
		    struct p2o_err *);
};

/* one stored document, as a scan hands it over (valid during the call) */
struct target_doc {
	struct jspan index, id;	/* raw JSON strings */
	struct jspan routing;	/* raw JSON string, p NULL: none */
	struct jspan source;	/* the document as stored */
};

/*
 * Reading every stored document back, for pg2osync verify (NULL: the
 * target cannot, and verify refuses to run). Blocking: every document of
 * the indices a name or glob matches (none when none exists), each to fn
 * once, which returns 0 or -1 to stop; *requests counts the requests
 * made. 0, or -1 with err (fn's -1 with err set by fn). numbers_by_value:
 * the target gives a number back as the value it parsed (12.50 as 12.5,
 * digits past a double's lost), not as the text it was sent, so a
 * comparison of documents compares numbers by value.
 */
struct target_scan_ops {
	int	(*scan)(struct target_conn *, const char *index,
		    int (*fn)(void *arg, const struct target_doc *),
		    void *arg, uint64_t *requests, struct p2o_err *);
	int	 numbers_by_value;
};

struct target_module {
	const char *name;		/* for messages: "opensearch" */
	const char *state_place;	/* where state_put keeps documents, for
					 * messages */
	unsigned caps;			/* enum target_cap */
	const struct target_ops *ops;
	const struct target_rejects_ops *rejects;	/* NULL: none */
	const char *rejects_place;	/* where they are kept, for messages */
	const struct target_scan_ops *scan;	/* NULL: none */
	/* how target.api_key_env's key is presented: "Authorization:
	 * <scheme> <key>"; NULL: "ApiKey" */
	const char *api_key_scheme;
	/* a target that is no HTTP server: its requests are answered
	 * in-process by this handler (lib/http.h), its url checked by
	 * url_check (0, or -1 with why; NULL: http:// or https://), and its
	 * mapping file is text of its own (what mapping_form names, for
	 * messages) rather than a JSON object. NULL: HTTP */
	const struct http_local *transport;
	int	(*url_check)(const char *url, char *why, size_t whylen);
	const char *mapping_form;
};

/* writes in one request of a blocking write, at most */
#define TARGET_WRITE_CHUNK	500

/*
 * How a blocking write retries what failed for a while (the target
 * unreachable, a 429 or 5xx, items it asks for again): the first wait,
 * doubling up to 30 s with jitter, and the limits of one request's
 * attempts and of the time spent on it from its first failure (0: none;
 * a command someone waits at sets one).
 */
struct target_retry {
	long long first_ms;
	int	 max;
	long long max_elapsed_ms;
};

/*
 * The steps of a blocking write, pure (target_write_all makes the
 * requests; a test answers them): the writes w[0..n) are sent in order,
 * TARGET_WRITE_CHUNK a request, until each has its verdict in items[i] -
 * through the module's bulk request, or its write procedure where writes
 * are tasks (write_call), which answers only once its tasks succeeded.
 * As on the writer's data path: a request that failed is asked again as
 * it was (a procedure where it stands); items the target asks for again
 * (ITEM_RETRY) are sent again, behind a backoff, except one a later
 * write of the same document in the set has already settled
 * (ITEM_CONFLICT, "superseded"); any other verdict is final.
 */
struct target_batch {
	const struct target_module *mod;
	const struct target_write *w;
	int	 n;
	struct item_result *items;	/* the caller's, n of them */
	unsigned char *final;		/* items[i] is write i's verdict */
	/* the request under way: the writes it carries, in order, and what
	 * the module read of them */
	int	*sent;
	int	 nsent;
	struct item_result *got;
	struct sbuf body;
	struct target_proc proc;
	int	 tasking;	/* body is a procedure's, not ended */
	int	 item_retry;	/* the last TA_RETRY was items', not the
				 * request's */
	long	 wait_ms;	/* after TA_NEXT: wait this long first */
};

/* target.c */
/* the module of that name; NULL: the default target. NULL if unknown */
const struct target_module *target_module_find(const char *name);
int	target_can(const struct target_module *, unsigned caps);
/* a module's reading of a status: TA_OK (2xx), TA_AUTH (401, 403),
 * TA_RETRY (408, 429, 5xx, none), else TA_REFUSED */
enum target_answer target_status_class(long status);
/* an answer's body as one validated JSON object, surrounding white space
 * trimmed: 0, or -1 when it is not one (or there is none) */
int	target_body_object(const char *body, size_t len, struct jspan *obj);
/* a value of an answer as text for a message: a string's text, else its
 * JSON, cut to cap */
void	target_copy_cut(struct jspan s, char *buf, size_t cap);
/* the version v a node of product answered, for target.flavor flavor:
 * TA_OK and node "<flavor> <version>" when its major is major, else
 * TA_REFUSED with why */
enum target_answer target_node_major(struct jspan v, int major,
	    const char *flavor, const char *product, char *node,
	    size_t nodelen, char *why, size_t whylen);
/* a name of letters, digits and the punctuation punct, at most max
 * bytes, not empty when whole: 0, or -1 with why ("must hold only letters,
 * digits, " what) */
int	target_name_chars(const char *text, enum target_name_part part,
	    size_t max, const char *punct, const char *what, char *why,
	    size_t whylen);
/* s's bytes added to an encoded body, at says where they are */
void	target_span_add(struct sbuf *out, struct jspan s, struct aspan *at);
/* a capability's name for messages ("routing"), "" for none */
const char *target_cap_name(unsigned cap);
/* the credentials and TLS settings of cfg's target, for an http client */
void	target_http_opts(const struct config *, struct http_opts *);
/* a connection for cfg's target: 0, or -1 with err (78 for a url or
 * credentials that cannot be used) */
int	target_conn_open(struct target_conn *, const struct config *,
	    struct p2o_err *);
void	target_conn_release(struct target_conn *);
/* one blocking request: 0 with the status and the body in resp, or -1
 * with err (75: the target could not be reached, 69: its certificate
 * failed the check) */
int	target_request(struct target_conn *, const struct http_call *,
	    struct sbuf *resp, long *status, struct p2o_err *);
/* which engine the node at cf's target url is, by each module's probe in
 * turn (with cf's credentials, if any): 0 with *found (NULL: none said
 * so, why says what was seen) and the node's description, or -1 with
 * err (75: unreachable) */
int	target_identify(const struct config *, const struct target_module **,
	    char *node, size_t nodelen, char *why, size_t whylen,
	    struct p2o_err *);
void	target_proc_init(struct target_proc *);
/* drop what the last procedure held, keep the buffers */
void	target_proc_reset(struct target_proc *);
void	target_proc_release(struct target_proc *);
void	target_rejects_release(struct target_rejects *);
/* p, a heap block set now owns (freed by target_rejects_release) */
char	*target_rejects_keep(struct target_rejects *set, char *p);
/* the record src, a store's JSON of it, appended to set under key (a
 * copy set owns): the record (its spans point into src, which the set is
 * to keep), or NULL when src is not one of ours */
struct target_reject *target_rejects_add(struct target_rejects *set,
	    struct jspan src, const char *key);
/* the rest of a record's JSON line after the store's own first members:
 * ,"index":..,"id":.. up to the document and }\n (a stream of NULL as
 * nostream, NULL: none) - what target_rejects_add reads back */
void	target_reject_put(struct sbuf *b, const struct target_reject *r,
	    const char *nostream);
/* obj's string member name as a copy set owns, NULL when none */
const char *target_rejects_str(struct target_rejects *set, struct jspan obj,
	    const char *name);
/* the next wait of a retry: *cur_ms doubled from first_ms (100 when 0)
 * up to 30 s, the wait somewhere in its upper half (the writer's and the
 * verbs' writes alike) */
long long target_backoff(long long *cur_ms, long long first_ms);
void	target_batch_init(struct target_batch *, const struct target_module *,
	    const struct target_write *w, int n, struct item_result *items);
void	target_batch_release(struct target_batch *);
/* the next request: 1 with call set, 0 when every write has its verdict,
 * -1 with err (a write the module cannot encode; a target without a
 * write request) */
int	target_batch_next(struct target_batch *, struct http_call *,
	    struct p2o_err *);
/* what the answer to it means: TA_NEXT go on (after wait_ms); TA_OK its
 * writes read; TA_RETRY ask again (item_retry: only some of its writes,
 * named in why), TA_REFUSED or TA_AUTH with why */
enum target_answer target_batch_answer(struct target_batch *, long status,
	    const struct sbuf *resp, char *why, size_t whylen);
/* the retries of the last request's items ran out: they keep their
 * ITEM_RETRY verdict, and the writes after them go on */
void	target_batch_give_up(struct target_batch *);
/*
 * The writes w[0..n) sent through c and waited for until each is durable
 * or has its final verdict in items[i] (ITEM_RETRY: still not taken when
 * retry's limits ran out), as target_batch says; *requests counts the
 * requests made (NULL: not counted). 0, or -1 with err: 75 a request
 * that kept failing past the limits, 69 one the target refuses (or its
 * certificate), 77 our credentials refused, or encode's error. Blocks,
 * for the operator's commands; the writer has its own loop.
 */
int	target_write_all(struct target_conn *, const struct target_write *w,
	    int n, struct item_result *items, const struct target_retry *,
	    uint64_t *requests, struct p2o_err *);

#endif
