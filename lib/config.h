/*
 * config.h - the YAML configuration (examples/pg2osync.yaml), parsed with
 * libyaml. Sections: source, target, sync.<name>, engine, metrics. Every
 * error names file, line and key; loading never exits. Secrets are read
 * from the environment (*_env) at load time, and only those the program
 * asks for (CONFIG_SECRET_*): a program never holds a secret it does not
 * use. An inline secret works but warns. Secrets are never copied anywhere
 * else.
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>

#include "err.h"
#include "strindex.h"

#include "template.h"

struct where;
struct target_module;
struct source_module;

/* one thing the configuration asks of its target (config_target.c) */
struct target_need {
	unsigned cap;		/* enum target_cap (lib/target.h) */
	int	 line;
	char	*key;		/* "sync.items.routing" */
	const char *why;	/* what would go wrong without it */
};

/* transform ops (docs/config.md "transform") */
enum xf_op { XF_HASH = 1, XF_REDACT, XF_JSON, XF_SPLIT, XF_NUMBER, XF_DATE,
	XF_PSEUDONYM, XF_LOOKUP };

/* a name mapped to a string: fields (column -> target name), constants
 * (field name -> value) and a lookup's map (text -> label) */
struct sync_pair {
	char	*name;
	char	*value;
	int	 plain;		/* constants, a lookup's labels: the value was
				 * written unquoted */
	char	*json;		/* constants, labels: the value as JSON (a
				 * string with {schema} and {table} rendered,
				 * or a number or a boolean written plain) */
	int	 literal;	/* json is a number or a boolean */
	int	 line;
};

/* {pseudonym: {key_env, scope}}: the value's deterministic AES-SIV token */
struct sync_pseudonym {
	char	*key_env;	/* the variable holding the key, in hex */
	char	*scope;		/* as written, or NULL */
	char	*ad;		/* the scope the token is sealed under: scope,
				 * else "schema.table.column" */
	unsigned char *key;	/* the 64-byte AES-256-SIV key, resolved only
				 * for CONFIG_SECRET_TRANSFORM; NULL before */
};

/* {lookup: {map, default}}: the value's text looked up */
struct sync_lookup {
	struct sync_pair *map;	/* sorted by name, for bsearch */
	int	 nmap;
	char	*def;		/* a miss's label as written, or NULL: a miss
				 * keeps the value */
	int	 def_plain;
	char	*def_json;
};

/* one transform: sync.<name>.transform.<column> */
struct sync_transform {
	char	*name;		/* the column, as the source names it */
	char	*op;		/* the short form: "hash" */
	/* the long form, {op: parameter}: one of these is set */
	char	*redact, *split, *date;
	char	*hash, *json, *number;	/* refused: they take none */
	struct sync_pseudonym pseudonym;
	struct sync_lookup lookup;
	enum xf_op kind;	/* resolved when the section is finished */
	const char *param;	/* points at the parameter, or NULL */
	int	 line;
};

struct sync_fan_out {
	char	*column;	/* the JSON array column, or with by a text
				 * column */
	char	*by;		/* the text's element delimiter, or NULL */
	char	*id;		/* the element id template */
	char	*element;	/* the field a scalar element is put under;
				 * defaults to column */
	struct tmpl id_t;
};

struct sync_join {
	char	*field;		/* the join field, shared by the index */
	char	*name;		/* this table's relation name */
	char	*parent;	/* a child: the parent's section name, or
				 * "{element}" */
	char	*column;	/* a child: its column holding the parent key */
	int	 by_element;	/* a fan-out child: each element is the key
				 * of its document's parent (parent
				 * "{element}", the index's parent section) */
	int	 parent_sec;	/* a child: index of the parent in syncs */
	char	**children;	/* a parent: its children's relation names */
	int	 nchildren;
};

/*
 * A collection embedded in a parent's documents (docs/config.md
 * "children"): the rows of a child table naming the parent, read by the
 * source programs at the parent's load and at each commit that touches
 * them (lib/pg/pgnest.c). One level deep: a child has no children.
 */
struct sync_child {
	char	*rel;		/* table as written, then "schema.table" */
	char	*schema, *table;
	char	*field;		/* the parent document's member */
	char	*foreign_key;	/* the column naming the parent's key: the
				 * child's own, or with through the
				 * junction's */
	char	*through;	/* the junction table (many-to-many), or NULL */
	char	*through_schema, *through_table, *through_rel;
	char	*through_key;	/* the junction's column naming the child's
				 * key */
	int	 max_rows;	/* 0: every row */
	char	**columns;	/* NULL = all columns */
	int	 ncolumns;
	char	**exclude_columns;
	int	 nexclude_columns;
	struct sync_pair *fields;	/* renames inside the embedded rows */
	int	 nfields;
	int	 single;	/* an object (or null), not an array */
	int	 flatten;	/* with single: its columns on the parent */
	/* only so that a second level is refused by name, not as an
	 * unknown key */
	struct sync_child *nested;
	int	 nnested;
	int	 line;
};

/* a number on the parent: the rows of a table naming it (op count) */
struct sync_aggregate {
	char	*field;
	char	*rel;		/* table as written, then "schema.table" */
	char	*schema, *table;
	char	*foreign_key;	/* its column naming the parent's key */
	char	*op;		/* "count" */
	char	*where;		/* which rows count, or NULL */
	struct where *where_expr;
	int	 line;
};

/*
 * What a section sets only sometimes: every process holds a struct
 * sync_section per table, ten thousand of them in many.py's row, and a
 * section of the usual shape (a table, an index, an id) sets none of
 * this, so it lives behind the section's more pointer, made only for a
 * section that sets one of these keys (issue 38). Read it through
 * sync_more(), which gives a section without one an empty one.
 */
struct sync_more {
	char	**columns;	/* NULL = all columns */
	char	**exclude_columns;
	int	 ncolumns;
	int	 nexclude_columns;
	char	**primary_key;	/* the key override, or NULL */
	int	 nprimary_key;
	int	 ntransforms;
	char	*routing;	/* routing column, or NULL */

	/* documents */
	char	*pipeline;
	struct sync_transform *transforms;
	struct sync_pair *fields;	/* renames */
	struct sync_pair *constants;
	int	 nfields;
	int	 nconstants;
	char	*where;
	struct where *where_expr;
	char	*mapping_file;
	char	*mapping_path;	/* where it was read: beside the config */
	char	*mapping;	/* what it holds, a JSON object */
	char	*index_body;	/* the creation body the target makes of it
				 * (or of a join), NULL: the defaults */
	struct sync_child *children;	/* embedded collections */
	struct sync_aggregate *aggregates;	/* counted ones */
	int	 nchildren;
	int	 naggregates;
	struct sync_fan_out fan_out;
	struct sync_join join;

	/* poll mode (source.mode: poll): the column whose growth says a
	 * row changed (NULL: source.poll_column), and the filter that
	 * turns a row matching it into a delete (NULL: none) */
	char	*poll_column;
	char	*soft_delete;
	struct where *soft_delete_expr;
};

struct sync_section {
	char	*name;		/* the key under sync: */
	char	*schema;	/* "public" when table has no schema part */
	char	*table;		/* bare table name */
	char	*rel;		/* "schema.table" as it appears in row frames */
	char	*index;		/* target index (or index template); defaults
				 * to the table name */
	/* every process holds one of these per table, ten thousand of
	 * them in many.py's row: the ints go in pairs, so no pointer after
	 * one leaves a hole, and what a section rarely sets is behind
	 * more (issue 38) */
	int	 line;		/* where the section starts, for messages */

	/* identity */
	int	 index_templated;	/* it has placeholders */
	char	*id;		/* id template, or NULL: the key */
	struct tmpl id_t;
	struct tmpl index_t;	/* the index as a template */
	char	*index_glob;	/* what a templated index claims: "events-*" */
	int	 append_only;	/* keyless, insert-only, filed by content */
	int	 shared;	/* another section writes its index */
	int	 has_fan_out, has_join;
	struct sync_more *more;	/* NULL: none of it set */
};

/* s's rarely set parts: an empty set for a section without them */
extern const struct sync_more sync_more_none;
static inline const struct sync_more *
sync_more(const struct sync_section *s)
{
	return s->more != NULL ? s->more : &sync_more_none;
}

/*
 * The secrets config_load_with resolves from the environment, each named
 * by the section its *_env key is in. A program asks for those it uses:
 * the shaper none, the writer and ckpt the target's, the captures and the
 * loader the source's; the supervisor checks those its stages need.
 */
#define CONFIG_SECRETS_NONE	0u
#define CONFIG_SECRET_SOURCE	1u	/* source.url_env */
#define CONFIG_SECRET_TARGET	2u	/* target.password_env, url_env,
					 * api_key_env */
#define CONFIG_SECRETS_ALL	(CONFIG_SECRET_SOURCE | CONFIG_SECRET_TARGET)
/* metrics.token_env and api.token_env: only the supervisor, which serves
 * the listeners, reads them (not part of CONFIG_SECRETS_ALL: no stage
 * needs them set) */
#define CONFIG_SECRET_LISTEN	4u
/* sync.<name>.transform.<column>.pseudonym.key_env: the shaper's, and
 * every program that shapes rows (resnapshot, reindex, verify) or checks
 * for them (the supervisor, validate); not part of CONFIG_SECRETS_ALL */
#define CONFIG_SECRET_TRANSFORM	8u

/*
 * The writer holds write_concurrency + 1 bulk bodies (one per open request
 * and the one it reads into). Unless batch_max_bytes is set they share this
 * many bytes, so more requests open means smaller bodies, not more memory:
 * 4 MiB each at one request, 1.6 MiB at four, where the node still takes
 * wide rows as fast as with 5 MiB ones.
 */
#define CONFIG_BODIES_BYTES	((size_t)8 << 20)

struct config {
	char	*path;
	unsigned secrets;		/* CONFIG_SECRET_* resolved: a section's
					 * *_env value is there only if its bit is */

	/* source */
	/* the kind of source (lib/source.h): from the url scheme; without
	 * the url (url_env not resolved) from the keys, a kind's required
	 * key naming it */
	const struct source_module *source;
	char	*source_url;		/* inline, or resolved from url_env;
					 * NULL when url_env was not resolved
					 * (may hold a password: never log) */
	char	*source_url_env;	/* the env var name, if used */
	/* PostgreSQL: a second url for the catalogue, setup, the re-reads of
	 * nested parents and validate (which may go through a pooler), the
	 * stream keeping source_url's direct replication connection;
	 * resolved from admin_url_env (NULL: none, or not resolved) */
	char	*source_admin_url;
	char	*source_admin_url_env;
	/* PostgreSQL; default "pg2osync", NULL for a MySQL source */
	char	*slot_name;
	char	*publication;
	int	 slot_failover;		/* the slot is made with failover =
					 * true (PostgreSQL 17 on): a standby
					 * running sync_replication_slots
					 * keeps a copy of it */
	unsigned long server_id;	/* MySQL: our replica id, 1..2^32-1;
					   0 for a PostgreSQL source */
	char	*sslmode;		/* NULL = libpq default */
	char	*sslrootcert, *sslcert, *sslkey;
	int	 reconnect_max;		/* default 10 */
	char	*on_lost_position;	/* reload (default) | halt */
	int	 load_workers;		/* ranges read at once in a load, 1 */
	/* source.mode: "stream" (the log, the default) or "poll" (pages of
	 * each table read again in the order of a column that grows, for a
	 * server that gives no replication connection); poll is set for
	 * the latter, only for a kind whose module offers it */
	char	*source_mode;
	int	 poll;
	char	*poll_column;		/* every section's, unless its own */
	int	 poll_interval_secs;	/* between rounds once caught up, 5 */
	int	 poll_page_size;	/* rows a page, 1000 */

	/* target */
	char	*target_url;		/* http(s)://host:port, no trailing /;
					 * inline, or resolved from url_env
					 * (NULL when that was not resolved) */
	char	*target_url_env;
	char	**target_urls;		/* target.urls: the nodes of a cluster
					 * (NULL: url or url_env names one) */
	int	 ntarget_urls;
	char	*target_api_key;	/* resolved from api_key_env */
	char	*target_api_key_env;
	char	*target_ca_file;	/* a CA bundle for https, or NULL */
	int	 target_tls_verify;	/* 0: no certificate check (warned) */
	char	*target_username;
	char	*target_password;	/* inline, or resolved from password_env
					 * (NULL when that was not resolved) */
	char	*target_password_env;
	int	 target_require_alias;	/* every write to a section's index
					 * names an alias, never an index */
	char	*target_flavor;		/* the engine's name, default
					 * "opensearch" */
	char	*target_state_dir;	/* the checkpoint and load progress as
					 * files, for a target that keeps no
					 * documents of ours (meilisearch) */
	const struct target_module *target_module;	/* the engine */
	struct target_need *target_needs;	/* what the rest asks of it */
	int	 ntarget_needs;

	/* sync.<name> */
	struct sync_section *syncs;
	int	 nsyncs;
	/* syncs by rel, for config_find_rel: built once the rels are known
	 * (finish_syncs), empty in a configuration built by hand (then the
	 * list is walked). A row, a relation message, a mark each look a
	 * section up, and with ten thousand tables a walk of the list was
	 * ten thousand comparisons each time */
	struct strindex relidx;
	/* the sections' names, tables, indices and ids, each distinct one
	 * once (config_pack.c): with ten thousand sections these were a
	 * dozen heap blocks each, in every process. NULL in a configuration
	 * built by hand, whose strings are its own */
	char	*pack;

	/* engine */
	int	 batch_size;		/* default 1000 documents */
	size_t	 batch_max_bytes;	/* default CONFIG_BODIES_BYTES /
					 * (write_concurrency + 1) */
	int	 write_concurrency;	/* bulk requests open at once, 1 */
	int	 checkpoint_interval_ms;	/* default 1000 */
	/* "halt" (the default) or "quarantine": a refused document stops
	 * progress, or is kept aside in the target's rejects store */
	char	*on_permanent_rejection;
	int	 max_rejects;		/* quarantined at most, default 100 */
	/* rows a second a load (initial, resnapshot, reindex, a reload's
	 * new tables) reads at most; 0 when not set: no cap */
	int	 load_max_rows_per_sec;

	/* metrics */
	char	*metrics_bind;		/* "127.0.0.1:9187"; NULL = no endpoint */

	/* what running for months needs: the listeners' tokens, readiness,
	 * the read-your-writes API, the log, the stream's name in metrics
	 * and the limits of retries (docs/config.md) */
	char	*metrics_token_env;	/* bearer token for /metrics */
	char	*metrics_token;		/* resolved (CONFIG_SECRET_LISTEN) */
	int	 ready_stall_s;		/* /ready: no progress this long */
	char	*api_bind;		/* /synced; NULL = no API listener */
	char	*api_token_env;
	char	*api_token;		/* resolved (CONFIG_SECRET_LISTEN) */
	char	*log_format;		/* "text" or "json" */
	char	*log_level;		/* "error", "warn", "info", "debug" */
	char	*source_name;		/* labels every series; NULL: the
					 * stream's identity */
	int	 reconnect_backoff_ms;	/* the first restart delay, 1000 */
	int	 retry_max;		/* attempts of one request; 0 none */
	int	 retry_backoff_ms;	/* the first retry delay, 100 */
	int	 retry_max_elapsed_ms;	/* retrying one request; 0 none */

	/* traces: an OTLP/HTTP collector; NULL = PG2OSYNC_OTLP_ENDPOINT,
	 * or none */
	char	*traces_endpoint;
	char	*traces_sample_ratio;	/* "0" to "1", default "1" */
};

/* config.c */

/* read path into cfg, resolving the secrets named (CONFIG_SECRET_*): 0, or
 * -1 with err's code P2O_EXIT_CONFIG and "file:line: message". Warnings
 * (inline secrets) are logged through log.h. */
int	config_load_with(const char *path, unsigned secrets, struct config *,
	    struct p2o_err *);
/* config_load_with every secret on a buffer, the error as text; name
 * stands for the file in messages. Lets the fuzz targets skip the
 * filesystem. */
int	config_load_mem(const char *name, const char *buf, size_t len,
	    struct config *, char *err, size_t errlen);
void	config_release(struct config *);
/* the sync section whose rel is "schema.table", or NULL */
const struct sync_section *config_find_rel(const struct config *,
	    const char *rel);
/* the section an operator names: by its name, its table or schema.table
 * (the verbs' and the loader's --table), or NULL */
const struct sync_section *config_find_named(const struct config *,
	    const char *name);

/* the section owning an index name: a literal index, or the templated
 * index whose glob it matches; NULL when none */
const struct sync_section *config_find_index(const struct config *,
	    const char *index);
/* the body an index is created with (its mapping file, or a join's
 * generated mapping), or NULL for the target's defaults */
const char *config_index_body(const struct config *, const char *index);

/* 1 when a refused document is quarantined (engine.on_permanent_rejection:
 * quarantine) rather than halting progress */
int	config_quarantine(const struct config *);
/* 1 when a lost position (exit 67) reloads every table instead of stopping
 * (source.on_lost_position: reload, the default) */
int	config_reload_on_lost(const struct config *);

/* config_source.c */

/* the column a poll-mode section's pages are ordered by: its own
 * poll_column, else source.poll_column */
const char *config_poll_column(const struct config *,
	    const struct sync_section *);

/* config_nest.c */

/* 1 when name is a member the section's children or aggregates put on
 * its documents (a field, its _truncated and _total, a flattened
 * column's name) */
int	config_nest_member(const struct sync_section *, const char *name);
/* the tables collections read that no section syncs, each once ("schema.
 * table", the config's strings), into a heap array; their number. Their
 * changes rewrite parents, so they are published with the sections' */
int	config_nest_tables(const struct config *, const char ***rels);

/* config_sync.c */

/* the transform of column name in section s, or NULL */
const struct sync_transform *config_transform_of(const struct sync_section *,
	    const char *name);
/* 1 when s is one of the n names of list (a key's list of columns) */
int	config_list_has(char *const *list, int n, const char *s);
/* 1 when a projection keeps column col: columns names it, or (columns
 * NULL: every column) exclude does not - the columns and
 * exclude_columns keys of a section and of a child alike */
int	config_projects(char *const *columns, int ncolumns,
	    char *const *exclude, int nexclude, const char *col);
/* config_target.c */

/* 0 when module offers every capability cfg needs, else -1 with
 * "file:line: why" of the first it lacks */
int	config_check_target(const struct config *,
	    const struct target_module *, char *err, size_t errlen);
/* the target's rules for an index name (a templated index's rendered
 * one): 0, or -1 with why */
int	config_check_index_name(const struct config *, const char *,
	    char *why, size_t);
/* the target's nodes: target.urls, else the one url (url or url_env's
 * value), into *n; *n 0 when the url was not resolved */
const char *const *config_target_urls(const struct config *, int *n);
/* config_traces.c */

/* the variable that names the collector when traces.endpoint does not */
#define CONFIG_OTLP_ENV	"PG2OSYNC_OTLP_ENDPOINT"
/* where spans go (NULL: nowhere) and the share of batches traced: 0, or
 * -1 with e (78) when the variable is no URL */
int	config_traces(const struct config *, const char **endpoint,
	    double *ratio, struct p2o_err *e);
/* the process's span exporter started by them (trace_start), its spans
 * named for tool: 0, or -1 with e */
int	config_traces_start(const struct config *, const char *tool,
	    struct p2o_err *e);

#endif
