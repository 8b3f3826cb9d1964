/*
 * config_pack.c - a loaded configuration's section strings moved into one
 * block, each distinct string once (config_pack.h).
 *
 * Every stage holds the whole configuration for as long as it runs, and
 * with ten thousand sections of one shape (many.py's row, issue 38) the
 * strings were a dozen heap blocks a section: the name, schema, table,
 * rel, index and id, each at least malloc's 32 bytes, and the id and index
 * templates' parts. Sections of one shape share most of them ("public",
 * the index, the template's "id"), and the rest are a few bytes each.
 *
 * Only what no other structure points into is moved: the fields below
 * are read through the section, never kept elsewhere (a join parent's
 * children point at their join names, which stay where they are).
 * Nothing changes once a configuration is loaded, so the block is never
 * written again; config_release gives it back.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_pack.h"
#include "keyset.h"
#include "sbuf.h"

/* the section's strings that are packed */
static const size_t str_off[] = {
	offsetof(struct sync_section, name),
	offsetof(struct sync_section, schema),
	offsetof(struct sync_section, table),
	offsetof(struct sync_section, rel),
	offsetof(struct sync_section, index),
	offsetof(struct sync_section, id),
	offsetof(struct sync_section, index_glob),
};
#define NSTR	(sizeof(str_off) / sizeof(str_off[0]))

/* and its templates, parts and texts: the id's and the index's, and a
 * fan-out's element id behind the section's more (NULL without one) */
#define NTMPL	3

struct slot {
	uint64_t h;
	uint32_t off;		/* 0: free (the block's first byte is never
				 * a value) */
	uint32_t n;
};

/*
 * The strings sections share are in the first sections (the schema, the
 * index, a template's column), so a small table filed from the start
 * finds them; once it is half full, later strings are looked up but no
 * longer filed. A table as large as every string (three quarters of them
 * a section's own) cost more at the load's peak than packing saved.
 */
#define NTAB	8192

struct packer {
	char	*buf;
	size_t	 len, cap;
	struct slot *tab;
	size_t	 used;		/* at most NTAB / 2 */
	/* the parts arrays, whose texts are offsets until the block is
	 * final */
	size_t	*parts;
	int	*nparts;
	size_t	 nparr, caparr;
	/* the strings of the section being packed, which a section of its
	 * own may repeat (a table named as its section) */
	size_t	 mine[16];
	int	 nmine;
};

static struct slot *
find(struct packer *k, uint64_t h, const void *p, size_t n)
{
	struct slot *s;
	size_t i;

	for (i = h & (NTAB - 1);; i = (i + 1) & (NTAB - 1)) {
		s = &k->tab[i];
		if (s->off == 0 || (s->h == h && s->n == n &&
		    memcmp(k->buf + s->off, p, n) == 0))
			return s;
	}
}

/* n bytes at p, aligned to align, once: their offset in the block; *isnew
 * says whether they were put there now */
static size_t
put(struct packer *k, const void *p, size_t n, size_t align, int *isnew)
{
	struct slot *s;
	/* the hash lib files key texts under (keyset.h) */
	uint64_t h = keyset_hash(p, n) ^ align;
	size_t off;
	int i;

	s = find(k, h, p, n);
	*isnew = 0;
	if (s->off != 0)
		return s->off;
	/* a string of this section's, packed already */
	if (align == 1)
		for (i = 0; i < k->nmine; i++)
			if (k->mine[i] + n <= k->len &&
			    memcmp(k->buf + k->mine[i], p, n) == 0)
				return k->mine[i];
	*isnew = 1;
	off = (k->len + align - 1) & ~(align - 1);
	if (off + n > k->cap) {
		while (off + n > k->cap)
			k->cap *= 2;
		k->buf = xrealloc(k->buf, k->cap);
	}
	memset(k->buf + k->len, 0, off - k->len);
	memcpy(k->buf + off, p, n);
	k->len = off + n;
	if (align == 1 && k->nmine < (int)(sizeof(k->mine) /
	    sizeof(k->mine[0])))
		k->mine[k->nmine++] = off;
	if (2 * (k->used + 1) <= NTAB) {
		s->h = h;
		s->off = (uint32_t)off;
		s->n = (uint32_t)n;
		k->used++;
	}
	return off;
}

static size_t
put_str(struct packer *k, const char *s)
{
	int isnew;

	return put(k, s, strlen(s) + 1, 1, &isnew);
}

/* a template's texts, then its parts array (texts as offsets) */
static void
pack_tmpl(struct packer *k, struct tmpl *t)
{
	struct tmpl_part *tmp;
	size_t off;
	int i, isnew;

	if (t->parts == NULL || t->nparts == 0)
		return;
	tmp = xcalloc((size_t)t->nparts, sizeof(*tmp));
	for (i = 0; i < t->nparts; i++) {
		tmp[i].text = (char *)(uintptr_t)put_str(k, t->parts[i].text);
		tmp[i].column = t->parts[i].column;
		free(t->parts[i].text);
	}
	off = put(k, tmp, (size_t)t->nparts * sizeof(*tmp),
	    alignof(struct tmpl_part), &isnew);
	free(tmp);
	free(t->parts);
	t->parts = (struct tmpl_part *)(uintptr_t)off;
	if (!isnew)
		return;
	if (k->nparr == k->caparr) {
		k->caparr = k->caparr ? k->caparr * 2 : 64;
		k->parts = xrealloc(k->parts, k->caparr * sizeof(*k->parts));
		k->nparts = xrealloc(k->nparts, k->caparr *
		    sizeof(*k->nparts));
	}
	k->parts[k->nparr] = off;
	k->nparts[k->nparr++] = t->nparts;
}

static char **
str_at(struct sync_section *s, size_t off)
{
	return (char **)((char *)s + off);
}

static struct tmpl *
tmpl_at(struct sync_section *s, size_t j)
{
	switch (j) {
	case 0:
		return &s->id_t;
	case 1:
		return &s->index_t;
	default:
		return s->more != NULL ? &s->more->fan_out.id_t : NULL;
	}
}

void
config_pack(struct config *cfg)
{
	struct packer k;
	struct sync_section *s;
	struct tmpl_part *p;
	struct tmpl *t;
	char **f;
	size_t j, o;
	int i, m;

	if (cfg->pack != NULL || cfg->nsyncs == 0)
		return;
	memset(&k, 0, sizeof(k));
	k.tab = xcalloc(NTAB, sizeof(*k.tab));
	/* offset 0 is no value: a NULL field stays NULL */
	k.cap = 4096;
	k.buf = xmalloc(k.cap);
	k.buf[0] = '\0';
	k.len = 1;
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		k.nmine = 0;
		for (j = 0; j < NSTR; j++) {
			f = str_at(s, str_off[j]);
			if (*f == NULL)
				continue;
			o = put_str(&k, *f);
			free(*f);
			*f = (char *)(uintptr_t)o;
		}
		for (j = 0; j < NTMPL; j++)
			if ((t = tmpl_at(s, j)) != NULL)
				pack_tmpl(&k, t);
	}
	/* the block is final: offsets become pointers */
	k.buf = xrealloc(k.buf, k.len);
	for (j = 0; j < k.nparr; j++) {
		p = (struct tmpl_part *)(k.buf + k.parts[j]);
		for (m = 0; m < k.nparts[j]; m++)
			p[m].text = k.buf + (uintptr_t)p[m].text;
	}
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		for (j = 0; j < NSTR; j++) {
			f = str_at(s, str_off[j]);
			if (*f != NULL)
				*f = k.buf + (uintptr_t)*f;
		}
		for (j = 0; j < NTMPL; j++) {
			t = tmpl_at(s, j);
			if (t != NULL && t->parts != NULL)
				t->parts = (struct tmpl_part *)(k.buf +
				    (uintptr_t)t->parts);
		}
	}
	cfg->pack = k.buf;
	free(k.tab);
	free(k.parts);
	free(k.nparts);
}

void
config_unpack(struct config *cfg)
{
	struct sync_section *s;
	struct tmpl *t;
	size_t j;
	int i;

	if (cfg->pack == NULL)
		return;
	/* what is in the block is not freed one by one */
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		for (j = 0; j < NSTR; j++)
			*str_at(s, str_off[j]) = NULL;
		for (j = 0; j < NTMPL; j++) {
			if ((t = tmpl_at(s, j)) == NULL)
				continue;
			t->parts = NULL;
			t->nparts = 0;
		}
	}
	free(cfg->pack);
	cfg->pack = NULL;
}
