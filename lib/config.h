/*
 * config.h - the YAML configuration (examples/pg2osync.yaml), parsed with
 * libyaml. Sections: source, target, sync.<name>,
 * engine, metrics. Every error names file, line and key; config_load never
 * exits. Secrets are read from the environment (*_env) at load time; an
 * inline secret works but warns. Secrets are never copied anywhere else.
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>

enum source_kind { SOURCE_POSTGRES = 1, SOURCE_MYSQL = 2 };

struct sync_section {
	char	*name;		/* the key under sync: */
	char	*schema;	/* "public" when table has no schema part */
	char	*table;		/* bare table name */
	char	*rel;		/* "schema.table" as it appears in row frames */
	char	*index;		/* target index; defaults to the table name */
	char	**columns;	/* NULL = all columns */
	int	 ncolumns;
	char	**exclude_columns;
	int	 nexclude_columns;
	int	 line;		/* where the section starts, for messages */
};

struct config {
	char	*path;

	/* source */
	enum source_kind source_kind;	/* from the url scheme */
	char	*source_url;		/* resolved (may hold a password: never log) */
	char	*source_url_env;	/* the env var name, if used */
	/* PostgreSQL; default "pg2osync", NULL for a MySQL source */
	char	*slot_name;
	char	*publication;
	unsigned long server_id;	/* MySQL: our replica id, 1..2^32-1;
					   0 for a PostgreSQL source */
	char	*sslmode;		/* NULL = libpq default */
	char	*sslrootcert, *sslcert, *sslkey;
	int	 reconnect_max;		/* default 10 */
	int	 load_workers;		/* ranges read at once in a load, 1 */

	/* target */
	char	*target_url;		/* http(s)://host:port, no trailing / */
	char	*target_username;
	char	*target_password;	/* resolved from password_env or inline */
	char	*target_password_env;

	/* sync.<name> */
	struct sync_section *syncs;
	int	 nsyncs;

	/* engine */
	int	 batch_size;		/* default 1000 documents */
	size_t	 batch_max_bytes;	/* default 5 MiB */
	int	 write_concurrency;	/* bulk requests open at once, 1 */
	int	 checkpoint_interval_ms;	/* default 1000 */

	/* metrics */
	char	*metrics_bind;		/* "127.0.0.1:9187"; NULL = no endpoint */
};

/* 0 ok; -1 with "file:line: message" in err. Warnings (inline secrets) are
 * logged through log.h. */
int	config_load(const char *path, struct config *, char *err, size_t errlen);
void	config_release(struct config *);
/* the sync section whose rel is "schema.table", or NULL */
const struct sync_section *config_find_rel(const struct config *,
	    const char *rel);

/* --- added by config.c: the same as config_load on a buffer; name stands
 * for the file in messages. Lets the fuzz target skip the filesystem. --- */
int	config_load_mem(const char *name, const char *buf, size_t len,
	    struct config *, char *err, size_t errlen);

#endif
