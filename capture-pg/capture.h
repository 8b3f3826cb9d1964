/*
 * capture.h - capture-pg: reads a PostgreSQL logical replication slot
 * (pgoutput) and writes event frames (framing.md §4) on stdout.
 *
 * Modules:
 *   pgoutput.c  pgoutput messages -> event frames (pure: no I/O)
 *   types.c     PostgreSQL type output text -> JSON values; LSN text
 */
#ifndef CAPTURE_H
#define CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "sbuf.h"
#include "lsn.h"

/* pgoutput.c */

struct pgo_column {
	char	*name;
	uint32_t typoid;
	int32_t	 typmod;
	int	 key;		/* part of the key frames carry in "key" */
};

struct pgo_rel {
	uint32_t oid;
	char	*qname;		/* "schema.table" as the source names it */
	char	 ident;		/* replica identity: 'd', 'n', 'f' or 'i' */
	int	 ncols;
	struct pgo_column *cols;
	int	 nkeys;
	int	*keys;		/* column indexes of the key, in key order */
};

struct pgo_type {
	uint32_t oid;
	char	*qname;		/* "schema.type" */
};

/* a primary key the caller read from the catalogue (see pgo_set_key) */
struct pgo_keydef {
	char	*qname;
	int	 ncols;
	char	**cols;
	int	 keyless;	/* rows without a key are accepted (append-only:
				 * filed by their content) */
};

struct pgo_counters {
	uint64_t inserts, updates, deletes, truncates, commits, drift, messages;
};

struct pgo_decoder {
	struct pgo_rel	*rels;
	size_t		 nrels, caprels;
	struct pgo_type	*types;
	size_t		 ntypes, captypes;
	struct pgo_keydef *keydefs;
	size_t		 nkeydefs;

	/* the open transaction, between Begin and Commit */
	int		 in_txn;
	uint64_t	 txn_lsn;	/* Begin's final LSN: every row's "v" */
	int64_t		 txn_ts;	/* commit time, µs since the Unix epoch */
	uint32_t	 txn_xid;
	uint64_t	 txn_n;		/* rows and truncates so far */

	uint64_t	 last_commit;	/* end LSN of the last Commit, 0 before */
	struct pgo_counters n;
	int		 exit_code;	/* with -1: the framing.md §8 exit code */
	char		 err[256];	/* with -1: why, for the log */
	struct sbuf	 json;		/* scratch for one frame's JSON */
};

void	pgo_init(struct pgo_decoder *);
void	pgo_release(struct pgo_decoder *);
/*
 * Decode ONE pgoutput message: the XLogData payload after the 25-byte 'w'
 * header. Appends zero or more frames to out (commit, row, truncate,
 * drift). Returns 0, or -1 with d->err set and d->exit_code =
 * P2O_EXIT_REFUSED (a row for a table without a key) or P2O_EXIT_TEMPFAIL
 * (malformed or unexpected message: a protocol error mid-stream). On -1
 * nothing was appended to out. Only protocol version 1 messages, text
 * tuples: streamed and two-phase messages are refused.
 */
int	pgo_decode(struct pgo_decoder *, const unsigned char *msg, size_t len,
	    struct sbuf *out);
/*
 * With REPLICA IDENTITY FULL pgoutput flags every column as key; if the
 * caller knows the table's primary key (from pg_index), it registers it
 * here, before or after the Relation message arrives, and rows then carry
 * that key. For the default identity or an identity index it only orders
 * the flagged columns, and is ignored unless it names exactly them; a key
 * naming a column the relation lacks is ignored (the key falls back to
 * what pgoutput flagged).
 */
void	pgo_set_key(struct pgo_decoder *, const char *qname,
	    const char *const *cols, int ncols);
/* rows of table qname may come without a key: it is synced append-only,
 * each row filed under the hash of its content; they carry "key": [] */
void	pgo_allow_keyless(struct pgo_decoder *, const char *qname);
/* the cached relation, or NULL; valid until the next pgo_decode */
const struct pgo_rel *pgo_rel_find(const struct pgo_decoder *, uint32_t oid);

/* types.c */

/* microseconds between 1970-01-01 and PostgreSQL's epoch 2000-01-01 */
#define PG_EPOCH_OFFSET_US	946684800000000LL

/*
 * Append the JSON value for a column of type typoid whose output-function
 * text is text[0..len) (session: DateStyle=ISO, TimeZone=UTC,
 * extra_float_digits=3, IntervalStyle=iso_8601, bytea_output=hex). Never
 * fails: text that does not parse as its type becomes a JSON string.
 * The table is in capture-pg/README.md.
 */
void	pgtype_to_json(uint32_t typoid, const char *text, size_t len,
	    struct sbuf *out);

/* slot.c */

struct config;
struct pg_conn;			/* libpq's PGconn */

/*
 * The two connections and what the startup checks learned. Every call
 * returns 0, or -1 with err (no secret in it) and exit_code (framing.md
 * §8) set; none of them exits.
 */
struct pg_source {
	struct pg_conn *sql;	/* catalogue checks, the publication */
	struct pg_conn *repl;	/* the walsender: replication=database */
	char	 dbname[128];	/* current_database(), for the slot check */
	uint64_t confirmed;	/* the slot's confirmed_flush_lsn */
	uint64_t start;		/* where START_REPLICATION began */
	int	*append;	/* per sync section: its table has no replica
				 * identity and goes in <publication>_append,
				 * which publishes inserts and truncates only */
	int	 nappend;
	int	 exit_code;
	char	 err[768];
};

void	slot_init(struct pg_source *);
void	slot_release(struct pg_source *);
/* the SQL connection, then wal_level and the REPLICATION attribute */
int	slot_connect_sql(struct pg_source *, const struct config *);
int	slot_check_server(struct pg_source *);
/* every configured table exists and has a key (or is append-only), and
 * every column an identity reads from a before-image is there (in the
 * replica identity, or REPLICA IDENTITY FULL); registers its key */
int	slot_check_tables(struct pg_source *, const struct config *,
	    struct pgo_decoder *);
int	slot_ensure_publication(struct pg_source *, const struct config *);
/* the walsender connection, with the session settings types.c expects */
int	slot_connect_repl(struct pg_source *, const struct config *);
int	slot_ensure_slot(struct pg_source *, const struct config *);
/* refuses a checkpoint behind the slot (66); START_REPLICATION at
 * start_lsn (0 = the slot's own position); closes the SQL connection */
int	slot_start(struct pg_source *, const struct config *,
	    uint64_t start_lsn);

/* stream.c */

#include <signal.h>

struct ctl;

/* frames waiting for stdout above this stop reads from the server */
#define STREAM_OUT_CAP		(256 * 1024)
#define STREAM_STATUS_MS	10000	/* standby status update interval */
#define STREAM_PAUSED_STATUS_MS	1000	/* the same while the socket is unread */
#define STREAM_POS_MS		1000	/* at most one idle pos frame per 1 s */
#define STREAM_STATS_MS		1000
#define STREAM_DRAIN_MS		30000	/* shutdown: wait for the last ack */

struct stream {
	struct pg_conn *conn;
	struct pgo_decoder *dec;
	struct ctl *ctl;
	const volatile sig_atomic_t *stop;	/* set by SIGTERM/SIGINT */

	struct sbuf out;	/* frames not yet on stdout */
	size_t	 out_off;	/* bytes of out already written */
	int	 out_fd;	/* -1 once closed */

	uint64_t start;		/* confirmed at START_REPLICATION */
	uint64_t received;	/* highest LSN seen from the server */
	uint64_t walend;	/* the last keepalive's walEnd */
	uint64_t acked;		/* the supervisor's last ack */
	uint64_t flushed;	/* the flush LSN last sent to the server */
	uint64_t last_pos;	/* the last pos frame's position */
	long long last_status_ms, last_pos_ms, last_stats_ms;
	int	 reply_pending;	/* the server asked; answered at the next slot */
	uint64_t stats_sent[7];	/* one per counter stream.c reports */

	int	 exit_code;
	char	 err[768];
};

void	stream_init(struct stream *, struct pg_conn *, struct pgo_decoder *,
	    struct ctl *, uint64_t start, const volatile sig_atomic_t *stop);
void	stream_release(struct stream *);
/*
 * The one poll loop: the server's CopyData, stdout, fd 3. Returns 0 after
 * a clean shutdown (stop set, frames flushed, stdout closed, the last ack
 * confirmed), or a framing.md §8 exit code with err set.
 */
int	stream_run(struct stream *);

#endif
