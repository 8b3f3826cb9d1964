/*
 * capture-pg.h - capture-pg: reads a PostgreSQL logical replication slot
 * (pgoutput) and writes event frames (framing.md §4) on stdout.
 *
 * Modules:
 *   pgoutput.c  pgoutput messages -> event frames (pure: no I/O)
 *   slot.c      the server's contract at the start (lib/pg/pgcontract.c),
 *               the tables, and START_REPLICATION
 *   walstream.c the walsender's side of the capture loop: CopyData in,
 *               standby status updates out, never past the ack
 *   slotwatch.c every logical slot's retained WAL, for /metrics, on the
 *               catalogue connection kept after the startup checks
 *   poll.c      poll mode: each table's pages after its cursor, for a
 *               server without a replication connection
 */
#ifndef CAPTURE_PG_H
#define CAPTURE_PG_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "outq.h"
#include "sbuf.h"
#include "lsn.h"
#include "msg.h"
#include "pg/pgtypes.h"
#include "capture.h"
#include "trace.h"
#include "pg/pgserver.h"

/* pgoutput.c */

struct pgo_column {
	char	*name;
	uint32_t typoid;
	int32_t	 typmod;
	int	 key;		/* part of the key frames carry in "key" */
	int	 skip;		/* a followed child's column its parent lacks:
				 * left out of every image */
};

struct pgo_rel {
	uint32_t oid;
	char	*qname;		/* "schema.table" rows are filed under: the
				 * source's name, or the parent's for a
				 * followed child (pgo_follow) */
	char	*child;		/* a followed child's own name, else NULL */
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

/* an inheritance child whose rows are filed under its parent */
struct pgo_follow {
	char	*child, *parent;
	int	 ncols;
	char	**cols;		/* the parent's columns: all a row carries */
};

struct pgo_counters {
	uint64_t inserts, updates, deletes, truncates, commits, drift, messages;
};

struct nestread;

struct pgo_decoder {
	struct pgo_rel	*rels;
	size_t		 nrels, caprels;
	struct pgo_type	*types;
	size_t		 ntypes, captypes;
	struct pgo_keydef *keydefs;
	size_t		 nkeydefs;
	struct pgo_follow *follows;
	size_t		 nfollows;

	/* the open transaction, between Begin and Commit */
	int		 in_txn;
	uint64_t	 txn_lsn;	/* Begin's final LSN: every row's "v" */
	int64_t		 txn_ts;	/* commit time, µs since the Unix epoch */
	uint32_t	 txn_xid;
	uint64_t	 txn_n;		/* rows and truncates so far */
	struct trace_batch trace;	/* its span's start and bytes, and
					 * those of the held ones before */

	/*
	 * Commits held back (pgo_flush): a transaction whose rows named
	 * parents is closed, with the ones decoded after it in the same
	 * read, by one commit frame after one re-read of all their parents
	 * - a burst of a thousand child changes is one query, not a
	 * thousand. Only the last one's position is sent, and only once its
	 * rewrites precede it, so nothing is acknowledged before them.
	 */
	int		 held;
	uint64_t	 held_v;	/* the last held one's version */
	uint64_t	 held_end;	/* its Commit's end LSN, time, tx, rx */
	int64_t		 held_ts;
	long long	 held_tx, held_rx;

	uint64_t	 last_commit;	/* end LSN of the last Commit, 0 before */
	long long	 rx_us;		/* when the message being decoded arrived,
					 * µs; 0 unknown (a commit's "rx") */
	long long	 tx_us;		/* when the server sent it (XLogData's
					 * sendTime), µs; 0 unknown ("tx") */
	struct pgo_counters n;
	struct p2o_err	 err;		/* with -1: why, and the exit code */
	struct sbuf	 json;		/* scratch for one frame's JSON */
	struct msg_in	 row_in;	/* a row frame, built in the output */
	struct nestread	*nest;		/* parents with collections (the
					 * commit-time re-read), or NULL */
};

void	pgo_init(struct pgo_decoder *);
void	pgo_release(struct pgo_decoder *);
/*
 * Decode ONE pgoutput message: the XLogData payload after the 25-byte 'w'
 * header. Appends zero or more frames to out (commit, row, truncate,
 * drift). Returns 0, or -1 with d->err: P2O_EXIT_REFUSED (a row for a
 * table without a key, a truncate of part of a followed tree) or
 * P2O_EXIT_TEMPFAIL (malformed or unexpected message: a protocol error
 * mid-stream). On -1 nothing was appended to out. Only protocol version
 * 1 messages, text tuples: streamed and two-phase messages are refused.
 */
int	pgo_decode(struct pgo_decoder *, const unsigned char *msg, size_t len,
	    struct sbuf *out);
/*
 * The commit frame of the commits held back (d->held), after the rewrite
 * of their parents: called once everything the server had sent is
 * decoded, before the caller waits for more. Nothing while a transaction
 * is open: its commit joins the burst. 0 (nothing held or a transaction
 * open, or appended to out), or -1 with d->err.
 */
int	pgo_flush(struct pgo_decoder *, struct sbuf *out);
/*
 * With REPLICA IDENTITY FULL pgoutput flags every column as key; if the
 * caller knows the table's primary key (from pg_index), it registers it
 * here, before or after the Relation message arrives, and rows then carry
 * that key. For the default identity or an identity index it is used when
 * every column it names is flagged (old tuples carry the flagged ones),
 * and ignored otherwise; a key naming a column the relation lacks is
 * ignored (the key falls back to what pgoutput flagged).
 */
void	pgo_set_key(struct pgo_decoder *, const char *qname,
	    const char *const *cols, int ncols);
/* rows of table qname may come without a key: it is synced append-only,
 * each row filed under the hash of its content; they carry "key": [] */
void	pgo_allow_keyless(struct pgo_decoder *, const char *qname);
/*
 * An inheritance child of a synced table: the publication carries its
 * changes under its own name, and they are rows of the parent (the load
 * reads them through it). Its rows are filed under parent, with only the
 * parent's columns cols. A truncate must then name the whole tree
 * (TRUNCATE parent), since a TRUNCATE of one child, or of ONLY the parent,
 * cannot be told apart in the parent's index: it stops the stream (69).
 */
void	pgo_follow(struct pgo_decoder *, const char *child, const char *parent,
	    const char *const *cols, int ncols);
/* the cached relation, or NULL; valid until the next pgo_decode */
const struct pgo_rel *pgo_rel_find(const struct pgo_decoder *, uint32_t oid);

/* slot.c */

struct config;
struct pg_conn;			/* libpq's PGconn */
struct pgcat_table;

/*
 * The two connections and what the startup learned. Every call returns
 * 0, or -1 with err (no secret in it; a refusal of the server's contract
 * with its verdict's exit code); none of them exits.
 */
struct pg_source {
	struct pg_conn *sql;	/* catalogue checks, the publication */
	struct pg_conn *repl;	/* the walsender: replication=database */
	/* the server's contract as read (lib/pg/pgserver.h): the facts,
	 * the tables, where each goes, the publications, the slot */
	struct pgsrv_contract k;
	struct pgcat_table *tables;	/* k.tables: per sync section */
	uint64_t confirmed;	/* the slot's confirmed_flush_lsn */
	uint64_t start;		/* where START_REPLICATION began */
	struct p2o_err err;
};

void	slot_init(struct pg_source *);
void	slot_release(struct pg_source *);
/* the catalogue's description of every table (s->tables) let go, once
 * the stream has started and when no nested reader reads it: the
 * decoder keeps the keys and followed children it needs as copies, and
 * with ten thousand tables the descriptions were 7 MB held for as long
 * as capture-pg ran (issue 38) */
void	slot_forget_tables(struct pg_source *);
/* the SQL connection, then the server's part of the contract: the
 * settings and the role (pgsrv_judge_server) */
int	slot_connect_sql(struct pg_source *, const struct config *);
int	slot_check_server(struct pg_source *);
/* every configured table exists and has a key (or is append-only), and
 * every column an identity reads from a before-image is there (in the
 * replica identity, or REPLICA IDENTITY FULL), in it and in every table
 * under it (pgcat_check_images); registers its key and its inheritance
 * children with the decoder; places each table in its publication */
int	slot_check_tables(struct pg_source *, const struct config *,
	    struct pgo_decoder *);
/* each publication: created at a first start, else judged */
int	slot_ensure_publication(struct pg_source *, const struct config *);
/* the walsender connection (lib/pg/pgconn.c) */
int	slot_connect_repl(struct pg_source *, const struct config *);
/* the slot: created when absent, judged when there (new_stream: a lost
 * one is dropped and made again, the tables being loaded anew) */
int	slot_ensure_slot(struct pg_source *, const struct config *,
	    int new_stream);
/* refuses a checkpoint behind the slot (66); START_REPLICATION at
 * start_lsn (0 = the slot's own position); closes the SQL connection */
int	slot_start(struct pg_source *, const struct config *,
	    uint64_t start_lsn);

/* walstream.c */

struct capture_ops;

#define WALSTREAM_STATUS_MS		10000	/* standby status update */
#define WALSTREAM_PAUSED_STATUS_MS	1000	/* the same while the socket
						 * is left unread */

/* the walsender's side of the capture loop (lib/capture.h) */
struct walstream {
	struct pg_conn *conn;
	struct pgo_decoder *dec;
	uint64_t start;		/* confirmed at START_REPLICATION */
	uint64_t received;	/* highest LSN seen from the server */
	uint64_t walend;	/* the last keepalive's walEnd */
	uint64_t acked;		/* the supervisor's last ack */
	uint64_t flushed;	/* the flush LSN last sent to the server */
	uint64_t last_pos;	/* the last pos frame's position */
	long long last_status_ms;
	int	 reply_pending;	/* the server asked: answered soon */
};

void	walstream_init(struct walstream *, struct pg_conn *,
	    struct pgo_decoder *, uint64_t start);
extern const struct capture_ops walstream_ops;

/* poll.c */

struct poll_table;
struct config;

/* poll mode's side of the capture loop: pages of each table read again
 * after the cursor of the last row sent (capture-pg/poll.c) */
struct poller {
	const struct config *cfg;
	struct pg_conn *conn;	/* a plain connection, never replication */
	struct poll_table *tables;
	int	 ntables;
	int	 cur;		/* the table read now, in the round */
	long long next_ms;	/* the next page; a round's wait once caught up */
	uint64_t pos;		/* the last page's position (pages sent,
				 * and rounds ended with no page) */
	uint64_t acked;
	/* the round being read (its first page, monotonic ms; 0 none yet)
	 * and the last that ended, which the position text carries for
	 * `pg2osync status`: its end (wall clock ms), its length, its rows */
	long long round_start;
	uint64_t round_rows;
	long long last_end, last_ms;
	uint64_t last_rows;
	int	 round_owed;	/* it ended on an empty page: no commit
				 * carried it, a pos frame does */
	struct sbuf json;	/* the row frame being built */
	struct {
		uint64_t updates, deletes, commits, received;
	} n;
	struct p2o_err err;
};

/* the tables described, each cursor from a->pos (--start-pos) when
 * given: 0, or -1 with p->err */
int	poller_init(struct poller *, const struct config *,
	    const struct capture_args *a);
void	poller_release(struct poller *);
extern const struct capture_ops poll_ops;

/* slotwatch.c */

#define SLOTWATCH_MS	5000	/* one look at every slot */

struct slotwatch {
	struct pg_conn *conn;	/* the catalogue connection, adopted */
	long long next_ms;	/* the next look (0: at once) */
	int	 looked;	/* the first look (and its warnings) is done */
	struct capture_side side;	/* for struct capture's side */
};

/* adopts conn (the startup checks' SQL connection) */
void	slotwatch_init(struct slotwatch *, struct pg_conn *conn);
void	slotwatch_release(struct slotwatch *);

#endif
