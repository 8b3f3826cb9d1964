/*
 * config_set.h - a directory of configuration files, one source each, that
 * one supervisor runs and every verb can name (--config-dir DIR, --source
 * NAME): which files are in it, each loaded as config.c loads one, and the
 * rules the set must keep that no single file can break alone - a name of
 * its own for each source, no slot, publication or replica id taken twice
 * on one server, no checkpoint document shared on one target, no index two
 * sources write without declared ids, one listener of each kind.
 */
#ifndef CONFIG_SET_H
#define CONFIG_SET_H

#include <stddef.h>

#include "config.h"
#include "err.h"
#include "sbuf.h"

/* a source's name: source.name, else the stream's identity */
#define CONFIG_NAME_MAX	160

struct config_set {
	int	 n;
	char	**paths;	/* "DIR/name.yaml", in name order */
	struct config *cf;	/* each file loaded */
	char	(*names)[CONFIG_NAME_MAX];	/* each source's name */
};

/* config_set.c */

/*
 * The configuration files of dir: every name ending in ".yaml" directly in
 * it (no recursion), dot-files and what is not a file (after following a
 * link) left out, in byte order of the names. 0 with *paths (heap, free
 * with config_paths_free) and *n >= 1, or -1 with err (78): not a
 * directory, unreadable, or none there.
 */
int	config_dir_files(const char *dir, char ***paths, int *n,
	    struct p2o_err *);
void	config_paths_free(char **, int n);
/*
 * Every file of dir loaded (secrets as config_load_with), then the set's
 * rules: 0, or -1 with err (78, how many files and rules failed) and every
 * failing file's error and every broken rule, one a line, appended to why.
 */
int	config_set_load(const char *dir, unsigned secrets, struct config_set *,
	    struct sbuf *why, struct p2o_err *);
void	config_set_release(struct config_set *);
/* the set's own rules over n loaded configurations: how many are broken,
 * each a line of why ("a.yaml, b.yaml: ...") */
int	config_set_check(const struct config *cf, int n, struct sbuf *why);
/* cf's source name, into buf (len >= CONFIG_NAME_MAX) */
const char *config_source_name(const struct config *, char *buf,
	    size_t len);
/* the index of the source named name, or -1 */
int	config_set_find(const struct config_set *, const char *name);
/* "a, b, c": every name, for a message */
void	config_set_names(const struct config_set *, struct sbuf *);

#endif
