/*
 * server.h - capture-mysql's I/O half: the two connections to the server
 * (a catalogue connection for checks and information_schema, a dump
 * connection that streams the binlog), the startup checks, and the poll
 * loop that turns the dump into frames on stdout.
 *
 * Modules:
 *   server.c   url, TLS, connecting, the server and table checks, the
 *              catalogue, starting the dump, reading its packets
 *   stream.c   the poll loop: the dump, stdout, fd 3, signals, stats
 *
 * Every call returns 0, or -1 with err (no secret in it) and exit_code
 * (framing.md §8) set; none of them exits.
 */
#ifndef SERVER_H
#define SERVER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "binlog.h"
#include "outq.h"

struct config;
struct ctl;
struct st_mysql;		/* libmariadb's MYSQL */

/* seconds between the server's heartbeats while the binlog is idle */
#define SRC_HEARTBEAT_S		1
/* nothing at all from the dump for this long: the connection is dead */
#define SRC_SILENCE_MS		30000
/* how long the server waits for this reader to take what it sends (a
 * day: an outage of the target holds the reads) */
#define SRC_DUMP_WRITE_TIMEOUT_S	86400

struct my_source {
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
	 * first src_read_event */
	unsigned char *first, *held;
	size_t	 firstlen;
	int	 exit_code;
	char	 err[768];
};

void	src_init(struct my_source *);
void	src_release(struct my_source *);
/* the catalogue connection, then the server's settings and privileges */
int	src_connect_sql(struct my_source *, const struct config *);
int	src_check_server(struct my_source *);
/* every configured table exists, is a base table and has a primary key:
 * their shapes into *tables (ntables = cfg->nsyncs) */
int	src_load_tables(struct my_source *, const struct config *,
	    struct my_table **tables);
/* the my_catalog callback: ctx is the struct my_source */
int	src_reload(void *ctx, const char *db, const char *table,
	    struct my_table *out, char *err, size_t errlen);
/* SHOW MASTER STATUS into s->file / s->offset */
int	src_master_status(struct my_source *);
/* a checkpoint without a GTID set must still be in the server's numbering
 * (66 when the server's binlog is behind it) */
int	src_check_resume(struct my_source *, const struct mypos *);
/*
 * The dump connection and the dump itself: by GTID set when p has one,
 * else from p's file and offset, else (p == NULL) from s->file:4. Reads
 * the first packet, so a refused dump (a purged binlog, a proxy) fails
 * here, before hello. The dump announces cfg's server_id as its replica
 * id.
 */
int	src_start_dump(struct my_source *, const struct config *,
	    const struct mypos *p);
/* the dump's socket, and whether whole bytes already wait in the client
 * library's buffers (poll would not see them) */
int	src_socket(const struct my_source *);
int	src_buffered(const struct my_source *);
/* one event (header included): 1 and *ev, *len valid until the next
 * call, or -1 (the connection ended or failed) */
int	src_read_event(struct my_source *, const unsigned char **ev,
	    size_t *len);
/* the source url, "mysql://user:pass@host:port/db" (or mariadb:), with
 * percent escapes: 0, or -1 with err, which never quotes the url */
struct my_url {
	char	*user, *password, *host, *db;
	unsigned port;
};
int	my_url_parse(const char *url, struct my_url *, char *err,
	    size_t errlen);
void	my_url_release(struct my_url *);

/* stream.c */

#define STREAM_OUT_CAP		(256 * 1024)
#define STREAM_POS_MS		1000
#define STREAM_STATS_MS		1000
#define STREAM_DRAIN_MS		30000

struct stream {
	struct my_source *src;
	struct txn *txn;
	struct ctl *ctl;
	const volatile sig_atomic_t *stop;

	struct outq out;	/* frames not yet on stdout (fd -1 once closed) */

	uint64_t acked;		/* the supervisor's last ack */
	long long last_pos_ms, last_stats_ms, last_event_ms;
	uint64_t stats_sent[7];

	int	 exit_code;
	char	 err[768];
};

void	stream_init(struct stream *, struct my_source *, struct txn *,
	    struct ctl *, const volatile sig_atomic_t *stop);
void	stream_release(struct stream *);
int	stream_run(struct stream *);

#endif
