/*
 * config_sections.h - what lib/config.c and the section files
 * (config_source.c, config_target.c, config_sync.c, config_engine.c,
 * config_metrics.c) share: each section's key table and rules, and the
 * helpers more than one section needs. Internal to lib/config*.c, and
 * to tests/helper/config-keys.c, which lists every key the tables hold.
 */
#ifndef CONFIG_SECTIONS_H
#define CONFIG_SECTIONS_H

#include <stddef.h>
#include <string.h>

#include "config.h"
#include "config_schema.h"

#define CFG(f)	offsetof(struct config, f)

/* sections of struct config itself: their offsets are into it */

/* config_source.c */
extern const struct cs_node config_source_keys[];
int	config_source_finish(struct cs_walk *, void *, const char *, int);
/* the poll-mode rules of the sections and the listeners, once all are
 * read: 0, or -1 with the error */
int	config_source_poll(struct cs_walk *, const struct config *);
void	config_source_release(void *);

/* config_target.c */
extern const struct cs_node config_target_keys[];
int	config_target_finish(struct cs_walk *, void *, const char *, int);
void	config_target_release(void *);
/* what every other section asks of the target, checked against it; run
 * once all of them are finished */
int	config_target_needs(struct cs_walk *, struct config *);
/* each section's index name by the target's rules, and the body its
 * mapping file makes (index_body); after config_target_needs */
int	config_target_indices(struct cs_walk *, struct config *);
/* the body the target makes for join parent s without a mapping file:
 * 0, or -1 with the error at the section's join */
int	config_target_join_body(struct cs_walk *, struct sync_section *);

/* config_engine.c */
extern const struct cs_node config_engine_keys[];

/* config_metrics.c: the listeners, metrics and api */
extern const struct cs_node config_metrics_keys[];
extern const struct cs_node config_api_keys[];
/* a listener's token_env resolved (for the supervisor only) */
int	config_listen_finish(struct cs_walk *, void *, const char *, int);
void	config_listen_release(void *);

/* config_log.c */
extern const struct cs_node config_log_keys[];

/* config_traces.c */
extern const struct cs_node config_traces_keys[];

/* config_sync.c: one struct sync_section, the element of the map under
 * sync: */
extern const struct cs_node config_sync_section;

/* config_nest.c: the elements of sync.<name>.children and .aggregates */
extern const struct cs_node config_nest_child, config_nest_aggregate;
/* the rules of a section's collections, from its finish */
int	config_nest_finish(struct cs_walk *, struct sync_section *,
	    const char *path);
/* the child tables' schemas, once the source kind is known */
int	config_nest_resolve(struct cs_walk *, const struct config *,
	    struct sync_section *, const char *path);
void	config_nest_release(struct sync_section *);

/* config_sync.c: 'schema.table' or 'table' (a CS_STR check) */
int	config_check_table(const char *, char *why, size_t);
/* each pseudonym's scope, its default "schema.table.column" once the
 * section's schema is known */
void	config_sync_scopes(struct sync_section *);
/* a join child's key column and its parent's, pseudonymised alike or not
 * at all: 0, or -1 with the error at the later pseudonym */
int	config_sync_join_key(struct cs_walk *, const struct sync_section *child,
	    const struct sync_section *parent);

/* config_value.c: a constant's or a label's JSON from its text and
 * whether it was written unquoted (*literal: a number or a boolean): 0,
 * or -1 with why ("is ...") */
struct sbuf;
int	config_value_json(const char *text, int plain, struct sbuf *json,
	    int *literal, char *why, size_t len);

/* config.c */

/* the whole file: its sections, each with its table (what the key
 * walker of tests/helper/config-keys.c lists) */
extern const struct cs_node config_root;

/* *_env keys: the name's form, and its value (never quoted in messages).
 * config_resolve_env resolves only the secrets the program asked for
 * (struct config's secrets, by the section path starts with): for any
 * other it returns 0 and leaves *dst alone. */
int	config_check_envname(const char *, char *why, size_t);
int	config_resolve_env(struct cs_walk *, const char *path, int line,
	    const char *var, char **dst);
/* 1 if config_resolve_env resolves the secrets of the section path is
 * in ("source.url_env": the source's) */
int	config_resolves(struct cs_walk *, const char *path);
/* "sync.<name>" as messages spell it, into buf (which it returns) */
const char *config_sec_path(const struct sync_section *, struct sbuf *buf);

static inline int
config_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

#endif
