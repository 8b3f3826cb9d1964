/*
 * mykind.c - MySQL and MariaDB as a kind of source (lib/source.h): its
 * urls, its keys, the stream's identity (our replica id) and its
 * positions ("binlog.000004:1234;gtid=<set>", ordered by the file's
 * number, then the offset). Pure: no connection, so that every program
 * may link it.
 */
#include <stdio.h>
#include <string.h>

#include "mysql/mygtid.h"
#include "sbuf.h"
#include "source.h"

static const char *const schemes[] = { "mysql://", "mariadb://", NULL };
static const char *const own_keys[] = { "server_id", NULL };

/* the binlog has no server-side position: our replica id names the
 * stream, and changing it starts a new one, with a new load */
static int
ident(struct source_ident *id, const struct config *cf, char *err,
    size_t errlen)
{
	struct sbuf s = SBUF_INIT;

	if (cf->server_id == 0) {
		snprintf(err, errlen, "a mysql source without a server_id");
		return -1;
	}
	id->kind = "mysql";
	sbuf_addf(&s, "mysql:%lu", cf->server_id);
	id->doc_id = s.buf;
	source_ident_bind(id, "server_id", xstrdup(s.buf + 6));
	return 0;
}

/* the file's number and the offset; the generation a position number
 * carries is not in the text, and the GTID set does not order it */
static int
pos_coord(const char *text, uint64_t *coord)
{
	struct mypos mp;
	char why[128];
	long long idx;

	memset(&mp, 0, sizeof(mp));
	if (mypos_parse(&mp, text, why, sizeof(why)) == -1) {
		mypos_release(&mp);
		return -1;
	}
	idx = binlog_file_index(mp.file, strlen(mp.file));
	if (idx >= 0)
		*coord = mypos_coord((uint64_t)idx, mp.offset);
	mypos_release(&mp);
	return idx < 0 ? -1 : 0;
}

/* the coordinate, not the GTID set that follows it */
static void
pos_show(const char *text, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(text, ";"), text);
}

/* a server ends the older of two dumps announcing one replica id */
static int
clash(const struct config *a, const struct config *b, char *why,
    size_t len)
{
	struct source_server sa, sb;

	source_server_of(a, 3306, &sa);
	source_server_of(b, 3306, &sb);
	if (strcmp(sa.server, sb.server) != 0 || a->server_id != b->server_id)
		return 0;
	snprintf(why, len, "replica id (server_id) %lu on server %s",
	    a->server_id, sa.server);
	return 1;
}

const struct source_module source_mysql = {
	.kind = "mysql",
	.noun = "mysql",
	.title = "MySQL",
	.capture = "capture-mysql",
	.schemes = schemes,
	.conninfo = 0,
	.own_keys = own_keys,
	.required_key = "server_id",
	/* a chunk's start is the key the last one ended at: one at a time */
	.max_load_workers = 1,
	.default_schema = NULL,
	.schema_word = "database",
	.start_held = 1,
	.pos_form = "binlog file:offset, as binlog.000004:1234",
	.ident = ident,
	.pos_coord = pos_coord,
	.pos_show = pos_show,
	.clash = clash,
};
