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
 * (the target answers that it holds a newer version). A target without
 * versions cannot say so: there the rows are read again after the
 * repair's writes, and what changed meanwhile is written again
 * (verify_settle.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "p2o.h"
#include "xio.h"

enum { O_TABLE = 0x100, O_REPAIR };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "table", O_TABLE, "T", "only the sync section T (its name, its "
	    "table or schema.table) and the sections sharing its index" },
	{ "repair", O_REPAIR, NULL, "write the differing and missing "
	    "documents again and delete the orphans" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
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
	struct olist orph;
	int	 nmissing;
	int	 moved;	/* repaired, and their rows still changing */
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

static int
on_doc(void *arg, const struct target_doc *d)
{
	struct verify *vf = arg;
	struct ventry *e;
	char name[800];

	vf->docs++;
	if ((e = vtab_get(&vf->tab, d->index, d->id)) == NULL) {
		cli_doc_name(d->index, d->id, name, sizeof(name));
		printf("orphan: %s\n", name);
		olist_add(&vf->orph, d);
		return 0;
	}
	e->seen = 1;
	if (e->digest != vdoc_digest(d->source, vf->tab.numbers_by_value)) {
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

/*
 * P2O_TEST_REPAIR_HOLD=<path>: the repair waits before its writes until
 * <path> exists - the tests' way to change a row between the repair's
 * read of it and its write, which no timing from outside can aim at.
 */
static void
test_hold(void)
{
	const char *path = getenv("P2O_TEST_REPAIR_HOLD");
	struct timespec ts = { 0, 50 * 1000000L };

	if (path == NULL)
		return;
	printf("holding the repair's writes until '%s' exists\n", path);
	fflush(stdout);
	while (access(path, F_OK) == -1)
		nanosleep(&ts, NULL);
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
	w = xcalloc((size_t)(vf->ndiffer + vf->nmissing + vf->orph.n) + 1,
	    sizeof(*w));
	for (i = 0; i < vf->tab.n; i++) {
		if (!vf->tab.e[i].repair)
			continue;
		if (vtab_write(&vf->tab, &vf->tab.e[i], &w[n]) == 0) {
			/* through the alias, as the writer writes */
			w[n].require_alias = vf->cfg->target_require_alias;
			w[n++].version = version;
		}
		else {
			vtab_name(&vf->tab, &vf->tab.e[i], name, sizeof(name));
			printf("not repaired: %s: its row is gone\n", name);
		}
	}
	for (i = 0; i < vf->orph.n; i++) {
		olist_delete(&vf->orph, i, &w[n]);
		w[n++].version = version;
	}
	test_hold();
	rc = cli_send_writes(tc, vf->cfg, w, n, "repaired", fixed,
	    &vf->requests, e);
	/* without versions a change the stream wrote meanwhile may have
	 * landed before the repair's write of it */
	if (rc == 0 && !target_can(vf->tm, TCAP_EXTERNAL_VERSIONS))
		rc = verify_settle(vf->cfg, tc, w, n, version, &vf->moved,
		    &vf->requests, e);
	free(w);
	return rc;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *table = NULL;
	struct verify vf;
	struct target_conn tc;
	struct ckpt_view ck = { 0 };
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
	if ((rc = cli_config(path, CONFIG_SECRET_TARGET |
	    CONFIG_SECRET_TRANSFORM, &cfg)) != 0)
		return rc;
	vf.cfg = &cfg;
	vf.tm = cfg.target_module;
	vtab_init(&vf.tab);
	olist_init(&vf.orph);
	if (vf.tm->scan == NULL) {
		fprintf(stderr, "pg2osync verify: target '%s' cannot read its "
		    "documents back\n", vf.tm->name);
		rc = P2O_EXIT_CONFIG;
		goto out;
	}
	vf.tab.numbers_by_value = vf.tm->scan->numbers_by_value;
	if ((vf.want = rows_choose(&cfg, table)) == NULL) {
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
	    docs_scan(&cfg, vf.want, &tc, on_doc, &vf, &vf.requests, &e) == -1) {
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
	bad = vf.ndiffer + vf.nmissing + vf.orph.n;
	printf("%llu rows, %llu documents: %d differ, %d missing, %d "
	    "orphan%s (%.1f s, %.0f rows/s, %llu requests to the target)\n",
	    (unsigned long long)vf.tab.n, (unsigned long long)vf.docs,
	    vf.ndiffer, vf.nmissing, vf.orph.n, vf.orph.n == 1 ? "" : "s",
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
		if (vf.moved)
			printf("%d of them still changing (named above): the "
			    "stream writes them\n", vf.moved);
		rc = fixed == bad && vf.moved == 0 ? P2O_EXIT_OK :
		    CLI_EXIT_FAILED;
	}
conn:
	target_conn_release(&tc);
out:
	ckpt_view_release(&ck);
	vtab_release(&vf.tab);
	olist_release(&vf.orph);
	free(vf.want);
	free(vf.differ);
	config_release(&cfg);
	return rc;
}

const struct verb verb_verify = {
	.name = "verify",
	.summary = "compare the tables with their indices by content; "
	    "--repair fixes what differs",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "[--table T] [--repair]",
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
	    "the rows: a change the stream writes later still wins. On a "
	    "target without versions (Meilisearch) the rows are read again "
	    "once the repair's writes are in, and each document whose row "
	    "changed meanwhile is written again as its row is now, a few "
	    "rounds at most ('still changing:' names those that never stood "
	    "still).",
	.opts = opts,
	.exits = "  0   the indices hold what the tables render (with "
	    "--repair: after it)\n"
	    "  1   documents differ, are missing or orphaned (with --repair: "
	    "some could not be repaired)\n"
	    "  64  bad command line, or no such section\n"
	    "  65  the loader or the shaper failed on a row\n"
	    "  69  the source refused (a table missing or unreadable), or "
	    "the target a write request\n"
	    "  75  a server is unreachable or failing (temporary; --repair's "
	    "writes are retried first, by engine.retry_*, else for 30 s)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration\n",
	.run = run,
};
