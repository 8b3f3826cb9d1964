/*
 * config_schema.h - configuration keys declared in tables, and the one
 * walker that reads a YAML document into C structures by them
 * (config_schema.c). Internal to lib/config*.c; a unit test may declare a
 * table of its own to prove a kind no real key uses yet.
 *
 * A table is an array of struct cs_node ending with a NULL name. Each entry
 * says where its value lives: off is an offset into the structure the table
 * describes (the base). A CS_STRUCT entry's own table describes base + off,
 * so a section can be a plain part of a bigger structure (off 0) or a
 * member struct. CS_LIST and CS_MAP values are arrays the walker allocates:
 * elem says what one element is, and its off is within the element.
 *
 * Paths in messages: keys join with '.', list elements take their 0-based
 * index in brackets: 'sync.items.columns', 'a.children[2].table', and a
 * map entry is named by its key: 'sync.items.transform.email'.
 */
#ifndef CONFIG_SCHEMA_H
#define CONFIG_SCHEMA_H

#include <stddef.h>

enum cs_kind {
	CS_STR,		/* char *: a non-empty string, optionally checked */
	CS_INT,		/* int in [min, max] */
	CS_ULONG,	/* unsigned long in [min, max] (0 <= min) */
	CS_BOOL,	/* int 0 or 1: true or false, nothing else */
	CS_SIZE,	/* size_t in [min, max]: 5242880 or "5MiB" */
	CS_ENUM,	/* char *: one of choices */
	CS_LIST,	/* a non-empty list of elem */
	CS_MAP,		/* a non-empty mapping of name -> elem */
	CS_STRUCT,	/* a mapping of the fixed keys in keys */
};

struct cs_walk;
struct sbuf;

struct cs_node {
	const char	*name;		/* key in its table; NULL ends it */
	enum cs_kind	 kind;
	size_t		 off;
	int		 required;	/* when its mapping is there */
	const char	*def;		/* scalars: read like a value from the
					   file, before the file is read */

	/* scalars */
	long long	 min, max;
	/* CS_STR: 0 if s is acceptable, else -1 and why ("must ...") */
	int		(*check)(const char *s, char *why, size_t);
	const char *const *choices;	/* CS_ENUM, NULL-terminated */
	/* CS_STR: store in the int at plain_off whether the scalar was
	 * written unquoted, for a key whose value may be a number or a
	 * boolean as well as a string */
	int		 typed;
	size_t		 plain_off;

	/* CS_LIST, CS_MAP: elem_size-byte elements in one array at off,
	 * their int count at count_off */
	const struct cs_node *elem;
	size_t		 elem_size;
	size_t		 count_off;
	size_t		 name_off;	/* CS_MAP: the element's char *name */
	int		 has_line;	/* store the element's line ... */
	size_t		 line_off;	/* ... in the int here */
	int		 distinct;	/* list of scalars: no value twice */

	/* CS_STRUCT */
	const struct cs_node *keys;
	/* cross-key rules, run once the whole file is read (innermost,
	 * then in file order); path names this mapping, line is its key's */
	int		(*finish)(struct cs_walk *, void *base,
			    const char *path, int line);
	/* frees what finish added beyond the table's own keys */
	void		(*release)(void *base);

	/* via_size > 0: the key's value lives in a via_size-byte structure
	 * the pointer at base + via_off points to, made when the file first
	 * sets one of its keys (a section's rarely set parts, issue 38);
	 * off is within it. Such a key takes no default: nothing is made
	 * for a key the file does not set */
	size_t		 via_off;
	size_t		 via_size;

	/* a value of the other shape (a scalar where this node takes a
	 * mapping or a list, or the reverse) is read by alt instead, into
	 * the same base: one key, two spellings */
	const struct cs_node *alt;

	/* messages, instead of the generic ones */
	const char	*expect;	/* "must be ..." on a wrong kind */
	const char	*empty;		/* "must ..." on an empty list/map */
};

/*
 * Reads buf (name stands for the file in messages) into base by root, a
 * CS_STRUCT with off 0: defaults first, then every key, then the finish
 * rules. 0, or -1 with "name:line: message" in err; either way base owns
 * what was stored and cs_release frees it.
 */
int	cs_load(const struct cs_node *root, void *base, const char *name,
	    const char *buf, size_t len, char *err, size_t errlen);
/* frees every string and array root's keys stored in base; zeroes them */
void	cs_release(const struct cs_node *root, void *base);

/* where key s's value lives in base: base, else (a key with via_size)
 * the structure its pointer points to, or an all-zero one of that size
 * when the pointer is NULL - to read, never to write */
const void *cs_via(const struct cs_node *s, const void *base);

/* for finish rules */
int	cs_err(struct cs_walk *, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* the line of the key (or list element) at the formatted path, 0 if the
 * file did not hold it */
int	cs_line(struct cs_walk *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
const char *cs_name(const struct cs_walk *);
/* the structure cs_load reads into (its base argument) */
void	*cs_base(const struct cs_walk *);
/* path += ".name" as the walker writes it */
void	cs_path_add(struct sbuf *path, const char *name);

/* a decimal integer, optionally signed: 0, or -1 */
int	cs_parse_ll(const char *, long long *);

#endif
