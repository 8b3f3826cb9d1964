/*
 * nestread.c - the commit-time re-read driver (nestread.h). Owns which
 * tables name which parents (links, resolved through a junction where a
 * child is read through one), the parent keys a transaction's rows named,
 * which rows are forwarded, the held commits and their bounds, the order
 * at a commit (visible, junctions, parents), the warnings about child
 * tables and the closing count. A thousand children of one parent are
 * one key and one document.
 *
 * Never writes SQL, touches a connection or decodes a value (the
 * source's operations do), and never exits.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "p2o.h"
#include "nestread.h"

/*
 * A held burst is read at once, but not unbounded: a backlog of a million
 * child changes would hold every acknowledgement until it is all read,
 * and name its parents in one statement.
 */
#define HOLD_MAX_TXNS	1000
#define HOLD_MAX_KEYS	10000

/* a section with collections */
struct nr_parent {
	const struct sync_section *sec;
	void	*state;		/* the source's reader */
	const char *key;	/* its key column (the reader's) */
	struct keyset pending;	/* the parent keys noted */
};

/* a table whose rows name parents */
struct nr_link {
	const char *rel;	/* the configuration's */
	int	 parent;	/* index into parents */
	char	*col;		/* its column naming the parent's key; for a
				 * child read through a junction, its own
				 * key, which the junction maps */
	int	 via;		/* through: the collection whose junction maps
				 * col, else -1 */
	struct keyset keys;	/* through: the child keys noted */
	int	 section;	/* the table is a sync section of its own */
};

struct nestread {
	const struct nestread_ops *ops;
	void	*src;
	int	 nparents;
	struct nr_parent *parents;
	int	 nlinks;
	struct nr_link *links;
	int	 pending;	/* some key waits for a commit */
	uint64_t *txns;		/* the held commits' transactions */
	size_t	 ntxns, captxns;
	struct sbuf kn, ko;	/* a row's key texts */
	struct nestread_counts n;
};

/* 1 when some section of cfg embeds children or aggregates */
static int
wanted(const struct config *cfg)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (sync_more(&cfg->syncs[i])->nchildren > 0 ||
		    sync_more(&cfg->syncs[i])->naggregates > 0)
			return 1;
	return 0;
}

static void
add_link(struct nestread *nr, const struct config *cfg, const char *rel,
    int parent, const char *col, int via)
{
	struct nr_link *l;

	nr->links = xrealloc(nr->links, (size_t)(nr->nlinks + 1) *
	    sizeof(*nr->links));
	l = &nr->links[nr->nlinks++];
	memset(l, 0, sizeof(*l));
	l->rel = rel;
	l->parent = parent;
	l->col = xstrdup(col);
	l->via = via;
	l->section = config_find_rel(cfg, rel) != NULL;
}

/* section si's reader and the links of its collections */
static int
add_parent(struct nestread *nr, const struct config *cfg, int si,
    struct p2o_err *e)
{
	const struct sync_section *sec = &cfg->syncs[si];
	const struct sync_more *more = sync_more(sec);
	struct nr_parent *p;
	struct sbuf via = SBUF_INIT;
	void *state;
	const char *key;
	int k, idx = nr->nparents, rc = 0;

	if (nr->ops->parent(nr->src, si, sec, &state, &key, e) == -1)
		return -1;
	nr->parents = xrealloc(nr->parents, (size_t)(nr->nparents + 1) *
	    sizeof(*nr->parents));
	p = &nr->parents[nr->nparents++];
	memset(p, 0, sizeof(*p));
	p->sec = sec;
	p->state = state;
	p->key = key;
	for (k = 0; k < more->nchildren && rc == 0; k++) {
		const struct sync_child *c = &more->children[k];

		sbuf_reset(&via);
		if ((rc = nr->ops->collection(nr->src, state, k, &via,
		    e)) == -1)
			break;
		if (c->through == NULL) {
			add_link(nr, cfg, c->rel, idx, c->foreign_key, -1);
			continue;
		}
		/* a junction row names its parent; a change of the child
		 * itself names parents only through the junction's rows */
		add_link(nr, cfg, c->through_rel, idx, c->foreign_key, -1);
		if (via.len == 0)
			rc = p2o_fail(e, P2O_EXIT_INTERNAL, "table '%s': the "
			    "source named no key to read it through '%s' by",
			    c->rel, c->through_rel);
		else
			add_link(nr, cfg, c->rel, idx, via.buf, k);
	}
	for (k = 0; k < more->naggregates && rc == 0; k++) {
		const struct sync_aggregate *a = &more->aggregates[k];

		sbuf_reset(&via);
		if ((rc = nr->ops->collection(nr->src, state,
		    more->nchildren + k, &via, e)) == 0)
			add_link(nr, cfg, a->rel, idx, a->foreign_key, -1);
	}
	sbuf_release(&via);
	return rc;
}

struct nestread *
nestread_open(const struct config *cfg, const struct nestread_ops *ops,
    void *src, struct p2o_err *e)
{
	struct nestread *nr;
	int i;

	p2o_err_clear(e);
	if (!wanted(cfg) || ops->open(src, cfg, e) == -1) {
		ops->close(src);
		return NULL;
	}
	nr = xcalloc(1, sizeof(*nr));
	nr->ops = ops;
	nr->src = src;
	for (i = 0; i < cfg->nsyncs; i++)
		if ((sync_more(&cfg->syncs[i])->nchildren > 0 ||
		    sync_more(&cfg->syncs[i])->naggregates > 0) &&
		    add_parent(nr, cfg, i, e) == -1) {
			nestread_close(nr);
			return NULL;
		}
	for (i = 0; i < nr->nlinks; i++)
		if (nr->links[i].section)
			log_warnx("table '%s' is a collection of sync section "
			    "'%s' and a sync section of its own: its index "
			    "gets its rows as they change, and the parent "
			    "its rows again at each change", nr->links[i].rel,
			    nr->parents[nr->links[i].parent].sec->name);
	return nr;
}

void
nestread_close(struct nestread *nr)
{
	int i;

	if (nr == NULL)
		return;
	if (nr->n.documents > 0 || nr->n.child_rows > 0)
		log_info("collections: %llu child rows rewrote %llu parent "
		    "documents in %llu queries",
		    (unsigned long long)nr->n.child_rows,
		    (unsigned long long)nr->n.documents,
		    (unsigned long long)nr->n.queries);
	for (i = 0; i < nr->nparents; i++) {
		nr->ops->parent_free(nr->parents[i].state);
		keyset_release(&nr->parents[i].pending);
	}
	for (i = 0; i < nr->nlinks; i++) {
		free(nr->links[i].col);
		keyset_release(&nr->links[i].keys);
	}
	free(nr->parents);
	free(nr->links);
	free(nr->txns);
	sbuf_release(&nr->kn);
	sbuf_release(&nr->ko);
	nr->ops->close(nr->src);
	free(nr);
}

void *
nestread_source(const struct nestread *nr)
{
	return nr->src;
}

/* the image's text of col into b: 1, or 0 (no image, no value) */
static int
key_text(const struct nest_image *img, const char *col, struct sbuf *b)
{
	sbuf_reset(b);
	return img != NULL && img->text(img->img, col, b);
}

int
nestread_row(struct nestread *nr, const char *rel,
    const struct nest_image *newi, const struct nest_image *oldi)
{
	const struct nest_image *img[2] = { newi, oldi };
	struct nr_parent *p;
	struct nr_link *l;
	int i, k, forward = 1, swallowed = 0;

	for (i = 0; i < nr->nparents; i++) {
		p = &nr->parents[i];
		if (strcmp(p->sec->rel, rel) != 0 ||
		    !key_text(newi, p->key, &nr->kn))
			continue;
		/* its document is written whole at the commit */
		keyset_add(&p->pending, nr->kn.buf, nr->kn.len);
		nr->pending = 1;
		forward = 0;
		/* a key that changed: the row goes out as it came, so the
		 * shaper deletes the old document; the commit's rewrite of
		 * the new one follows it */
		if (key_text(oldi, p->key, &nr->ko) &&
		    (nr->ko.len != nr->kn.len ||
		    memcmp(nr->ko.buf, nr->kn.buf, nr->kn.len) != 0))
			forward = 1;
	}
	for (i = 0; i < nr->nlinks; i++) {
		l = &nr->links[i];
		if (strcmp(l->rel, rel) != 0)
			continue;
		if (!l->section)
			swallowed = 1;
		/* a row moving to another parent names both */
		for (k = 0; k < 2; k++) {
			if (!key_text(img[k], l->col, &nr->kn))
				continue;
			keyset_add(l->via >= 0 ? &l->keys :
			    &nr->parents[l->parent].pending, nr->kn.buf,
			    nr->kn.len);
			nr->pending = 1;
			nr->n.child_rows++;
		}
	}
	return swallowed ? 0 : forward;
}

int
nestread_pending(const struct nestread *nr)
{
	return nr->pending;
}

int
nestread_hold(struct nestread *nr, uint64_t txn)
{
	size_t keys = 0;
	int i;

	if (nr->ntxns == nr->captxns) {
		nr->captxns = nr->captxns ? nr->captxns * 2 : 64;
		nr->txns = xrealloc(nr->txns, nr->captxns * sizeof(*nr->txns));
	}
	nr->txns[nr->ntxns++] = txn;
	for (i = 0; i < nr->nparents; i++)
		keys += nr->parents[i].pending.n;
	for (i = 0; i < nr->nlinks; i++)
		keys += nr->links[i].keys.n;
	return nr->ntxns >= HOLD_MAX_TXNS || keys >= HOLD_MAX_KEYS;
}

int
nestread_commit(struct nestread *nr, uint64_t v, struct sbuf *out,
    uint64_t *nrows, struct p2o_err *e)
{
	struct nr_parent *p;
	struct nr_link *l;
	uint64_t docs;
	int i;

	if (!nr->pending)
		return 0;
	nr->pending = 0;
	/* a read before the held transactions are visible would miss the
	 * rows their commits announced */
	if (nr->ntxns > 0 && nr->ops->visible != NULL &&
	    nr->ops->visible(nr->src, nr->txns, nr->ntxns, e) == -1)
		return -1;
	nr->ntxns = 0;
	for (i = 0; i < nr->nlinks; i++) {
		l = &nr->links[i];
		if (l->keys.n > 0 && nr->ops->resolve(nr->src,
		    nr->parents[l->parent].state, l->via, &l->keys,
		    &nr->parents[l->parent].pending, &nr->n.queries, e) == -1)
			return -1;
	}
	for (i = 0; i < nr->nparents; i++) {
		p = &nr->parents[i];
		if (p->pending.n == 0)
			continue;
		docs = 0;
		if (nr->ops->read(nr->src, p->state, &p->pending, v, out,
		    &docs, &nr->n.queries, e) == -1)
			return -1;
		*nrows += docs;
		nr->n.documents += docs;
	}
	return 0;
}

void
nestread_truncate(struct nestread *nr, const char *rel)
{
	struct sbuf hint = SBUF_INIT;
	struct nr_parent *p;
	int i;

	for (i = 0; i < nr->nlinks; i++) {
		if (strcmp(nr->links[i].rel, rel) != 0)
			continue;
		p = &nr->parents[nr->links[i].parent];
		sbuf_reset(&hint);
		nr->ops->rewrite_hint(p->state, &hint);
		log_warnx("table '%s' was truncated; the documents of sync "
		    "section '%s' still embed its rows and are not rewritten: "
		    "%s", rel, p->sec->name, hint.buf ? hint.buf : "");
	}
	sbuf_release(&hint);
}

const struct nestread_counts *
nestread_counts(const struct nestread *nr)
{
	return &nr->n;
}
