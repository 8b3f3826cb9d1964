/*
 * msg.h - what frames say (framing.md §4-6): the one owner of every frame
 * kind, every member name and the table of counter names. lib/frame.c owns
 * the bytes around a frame; this module owns what is inside it.
 *
 * Four families:
 *   - control frames (hello, durable, marked, ack, confirm, stats and the
 *     checkpoint requests) are small: each has a typed encoder msg_put_*
 *     that appends a complete frame and a typed decoder msg_read_*;
 *   - event frames (row, commit, truncate, pos, drift, mark) and operation
 *     frames (index, delete, clear, cascade, fill) are built by streaming
 *     builders, so a
 *     capture writes values straight into the frame and the shaper copies
 *     documents without parsing them into a tree;
 *   - counters: enum msg_counter and msg_counters[], read by every stage
 *     that reports and by the supervisor's metrics renderer, so a counter
 *     name exists exactly once;
 *   - the gap, which a tap writes into its file where it dropped frames,
 *     and which a replay of that file reports and stops at.
 *
 * Decoders return 0, or -1 with a message in err naming what is wrong; a
 * decoded string is a heap copy (release the struct) and a decoded span
 * points into the frame and is valid as long as the frame is.
 */
#ifndef MSG_H
#define MSG_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "jscan.h"
#include "sbuf.h"

enum msg_kind {
	MSG_UNKNOWN = 0,
	/* events: capture-* and loader -> shaper (§4) */
	MSG_ROW, MSG_COMMIT, MSG_TRUNCATE, MSG_POS, MSG_DRIFT, MSG_MARK,
	/* operations: shaper -> writer (§5); commit, pos, mark pass through */
	MSG_INDEX, MSG_DELETE, MSG_CLEAR, MSG_CASCADE, MSG_FILL,
	/* control channel, fd 3 (§6) */
	MSG_HELLO, MSG_DURABLE, MSG_MARKED, MSG_ACK, MSG_MARK_CONFIRM, MSG_STATS,
	MSG_LOAD,
	/* supervisor <-> ckpt serve (§6) */
	MSG_GET, MSG_CHECKPOINT, MSG_PUT, MSG_STORED, MSG_SWEPT,
	/* in a tap's file only (§9): frames the copy dropped here */
	MSG_GAP,
	MSG_NKINDS
};

/* the kind of a frame: one lookup of its "k" */
enum msg_kind msg_kind(const struct frame *);
/* the same for a "k" value span (a JSON string) */
enum msg_kind msg_kind_of(struct jspan kind);
/* "row", "commit", ... ("?" for MSG_UNKNOWN) */
const char *msg_kind_name(enum msg_kind);
/* strlen(msg_kind_name(k)), from a table (0 for MSG_UNKNOWN) */
size_t	msg_kind_len(enum msg_kind);

/* ---- control frames ---- */

/* hello: the first frame a tool sends on fd 3 */
struct msg_hello {
	char	 tool[32];
	int	 proto;
	long	 pid;
};
void	msg_put_hello(struct sbuf *out, const char *tool);
int	msg_read_hello(const struct frame *, struct msg_hello *, char *err,
	    size_t errlen);

/*
 * A position: commit and pos (events), durable (writer -> supervisor),
 * put and checkpoint (supervisor <-> ckpt). text is the source's own
 * rendering of pos (PostgreSQL "0/16B3748", MySQL "file:pos;gtid=..."), of
 * any length, parsed only by the source's tools.
 */
struct msg_pos {
	int	 present;	/* checkpoint: 0 when none is stored */
	uint64_t pos;
	char	*text;		/* heap; NULL when the frame had none */
	long long ts;		/* commit, durable: source commit time, µs
				 * since the epoch; 0 when absent */
	long long sent, at;	/* durable: µs since the epoch; 0 absent */
	long long rx;		/* commit, durable: when the capture read the
				 * commit from the source, µs; 0 absent */
	long long tx;		/* commit, durable: when the source sent it
				 * (a walsender's send time), µs; 0 absent */
	long long in;		/* durable: when the writer read the commit
				 * frame, µs; 0 absent */
	uint64_t n;		/* commit: rows and truncates in it */
	/* commit, durable: the batch's trace as a W3C traceparent
	 * (lib/trace.h), "" when absent; a malformed one is dropped on
	 * reading, never an error */
	char	 trace[56];
};
void	msg_pos_release(struct msg_pos *);
/* a commit's or durable's traceparent into buf (TRACE_PARENT_LEN bytes),
 * "" when it has none or a malformed one */
void	msg_get_trace(struct jspan obj, char *buf);

void	msg_put_durable(struct sbuf *out, const struct msg_pos *);
void	msg_put_ack(struct sbuf *out, uint64_t pos);
/* forget: the position is gone, every table is loaded again and the
 * checkpoint answered as absent (a new stream) */
void	msg_put_get(struct sbuf *out, int forget);
int	msg_get_forget(const struct frame *);
/* p->present == 0: "no checkpoint stored" */
void	msg_put_checkpoint(struct sbuf *out, const struct msg_pos *);
void	msg_put_put(struct sbuf *out, uint64_t pos, const char *text);
void	msg_put_stored(struct sbuf *out, uint64_t pos);
/* commit, pos, durable, ack, checkpoint, put, stored: the members each
 * kind has. "pos" is required except in a checkpoint, where its absence
 * means none is stored; a "text" must be a non-empty string. */
int	msg_read_pos(const struct frame *, struct msg_pos *, char *err,
	    size_t errlen);

/*
 * gap: a tap's file is missing frames here (framing.md §9): the copy fell
 * behind and dropped them rather than hold the pipeline up. Never on a
 * live pipe. frames and bytes say how much is missing (bytes: the frames'
 * length prefixes and bodies).
 */
struct msg_gap {
	uint64_t frames;
	uint64_t bytes;
};
void	msg_put_gap(struct sbuf *out, const struct msg_gap *);
int	msg_read_gap(const struct frame *, struct msg_gap *, char *err,
	    size_t errlen);
/* what a replay says when it reaches one, into buf */
const char *msg_gap_describe(const struct msg_gap *, char *buf, size_t len);

/*
 * A load mark (§4 mark, §6 marked / confirm). id is opaque to every stage
 * but the loader and the supervisor; table names the table the wave read;
 * progress is the loader's own record of how far the table is, an object
 * the supervisor stores without reading; done says this mark ends the
 * table's load.
 */
struct msg_mark {
	char	*id;
	char	*table;
	struct jspan progress;	/* into the frame; p == NULL when absent */
	int	 done;
};
void	msg_mark_release(struct msg_mark *);
/* mark (event) and marked (control) carry the same members; progress is
 * copied as the raw JSON text it is (NULL: none) */
void	msg_put_mark(struct sbuf *out, enum msg_kind kind, const char *id,
	    const char *table, struct jspan progress, int done);
void	msg_put_confirm(struct sbuf *out, const char *id);
/* mark, marked, confirm (confirm has only id) */
int	msg_read_mark(const struct frame *, struct msg_mark *, char *err,
	    size_t errlen);
/* the marked frame a mark event becomes once it is durable: the same
 * members under another kind, copied from the mark's bytes */
void	msg_put_marked_from(struct sbuf *out, struct jspan mark_obj);

/*
 * load (supervisor -> loader, once, after the loader's hello): the tables
 * to load, in order, each with the progress the last run stored for it
 * (absent: from the start). The progress object is the loader's own and
 * comes back to it as it was stored. The stored checkpoint rides along
 * (absent: none): a source whose versions carry more than a log position
 * derives from it what the capture does.
 */
void	msg_load_begin(struct sbuf *j, const struct msg_pos *checkpoint);
void	msg_load_table(struct sbuf *j, const char *table, struct jspan progress);
/* sweep: the stream was started anew and the documents no row renders
 * any more are still to be deleted once every table is loaded */
void	msg_load_end(struct sbuf *out, struct sbuf *j, int sweep);
int	msg_load_sweep(const struct frame *);
/* the supervisor to ckpt: the sweep after a reload is done */
void	msg_put_swept(struct sbuf *out);
/* the frame's "tables" array (iterate it with msg_load_next) and its
 * checkpoint (cp->present 0 when none; release it) */
int	msg_read_load(const struct frame *, struct jspan *tables,
	    struct msg_pos *cp, char *err, size_t errlen);
/* the next table of the array: 1 with *table a heap copy and *progress a
 * span (p NULL when absent), 0 at the end, -1 malformed (err set) */
int	msg_load_next(struct jiter *, char **table, struct jspan *progress,
	    char *err, size_t errlen);

/* ---- event frames: streaming builders ----
 *
 * Build one frame's JSON in a scratch buffer j, then msg_end() frames it
 * into out. Between a *_begin and msg_end, members are appended in any
 * order the builders allow; a builder that opens a container (an image,
 * a list) is closed by its *_end before the next member.
 */

/* A frame built in out itself, not in j: its bytes are written once, not
 * once into j and again into out (a wide document is kilobytes). A
 * *_begin_in leaves room for the length prefix and the builders then
 * append to out; msg_end_in closes the object and writes the prefix. Only
 * what a builder appends may come between; a caller that gives up on the
 * frame truncates out to its length before the *_begin_in. The room is
 * the last frame's prefix: one of another size moves once. */
struct msg_in {
	size_t	 at;	/* where the frame's prefix starts in out */
	unsigned room;	/* bytes left for the prefix (0: not yet known) */
};

enum msg_list {
	ML_KEY,		/* row: the key column names, in key order */
	ML_TOAST,	/* row, index op: unchanged out-of-line columns */
	ML_RELS,	/* truncate: the truncated tables */
	ML_ADDED, ML_REMOVED, ML_RETYPED,	/* drift */
	ML_CHILDREN	/* cascade: the child relations of a join parent */
};
enum msg_image { MI_NEW, MI_OLD };

/* row: op is 'i', 'u', 'd' or 'c' (a copy row: no position, ever) */
void	msg_row_begin(struct sbuf *j, char op, const char *rel, size_t rellen,
	    uint64_t v);
void	msg_row_begin_in(struct sbuf *out, struct msg_in *, char op,
	    const char *rel, size_t rellen, uint64_t v);
void	msg_truncate_begin(struct sbuf *j, uint64_t v);
void	msg_drift_begin(struct sbuf *j, const char *rel, size_t rellen);
/* a list of strings: begin, one msg_list_item per name, end */
void	msg_list_begin(struct sbuf *j, enum msg_list);
void	msg_list_item(struct sbuf *j, const char *s, size_t n);
void	msg_list_end(struct sbuf *j);
/* a row image: begin, then per column msg_column and its JSON value
 * appended by the caller, then end */
void	msg_image_begin(struct sbuf *j, enum msg_image);
void	msg_column(struct sbuf *j, const char *name, size_t n);
void	msg_image_end(struct sbuf *j);
/* close the object in j, append it to out as a frame, reset j */
void	msg_end(struct sbuf *out, struct sbuf *j);
void	msg_end_in(struct sbuf *out, struct msg_in *);
/* give up on the frame begun in out: out as before its *_begin_in */
void	msg_abort_in(struct sbuf *out, const struct msg_in *);

/*
 * The bytes every row frame of one table shares, built once by the
 * builders above: a load writes millions of rows of one table, and
 * spelling its name, key and column names again for each was a third of
 * the loader's work on narrow rows. A row is then msg_rowtpl_begin,
 * per column msg_rowtpl_column and the value, msg_image_end, msg_end:
 * the same bytes as msg_row_begin, msg_list_*(ML_KEY), msg_image_begin(MI_NEW)
 * and msg_column.
 */
struct msg_rowtpl {
	struct sbuf head;	/* up to the version's digits */
	struct sbuf mid;	/* after them, up to the first column */
	struct sbuf names;	/* the columns' names, each as msg_column
				 * writes it after a value */
	size_t	*off;		/* column i: names.buf[off[i] .. off[i + 1]) */
	int	 n;
};
void	msg_rowtpl_init(struct msg_rowtpl *, char op, const char *rel,
	    const char *const *keys, int nkeys, const char *const *cols,
	    int ncols);
void	msg_rowtpl_release(struct msg_rowtpl *);
void	msg_rowtpl_begin(struct sbuf *j, const struct msg_rowtpl *,
	    uint64_t v);
void	msg_rowtpl_begin_in(struct sbuf *out, struct msg_in *,
	    const struct msg_rowtpl *, uint64_t v);
/* column i of the names given to msg_rowtpl_init */
void	msg_rowtpl_column(struct sbuf *j, const struct msg_rowtpl *, int i);

/* commit and pos are complete frames: no builder needed */
/* the latency breakdown: tx_us when the source sent the commit, rx_us when
 * the capture read it (0: unknown, left out); trace the batch's
 * traceparent (NULL: untraced, left out) */
void	msg_put_commit(struct sbuf *out, uint64_t pos, const char *text,
	    long long ts_us, uint64_t n, long long tx_us, long long rx_us,
	    const char *trace);
void	msg_put_pos(struct sbuf *out, uint64_t pos, const char *text);

/* a row event, its members as spans into the frame: from the members the
 * frame reader noted (top), or else picked in one pass over obj */
struct msg_row {
	char	 op;		/* 'i', 'u', 'd', 'c' */
	struct jspan rel;	/* JSON string */
	uint64_t v;
	struct jspan v_raw;	/* the number as it arrived */
	struct jspan key;	/* array of strings */
	struct jspan new, old, toast;	/* p == NULL when absent */
};
int	msg_read_row(struct jspan obj, const struct jtop *top,
	    struct msg_row *, char *err, size_t errlen);
/* truncate: rels (array of strings) and v */
int	msg_read_truncate(struct jspan obj, struct jspan *rels, uint64_t *v,
	    char *err, size_t errlen);

/* ---- operation frames (shaper -> writer) ---- */

/* index, delete, clear, cascade or fill on index; id is absent (NULL) for
 * clear; a cascade's id is the deleted parent's, a fill's the document it
 * fills */
void	msg_op_begin(struct sbuf *j, enum msg_kind kind, const char *index,
	    size_t ilen, const char *id, size_t idlen, uint64_t v);
/* the same, in out itself (msg_end_in closes it) */
void	msg_op_begin_in(struct sbuf *out, struct msg_in *, enum msg_kind kind,
	    const char *index, size_t ilen, const char *id, size_t idlen,
	    uint64_t v);
/* msg_op_begin_in's bytes up to the id, kept for the last kind and index
 * they were written for: a load writes one table's documents into one
 * index, and escaping its name again for each was a third of the
 * operation's head. Zeroed to begin with; msg_ophead_release frees it. */
struct msg_ophead {
	struct sbuf text;	/* {"k":"<kind>","index":"<index>" */
	struct sbuf index;	/* the index, as given */
	enum msg_kind kind;	/* MSG_UNKNOWN: none yet */
};
/* msg_op_begin_in, the same bytes, its head from h when it matches */
void	msg_op_begin_memo(struct sbuf *out, struct msg_in *,
	    struct msg_ophead *h, enum msg_kind kind, const char *index,
	    size_t ilen, const char *id, size_t idlen, uint64_t v);
void	msg_ophead_release(struct msg_ophead *);
void	msg_op_routing(struct sbuf *j, const char *s, size_t n);
void	msg_op_pipeline(struct sbuf *j, const char *s, size_t n);
/* the source table of an index op whose document needs completion, for
 * the per-table count of documents that could not be completed */
void	msg_op_rel(struct sbuf *j, const char *s, size_t n);
/* with ML_TOAST listed: the id, index or routing to complete from when it
 * is not the op's (the document moved in this update) */
void	msg_op_toast_id(struct sbuf *j, const char *s, size_t n);
void	msg_op_toast_index(struct sbuf *j, const char *s, size_t n);
void	msg_op_toast_routing(struct sbuf *j, const char *s, size_t n);
/* a clear of only the documents whose field holds value (a join's half) */
void	msg_op_clear_term(struct sbuf *j, const char *field, size_t flen,
	    const char *value, size_t vlen);
/* ,"doc": - the document follows, appended by the caller, and is the
 * last member (framing.md §5): msg_end next */
void	msg_op_doc(struct sbuf *j);

struct msg_op {
	enum msg_kind kind;	/* MSG_INDEX, MSG_DELETE, MSG_CLEAR,
				 * MSG_CASCADE, MSG_FILL */
	struct jspan index, id, routing, pipeline, rel;	/* JSON strings */
	uint64_t v;
	struct jspan toast, toast_id, toast_index, toast_routing; /* index;
				 * fill: toast only, never empty */
	struct jspan field, value;	/* clear: p NULL when it clears all */
	struct jspan children;	/* cascade: an array of strings */
	struct jspan doc;	/* index, fill: an object */
};
int	msg_read_op(const struct frame *, struct msg_op *, char *err,
	    size_t errlen);

/* ---- stats and the counter table ---- */

enum msg_counter {
	/* capture-pg, capture-mysql */
	MC_EVENTS_INSERT, MC_EVENTS_UPDATE, MC_EVENTS_DELETE,
	MC_EVENTS_TRUNCATE, MC_COMMITS, MC_RECEIVED_POS, MC_CONFIRMED_POS,
	/* shaper */
	MC_ROWS_IN, MC_OPS_OUT, MC_ROWS_UNMAPPED, MC_DRIFT, MC_COPIES_DROPPED,
	MC_TRUNCATES_SKIPPED, MC_TRANSFORM_UNCONVERTED, MC_LOOKUP_MISSES,
	/* writer */
	MC_DOCS_INDEXED, MC_DOCS_DELETED, MC_BATCHES, MC_BULK_BYTES,
	MC_SINK_ERRORS, MC_VERSION_CONFLICTS, MC_TOAST_COMPLETIONS,
	MC_TOAST_MISSING, MC_CLEARS, MC_CASCADES, MC_INDICES_CREATED,
	MC_WRITER_HALTED, MC_DOC_REFUSALS,
	MC_REJECTED,
	/* loader, per table */
	MC_LOAD_ROWS, MC_LOAD_ROWS_ESTIMATE, MC_LOAD_RANGES_DONE,
	MC_LOAD_RANGES, MC_LOAD_WAL_PAUSED,
	/* capture-pg's slot watch, per replication slot */
	MC_SLOT_RETAINED, MC_SLOT_SAFE_WAL, MC_SLOT_WAL_STATUS, MC_SLOT_ACTIVE,
	/* spans dropped (lib/trace.c), one name per process that exports:
	 * the supervisor's own is set by the supervisor, never reported */
	MC_TRACE_DROPPED_CAPTURE, MC_TRACE_DROPPED_SHAPER,
	MC_TRACE_DROPPED_WRITER, MC_TRACE_DROPPED_SUPERVISOR,
	MC_N
};

struct msg_counter_def {
	const char *name;	/* in a stats frame: "events_insert" */
	const char *tool;	/* who reports it: "capture" (either
				 * capture), "shaper", "writer" */
	const char *metric;	/* "pg2osync_events_total" */
	const char *label;	/* label name, or NULL */
	const char *label_value;	/* a fixed label value ("insert"), or
				 * NULL when the counter is keyed: one value
				 * per key, the key being the label value */
	int	 gauge;		/* a level, not summed across restarts */
	const char *help;
	const char *label2;	/* a keyed counter with two labels: its key
				 * is "<label value>" MSG_KEY_SEP "<label2
				 * value>" */
	int	 whole;		/* a keyed gauge each stats frame carrying it
				 * reports whole: a key it leaves out is gone
				 * (a dropped slot) */
};

/* between the two label values of a two-label counter's key */
#define MSG_KEY_SEP	'\x1f'
extern const struct msg_counter_def msg_counters[MC_N];
/* the counter a stats member name names, or -1 */
int	msg_counter_lookup(struct jspan name);

/*
 * stats: begin, then values, then msg_stats_end. A keyed counter is one member
 * holding an object of key -> value: msg_stats_keyed_begin, one
 * msg_stats_keyed_add per key, msg_stats_keyed_end.
 */
void	msg_stats_begin(struct sbuf *j, const char *tool);
void	msg_stats_add(struct sbuf *j, enum msg_counter, uint64_t v);
void	msg_stats_keyed_begin(struct sbuf *j, enum msg_counter);
void	msg_stats_keyed_add(struct sbuf *j, const char *key, size_t n,
	    uint64_t v);
void	msg_stats_keyed_end(struct sbuf *j);
/* close the counters and the frame, append it to out, reset j */
void	msg_stats_end(struct sbuf *out, struct sbuf *j);
/* the frame's tool and counters object */
int	msg_read_stats(const struct frame *, struct jspan *tool,
	    struct jspan *counters, char *err, size_t errlen);

#endif
