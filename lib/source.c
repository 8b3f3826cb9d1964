/*
 * source.c - the list of kinds of source and what is asked of the list:
 * which kind a url names, every accepted url form, the stream's identity
 * through its kind, and the server a url's text names (for the rules of a
 * set of files, read without connecting). The kinds themselves are data in their own
 * folders (lib/pg/pgkind.c, lib/mysql/mykind.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "source.h"

extern const struct source_module source_postgres, source_mysql;

/* PostgreSQL first: a file naming no kind is a PostgreSQL one */
const struct source_module *const source_modules[] = {
	&source_postgres, &source_mysql, NULL
};

static int
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

const struct source_module *
source_for_url(const char *url)
{
	const struct source_module *const *m;
	const char *const *sc;

	for (m = source_modules; *m != NULL; m++)
		for (sc = (*m)->schemes; *sc != NULL; sc++)
			if (has_prefix(url, *sc))
				return *m;
	/* a libpq conninfo string: "host=db dbname=app user=sync" */
	if (strstr(url, "://") == NULL && strchr(url, '=') != NULL)
		for (m = source_modules; *m != NULL; m++)
			if ((*m)->conninfo)
				return *m;
	return NULL;
}

const char *
source_url_forms(void)
{
	static char forms[256];
	const struct source_module *const *m;
	const char *const *sc;
	const char *last = NULL;
	size_t n = 0;
	int conninfo = 0;

	if (forms[0] != '\0')
		return forms;
	/* "a, b, c or d url": each scheme is written when the next is met */
	for (m = source_modules; *m != NULL; m++) {
		for (sc = (*m)->schemes; *sc != NULL; sc++) {
			if (last != NULL)
				n += (size_t)snprintf(forms + n, sizeof(forms) - n,
				    "%s%s", n ? ", " : "", last);
			last = *sc;
		}
		conninfo |= (*m)->conninfo;
	}
	snprintf(forms + n, sizeof(forms) - n, "%s%s url%s", n ? " or " : "",
	    last ? last : "", conninfo ? ", or a key=value conninfo string" :
	    "");
	return forms;
}

int
source_ident_init(struct source_ident *id, const struct config *cf,
    char *err, size_t errlen)
{
	memset(id, 0, sizeof(*id));
	if (cf->source == NULL) {
		snprintf(err, errlen, "the configuration names no source");
		return -1;
	}
	return cf->source->ident(id, cf, err, errlen);
}

void
source_ident_bind(struct source_ident *id, const char *name, char *value)
{
	/* the kinds bind at most SOURCE_BIND_MAX members: a fixed list */
	if (id->nbind == SOURCE_BIND_MAX)
		abort();
	id->bind_name[id->nbind] = name;
	id->bind_value[id->nbind++] = value;
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

/* a conninfo keyword's value ("host=db port=5433"), unquoted; 0 none */
static int
conninfo_value(const char *s, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key), n;
	const char *p = s;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == s || p[-1] == ' ') && p[kl] == '=') {
			p += kl + 1;
			if (*p == '\'') {
				p++;
				n = strcspn(p, "'");
			} else
				n = strcspn(p, " ");
			snprintf(buf, len, "%.*s", (int)n, p);
			return 1;
		}
		p += kl;
	}
	return 0;
}

void
source_server_of(const struct config *cf, int default_port,
    struct source_server *sv)
{
	const char *u = cf->source_url, *auth, *end, *at, *hp, *colon, *db;
	char host[256] = "", port[32] = "";
	size_t n;

	memset(sv, 0, sizeof(*sv));
	if (u == NULL) {
		snprintf(sv->server, sizeof(sv->server), "$%s",
		    cf->source_url_env ? cf->source_url_env : "?");
		return;
	}
	if ((auth = strstr(u, "://")) == NULL) {
		if (!conninfo_value(u, "host", host, sizeof(host)))
			snprintf(host, sizeof(host), "localhost");
		conninfo_value(u, "port", port, sizeof(port));
		conninfo_value(u, "dbname", sv->db, sizeof(sv->db));
	} else {
		auth += 3;
		end = auth + strcspn(auth, "/?#");
		for (at = NULL, hp = auth; hp < end; hp++)
			if (*hp == '@')
				at = hp;
		hp = at ? at + 1 : auth;
		/* [v6]:port, host:port, host */
		colon = *hp == '[' ? memchr(hp, ']', (size_t)(end - hp)) : hp;
		colon = colon ? memchr(colon, ':', (size_t)(end - colon)) : NULL;
		n = (size_t)((colon ? colon : end) - hp);
		snprintf(host, sizeof(host), "%.*s", (int)n, hp);
		if (colon)
			snprintf(port, sizeof(port), "%.*s",
			    (int)(end - colon - 1), colon + 1);
		if (*end == '/') {
			db = end + 1;
			snprintf(sv->db, sizeof(sv->db), "%.*s",
			    (int)strcspn(db, "?#"), db);
		}
	}
	if (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "::1") == 0 ||
	    strcmp(host, "[::1]") == 0)
		snprintf(host, sizeof(host), "localhost");
	snprintf(sv->server, sizeof(sv->server), "%s:%s", host[0] ? host :
	    "localhost", port[0] ? port : "");
	if (!port[0])
		snprintf(sv->server + strlen(sv->server), sizeof(sv->server) -
		    strlen(sv->server), "%d", default_port);
}
