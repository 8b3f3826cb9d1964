/*
 * pgkind.c - PostgreSQL as a kind of source (lib/source.h): its url, its
 * keys, the stream's identity (a slot and the publication it reads) and
 * its positions (LSNs, which order as the numbers they are). Pure: no
 * connection, so that every program may link it.
 */
#include <stdio.h>
#include <string.h>

#include "lsn.h"
#include "sbuf.h"
#include "source.h"

static const char *const schemes[] = { "postgres://", "postgresql://", NULL };
static const char *const own_keys[] = { "slot_name", "publication",
	"admin_url_env", "slot_failover", NULL };

/* a poll reads no slot: its stream is the slot name's (the name the
 * stream goes by either way) in a document of its own, so that the
 * cursors of a poll and the LSN of a slot of that name never meet */
static int
poll_ident(struct source_ident *id, const struct config *cf)
{
	struct sbuf s = SBUF_INIT;

	id->kind = "postgres";
	sbuf_addf(&s, "postgres-poll:%s", cf->slot_name);
	id->doc_id = s.buf;
	source_ident_bind(id, "slot", xstrdup(cf->slot_name));
	source_ident_bind(id, "mode", xstrdup("poll"));
	return 0;
}

/* a slot is one stream; the publication says which tables it carries,
 * so a checkpoint of another publication on the same slot name is not
 * ours */
static int
ident(struct source_ident *id, const struct config *cf, char *err,
    size_t errlen)
{
	struct sbuf s = SBUF_INIT;

	if (cf->poll && cf->slot_name != NULL)
		return poll_ident(id, cf);
	if (cf->slot_name == NULL || cf->publication == NULL) {
		snprintf(err, errlen, "a postgres source without a slot or a "
		    "publication");
		return -1;
	}
	id->kind = "postgres";
	sbuf_addf(&s, "postgres:%s", cf->slot_name);
	id->doc_id = s.buf;
	source_ident_bind(id, "slot", xstrdup(cf->slot_name));
	source_ident_bind(id, "publication", xstrdup(cf->publication));
	return 0;
}

static void
pos_show(const char *text, char *buf, size_t len)
{
	snprintf(buf, len, "%s", text);
}

/* a slot is the server's (every database shares them), a publication
 * its database's */
static int
clash(const struct config *a, const struct config *b, char *why,
    size_t len)
{
	struct source_server sa, sb;

	/* a poll takes nothing of the server's: the documents it shares
	 * are the set's own rule */
	if (a->poll || b->poll)
		return 0;
	source_server_of(a, 5432, &sa);
	source_server_of(b, 5432, &sb);
	if (strcmp(sa.server, sb.server) != 0)
		return 0;
	if (strcmp(a->slot_name, b->slot_name) == 0) {
		snprintf(why, len, "slot '%s' on server %s",
		    a->slot_name, sa.server);
		return 1;
	}
	if (strcmp(sa.db, sb.db) == 0 &&
	    strcmp(a->publication, b->publication) == 0) {
		snprintf(why, len, "publication '%s' in database '%s' on "
		    "server %s", a->publication, sa.db, sa.server);
		return 1;
	}
	return 0;
}

const struct source_module source_postgres = {
	.kind = "postgres",
	.noun = "postgresql",
	.title = "PostgreSQL",
	.capture = "capture-pg",
	.schemes = schemes,
	.conninfo = 1,
	.own_keys = own_keys,
	.required_key = NULL,
	.max_load_workers = 16,
	.default_schema = "public",
	.schema_word = "schema",
	/* the slot keeps the stream's start however long the load takes */
	.start_held = 0,
	.poll = 1,
	.pos_form = "an LSN, as 0/16B3748",
	.ident = ident,
	.pos_coord = lsn_parse,
	.pos_show = pos_show,
	.clash = clash,
};
