/*
 * template.h - the templates of a sync section's id, index and fan-out
 * element id: literal text and {column} placeholders, "{{" and "}}" for a
 * literal brace. Parsed once when the configuration loads; rendering from
 * a row is the shaper's (shaper/id.c), which is the only code that turns
 * row values into a document's identity.
 *
 * Also the globs a templated index claims: every placeholder becomes '*',
 * so "events-{tenant}" claims "events-*" (what a truncate clears, what
 * another section's index must not fall into).
 */
#ifndef TEMPLATE_H
#define TEMPLATE_H

#include <stddef.h>

struct tmpl_part {
	char	*text;		/* literal text, or a column name */
	int	 column;	/* 1: text names a column */
};

struct tmpl {
	struct tmpl_part *parts;
	int	 nparts;
	int	 ncolumns;	/* placeholders */
	int	 nliteral;	/* bytes of literal text */
};

/* 0, or -1 with why ("must ...", "has ...") */
int	tmpl_parse(const char *s, struct tmpl *, char *why, size_t);
void	tmpl_release(struct tmpl *);
/* 1 if a placeholder names column */
int	tmpl_names(const struct tmpl *, const char *column);
/* the glob: literals, '*' for each run of placeholders (heap) */
char	*tmpl_glob(const struct tmpl *);

/* does s match pat ('*' matches any run of bytes, nothing else is
 * special)? */
int	glob_match(const char *pat, const char *s);
/* could one string match both patterns? */
int	glob_overlap(const char *a, const char *b);

#endif
