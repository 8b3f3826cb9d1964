/*
 * verify.c - pg2osync verify [--table T] [--repair]: the source against
 * the index by content, not by count. Every row is rendered as the
 * pipeline renders it (verify_rows.c: the loader and the shaper
 * themselves) and digested (verify_doc.c), every stored document is read
 * back through the target module and digested the same way, and the keys
 * are named: a document that differs from its row, a row whose document
 * is missing, a document no row renders (an orphan).
 *
 * --repair writes exactly the differing and missing documents again and
 * deletes exactly the orphans, through the module's own write entry,
 * versioned by the stored checkpoint read before the rows are: every
 * change the stream has not written yet carries a higher version and
 * still wins, and a document the stream rewrote meanwhile is left alone
 * (the target answers that it holds a newer version).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "xio.h"

enum { O_TABLE = 0x100, O_REPAIR };

/* writes in one bulk request of a repair */
#define CHUNK	500

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	{ "table", O_TABLE, "T", "only the sync section T (its name, its "
	    "table or schema.table) and the sections sharing its index" },
	{ "repair", O_REPAIR, NULL, "write the differing and missing "
	    "documents again and delete the orphans" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

/* a stored document no row renders */
struct orphan {
	size_t	 off;		/* index, id, routing raw in the buffer */
	size_t	 ilen, idlen, rlen;
};

struct verify {
	const struct config *cfg;
	const struct target_module *tm;
	unsigned char *want;	/* per section: compared */
	struct vtab tab;
	int	 repair;
	uint64_t rows, docs, requests;
	int	*differ;	/* entries that differ */
	int	 ndiffer, capdiffer;
	struct orphan *orph;
	int	 norph, caporph;
	struct sbuf obuf;
	int	 nmissing;
};

static int
wanted(struct verify *vf, struct jspan index)
{
	const struct sync_section *s;
	char name[512];

	if (jstr_copy(index, name, sizeof(name)) == -1 ||
	    (s = config_find_index(vf->cfg, name)) == NULL)
		return 0;
	return vf->want[s - vf->cfg->syncs];
}

static int
on_row(void *arg, const struct msg_op *m)
{
	struct verify *vf = arg;

	if (!wanted(vf, m->index))
		return 0;
	if (vtab_add(&vf->tab, m) == -1) {
		fprintf(stderr, "pg2osync verify: a document whose index or "
		    "id is too long to compare: skipped\n");
		return 0;
	}
	return 0;
}

/* the second read of a repair: the writes of the entries it needs */
static int
on_row_keep(void *arg, const struct msg_op *m)
{
	struct verify *vf = arg;
	struct ventry *e;

	if (wanted(vf, m->index) &&
	    (e = vtab_get(&vf->tab, m->index, m->id)) != NULL && e->repair)
		vtab_keep(&vf->tab, e, m);
	return 0;
}

static void
name_of(struct jspan index, struct jspan id, char *buf, size_t len)
{
	char a[256], b[512];

	if (jstr_copy(index, a, sizeof(a)) == -1)
		snprintf(a, sizeof(a), "(long name)");
	if (jstr_copy(id, b, sizeof(b)) == -1)
		snprintf(b, sizeof(b), "(long id)");
	snprintf(buf, len, "%s/%s", a, b);
}

static int
on_doc(void *arg, const struct target_doc *d)
{
	struct verify *vf = arg;
	struct ventry *e;
	struct orphan *o;
	char name[800];

	vf->docs++;
	if ((e = vtab_get(&vf->tab, d->index, d->id)) == NULL) {
		name_of(d->index, d->id, name, sizeof(name));
		printf("orphan: %s\n", name);
		if (vf->norph == vf->caporph) {
			vf->caporph = vf->caporph ? vf->caporph * 2 : 64;
			vf->orph = xrealloc(vf->orph, (size_t)vf->caporph *
			    sizeof(*vf->orph));
		}
		o = &vf->orph[vf->norph++];
		o->off = vf->obuf.len;
		o->ilen = d->index.n;
		o->idlen = d->id.n;
		o->rlen = d->routing.p ? d->routing.n : 0;
		sbuf_add(&vf->obuf, d->index.p, d->index.n);
		sbuf_add(&vf->obuf, d->id.p, d->id.n);
		if (d->routing.p)
			sbuf_add(&vf->obuf, d->routing.p, d->routing.n);
		return 0;
	}
	e->seen = 1;
	if (e->digest != vdoc_digest(d->source)) {
		vtab_name(&vf->tab, e, name, sizeof(name));
		printf("differs: %s\n", name);
		if (vf->ndiffer == vf->capdiffer) {
			vf->capdiffer = vf->capdiffer ? vf->capdiffer * 2 : 64;
			vf->differ = xrealloc(vf->differ,
			    (size_t)vf->capdiffer * sizeof(*vf->differ));
		}
		vf->differ[vf->ndiffer++] = (int)(e - vf->tab.e);
	}
	return 0;
}

/* the indices (or globs) of the compared sections, each once */
static int
scan_all(struct verify *vf, struct target_conn *tc, struct p2o_err *e)
{
	const struct sync_section *s, *t;
	const char *name;
	int i, j, dup;

	for (i = 0; i < vf->cfg->nsyncs; i++) {
		s = &vf->cfg->syncs[i];
		if (!vf->want[i])
			continue;
		name = s->index_templated ? s->index_glob : s->index;
		for (dup = 0, j = 0; j < i && !dup; j++) {
			t = &vf->cfg->syncs[j];
			dup = vf->want[j] && strcmp(name, t->index_templated ?
			    t->index_glob : t->index) == 0;
		}
		if (!dup && vf->tm->scan->scan(tc, name, on_doc, vf,
		    &vf->requests, e) == -1)
			return -1;
	}
	return 0;
}

/* the writes of a repair, CHUNK at a time: how many the target took */
static int
send_writes(struct verify *vf, struct target_conn *tc,
    const struct target_write *w, int n, int *fixed, struct p2o_err *e)
{
	const struct target_ops *ops = tc->mod->ops;
	struct sbuf arena = SBUF_INIT, resp = SBUF_INIT;
	struct item_result *items;
	struct target_entry te;
	struct http_call call;
	char why[512], name[800];
	long status;
	int i, k, m, rc = -1;

	items = xcalloc(CHUNK, sizeof(*items));
	for (i = 0; i < n; i += m) {
		m = n - i < CHUNK ? n - i : CHUNK;
		sbuf_reset(&arena);
		for (k = 0; k < m; k++)
			if (ops->encode(&arena, &w[i + k], &te, e) == -1)
				goto out;
		ops->bulk_call(arena.buf, arena.len, &call);
		vf->requests++;
		if (target_request(tc, &call, &resp, &status, e) == -1)
			goto out;
		if (ops->bulk_answer(status, resp.buf, resp.len, m, items, why,
		    sizeof(why)) != TA_OK) {
			p2o_fail(e, status == 401 || status == 403 ?
			    P2O_EXIT_AUTH : P2O_EXIT_TEMPFAIL, "repair: bulk "
			    "request failed (HTTP %ld): %s", status, why);
			goto out;
		}
		for (k = 0; k < m; k++) {
			name_of(w[i + k].index, w[i + k].id, name,
			    sizeof(name));
			switch (items[k].verdict) {
			case ITEM_OK:
			case ITEM_NOTFOUND:
				printf("repaired: %s\n", name);
				(*fixed)++;
				break;
			case ITEM_CONFLICT:
				printf("not repaired: %s: the index holds a "
				    "version newer than the checkpoint\n",
				    name);
				break;
			default:
				printf("not repaired: %s: %s: %s\n", name,
				    items[k].type[0] ? items[k].type : "error",
				    items[k].reason);
				break;
			}
		}
	}
	rc = 0;
out:
	free(items);
	sbuf_release(&arena);
	sbuf_release(&resp);
	return rc;
}

/*
 * The rows are read a second time for the documents to write, which are
 * kept this time and only those: a repair's memory goes with what is
 * damaged. A row changed in between is written as it is now, which is
 * still older than the stream's write of that change; a row gone in
 * between is not written.
 */
static int
repair(struct verify *vf, struct target_conn *tc, uint64_t version,
    int *fixed, struct p2o_err *e)
{
	struct target_write *w;
	struct orphan *o;
	uint64_t rows = 0;
	char name[800];
	int i, n = 0, rc;

	for (i = 0; i < vf->ndiffer; i++)
		vf->tab.e[vf->differ[i]].repair = 1;
	for (i = 0; i < vf->tab.n; i++)
		if (!vf->tab.e[i].seen)
			vf->tab.e[i].repair = 1;
	if ((vf->ndiffer || vf->nmissing) &&
	    verify_rows(vf->cfg, on_row_keep, vf, &rows, e) == -1)
		return -1;
	w = xcalloc((size_t)(vf->ndiffer + vf->nmissing + vf->norph) + 1,
	    sizeof(*w));
	for (i = 0; i < vf->tab.n; i++) {
		if (!vf->tab.e[i].repair)
			continue;
		if (vtab_write(&vf->tab, &vf->tab.e[i], &w[n]) == 0)
			w[n++].version = version;
		else {
			vtab_name(&vf->tab, &vf->tab.e[i], name, sizeof(name));
			printf("not repaired: %s: its row is gone\n", name);
		}
	}
	for (i = 0; i < vf->norph; i++) {
		o = &vf->orph[i];
		w[n].del = 1;
		w[n].index.p = vf->obuf.buf + o->off;
		w[n].index.n = o->ilen;
		w[n].id.p = w[n].index.p + o->ilen;
		w[n].id.n = o->idlen;
		if (o->rlen) {
			w[n].routing.p = w[n].id.p + o->idlen;
			w[n].routing.n = o->rlen;
		}
		w[n++].version = version;
	}
	rc = send_writes(vf, tc, w, n, fixed, e);
	free(w);
	return rc;
}

/* which sections --table names, and every one sharing their index */
static int
choose(struct verify *vf, const char *table)
{
	const struct sync_section *s;
	int i, j, n = 0;

	vf->want = xcalloc((size_t)vf->cfg->nsyncs + 1, 1);
	for (i = 0; i < vf->cfg->nsyncs; i++) {
		s = &vf->cfg->syncs[i];
		if (table == NULL || strcmp(s->name, table) == 0 ||
		    strcmp(s->table, table) == 0 ||
		    strcmp(s->rel, table) == 0) {
			vf->want[i] = 1;
			n++;
		}
	}
	/* the documents of an index are compared with all its rows */
	for (i = 0; i < vf->cfg->nsyncs; i++)
		for (j = 0; j < vf->cfg->nsyncs; j++)
			if (vf->want[j] && !vf->want[i] &&
			    strcmp(vf->cfg->syncs[i].index,
			    vf->cfg->syncs[j].index) == 0)
				vf->want[i] = 1;
	return n;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *table = NULL;
	struct verify vf;
	struct target_conn tc;
	struct ckpt_view ck;
	struct config cfg;
	struct p2o_err e;
	long long t0, ms;
	int ch, i, rc, fixed = 0, bad;

	memset(&vf, 0, sizeof(vf));
	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else if (ch == O_TABLE)
			table = arg;
		else if (ch == O_REPAIR)
			vf.repair = 1;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if ((rc = cli_config(path, CONFIG_SECRET_TARGET, &cfg)) != 0)
		return rc;
	vf.cfg = &cfg;
	vf.tm = cfg.target_module;
	vtab_init(&vf.tab);
	sbuf_init(&vf.obuf);
	if (vf.tm->scan == NULL) {
		fprintf(stderr, "pg2osync verify: target '%s' cannot read its "
		    "documents back\n", vf.tm->name);
		rc = P2O_EXIT_CONFIG;
		goto out;
	}
	if (choose(&vf, table) == 0) {
		rc = cli_usage(v, "no sync section is '%s'", table);
		goto out;
	}
	p2o_err_clear(&e);
	if (target_conn_open(&tc, &cfg, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	/* the version of a repair: read before the rows are */
	status_checkpoint(&cfg, &ck);
	if (vf.repair && !ck.found) {
		fprintf(stderr, "pg2osync verify: --repair needs the stored "
		    "checkpoint to version its writes by: %s\n", ck.why[0] ?
		    ck.why : "none is stored");
		rc = CLI_EXIT_FAILED;
		goto conn;
	}
	t0 = now_ms();
	if (verify_rows(&cfg, on_row, &vf, &vf.rows, &e) == -1 ||
	    scan_all(&vf, &tc, &e) == -1) {
		rc = cli_fail(&e);
		goto conn;
	}
	for (i = 0; i < vf.tab.n; i++)
		if (!vf.tab.e[i].seen) {
			char name[800];

			vtab_name(&vf.tab, &vf.tab.e[i], name, sizeof(name));
			printf("missing: %s\n", name);
			vf.nmissing++;
		}
	ms = now_ms() - t0;
	bad = vf.ndiffer + vf.nmissing + vf.norph;
	printf("%llu rows, %llu documents: %d differ, %d missing, %d "
	    "orphan%s (%.1f s, %.0f rows/s, %llu requests to the target)\n",
	    (unsigned long long)vf.tab.n, (unsigned long long)vf.docs,
	    vf.ndiffer, vf.nmissing, vf.norph, vf.norph == 1 ? "" : "s",
	    ms / 1000.0, ms > 0 ? vf.tab.n * 1000.0 / ms : 0.0,
	    (unsigned long long)vf.requests);
	rc = bad ? CLI_EXIT_FAILED : P2O_EXIT_OK;
	if (vf.repair && bad) {
		if (repair(&vf, &tc, ck.pos, &fixed, &e) == -1) {
			rc = cli_fail(&e);
			goto conn;
		}
		printf("repaired %d of %d at version %llu (checkpoint %s)\n",
		    fixed, bad, (unsigned long long)ck.pos, ck.text);
		rc = fixed == bad ? P2O_EXIT_OK : CLI_EXIT_FAILED;
	}
conn:
	target_conn_release(&tc);
out:
	vtab_release(&vf.tab);
	sbuf_release(&vf.obuf);
	free(vf.want);
	free(vf.differ);
	free(vf.orph);
	config_release(&cfg);
	return rc;
}

const struct verb verb_verify = {
	.name = "verify",
	.summary = "compare the tables with their indices by content; "
	    "--repair fixes what differs",
	.synopsis = "[-c FILE] [--table T] [--repair]",
	.about = "Renders every row as the pipeline would (the loader and "
	    "the shaper themselves: transforms, renames and ids included), "
	    "reads every stored document back, and compares the two by "
	    "content: prints each key whose document differs from its row "
	    "('differs:'), whose row has no document ('missing:') and each "
	    "document no row renders ('orphan:'), then the counts, the time, "
	    "rows per second and the requests made to the target. Documents "
	    "an ingest pipeline changes always differ.\n"
	    "With --repair those documents are written again and the "
	    "orphans deleted, versioned by the stored checkpoint read before "
	    "the rows: a change the stream writes later still wins.",
	.opts = opts,
	.exits = "  0   the indices hold what the tables render (with "
	    "--repair: after it)\n"
	    "  1   documents differ, are missing or orphaned (with --repair: "
	    "some could not be repaired)\n"
	    "  64  bad command line, or no such section\n"
	    "  65  the loader or the shaper failed on a row\n"
	    "  69  the source refused (a table missing or unreadable)\n"
	    "  75  a server is unreachable or failing (temporary)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration\n",
	.run = run,
};
