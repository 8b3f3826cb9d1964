/*
 * server.h - capture-mysql's I/O half: the two connections to the server
 * (a catalogue connection for checks and information_schema, a dump
 * connection that streams the binlog), the startup checks, and the dump's
 * side of the capture loop (lib/capture.h).
 *
 * Modules:
 *   server.c      the server's contract at the start, the tables, the
 *                 checkpoint's place in the binlog, starting the dump,
 *                 reading its packets
 *   dumpstream.c  the dump's side of the capture loop: events in, the
 *                 silence limit, positions and counters out
 *
 * The connection, the catalogue, values and positions are the source
 * layer's (lib/mysql), and so is the re-read of embedded collections'
 * parents at each commit on a third connection (lib/mysql/mynestread.c
 * under lib/nestread.c), which main.c hands the assembler as its hooks. Every call returns 0, or -1 with err (no secret in
 * it); none of them exits.
 */
#ifndef SERVER_H
#define SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "binlog.h"
#include "err.h"

struct config;
struct capture_ops;
struct st_mysql;		/* libmariadb's MYSQL */

/* seconds between the server's heartbeats while the binlog is idle */
#define SERVER_HEARTBEAT_S		1
/* how long the server waits for this reader to take what it sends (a
 * day: an outage of the target holds the reads) */
#define SERVER_DUMP_WRITE_TIMEOUT_S	86400

/* server.c */

struct server {
	const struct config *cfg;
	struct st_mysql *sql;	/* catalogue and checks; open while streaming
				 * for re-reads after DDL */
	struct st_mysql *dump;	/* the binlog dump */
	int	 mariadb;
	char	 version[96];
	int	 crc;		/* @@global.binlog_checksum is CRC32 */
	int	 gtid_mode_on;	/* MySQL gtid_mode = ON (MariaDB: always) */
	char	 file[MYPOS_FILE_MAX];	/* the server's current binlog */
	uint32_t offset;	/*   and position in it */
	/* the first event of the dump, read before hello; returned by the
	 * first server_read_event */
	unsigned char *first, *held;
	size_t	 firstlen;
	struct p2o_err err;
};

void	server_init(struct server *);
void	server_release(struct server *);
/* the catalogue connection, then the server's contract: the checks a
 * capture refuses by (lib/mysql/myserver.h's mysrv_judge), the first
 * failure the error with its exit code */
int	server_connect(struct server *, const struct config *);
int	server_check(struct server *);
/* every configured table, described with the key rule (lib/mysql/mycat.h):
 * their shapes into *tables (ntables = cfg->nsyncs) */
int	server_tables(struct server *, const struct config *,
	    struct my_table **tables);
/* the my_catalog callback: ctx is the struct server */
int	server_reload(void *ctx, const char *db, const char *table,
	    struct my_table *out, struct p2o_err *);
/* the server's binlog position now into s->file / s->offset */
int	server_now(struct server *);
/* a checkpoint without a GTID set must still be in the server's numbering
 * (66 when the server's binlog is behind it); a checkpoint whose file (of
 * the server's own series, with or without a GTID set) was purged is 67 */
int	server_check_resume(struct server *, const struct mypos *);
/*
 * The dump connection and the dump itself: by GTID set when p has one,
 * else from p's file and offset, else (p == NULL) from s->file:4. Reads
 * the first packet, so a refused dump (a purged binlog, a proxy) fails
 * here, before hello. The dump announces cfg's server_id as its replica
 * id.
 */
int	server_start_dump(struct server *, const struct config *,
	    const struct mypos *p);
/* the dump's socket, and whether whole bytes already wait in the client
 * library's buffers (poll would not see them) */
int	server_socket(const struct server *);
int	server_buffered(const struct server *);
/* one event (header included): 1 and *ev, *len valid until the next
 * call, or -1 (the connection ended or failed) */
int	server_read_event(struct server *, const unsigned char **ev,
	    size_t *len);

/* dumpstream.c */

/* nothing at all from the dump for this long: the connection is dead */
#define DUMPSTREAM_SILENCE_MS	30000

struct dumpstream {
	struct server *srv;
	struct txn *txn;
	long long last_event_ms;
	/* a fresh start (txn->fresh): no server keeps where this stream
	 * started, so nothing past the start is read until it is stored */
	int	 start_owed;	/* its pos frame is not written yet */
	uint64_t hold_pos;	/* written, not acked yet (0: nothing held) */
	uint64_t acked;
};

void	dumpstream_init(struct dumpstream *, struct server *, struct txn *);
extern const struct capture_ops dumpstream_ops;

#endif
