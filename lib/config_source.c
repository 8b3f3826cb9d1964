/*
 * config_source.c - the source section: where changes are read from. Owns
 * its keys, the kind of source a connection string names, and the rules
 * between its keys (url or url_env, the keys only one kind of source
 * takes, sslcert with sslkey). Without the url (a program that does not
 * resolve url_env) the kind of source is the one its keys name.
 *
 * It never quotes a connection string: it may hold a password.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_sections.h"

static int
check_slot(const char *s, char *why, size_t len)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");

	if (s[n] != '\0' || n > 63) {
		snprintf(why, len, "must be 1 to 63 characters from a-z, 0-9 "
		    "and _");
		return -1;
	}
	return 0;
}

/* PostgreSQL truncates longer names, which then would not match */
static int
check_ident63(const char *s, char *why, size_t len)
{
	if (strlen(s) > 63) {
		snprintf(why, len, "must be at most 63 bytes long");
		return -1;
	}
	return 0;
}

/* a label value every metric series carries: printable, no quote or
 * backslash a scraper would have to unescape */
static int
check_source_name(const char *s, char *why, size_t len)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-/");

	if (s[n] != '\0' || n > 128) {
		snprintf(why, len, "must be 1 to 128 characters from a-z, A-Z, "
		    "0-9 and _ . : - /");
		return -1;
	}
	return 0;
}

/* what the supervisor does when the position a checkpoint names is gone */
static const char *const on_lost[] = { "reload", "halt", NULL };

static const char *const sslmodes[] = {
	"disable", "allow", "prefer", "require", "verify-ca", "verify-full",
	NULL
};

const struct cs_node config_source_keys[] = {
	{ "url", CS_STR, CFG(source_url) },
	{ "url_env", CS_STR, CFG(source_url_env),
	    .check = config_check_envname },
	{ "slot_name", CS_STR, CFG(slot_name), .def = "pg2osync",
	    .check = check_slot },
	{ "publication", CS_STR, CFG(publication), .def = "pg2osync",
	    .check = check_ident63 },
	/* MySQL's server_id is 32-bit unsigned, 0 meaning "not a replica" */
	{ "server_id", CS_ULONG, CFG(server_id), .min = 1,
	    .max = 4294967295LL },
	{ "sslmode", CS_ENUM, CFG(sslmode), .choices = sslmodes },
	{ "sslrootcert", CS_STR, CFG(sslrootcert) },
	{ "sslcert", CS_STR, CFG(sslcert) },
	{ "sslkey", CS_STR, CFG(sslkey) },
	{ "load_workers", CS_INT, CFG(load_workers), .def = "1",
	    .min = 1, .max = 16 },
	{ "on_lost_position", CS_ENUM, CFG(on_lost_position), .def = "reload",
	    .choices = on_lost },
	{ "reconnect_max", CS_INT, CFG(reconnect_max), .def = "10",
	    .min = 0, .max = INT_MAX },
	{ "reconnect_backoff_ms", CS_INT, CFG(reconnect_backoff_ms),
	    .def = "1000", .min = 100, .max = 300000 },
	{ "name", CS_STR, CFG(source_name), .check = check_source_name },
	{ NULL }
};

/* 0 if url is none of the accepted forms */
static enum source_kind
source_kind_of(const char *url)
{
	if (config_has_prefix(url, "postgres://") ||
	    config_has_prefix(url, "postgresql://"))
		return SOURCE_POSTGRES;
	if (config_has_prefix(url, "mysql://") ||
	    config_has_prefix(url, "mariadb://"))
		return SOURCE_MYSQL;
	/* a libpq conninfo string: "host=db dbname=app user=sync" */
	if (strstr(url, "://") == NULL && strchr(url, '=') != NULL)
		return SOURCE_POSTGRES;
	return 0;
}

/* the keys that name a PostgreSQL stream mean nothing to MySQL, and the
 * reverse: set anyway, they would look like they did something */
static int
check_kind_keys(struct cs_walk *w, struct config *cfg, int line)
{
	int lslot = cs_line(w, "source.slot_name");
	int lpub = cs_line(w, "source.publication");
	int lsid = cs_line(w, "source.server_id");
	int llw = cs_line(w, "source.load_workers");

	if (cfg->source_kind == SOURCE_POSTGRES) {
		if (lsid)
			return cs_err(w, lsid, "'source.server_id' applies only "
			    "to a mysql source");
		return 0;
	}
	/* the first in the file */
	if (lpub && (!lslot || lpub < lslot))
		lslot = 0;
	if (lslot || lpub)
		return cs_err(w, lslot ? lslot : lpub, "'source.%s' applies "
		    "only to a postgresql source", lslot ? "slot_name" :
		    "publication");
	if (!lsid)
		return cs_err(w, line, "missing required key "
		    "'source.server_id' for a mysql source");
	/* a chunk's start is the key the last one ended at: one at a time */
	if (llw && cfg->load_workers > 1)
		return cs_err(w, llw, "'source.load_workers' above 1 applies "
		    "only to a postgresql source (a mysql table is read in "
		    "key order, one chunk after another)");
	/* their defaults would name a stream that is not there */
	free(cfg->slot_name);
	free(cfg->publication);
	cfg->slot_name = cfg->publication = NULL;
	return 0;
}

int
config_source_finish(struct cs_walk *w, void *base, const char *path,
    int line)
{
	struct config *cfg = base;
	int lurl = cs_line(w, "source.url");
	int lenv = cs_line(w, "source.url_env");
	int lcert = cs_line(w, "source.sslcert");
	int lkey = cs_line(w, "source.sslkey");

	if (lurl && lenv)
		return cs_err(w, lurl > lenv ? lurl : lenv, "'source.url' and "
		    "'source.url_env' cannot both be set");
	if (!lurl && !lenv)
		return cs_err(w, line, "missing required key 'source.url' (or "
		    "'source.url_env')");
	if (lenv && config_resolve_env(w, "source.url_env", lenv,
	    cfg->source_url_env, &cfg->source_url) == -1)
		return -1;
	/* a program that connects to no source reads no url: the kind is
	 * the one server_id names, which every file a program with the url
	 * loads agrees with (check_kind_keys) */
	if (cfg->source_url == NULL)
		cfg->source_kind = cs_line(w, "source.server_id") ?
		    SOURCE_MYSQL : SOURCE_POSTGRES;
	else if ((cfg->source_kind = source_kind_of(cfg->source_url)) == 0) {
		if (lenv)
			return cs_err(w, lenv, "'source.url_env': the value of "
			    "'%s' must be a postgres://, postgresql://, "
			    "mysql:// or mariadb:// url, or a key=value "
			    "conninfo string", cfg->source_url_env);
		return cs_err(w, lurl, "'source.url' must be a postgres://, "
		    "postgresql://, mysql:// or mariadb:// url, or a "
		    "key=value conninfo string");
	}
	if (!lcert != !lkey)
		return cs_err(w, lcert ? lcert : lkey, "'source.sslcert' and "
		    "'source.sslkey' must be set together");
	return check_kind_keys(w, cfg, line);
}
