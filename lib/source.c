/*
 * source.c - the per-kind facts the generic stages need: the capture
 * program and the identity of a stream. Owns the checkpoint document id of
 * each kind, so ckpt and the supervisor never build one by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "source.h"

static void
bind(struct source_ident *id, const char *name, char *value)
{
	id->bind_name[id->nbind] = name;
	id->bind_value[id->nbind++] = value;
}

int
source_ident_init(struct source_ident *id, const struct config *cf,
    char *err, size_t errlen)
{
	struct sbuf s = SBUF_INIT;

	memset(id, 0, sizeof(*id));
	switch (cf->source_kind) {
	case SOURCE_POSTGRES:
		/* a slot is one stream; the publication says which tables
		 * it carries, so a checkpoint of another publication on the
		 * same slot name is not ours */
		id->kind = "postgres";
		sbuf_addf(&s, "postgres:%s", cf->slot_name);
		bind(id, "slot", xstrdup(cf->slot_name));
		bind(id, "publication", xstrdup(cf->publication));
		break;
	case SOURCE_MYSQL:
		/* the binlog has no server-side position: our replica id
		 * names the stream: changing it starts a new one, with a new load */
		id->kind = "mysql";
		sbuf_addf(&s, "mysql:%lu", cf->server_id);
		bind(id, "server_id", xstrdup(s.buf + 6));
		break;
	default:
		snprintf(err, errlen, "unknown source kind %d",
		    (int)cf->source_kind);
		return -1;
	}
	id->doc_id = s.buf;
	return 0;
}

void
source_ident_release(struct source_ident *id)
{
	int i;

	for (i = 0; i < id->nbind; i++)
		free(id->bind_value[i]);
	free(id->doc_id);
	memset(id, 0, sizeof(*id));
}

const char *
source_capture(enum source_kind k)
{
	return k == SOURCE_MYSQL ? "capture-mysql" : "capture-pg";
}
