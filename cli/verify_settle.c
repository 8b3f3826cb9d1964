/*
 * verify_settle.c - what a repair's writes need on a target that keeps no
 * versions (no TCAP_EXTERNAL_VERSIONS, Meilisearch). On one that does, a
 * repair's write carries the checkpoint's version and loses to any write
 * the stream makes of a later change, whichever lands first. Without
 * versions the last write to land wins: a row the stream changed while the
 * repair read and wrote could be put back as the repair read it, and a
 * row inserted while reconcile deleted its orphan could lose its document.
 *
 * So once the repair's writes are done (each task succeeded), the rows are
 * read again and each document written is compared with its row as it is
 * now. The same content: any later change is written by the stream after
 * ours, since ours is already in. Another one (or a row gone, or a row
 * there now for a document deleted): the stream's write of that change
 * may have landed before ours, so the row as it is now is written again
 * (or the document deleted), and checked the same way, up to ROUNDS
 * times. What still moved after the last round is named and counted.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "xio.h"

#define ROUNDS	4

struct settle {
	struct vtab chk;	/* the documents written: their digests;
				 * repair 1 marks a delete */
	uint64_t rows;
};

static int
on_row(void *arg, const struct msg_op *m)
{
	struct settle *st = arg;
	struct ventry *e = vtab_get(&st->chk, m->index, m->id);

	if (e == NULL)
		return 0;
	e->seen = 1;
	if (e->repair || e->digest != vdoc_digest(m->doc,
	    st->chk.numbers_by_value))
		vtab_keep(&st->chk, e, m);
	return 0;
}

/* the written documents into chk */
static void
note(struct vtab *chk, const struct target_write *w, int n)
{
	struct msg_op m;
	struct ventry *e;
	int i;

	for (i = 0; i < n; i++) {
		memset(&m, 0, sizeof(m));
		m.index = w[i].index;
		m.id = w[i].id;
		m.doc.p = w[i].del ? "{}" : w[i].doc.p;
		m.doc.n = w[i].del ? 2 : w[i].doc.n;
		if (vtab_add(chk, &m) == -1)
			continue;
		if ((e = vtab_get(chk, m.index, m.id)) != NULL)
			e->repair = w[i].del;
	}
}

/* the key of e as raw JSON strings, appended to buf: offsets of each */
static void
raw_key(const struct vtab *t, const struct ventry *e, struct sbuf *buf,
    size_t *ioff, size_t *ilen, size_t *idoff, size_t *idlen)
{
	const char *k = t->keys.buf + e->koff;
	size_t a = strlen(k);

	*ioff = buf->len;
	sbuf_add_jstr(buf, k, a);
	*ilen = buf->len - *ioff;
	*idoff = buf->len;
	sbuf_add_jstr(buf, k + a + 1, e->klen - a - 1);
	*idlen = buf->len - *idoff;
}

int
verify_settle(const struct config *cfg, struct target_conn *tc,
    const struct target_write *w, int n, uint64_t version, int *moved,
    uint64_t *requests, struct p2o_err *e)
{
	struct settle st;
	struct vtab next;
	struct target_write *again = NULL;
	struct sbuf keys = SBUF_INIT;
	size_t *off = NULL;
	char name[800];
	int round, i, k, done, rc = -1;

	*moved = 0;
	memset(&st, 0, sizeof(st));
	vtab_init(&st.chk);
	st.chk.numbers_by_value = tc->mod->scan != NULL &&
	    tc->mod->scan->numbers_by_value;
	note(&st.chk, w, n);
	for (round = 0; st.chk.n > 0; round++) {
		if (verify_rows(cfg, on_row, &st, &st.rows, e) == -1)
			goto out;
		/* what moved since it was written: its row now, or gone */
		again = xrealloc(again, (size_t)st.chk.n * sizeof(*again));
		off = xrealloc(off, (size_t)st.chk.n * 4 * sizeof(*off));
		sbuf_reset(&keys);
		for (i = 0, k = 0; i < st.chk.n; i++) {
			struct ventry *en = &st.chk.e[i];

			/* settled: a delete whose row is still gone, a write
			 * whose row renders what was written */
			if (en->repair ? !en->seen : en->rec == (size_t)-1 &&
			    en->seen)
				continue;
			memset(&again[k], 0, sizeof(again[k]));
			if (en->rec != (size_t)-1)
				vtab_write(&st.chk, en, &again[k]);
			else {
				/* its row is gone: the document too */
				again[k].del = 1;
				raw_key(&st.chk, en, &keys, &off[4 * k],
				    &off[4 * k + 1], &off[4 * k + 2],
				    &off[4 * k + 3]);
			}
			again[k].version = version;
			if (round == ROUNDS) {
				vtab_name(&st.chk, en, name, sizeof(name));
				printf("still changing: %s: its row changed "
				    "again each time it was written again\n",
				    name);
			}
			k++;
		}
		/* the spans of the deletes, now that keys is whole */
		for (i = 0; i < k; i++)
			if (again[i].del) {
				again[i].index.p = keys.buf + off[4 * i];
				again[i].index.n = off[4 * i + 1];
				again[i].id.p = keys.buf + off[4 * i + 2];
				again[i].id.n = off[4 * i + 3];
			}
		if (k == 0 || round == ROUNDS) {
			*moved = k;
			break;
		}
		done = 0;
		if (cli_send_writes(tc, cfg, again, k, "written again (its "
		    "row changed while the repair wrote it)", &done, requests,
		    e) == -1)
			goto out;
		/* the next round checks these; their spans point into the
		 * table of this one, released once they are noted */
		vtab_init(&next);
		next.numbers_by_value = st.chk.numbers_by_value;
		note(&next, again, k);
		vtab_release(&st.chk);
		st.chk = next;
	}
	rc = 0;
out:
	free(again);
	free(off);
	sbuf_release(&keys);
	vtab_release(&st.chk);
	return rc;
}
