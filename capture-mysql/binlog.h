/*
 * binlog.h - capture-mysql's pure half: binlog events and the transaction
 * assembler that turns them into event frames (framing.md §4). Nothing
 * declared here touches a socket, a file or the clock; everything is fed
 * bytes and returns errors, so it is unit-tested on real captures and
 * fuzzed. Values, binary JSON and GTID sets are the source layer's
 * (lib/mysql), shared with the loader.
 *
 * Modules:
 *   event.c    event headers, CRC32, FORMAT_DESCRIPTION, the fixed
 *              layouts (ROTATE, QUERY, XID, GTIDs, TRANSACTION_PAYLOAD)
 *   rows.c     TABLE_MAP (with optional metadata) and row images
 *   ddl.c      a QUERY event's SQL: BEGIN, COMMIT, XA and the statements
 *              that change tables, with the tables they name
 *   txn.c      events -> frames: transactions, versions, positions, DDL
 */
#ifndef BINLOG_H
#define BINLOG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "jscan.h"
#include "sbuf.h"
#include "trace.h"
#include "mysql/mybytes.h"
#include "mysql/mycat.h"
#include "mysql/mygtid.h"
#include "mysql/myjson.h"
#include "mysql/myval.h"

/* ---- event.c ---- */

enum bl_type {
	BL_QUERY = 2, BL_STOP = 3, BL_ROTATE = 4, BL_INTVAR = 5,
	BL_RAND = 13, BL_USER_VAR = 14, BL_FDE = 15, BL_XID = 16,
	BL_TABLE_MAP = 19,
	BL_WRITE_V1 = 23, BL_UPDATE_V1 = 24, BL_DELETE_V1 = 25,
	BL_INCIDENT = 26, BL_HEARTBEAT = 27, BL_IGNORABLE = 28,
	BL_ROWS_QUERY = 29,
	BL_WRITE_V2 = 30, BL_UPDATE_V2 = 31, BL_DELETE_V2 = 32,
	BL_GTID = 33, BL_ANON_GTID = 34, BL_PREV_GTIDS = 35,
	BL_XA_PREPARE = 38, BL_PARTIAL_UPDATE = 39, BL_PAYLOAD = 40,
	BL_HEARTBEAT_V2 = 41, BL_GTID_TAGGED = 42,
	/* MariaDB */
	BL_ANNOTATE_ROWS = 160, BL_CHECKPOINT = 161, BL_MDB_GTID = 162,
	BL_MDB_GTID_LIST = 163, BL_START_ENCRYPTION = 164,
	BL_QUERY_COMPRESSED = 165,
	BL_WRITE_C_V1 = 166, BL_UPDATE_C_V1 = 167, BL_DELETE_C_V1 = 168,
	BL_WRITE_C = 169, BL_UPDATE_C = 170, BL_DELETE_C = 171,
};

#define BL_HEADER_LEN		19
#define BL_CRC_LEN		4
#define BL_MAGIC		"\xfe" "bin"
#define BL_FLAG_ARTIFICIAL	0x0020
#define BL_FLAG_IGNORABLE	0x0080

struct bl_header {
	uint32_t ts;		/* seconds since the epoch */
	uint8_t	 type;
	uint32_t server_id;
	uint32_t size;		/* the whole event, header and CRC included */
	uint32_t log_pos;	/* end of the event in its file; 0 unknown */
	uint16_t flags;
};

/* what a FORMAT_DESCRIPTION says about the events after it */
struct bl_format {
	int	 have;		/* an FDE was seen */
	int	 crc;		/* every later event ends with a CRC32 */
	int	 mariadb;	/* server_version names MariaDB */
	uint16_t binlog_version;
	char	 server_version[51];
	int	 npost;		/* entries in post[] */
	uint8_t	 post[256];	/* post-header length by event type - 1 */
};

uint32_t bl_crc32(uint32_t crc, const void *p, size_t n);
/* 0, or -1 when n < 19 or the stated size is impossible */
int	bl_header_parse(const unsigned char *p, size_t n, struct bl_header *);
/*
 * The body of one complete event (header.size bytes at p): checks the
 * CRC32 when fmt says events carry one (an FDE decides for itself), and
 * returns the bytes between header and trailer. 0 or -1 with err.
 */
int	bl_event_body(const struct bl_format *fmt, int crc,
	    const unsigned char *p, const struct bl_header *h,
	    const unsigned char **body, size_t *len, struct p2o_err *);
/* parse an FDE body into fmt; 0 or -1 with err */
int	bl_format_parse(struct bl_format *fmt, const unsigned char *body,
	    size_t len, struct p2o_err *);
/* post-header length of a type, from the FDE or the usual value */
unsigned bl_post_len(const struct bl_format *, uint8_t type);
const char *bl_type_name(uint8_t type);

struct bl_rotate {
	uint64_t pos;
	const char *name;
	size_t	 namelen;
};
int	bl_rotate_parse(const struct bl_format *, const unsigned char *body,
	    size_t len, struct bl_rotate *);

struct bl_query {
	const char *db;
	size_t	 dblen;
	const char *sql;
	size_t	 sqllen;
	uint16_t error_code;
};
int	bl_query_parse(const struct bl_format *, const unsigned char *body,
	    size_t len, struct bl_query *);

/* MySQL GTID / ANONYMOUS_GTID */
struct bl_gtid {
	unsigned char uuid[16];
	uint64_t gno;
	int64_t	 last_committed, sequence_number;
	uint64_t immediate_commit_us, original_commit_us;	/* 0 absent */
	uint64_t transaction_length;
	uint32_t immediate_server_version, original_server_version;
};
int	bl_gtid_parse(const unsigned char *body, size_t len, struct bl_gtid *);

/* MariaDB GTID: the server id comes from the event header */
#define MDB_FL_STANDALONE	0x01
#define MDB_FL_GROUP_COMMIT_ID	0x02
#define MDB_FL_PREPARED_XA	0x40
#define MDB_FL_COMPLETED_XA	0x80
struct bl_mdb_gtid {
	uint64_t seq;
	uint32_t domain;
	uint8_t	 flags2;
	uint64_t commit_id;	/* with MDB_FL_GROUP_COMMIT_ID */
};
int	bl_mdb_gtid_parse(const unsigned char *body, size_t len,
	    struct bl_mdb_gtid *);

/*
 * TRANSACTION_PAYLOAD: the header fields, and the inner events
 * decompressed into out (appended). The inner events have no CRC and a
 * log_pos of 0. 0, or -1 with err.
 */
struct bl_payload {
	uint64_t compressed_size, uncompressed_size;
	int	 compression;	/* 0 zstd, 255 none */
	const unsigned char *data;	/* the compressed bytes */
	size_t	 datalen;
};
int	bl_payload_parse(const unsigned char *body, size_t len,
	    struct bl_payload *, struct p2o_err *);
int	bl_payload_inflate(const struct bl_payload *, struct sbuf *out,
	    struct p2o_err *);
/* the uncompressed size limit of one transaction payload (and of one
 * MariaDB compressed event) */
#define BL_PAYLOAD_MAX	(1024u * 1024 * 1024)
/*
 * MariaDB's compressed events (log_bin_compress): QUERY_COMPRESSED and
 * WRITE/UPDATE/DELETE_ROWS_COMPRESSED, v1 and v2. The event's head (the
 * query's post-header, status variables and database; the rows event's
 * post-header, width and column bitmaps) is as in the plain event; what
 * follows it is one byte (0x80 | algorithm << 4 | n; algorithm 0 is
 * zlib, n 1 to 4), the uncompressed length in n bytes, high byte first,
 * then a zlib stream. The body of the plain event it stands for (the
 * head, then the inflated bytes) is appended to out, its type in *plain.
 * 0, or -1 with err and out unchanged.
 */
int	bl_uncompress(const struct bl_format *, uint8_t type,
	    const unsigned char *body, size_t len, uint8_t *plain,
	    struct sbuf *out, struct p2o_err *);

/* ---- rows.c ---- */
#define TM_MAX_COLS	4096

struct bl_table_map {
	uint64_t table_id;
	uint16_t flags;
	char	*db, *table;
	int	 ncols;
	struct bl_col *cols;
	/* optional metadata */
	unsigned optmask;	/* 1 << type for each field present */
	int	 nkeys;		/* primary key columns, -1 none sent */
	int	*keys;		/* column indexes in key order */
	int	*key_prefix;	/* 0: the whole column */
	int	 default_charset;	/* -1 none */
};

/* TABLE_MAP body -> tm (any previous content released); 0 or -1 */
int	bl_table_map_parse(const struct bl_format *, const unsigned char *body,
	    size_t len, struct bl_table_map *tm, struct p2o_err *);
void	bl_table_map_release(struct bl_table_map *);
int	bl_col_is_numeric(const struct bl_col *);
int	bl_col_is_char(const struct bl_col *);

/* a rows event: header fields, then the images to walk */
struct bl_rows {
	uint8_t	 type;		/* WRITE/UPDATE/DELETE v1/v2, PARTIAL */
	char	 op;		/* 'i', 'u', 'd' */
	uint64_t table_id;
	uint16_t flags;
	int	 ncols;
	const unsigned char *present;	/* columns in the (before) image */
	const unsigned char *present2;	/* after image of an update */
	int	 partial;	/* PARTIAL_UPDATE_ROWS */
	/* v2 extra data */
	int	 has_partition;
	uint32_t partition_id, source_partition_id;
	const unsigned char *ndb_info;
	size_t	 ndb_len;
	const unsigned char *rows;	/* the images */
	size_t	 rowslen;
};

int	bl_rows_parse(const struct bl_format *, uint8_t type,
	    const unsigned char *body, size_t len, struct bl_rows *,
	    struct p2o_err *);

/* one column of one image: a span into the event, or NULL */
struct bl_cell {
	int	 present;	/* in the image at all */
	int	 null;
	const unsigned char *p;
	size_t	 n;
};

/*
 * The next image of r against its table map: cells[tm->ncols]. The
 * image cursor is *off (start at 0); present is the image's column
 * bitmap. 1 an image was read, 0 at the end, -1 malformed (err).
 */
int	bl_image_next(const struct bl_rows *, const struct bl_table_map *,
	    const unsigned char *present, size_t *off, struct bl_cell *cells,
	    struct p2o_err *);
/* bytes a non-NULL cell of col occupies at p (n available); -1 bad */
long	bl_cell_len(const struct bl_col *, const unsigned char *p, size_t n);

/* ---- ddl.c ---- */

/* what a QUERY event's statement is, as far as the stream cares */
enum ddl_verb {
	DDL_OTHER,	/* anything else */
	DDL_BEGIN,	/* BEGIN alone: a transaction opens */
	DDL_COMMIT,	/* COMMIT or ROLLBACK alone: it ends */
	DDL_XA,		/* an XA statement */
	DDL_TRUNCATE,	/* TRUNCATE [TABLE] t */
	DDL_DROP,	/* DROP [TEMPORARY] TABLE[S] [IF EXISTS] t, ... */
	DDL_ALTER,	/* ALTER [ONLINE] [IGNORE] TABLE t */
	DDL_RENAME,	/* RENAME TABLE[S] a TO b, ... */
	DDL_CREATE	/* CREATE [OR REPLACE] [TEMPORARY] TABLE [IF NOT
			 * EXISTS] t */
};

/* a table a statement names: its database and name, unquoted, as
 * offsets into ddl.names (ddl_db, ddl_name read them) */
struct ddl_table {
	int	 named;		/* 0: a RENAME's to that is no name */
	size_t	 db, dblen, table, tablelen;
};

struct ddl {
	enum ddl_verb verb;
	/* the tables in the order named; a RENAME's in pairs, from then
	 * to (a from without TO is left out) */
	struct ddl_table *t;
	int	 n, cap;
	struct sbuf names;
};

void	ddl_init(struct ddl *);
void	ddl_release(struct ddl *);
/* the statement sql[0..len) read into d: its verb and the tables it
 * names, a bare name in db (the event's default database). Never fails:
 * what it does not recognise is DDL_OTHER */
void	ddl_read(struct ddl *, const char *sql, size_t len, const char *db,
	    size_t dblen);
/* table i's database and name (len bytes, not NUL-ended) */
const char *ddl_db(const struct ddl *, int i, size_t *len);
const char *ddl_name(const struct ddl *, int i, size_t *len);

/* ---- txn.c ---- */

/*
 * How the assembler re-reads a table's shape (after an ALTER, or a row
 * event whose columns the cached shape cannot match): 0 and *out filled,
 * 1 the table no longer exists, -1 error (err; the stream stops).
 */
struct my_catalog {
	int	(*reload)(void *ctx, const char *db, const char *table,
		    struct my_table *out, struct p2o_err *err);
	void	*ctx;
};

/*
 * Embedded collections (docs/config.md "children"), which need the
 * server: tables[nsections..] are tables only collections read, whose
 * rows and truncates never become frames. row sees every row of a
 * configured table as its images (JSON objects; p NULL when absent) and
 * answers 1 to forward it, 0 to keep it back; commit, at the end of a
 * group that is written, appends the row frames it owes (at version v)
 * ahead of the commit frame and adds them to *nrows: 0 or -1 with err;
 * truncate hears of every TRUNCATE of a configured table. All NULL: no
 * collections.
 */
struct txn_nest {
	int	 nsections;
	int	(*row)(void *ctx, int ti, char op, struct jspan newi,
		    struct jspan oldi);
	int	(*commit)(void *ctx, uint64_t v, struct sbuf *out,
		    uint64_t *nrows, struct p2o_err *err);
	void	(*truncate)(void *ctx, int ti);
	void	*ctx;
};

struct txn_counters {
	uint64_t inserts, updates, deletes, truncates, commits, events,
		 skipped_rows, drift;
};

#define TXN_MAX_TABLE_IDS	4096

struct txn_map {		/* a TABLE_MAP we keep: configured tables */
	uint64_t table_id;
	int	 table;		/* index into tables[] */
	int	 checked;	/* shape compared with the catalogue */
	int	 mismatch;	/* ... and it could not be matched */
	struct bl_table_map tm;
};

enum txn_state { TS_NONE, TS_GROUP, TS_BEGUN };

struct txn {
	/* configuration */
	struct my_table *tables;
	int	 ntables;
	uint64_t *bad_sig;	/* per table: a binlog shape already found
				 * unmatched, not re-read again */
	struct my_catalog cat;
	struct txn_nest nest;	/* zero: no collections */
	uint64_t emit_from;	/* coordinates up to here are only read */
	int	 fresh;		/* started without a checkpoint, at the
				 * server's position: no one keeps it */

	/* the stream */
	struct bl_format fmt;
	int	 crc_before_fde;	/* what the dump's first events carry */
	char	 file[MYPOS_FILE_MAX];	/* the current binlog file */
	uint64_t file_index;
	uint64_t cur;		/* coordinate after the last event */
	int	 have_base;
	uint64_t base;		/* generation base: pos = base + coord */
	uint64_t start_token;	/* resume: checkpoint position, 0 none */
	uint64_t start_coord;	/* resume: its coordinate */
	int	 gtid_resume;	/* resumed by GTID: a coordinate behind
				 * the checkpoint opens a new generation */
	uint64_t generation_at;	/* set when a new generation opened */

	/* the GTID set: complete, unknown yet, or never again complete */
	struct gtid_set gtid;
	enum { GS_KNOWN, GS_UNKNOWN, GS_POISONED } gstate;
	char	 gpoison[128];	/* why, for the log */

	/* the open group */
	enum txn_state state;
	uint64_t v;		/* version of every row in the group */
	int	 emitting;	/* the group is past emit_from */
	uint64_t nrows;		/* rows and truncates in it */
	struct trace_batch trace;	/* its span's start and bytes */
	long long ts_us;
	long long rx_us;	/* when the event being decoded arrived, µs;
				 * 0 unknown (a commit frame's "rx") */
	int	 have_gtid;
	unsigned char g_uuid[16];
	uint64_t g_gno;
	int	 g_mdb;
	struct bl_mdb_gtid g_mdbg;
	uint32_t g_server;
	int	 g_anon, g_tagged;
	uint64_t inner_end;	/* inside a payload: the outer event's end */
	int	 in_payload;

	/* table maps of configured tables, by table id */
	struct txn_map *maps;
	int	 nmaps, capmaps;

	/* positions the stream layer reports */
	uint64_t last_boundary;	/* pos of the last group end (0 none) */
	char	*boundary_text;	/* its text */
	uint64_t last_emitted;	/* pos of the last commit or pos frame */
	uint64_t last_commit;

	/* unknown event types already logged, one bit per type */
	unsigned char unknown_seen[32];
	struct txn_counters n;
	struct p2o_err err;	/* with -1: why, and the exit code */
	/* how the assembler says what the log must hear (never a secret);
	 * NULL: say nothing */
	void	(*warn)(const char *msg);
	struct sbuf json;	/* one frame's JSON */
	struct sbuf scratch;
	struct sbuf inflated;
	struct sbuf unzipped;	/* a MariaDB compressed event, inflated */
};

void	txn_init(struct txn *, struct my_table *tables, int ntables,
	    struct my_catalog cat);
void	txn_release(struct txn *);
/*
 * Where the stream starts. resume: the checkpoint's text was parsed into
 * p (file, offset, optional set) with its token; p == NULL: a fresh start
 * that reads from file:4 and emits from emit_offset on.
 */
void	txn_start(struct txn *, const struct mypos *p, uint64_t token,
	    const char *file, uint32_t emit_offset);
/*
 * Decode one event (a whole event, header included, as the dump or a
 * file delivers it) and append the frames it makes to out. 0, or -1 with
 * err set; on -1 out is unchanged.
 */
int	txn_event(struct txn *, const unsigned char *ev, size_t len,
	    struct sbuf *out);
/* 1 when the log moved past the last frame that carried a position,
 * outside any group: a bare pos frame is owed */
int	txn_pos_owed(const struct txn *);
/* append that pos frame */
void	txn_put_pos(struct txn *, struct sbuf *out);
/* the text of the current boundary ("file:offset;gtid=...") */
void	txn_pos_text(struct txn *, uint64_t coord, struct sbuf *out);


#endif
