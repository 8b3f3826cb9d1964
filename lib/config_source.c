/*
 * config_source.c - the source section: where changes are read from. Owns
 * its keys, the kind of source a connection string names, and the rules
 * between its keys (url or url_env, the keys only one kind of source
 * takes, sslcert with sslkey, an admin url of the source's own kind). Without the url (a program that does not
 * resolve url_env) the kind of source is the one its keys name.
 *
 * It never quotes a connection string: it may hold a password.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_sections.h"
#include "sbuf.h"
#include "source.h"

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

/* the log (a slot, a binlog) or pages read again (poll mode) */
static const char *const modes[] = { "stream", "poll", NULL };

static const char *const sslmodes[] = {
	"disable", "allow", "prefer", "require", "verify-ca", "verify-full",
	NULL
};

const struct cs_node config_source_keys[] = {
	{ "url", CS_STR, CFG(source_url) },
	{ "url_env", CS_STR, CFG(source_url_env),
	    .check = config_check_envname },
	{ "admin_url_env", CS_STR, CFG(source_admin_url_env),
	    .check = config_check_envname },
	{ "slot_name", CS_STR, CFG(slot_name), .def = "pg2osync",
	    .check = check_slot },
	{ "publication", CS_STR, CFG(publication), .def = "pg2osync",
	    .check = check_ident63 },
	/* PostgreSQL 17 and later: a physical standby keeps a copy */
	{ "slot_failover", CS_BOOL, CFG(slot_failover), .def = "false" },
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
	{ "mode", CS_ENUM, CFG(source_mode), .def = "stream",
	    .choices = modes },
	{ "poll_column", CS_STR, CFG(poll_column), .check = check_ident63 },
	{ "poll_interval_secs", CS_INT, CFG(poll_interval_secs), .def = "5",
	    .min = 1, .max = 86400 },
	{ "poll_page_size", CS_INT, CFG(poll_page_size), .def = "1000",
	    .min = 1, .max = 100000 },
	{ NULL }
};

/* the first of a kind's own keys set in the file: its line, and the key
 * in *key; 0 when none is */
static int
own_key_line(struct cs_walk *w, const struct source_module *m,
    const char **key)
{
	int i, l, first = 0;

	for (i = 0; m->own_keys[i] != NULL; i++) {
		if ((l = cs_line(w, "source.%s", m->own_keys[i])) &&
		    (!first || l < first)) {
			first = l;
			*key = m->own_keys[i];
		}
	}
	return first;
}

/* the kind a file names without a url: the one whose required key it
 * sets, else the first (a program that connects to no source reads no
 * url; every file a program with the url loads agrees, check_kind_keys) */
static const struct source_module *
kind_of_keys(struct cs_walk *w)
{
	const struct source_module *const *m;

	for (m = source_modules; *m != NULL; m++)
		if ((*m)->required_key != NULL &&
		    cs_line(w, "source.%s", (*m)->required_key))
			return *m;
	return source_modules[0];
}

/* the values of keys (a string's default, a number's) back to none */
static void
clear_keys(struct config *cfg, const char *const *keys)
{
	const struct cs_node *n;
	int i;

	for (i = 0; keys[i] != NULL; i++)
		for (n = config_source_keys; n->name != NULL; n++) {
			if (strcmp(n->name, keys[i]) != 0)
				continue;
			if (n->kind == CS_STR) {
				free(*(char **)((char *)cfg + n->off));
				*(char **)((char *)cfg + n->off) = NULL;
			} else if (n->kind == CS_ULONG)
				*(unsigned long *)((char *)cfg + n->off) = 0;
		}
}

/* the keys that name one kind's stream mean nothing to another: set
 * anyway, they would look like they did something */
static int
check_kind_keys(struct cs_walk *w, struct config *cfg, int line)
{
	const struct source_module *const *m, *k = cfg->source;
	const char *key = NULL;
	int l, llw = cs_line(w, "source.load_workers");

	for (m = source_modules; *m != NULL; m++) {
		if (*m == k || (l = own_key_line(w, *m, &key)) == 0)
			continue;
		return cs_err(w, l, "'source.%s' applies only to a %s source",
		    key, (*m)->noun);
	}
	if (k->required_key != NULL && !cs_line(w, "source.%s",
	    k->required_key))
		return cs_err(w, line, "missing required key 'source.%s' for a "
		    "%s source", k->required_key, k->noun);
	if (llw && cfg->load_workers > k->max_load_workers) {
		for (m = source_modules; *m != NULL; m++)
			if ((*m)->max_load_workers >= cfg->load_workers)
				break;
		return cs_err(w, llw, "'source.load_workers' above %d applies "
		    "only to a %s source (a %s table is read in key order, "
		    "one chunk after another)", k->max_load_workers,
		    *m ? (*m)->noun : "other", k->noun);
	}
	/* the defaults of another kind's keys would name a stream that is
	 * not there */
	for (m = source_modules; *m != NULL; m++)
		if (*m != k)
			clear_keys(cfg, (*m)->own_keys);
	return 0;
}

/* the admin url, resolved with the source's url and of the same kind
 * (a kind that takes none refused it in check_kind_keys) */
static int
admin_url(struct cs_walk *w, struct config *cfg)
{
	int l = cs_line(w, "source.admin_url_env");

	if (!l)
		return 0;
	if (config_resolve_env(w, "source.admin_url_env", l,
	    cfg->source_admin_url_env, &cfg->source_admin_url) == -1)
		return -1;
	/* a program that reads no secret of the source's */
	if (cfg->source_admin_url == NULL)
		return 0;
	if (source_for_url(cfg->source_admin_url) != cfg->source)
		return cs_err(w, l, "'source.admin_url_env': the value of '%s' "
		    "must be a url of the same %s source",
		    cfg->source_admin_url_env, cfg->source->noun);
	return 0;
}

static int poll_mode(struct cs_walk *, struct config *);

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
	if (cfg->source_url == NULL)
		cfg->source = kind_of_keys(w);
	else if ((cfg->source = source_for_url(cfg->source_url)) == NULL) {
		if (lenv)
			return cs_err(w, lenv, "'source.url_env': the value of "
			    "'%s' must be a %s", cfg->source_url_env,
			    source_url_forms());
		return cs_err(w, lurl, "'source.url' must be a %s",
		    source_url_forms());
	}
	if (!lcert != !lkey)
		return cs_err(w, lcert ? lcert : lkey, "'source.sslcert' and "
		    "'source.sslkey' must be set together");
	if (check_kind_keys(w, cfg, line) == -1 || poll_mode(w, cfg) == -1)
		return -1;
	return admin_url(w, cfg);
}

const char *
config_poll_column(const struct config *cfg, const struct sync_section *s)
{
	const struct sync_more *m = sync_more(s);

	return m->poll_column ? m->poll_column : cfg->poll_column;
}

/* a section's poll-mode key, refused outside the mode */
static int
section_poll_keys(struct cs_walk *w, const struct config *cfg,
    const struct sync_section *s)
{
	const struct sync_more *m = sync_more(s);
	static const char *const keys[] = { "poll_column", "soft_delete",
		NULL };
	struct sbuf path = SBUF_INIT;
	int i, l, rc = 0;

	config_sec_path(s, &path);
	for (i = 0; !cfg->poll && keys[i] != NULL && rc == 0; i++)
		if ((l = cs_line(w, "%s.%s", path.buf, keys[i])))
			rc = cs_err(w, l, "'%s.%s' applies only in poll mode "
			    "(source.mode: poll)", path.buf, keys[i]);
	if (!cfg->poll || rc == -1)
		goto out;
	/* the pages are ordered by it, and by the key after it */
	if (config_poll_column(cfg, s) == NULL)
		rc = cs_err(w, s->line, "'%s' has no poll column: set "
		    "'source.poll_column' or '%s.poll_column'", path.buf,
		    path.buf);
	else if (s->append_only)
		rc = cs_err(w, cs_line(w, "%s.append_only", path.buf), "'%s."
		    "append_only' cannot be polled: a page resumes after the "
		    "key of its last row", path.buf);
	/* a collection's rows change without their parent's column
	 * moving: nothing would ever read them again */
	else if (m->nchildren || m->naggregates)
		rc = cs_err(w, cs_line(w, "%s.%s", path.buf, m->nchildren ?
		    "children" : "aggregates"), "'%s.%s' cannot be polled: "
		    "its rows change without the parent's poll column moving",
		    path.buf, m->nchildren ? "children" : "aggregates");
out:
	sbuf_release(&path);
	return rc;
}

/*
 * Poll mode is a kind's (its module says so); its keys mean nothing in
 * the other mode. Runs twice: at the source (the mode, the source's own
 * poll keys) and once the sections are read (config_source_poll).
 */
static int
poll_mode(struct cs_walk *w, struct config *cfg)
{
	static const char *const keys[] = { "poll_column",
		"poll_interval_secs", "poll_page_size", NULL };
	const struct source_module *const *m;
	int i, l, lmode = cs_line(w, "source.mode");

	cfg->poll = strcmp(cfg->source_mode, "poll") == 0;
	if (cfg->poll && !cfg->source->poll) {
		for (m = source_modules; *m != NULL && !(*m)->poll; m++)
			;
		return cs_err(w, lmode, "'source.mode: poll' applies only to "
		    "a %s source (a %s source streams its log)",
		    *m ? (*m)->noun : "other", cfg->source->noun);
	}
	for (i = 0; !cfg->poll && keys[i] != NULL; i++)
		if ((l = cs_line(w, "source.%s", keys[i])))
			return cs_err(w, l, "'source.%s' applies only in poll "
			    "mode (source.mode: poll)", keys[i]);
	return 0;
}

int
config_source_poll(struct cs_walk *w, const struct config *cfg)
{
	int i, l;

	for (i = 0; i < cfg->nsyncs; i++)
		if (section_poll_keys(w, cfg, &cfg->syncs[i]) == -1)
			return -1;
	/* /synced waits for a position of the log; a poll has none */
	if (cfg->poll && (l = cs_line(w, "api.bind")))
		return cs_err(w, l, "'api.bind' (/synced) needs a position in "
		    "the source's log, which poll mode does not read");
	return 0;
}

void
config_source_release(void *base)
{
	struct config *cfg = base;

	free(cfg->source_admin_url);
	cfg->source_admin_url = NULL;
}
