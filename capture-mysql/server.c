/*
 * server.c - capture-mysql's side of the server: the server's contract
 * judged at the start (lib/mysql/myserver.c: the binary log settings a
 * capture cannot stream without) and its first failure refused, the
 * configured tables, the checkpoint's place in the server's binlog, the
 * dump command and the dump's packets. What the server must provide, and
 * every question about its settings and binlog files, is the source
 * layer's (lib/mysql).
 *
 * libmariadb carries the packets; the dump command is written by hand and
 * its events are read raw, never through libmariadb's binlog event
 * parser. Never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>
/* the layout of libmariadb's TLS handle, to see what OpenSSL holds */
#define HAVE_TLS
typedef unsigned char uchar;
#include <ma_pvio.h>
#include <openssl/ssl.h>

#include "config.h"
#include "log.h"
#include "mysql/mycat.h"
#include "mysql/myconn.h"
#include "mysql/myserver.h"
#include "p2o.h"
#include "sbuf.h"
#include "server.h"
#include "source_ops.h"

#define COM_BINLOG_DUMP_CMD	0x12
#define COM_BINLOG_DUMP_GTID_CMD 0x1e
#define BINLOG_THROUGH_GTID	4

void
server_init(struct server *s)
{
	memset(s, 0, sizeof(*s));
}

void
server_release(struct server *s)
{
	if (s->sql != NULL)
		mysql_close(s->sql);
	if (s->dump != NULL)
		mysql_close(s->dump);
	free(s->first);
	free(s->held);
	s->sql = s->dump = NULL;
	s->first = s->held = NULL;
}

int
server_connect(struct server *s, const struct config *cfg)
{
	s->cfg = cfg;
	if ((s->sql = myconn_open(cfg, "catalogue", &s->err)) == NULL)
		return -1;
	snprintf(s->version, sizeof(s->version), "%s",
	    mysql_get_server_info(s->sql));
	s->mariadb = myconn_mariadb(s->sql);
	return 0;
}

int
server_check(struct server *s)
{
	struct mysrv_facts f;

	if (mysrv_facts(s->sql, &f, &s->err) == -1 ||
	    mysrv_judge(&f, s->cfg, 1, source_refuse, &s->err) != 0)
		return -1;
	s->crc = strcasecmp(f.checksum, "CRC32") == 0;
	s->gtid_mode_on = s->mariadb || strcasecmp(f.gtid_mode, "ON") == 0;
	return 0;
}

int
server_tables(struct server *s, const struct config *cfg,
    struct my_table **tables)
{
	struct my_table *t = xcalloc(cfg->nsyncs + 1, sizeof(*t));
	const struct sync_section *sy;
	int i;

	*tables = t;
	for (i = 0; i < cfg->nsyncs; i++) {
		sy = &cfg->syncs[i];
		if (mycat_describe(s->sql, s->mariadb, sy, &t[i],
		    &s->err) == -1)
			return -1;
		if (t[i].nkeys == 0)
			log_info("table '%s' has no key: synced append-only, "
			    "each row filed under the hash of its content; an "
			    "UPDATE or DELETE of it stops the pipeline",
			    sy->rel);
		log_debug("table '%s': %d columns, %d key columns", sy->rel,
		    t[i].ncols, t[i].nkeys);
	}
	return 0;
}

int
server_reload(void *ctx, const char *db, const char *table,
    struct my_table *out, struct p2o_err *e)
{
	struct server *s = ctx;
	const struct sync_section *sec;
	char rel[2 * MYPOS_FILE_MAX];
	int rc;

	snprintf(rel, sizeof(rel), "%s.%s", db, table);
	if ((sec = config_find_rel(s->cfg, rel)) == NULL)
		return p2o_fail(e, P2O_EXIT_INTERNAL, "table '%s' is not "
		    "configured", rel);
	if ((rc = mycat_table(s->sql, s->mariadb, db, table, out, e)) == -1)
		return p2o_err_prefix(e, "re-reading '%s'", rel);
	if (rc != 0)
		return 1;
	/* the rule once more, on the new shape */
	if (mycat_key(out, sec, e) == -1) {
		my_table_release(out);
		return p2o_err_prefix(e, "re-reading '%s'", rel);
	}
	return 0;
}

int
server_now(struct server *s)
{
	return myconn_binlog_now(s->sql, s->file, sizeof(s->file), &s->offset,
	    &s->err);
}

/* two binlog file names of one series: the same name before the number
 * (a GTID start whose files are another server's has its own) */
static int
same_series(const char *a, const char *b)
{
	const char *da = strrchr(a, '.'), *db = strrchr(b, '.');

	return da != NULL && db != NULL && da - a == db - b &&
	    strncmp(a, b, (size_t)(da - a)) == 0;
}

int
server_check_resume(struct server *s, const struct mypos *p)
{
	long long idx = binlog_file_index(p->file, strlen(p->file));
	uint64_t want = mypos_coord((uint64_t)idx, p->offset), have;
	uint64_t *sizes, size = 0;
	char **files;
	const char *first_name = "";
	int i, n, found = 0, rc = 0;
	long long first = -1;

	if (mysrv_binlogs(s->sql, &files, &sizes, &n, &s->err) == -1)
		return -1;
	if (n > 0) {
		first = binlog_file_index(files[0], strlen(files[0]));
		first_name = files[0];
	}
	for (i = 0; i < n; i++)
		if (strcmp(files[i], p->file) == 0) {
			found = 1;
			size = sizes[i];
		}
	if (server_now(s) == -1) {
		rc = -1;
		goto out;
	}
	have = mypos_coord((uint64_t)binlog_file_index(s->file,
	    strlen(s->file)), s->offset);
	/* by GTID the server finds the place itself, in files a promoted
	 * replica numbers its own way: their numbering proves nothing */
	if (!p->has_gtid && ((found && size < p->offset) ||
	    (!found && have < want)))
		rc = p2o_fail(&s->err, P2O_EXIT_CHECKPOINT, "the checkpoint "
		    "%s:%u is past the end of the server's binlog (%s:%u): its "
		    "history restarted, or this is another server, and the "
		    "index holds versions from a numbering that no longer "
		    "exists; sync into a fresh index (a new index name) "
		    "without the checkpoint", p->file, p->offset, s->file,
		    s->offset);
	/* a file older than the oldest one listed: purged, with the changes
	 * the stream needed; the supervisor reloads or stops on 67 */
	else if (!found && first != -1 && idx != -1 && idx < first &&
	    (!p->has_gtid || same_series(p->file, first_name)))
		rc = p2o_fail(&s->err, P2O_EXIT_LOST, "binlog file '%s' the "
		    "checkpoint %s:%u needs was purged (the oldest on the "
		    "server is number %lld): the changes since are gone, the "
		    "tables must be loaded again", p->file, p->file, p->offset,
		    first);
out:
	mysrv_binlogs_free(files, sizes, n);
	return rc;
}

/* ---- the dump ---- */

static void
put_le(struct sbuf *b, uint64_t v, int n)
{
	while (n-- > 0) {
		sbuf_addc(b, (char)(v & 0xff));
		v >>= 8;
	}
}

/* the first packet of a dump the server refused: why, and the code */
static int
dump_refused(struct server *s, const char *how)
{
	unsigned e = mysql_errno(s->dump);

	if (e == ER_UNKNOWN_COM_ERROR || e == ER_NOT_SUPPORTED_YET)
		return p2o_fail(&s->err, P2O_EXIT_REFUSED, "the server did not "
		    "accept the binlog dump (%s): the source url must reach "
		    "the server directly, not through a proxy",
		    mysql_error(s->dump));
	if (e == ER_SPECIFIC_ACCESS_DENIED_ERROR)
		return p2o_fail(&s->err, P2O_EXIT_REFUSED, "the binlog dump "
		    "needs the REPLICATION SLAVE privilege: %s",
		    mysql_error(s->dump));
	/* by GTID the server looks for the place itself (the file names
	 * are a promoted replica's own, so they prove nothing here): it
	 * says in its words that the files it would need were purged */
	if (e == ER_MASTER_FATAL_ERROR_READING_BINLOG &&
	    strstr(mysql_error(s->dump), "purged") != NULL)
		return p2o_fail(&s->err, P2O_EXIT_LOST, "the binlog %s is "
		    "gone: %s: the changes since are gone, the tables must be "
		    "loaded again", how, mysql_error(s->dump));
	if (e == ER_MASTER_FATAL_ERROR_READING_BINLOG)
		return p2o_fail(&s->err, P2O_EXIT_REFUSED, "the server cannot "
		    "send the binlog %s: %s", how, mysql_error(s->dump));
	return p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "the binlog dump %s "
	    "failed: %s", how, e ? mysql_error(s->dump) : "connection closed");
}

int
server_start_dump(struct server *s, const struct config *cfg,
    const struct mypos *p)
{
	struct sbuf cmd = SBUF_INIT, set = SBUF_INIT;
	char how[MYPOS_FILE_MAX + 64];
	const unsigned char *ev;
	size_t len;
	int command, rc = -1;

	if ((s->dump = myconn_open(cfg, "dump", &s->err)) == NULL)
		return -1;
	/* declared before the dump: without it a server that checksums
	 * ends the dump, and the first events would not carry one */
	if (myconn_exec(s->dump, "SET @master_binlog_checksum = "
	    "@@global.binlog_checksum, @source_binlog_checksum = "
	    "@@global.binlog_checksum", "declaring the checksum",
	        &s->err) == -1)
		goto done;
	sbuf_addf(&set, "SET @master_heartbeat_period = %llu, "
	    "@source_heartbeat_period = %llu",
	    (unsigned long long)SERVER_HEARTBEAT_S * 1000000000ULL,
	    (unsigned long long)SERVER_HEARTBEAT_S * 1000000000ULL);
	if (myconn_exec(s->dump, set.buf, "asking for heartbeats",
	    &s->err) == -1)
		goto done;
	/*
	 * The dump thread gives up on a reader that takes nothing for
	 * net_write_timeout (60 s by default). This reader stops reading
	 * whenever stdout does not drain - a target that is down holds the
	 * whole pipeline - and waits that out; the server must too. A dead
	 * reader is still noticed: its socket closes, and a new dump with
	 * the same replica id ends the old one.
	 */
	sbuf_reset(&set);
	sbuf_addf(&set, "SET SESSION net_write_timeout = %d",
	    SERVER_DUMP_WRITE_TIMEOUT_S);
	if (myconn_exec(s->dump, set.buf, "setting the dump's write timeout",
	    &s->err) == -1)
		goto done;
	/* 4: send GTID events as they are, not rewritten as BEGIN */
	if (s->mariadb && myconn_exec(s->dump, "SET @mariadb_slave_capability "
	    "= 4", "declaring MariaDB's capabilities", &s->err) == -1)
		goto done;

	command = COM_BINLOG_DUMP_CMD;
	if (p != NULL && p->has_gtid && s->mariadb) {
		sbuf_reset(&set);
		sbuf_adds(&set, "SET @slave_connect_state = '");
		gtid_set_format(&p->gtid, &set);
		sbuf_adds(&set, "', @slave_gtid_strict_mode = 0, "
		    "@slave_gtid_ignore_duplicates = 0");
		if (myconn_exec(s->dump, set.buf, "setting the GTID position",
		    &s->err) == -1)
			goto done;
		put_le(&cmd, 4, 4);
		put_le(&cmd, 0, 2);
		put_le(&cmd, cfg->server_id, 4);
		snprintf(how, sizeof(how), "after the GTID position of "
		    "%s:%u", p->file, p->offset);
	} else if (p != NULL && p->has_gtid) {
		sbuf_reset(&set);
		gtid_set_encode(&p->gtid, &set);
		command = COM_BINLOG_DUMP_GTID_CMD;
		put_le(&cmd, BINLOG_THROUGH_GTID, 2);
		put_le(&cmd, cfg->server_id, 4);
		put_le(&cmd, 0, 4);		/* no file name */
		put_le(&cmd, 4, 8);
		put_le(&cmd, set.len, 4);
		sbuf_add(&cmd, set.buf, set.len);
		snprintf(how, sizeof(how), "after the GTID set of %s:%u",
		    p->file, p->offset);
	} else {
		const char *file = p ? p->file : s->file;
		uint32_t off = p ? p->offset : 4;

		put_le(&cmd, off, 4);
		put_le(&cmd, 0, 2);
		put_le(&cmd, cfg->server_id, 4);
		sbuf_adds(&cmd, file);
		snprintf(how, sizeof(how), "from %s:%u", file, off);
	}
	if (s->dump->methods->db_command(s->dump, command, cmd.len ? cmd.buf :
	    "", cmd.len, 1, NULL) != 0) {
		dump_refused(s, how);
		goto done;
	}
	if (server_read_event(s, &ev, &len) == -1) {
		/* the server's refusal, in its words, with what was asked */
		if (mysql_errno(s->dump))
			dump_refused(s, how);
		goto done;
	}
	s->first = xmalloc(len);
	memcpy(s->first, ev, len);
	s->firstlen = len;
	log_info("binlog dump %s (replica id %lu)", how, cfg->server_id);
	rc = 0;
done:
	sbuf_release(&cmd);
	sbuf_release(&set);
	return rc;
}

int
server_socket(const struct server *s)
{
	return (int)mysql_get_socket(s->dump);
}

int
server_buffered(const struct server *s)
{
	MARIADB_PVIO *pv = s->dump->net.pvio;

	if (s->first != NULL)
		return 1;
	if (pv == NULL)
		return 0;
	if (pv->cache != NULL && pv->cache_pos < pv->cache + pv->cache_size)
		return 1;
	/* TLS: records OpenSSL decrypted and holds */
	if (pv->ctls != NULL && pv->ctls->ssl != NULL &&
	    SSL_pending((SSL *)pv->ctls->ssl) > 0)
		return 1;
	return 0;
}

int
server_read_event(struct server *s, const unsigned char **ev, size_t *len)
{
	unsigned long n;
	const unsigned char *p;

	free(s->held);
	s->held = NULL;
	if (s->first != NULL) {
		/* handed out once; freed at the next call */
		s->held = s->first;
		*ev = s->held;
		*len = s->firstlen;
		s->first = NULL;
		return 1;
	}
	n = mysql_net_read_packet(s->dump);
	if (n == packet_error || n == 0) {
		unsigned e = mysql_errno(s->dump);

		if (e == ER_MASTER_FATAL_ERROR_READING_BINLOG)
			return p2o_fail(&s->err, P2O_EXIT_REFUSED, "the server "
			    "stopped sending the binlog: %s",
			    mysql_error(s->dump));
#ifdef ER_SLAVE_SAME_ID
		/* the server ends the older of two dumps with one replica
		 * id: this one's successor never gets this, so another
		 * reader with the id is running. Still a retry: it may be
		 * gone by then, and the position is safe either way */
		if (e == ER_SLAVE_SAME_ID)
			return p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "dump "
			    "connection lost: another reader started a binlog "
			    "dump with replica id %lu, and the server ended "
			    "this one; is a second pipeline running with this "
			    "'source.server_id'? (%s)", s->cfg->server_id,
			    mysql_error(s->dump));
#endif
		return p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "dump connection "
		    "lost: %s", e ? mysql_error(s->dump) : "connection closed");
	}
	p = s->dump->net.read_pos;
	if (p[0] == 0xfe && n < 9)
		return p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "the server ended "
		    "the binlog dump");
	if (p[0] != 0x00 || n < 1 + BL_HEADER_LEN || le32(p + 1 + 9) !=
	    n - 1)
		return p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "dump protocol "
		    "error: a packet of %lu bytes that is not an event", n);
	*ev = p + 1;
	*len = n - 1;
	return 1;
}
