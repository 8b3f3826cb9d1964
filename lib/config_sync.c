/*
 * config_sync.c - one sync section: the table a section follows and what
 * its documents hold. Owns the section's keys, the form of a table and an
 * index name, and the rules inside one section. Rules between sections,
 * and those that depend on the kind of source, are lib/config.c's.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_sections.h"
#include "sbuf.h"

#define SYN(f)	offsetof(struct sync_section, f)

static int
check_table(const char *s, char *why, size_t len)
{
	const char *dot = strchr(s, '.');

	if (s[strcspn(s, " \t\r\n\"`")] != '\0' || dot == s ||
	    (dot && (dot[1] == '\0' || strchr(dot + 1, '.')))) {
		snprintf(why, len, "must be 'schema.table' or 'table'");
		return -1;
	}
	return 0;
}

/* OpenSearch's index name rules */
static int
check_index(const char *s, char *why, size_t len)
{
	const char *c;

	if (strlen(s) > 255) {
		snprintf(why, len, "must be at most 255 bytes long");
		return -1;
	}
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
		snprintf(why, len, "must not be '.' or '..'");
		return -1;
	}
	if (*s == '_' || *s == '-' || *s == '+') {
		snprintf(why, len, "must not start with '%c'", *s);
		return -1;
	}
	for (c = s; *c; c++) {
		if (isupper((unsigned char)*c)) {
			snprintf(why, len, "must be lowercase");
			return -1;
		}
		if (strchr("\\/*?\"<>|,#: ", *c) ||
		    iscntrl((unsigned char)*c)) {
			if (isprint((unsigned char)*c))
				snprintf(why, len, "must not contain '%c'", *c);
			else
				snprintf(why, len, "must not contain control "
				    "characters");
			return -1;
		}
	}
	return 0;
}

static const struct cs_node column = { NULL, CS_STR };

static const struct cs_node section_keys[] = {
	/* table lands in rel as written; finish_section() splits it */
	{ "table", CS_STR, SYN(rel), .required = 1, .check = check_table },
	{ "index", CS_STR, SYN(index), .check = check_index },
	{ "columns", CS_LIST, SYN(columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = SYN(ncolumns),
	    .distinct = 1 },
	{ "exclude_columns", CS_LIST, SYN(exclude_columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = SYN(nexclude_columns),
	    .distinct = 1 },
	{ NULL }
};

static int
finish_section(struct cs_walk *w, void *base, const char *path, int line)
{
	struct sync_section *s = base;
	char why[256];
	int lc = cs_line(w, "%s.columns", path);
	int lx = cs_line(w, "%s.exclude_columns", path);
	const char *dot;

	if (lc && lx)
		return cs_err(w, lc > lx ? lc : lx, "'%s.%s' cannot be "
		    "combined with '%s.%s'", path, lc > lx ? "columns" :
		    "exclude_columns", path, lc > lx ? "exclude_columns" :
		    "columns");

	/* schema stays NULL when unqualified: lib/config.c knows the
	 * source kind and so what the default is */
	if ((dot = strchr(s->rel, '.')) != NULL) {
		s->schema = xstrndup(s->rel, (size_t)(dot - s->rel));
		s->table = xstrdup(dot + 1);
	} else
		s->table = xstrdup(s->rel);

	if (s->index == NULL) {
		if (check_index(s->table, why, sizeof(why)) == -1)
			return cs_err(w, line, "'%s.index' is not set and the "
			    "table name '%s' is not a valid index name: it %s",
			    path, s->table, why);
		s->index = xstrdup(s->table);
	}
	return 0;
}

static void
release_section(void *base)
{
	struct sync_section *s = base;

	free(s->schema);
	free(s->table);
	s->schema = s->table = NULL;
}

const struct cs_node config_sync_section = {
	NULL, CS_STRUCT, .keys = section_keys, .finish = finish_section,
	.release = release_section
};
