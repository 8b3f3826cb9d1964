/*
 * source.c - the list of kinds of source and what is asked of the list:
 * which kind a url names, every accepted url form, and the stream's
 * identity through its kind. The kinds themselves are data in their own
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
