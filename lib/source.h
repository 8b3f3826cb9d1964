/*
 * source.h - the kinds of source, as data: one struct source_module per
 * kind (PostgreSQL, MySQL/MariaDB), beside the target's struct
 * target_module. What the generic stages, the supervisor, the configuration
 * and the operator's command need to know about a source without knowing
 * which it is: which capture program reads it, what its url looks like,
 * which keys and table names it takes, what identifies one stream of it
 * (the checkpoint's document id), how its position texts are ordered and
 * shown, and the rules its positions impose on the pipeline.
 *
 * This table is light on purpose: pure data and pure functions, nothing
 * that connects to a server, so that every program may ask it (the shaper,
 * the writer and ckpt link no database client). What needs a server - the
 * contract checks, setup, status, the position now - is the source's
 * operations table (source_ops.h), found from the same configuration.
 *
 * No file outside lib/source* compares kinds of source (130-seams.t): a
 * program asks the module for the fact it needs.
 */
#ifndef SOURCE_H
#define SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SOURCE_BIND_MAX	4

struct source_ident {
	const char *kind;	/* "postgres", "mysql": stored as "source" */
	char	*doc_id;	/* "postgres:<slot>", "mysql:<server_id>" */
	int	 nbind;
	const char *bind_name[SOURCE_BIND_MAX];	/* "slot", "publication" */
	char	*bind_value[SOURCE_BIND_MAX];
};

struct source_module {
	const char *kind;	/* "postgres", "mysql": the checkpoint's
				 * "source", the url a sample shows */
	const char *noun;	/* "postgresql", "mysql": what a refusal
				 * of the configuration calls it */
	const char *title;	/* "PostgreSQL", "MySQL": in messages */
	const char *capture;	/* the program that reads its stream */
	/* url schemes that name it, NULL-ended; and whether a libpq
	 * key=value conninfo string ("host=db dbname=app") does */
	const char *const *schemes;
	int	 conninfo;

	/* configuration: the source.* keys only this kind takes (set for
	 * another kind they would look like they did something), the one
	 * it cannot do without (NULL: none; also the key that names the
	 * kind in a file whose url is not resolved), the most load workers
	 * it can use, and the schema of a table named without one (NULL:
	 * the name must be qualified, a guess would sync the wrong table) */
	const char *const *own_keys;
	const char *required_key;
	int	 max_load_workers;
	const char *default_schema;
	const char *schema_word;	/* what the qualifier is called:
					 * "schema", "database" */

	/*
	 * The server keeps no position for its readers (no slot): until a
	 * checkpoint is stored a restarted capture starts at the server's
	 * position of that moment. So the loader starts only once the
	 * stream's start is stored, and a copy made outside the pipeline
	 * is versioned by the stored checkpoint (its generation).
	 */
	int	 start_held;

	/*
	 * It offers poll mode (source.mode: poll): pages of each table read
	 * again in the order of a column that grows, where the server gives
	 * no replication connection. Its capture then reads no log, needs
	 * no slot, and its positions are its own texts (the cursor of each
	 * table). A kind without it refuses the mode.
	 */
	int	 poll;

	/* the position's form, for a message: "an LSN, as 0/16B3748" */
	const char *pos_form;

	/* the identity of one stream (checkpoint document id and binding):
	 * 0, or -1 with a message */
	int	(*ident)(struct source_ident *, const struct config *,
		    char *err, size_t errlen);
	/* a position text as an ordered number (positions of one stream
	 * compare as these do): 0, or -1 when text is not a position of
	 * this kind */
	int	(*pos_coord)(const char *text, uint64_t *coord);
	/* the part of a position text an operator compares (without the
	 * GTID set a MySQL position carries), into buf */
	void	(*pos_show)(const char *text, char *buf, size_t len);
	/*
	 * Two sources of this kind in one set of files (a --config-dir)
	 * that would take what one stream owns on its server - a slot, a
	 * publication, a replica id: 1 with why ("slot 'x' on server
	 * db:5432"), else 0.
	 */
	int	(*clash)(const struct config *, const struct config *,
		    char *why, size_t len);
};

/* the server a configuration's url names, as far as the text says:
 * "host:port" (the kind's default port when it names none) and the
 * database; an unresolved url (url_env not read) is named by its
 * variable, so two files reading one variable are one server */
struct source_server {
	char	 server[300];
	char	 db[130];
};

/* source.c */

/* every kind, NULL-ended; the first is the one a file names when it
 * names none (no url resolved, no required key of another kind) */
extern const struct source_module *const source_modules[];
/* the kind a url names, or NULL when it names none */
const struct source_module *source_for_url(const char *url);
/* "postgres://, postgresql://, mysql:// or mariadb:// url, or a key=value
 * conninfo string": every accepted form, for a refusal */
const char *source_url_forms(void);
/* 0, or -1 with a message (a configuration without a source) */
int	source_ident_init(struct source_ident *, const struct config *,
	    char *err, size_t errlen);
void	source_ident_release(struct source_ident *);
/* for a kind's ident: a member the stored checkpoint is bound by (value
 * on the heap, owned by the identity from here on) */
void	source_ident_bind(struct source_ident *, const char *name,
	    char *value);
/* cf's server (for a kind's clash) by its url's text, default_port when
 * it names none */
void	source_server_of(const struct config *, int default_port,
	    struct source_server *);

#endif
