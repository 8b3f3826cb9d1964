/*
 * config_diff.h - what a new configuration would do to the documents the
 * running one already wrote. Between two loaded files: each sync section
 * key whose change alters the identity (index, id, routing) or the shape
 * of documents already in the target, and each removed section whose
 * documents stay in an index the new file still writes - with the new
 * file's line and the remedy that makes the index right again. A reload
 * (supervisor/reload.c) refuses a file that has one: taken live, the
 * documents written under the old identity or shape would stay in the
 * index for ever, and no log line would say so.
 */
#ifndef CONFIG_DIFF_H
#define CONFIG_DIFF_H

#include "config.h"
#include "sbuf.h"

/* what makes the index right again, weakest first: a section's several
 * changes need the strongest of theirs */
enum config_remedy {
	CR_RESNAPSHOT,	/* every row written again (pg2osync resnapshot) */
	CR_REPAIR,	/* rows written again, orphans deleted (verify --repair) */
	CR_REINDEX,	/* a fresh index, readers moved onto it (reindex) */
	CR_REBUILD,	/* a fresh index reindex cannot build: the index
			 * deleted, every row written again */
};

struct config_change {
	char	*section;	/* its name: in the new file, or the removed
				 * one's in the old */
	const char *key;	/* "id", or NULL: the section was removed */
	int	 line;		/* in the new file; 0 when it has none */
	char	*why;		/* why the written documents cannot follow */
	char	*fix;		/* the section the remedy runs on */
	enum config_remedy remedy;
};

struct config_diff {
	struct config_change *v;
	int	 n;
};

/* config_diff.c */

/* the changes from was to now that documents already written cannot
 * follow, in the new file's order: their number (0: none) */
int	config_diff(const struct config *was, const struct config *now,
	    struct config_diff *);
void	config_diff_release(struct config_diff *);
/* the refusal, one line, appended to out: per section "file:line:
 * sync.<section>.<key> changed: <why> (also ...); <remedy>" */
void	config_diff_say(const struct config_diff *, const struct config *now,
	    struct sbuf *out);
/* the rule a section key is compared by: 1 if config_diff knows key */
int	config_diff_knows(const char *key);

#endif
