/*
 * reconcile.c - pg2osync reconcile [--table T] [--delete]: the documents
 * no row accounts for any more - a row deleted while nothing streamed, a
 * row that no longer matches the section's where, a document inserted by
 * hand - named, and with --delete removed. resnapshot's other half: it
 * only ever deletes.
 *
 * Which documents a row accounts for is decided the way verify decides
 * it, by rendering every row through the loader and the shaper (ids from
 * templates, fan-out and the where included: a row outside the where
 * renders no document) and reading every stored document of the indices
 * back through the target's scan. Only keys are kept, not digests.
 *
 * A delete keeps each hit's routing and carries the stored checkpoint's
 * position, read before the rows are: a row re-inserted while reconcile
 * runs is written by the stream at a higher version, which the target
 * keeps, and the delete is reported as not done. A target without
 * versions cannot keep it so: there the rows are read again after the
 * deletes, and the document of a row there now is written back
 * (verify_settle.c). Without --delete nothing is written anywhere.
 *
 * A section whose index is rendered from a column is refused: its
 * documents are spread over every index the template names, and a
 * document in an index its row no longer renders is a move the stream
 * owns, not an orphan to page for.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "xio.h"

enum { O_TABLE = 0x100, O_DELETE };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "table", O_TABLE, "T", "only the sync section T (its name, its "
	    "table or schema.table) and the sections sharing its index" },
	{ "delete", O_DELETE, NULL, "delete the documents found, versioned "
	    "by the stored checkpoint (without it nothing is changed)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

struct reconcile {
	const struct config *cfg;
	unsigned char *want;
	struct vtab tab;
	struct olist orph;
	uint64_t docs, requests;
};

static int
wanted(const struct reconcile *rc, struct jspan index)
{
	const struct sync_section *s;
	char name[512];

	if (jstr_copy(index, name, sizeof(name)) == -1 ||
	    (s = config_find_index(rc->cfg, name)) == NULL)
		return 0;
	return rc->want[s - rc->cfg->syncs];
}

static int
on_row(void *arg, const struct msg_op *m)
{
	struct reconcile *rc = arg;

	/* a key too long to keep would make its document look orphaned:
	 * stop rather than delete it */
	if (wanted(rc, m->index) && vtab_add(&rc->tab, m) == -1) {
		fprintf(stderr, "pg2osync reconcile: a document whose index or "
		    "id is too long to keep: stopping, nothing deleted\n");
		return -1;
	}
	return 0;
}

static int
on_doc(void *arg, const struct target_doc *d)
{
	struct reconcile *rc = arg;
	char name[800];

	rc->docs++;
	if (vtab_get(&rc->tab, d->index, d->id) != NULL)
		return 0;
	cli_doc_name(d->index, d->id, name, sizeof(name));
	printf("orphan: %s\n", name);
	olist_add(&rc->orph, d);
	return 0;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *table = NULL;
	struct reconcile rc;
	struct target_conn tc;
	struct target_write *w = NULL;
	struct ckpt_view ck = { 0 };
	struct config cfg;
	struct p2o_err e;
	uint64_t rows = 0;
	int ch, i, code, del = 0, deleted = 0, moved = 0;

	memset(&rc, 0, sizeof(rc));
	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else if (ch == O_TABLE)
			table = arg;
		else if (ch == O_DELETE)
			del = 1;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if ((code = cli_config(path, CONFIG_SECRET_TARGET, &cfg)) != 0)
		return code;
	rc.cfg = &cfg;
	vtab_init(&rc.tab);
	olist_init(&rc.orph);
	if (cfg.target_module->scan == NULL) {
		fprintf(stderr, "pg2osync reconcile: target '%s' cannot read "
		    "its documents back\n", cfg.target_module->name);
		code = P2O_EXIT_CONFIG;
		goto out;
	}
	if ((rc.want = rows_choose(&cfg, table)) == NULL) {
		code = cli_usage(v, "no sync section is '%s'", table);
		goto out;
	}
	for (i = 0; i < cfg.nsyncs; i++)
		if (rc.want[i] && cfg.syncs[i].index_templated) {
			fprintf(stderr, "pg2osync reconcile: section '%s' "
			    "renders its index from a column ('%s'): its "
			    "documents are spread over every index the "
			    "template names, so there is no one index to "
			    "reconcile (pg2osync verify compares them)\n",
			    cfg.syncs[i].name, cfg.syncs[i].index);
			code = P2O_EXIT_CONFIG;
			goto out;
		}
	p2o_err_clear(&e);
	if (target_conn_open(&tc, &cfg, &e) == -1) {
		code = cli_fail(&e);
		goto out;
	}
	/* the version of the deletes: read before the rows are */
	status_checkpoint(&cfg, &ck);
	if (del && !ck.found) {
		fprintf(stderr, "pg2osync reconcile: --delete needs the stored "
		    "checkpoint to version its deletes by: %s\n", ck.why[0] ?
		    ck.why : "none is stored");
		code = CLI_EXIT_FAILED;
		goto conn;
	}
	if (verify_rows(&cfg, on_row, &rc, &rows, &e) == -1 ||
	    docs_scan(&cfg, rc.want, &tc, on_doc, &rc, &rc.requests,
	    &e) == -1) {
		code = e.msg[0] ? cli_fail(&e) : P2O_EXIT_DATA;
		goto conn;
	}
	printf("%d rows, %llu documents: %d orphan%s (no row renders them: "
	    "deleted while nothing streamed, outside the section's where, or "
	    "written by something else)\n", rc.tab.n,
	    (unsigned long long)rc.docs, rc.orph.n,
	    rc.orph.n == 1 ? "" : "s");
	code = rc.orph.n ? CLI_EXIT_FAILED : P2O_EXIT_OK;
	if (del && rc.orph.n) {
		w = xcalloc((size_t)rc.orph.n, sizeof(*w));
		for (i = 0; i < rc.orph.n; i++) {
			olist_delete(&rc.orph, i, &w[i]);
			w[i].version = ck.pos;
		}
		if (cli_send_writes(&tc, &cfg, w, rc.orph.n, "deleted",
		    &deleted, &rc.requests, &e) == -1 ||
		    /* without versions a row inserted meanwhile may have
		     * had its document deleted after the stream wrote it */
		    (!target_can(cfg.target_module, TCAP_EXTERNAL_VERSIONS) &&
		    verify_settle(&cfg, &tc, w, rc.orph.n, ck.pos, &moved,
		    &rc.requests, &e) == -1)) {
			code = cli_fail(&e);
			goto conn;
		}
		printf("deleted %d of %d at version %llu (checkpoint %s)\n",
		    deleted, rc.orph.n, (unsigned long long)ck.pos, ck.text);
		code = deleted == rc.orph.n && moved == 0 ? P2O_EXIT_OK :
		    CLI_EXIT_FAILED;
	}
conn:
	target_conn_release(&tc);
out:
	ckpt_view_release(&ck);
	free(w);
	free(rc.want);
	vtab_release(&rc.tab);
	olist_release(&rc.orph);
	config_release(&cfg);
	return code;
}

const struct verb verb_reconcile = {
	.name = "reconcile",
	.summary = "name the documents no row accounts for; --delete removes "
	    "them",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "[--table T] [--delete]",
	.about = "Renders every row as the pipeline would (the loader and the "
	    "shaper themselves: ids, fan-out and the section's where "
	    "included), pages every stored document of the indices and "
	    "prints each one no row renders ('orphan:'): its row deleted "
	    "while nothing streamed, its row outside the section's where "
	    "now, or a document written by something else. Without --delete "
	    "nothing is changed. With --delete they are deleted, each under "
	    "its own routing, versioned by the stored checkpoint read before "
	    "the rows: a row re-inserted meanwhile is written by the stream "
	    "at a higher version and kept ('not deleted:'); on a target "
	    "without versions (Meilisearch) the rows are read again after "
	    "the deletes and such a row's document is written back. A "
	    "section whose index is rendered from a column is refused.",
	.opts = opts,
	.exits = "  0   no orphan (with --delete: every one deleted)\n"
	    "  1   orphans found (with --delete: some were not deleted)\n"
	    "  64  bad command line, or no such section\n"
	    "  65  the loader or the shaper failed on a row\n"
	    "  69  the source refused (a table missing or unreadable), or "
	    "the target a write request\n"
	    "  75  a server is unreachable or failing (temporary; --delete's "
	    "requests are retried first, by engine.retry_*, else for 30 s)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration, a templated index, or a target "
	    "that cannot read its documents back\n",
	.run = run,
};
