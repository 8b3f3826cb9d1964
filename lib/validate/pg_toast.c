/*
 * validate/pg_toast.c - the one judgment on a PostgreSQL table whose
 * updates a target cannot complete. An UPDATE that leaves an out-of-line
 * (TOAST) value unchanged sends the row without that value unless the
 * table's replica identity is FULL; a target that cannot complete a
 * document from its stored copy (no TCAP_COMPLETE_DOCS) would then be
 * handed a partial document, and the pipeline halts at that update - in
 * production, long after the deploy. So such a table must be REPLICA
 * IDENTITY FULL, as must each table under it that holds rows (a
 * partition's or an inheritance child's own identity decides what its
 * updates send).
 *
 * Used by validate's per-table check (a failure naming the table and the
 * ALTER) and by setup-sql's script (the ALTER, decided on the server).
 * Looks at a described table and the target's capabilities only: asks
 * the server nothing, changes nothing.
 */
#include <string.h>

#include "validate/check.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "target.h"

/* the target cannot complete a partial document: sections that stream
 * updates need FULL where a column can be stored out of line */
static int
target_needs_full(const struct config *cfg)
{
	const struct target_module *tm = cfg->target_module ?
	    cfg->target_module : target_module_find(NULL);

	return tm != NULL && !target_can(tm, TCAP_COMPLETE_DOCS);
}

/* one table that needs FULL: named in tables, its ALTER in alter */
static void
add_table(struct sbuf *tables, struct sbuf *alter, const char *qname)
{
	sbuf_addf(tables, "%s%s", tables->len ? ", " : "", qname);
	sbuf_addf(alter, "%sALTER TABLE %s REPLICA IDENTITY FULL",
	    alter->len ? "; " : "", qname);
}

int
pg_toast_needs_full(const struct pgcat_table *t, const struct config *cfg,
    struct sbuf *tables, struct sbuf *cols, struct sbuf *alter)
{
	int i, n = 0, ncols = 0;

	if (t->sec == NULL || t->sec->append_only || !target_needs_full(cfg))
		return 0;
	for (i = 0; i < t->ncols; i++)
		if (t->cols[i].sent && t->cols[i].toastable)
			sbuf_addf(cols, "%s%s", ncols++ ? ", " : "",
			    t->cols[i].name);
	if (ncols == 0)
		return 0;
	/* a partitioned table holds no rows: its partitions do */
	if (t->kind == 'r' && t->ident != 'f') {
		add_table(tables, alter, t->sec->rel);
		n++;
	}
	for (i = 0; i < t->nrels; i++)
		if (t->rels[i].kind == 'r' && t->rels[i].ident != 'f') {
			add_table(tables, alter, t->rels[i].qname);
			n++;
		}
	return n;
}

int
check_toast(struct check_report *r, const struct pgcat_table *t,
    const struct config *cfg)
{
	struct sbuf tables = SBUF_INIT, cols = SBUF_INIT, alter = SBUF_INIT;
	int n;

	if ((n = pg_toast_needs_full(t, cfg, &tables, &cols, &alter)) > 0)
		check_fail(r, "table '%s': target '%s' cannot complete a "
		    "document an UPDATE sends without its unchanged out-of-line "
		    "(TOAST) values, and column%s %s can hold such values, so "
		    "the replica identity of %s must be FULL (%s)", t->sec->rel,
		    cfg->target_module->name, strchr(cols.buf, ',') ? "s" : "",
		    cols.buf, tables.buf, alter.buf);
	sbuf_release(&tables);
	sbuf_release(&cols);
	sbuf_release(&alter);
	return n == 0;
}

void
pg_toast_script(struct sbuf *b, const struct config *cfg)
{
	struct sbuf rel = SBUF_INIT;
	int i, any = 0;

	if (!target_needs_full(cfg))
		return;
	for (i = 0; i < cfg->nsyncs; i++) {
		if (cfg->syncs[i].append_only)
			continue;
		if (!any++)
			sbuf_addf(b, "\n-- Replica identity for target '%s', "
			    "which cannot complete a document an UPDATE\n--    "
			    "sends without its unchanged out-of-line (TOAST) "
			    "values: FULL on each table\n--    (and each table "
			    "under it) with a column that can hold such a "
			    "value.\n", cfg->target_module->name);
		sbuf_reset(&rel);
		pgconn_put_ident(&rel, cfg->syncs[i].schema);
		sbuf_addc(&rel, '.');
		pgconn_put_ident(&rel, cfg->syncs[i].table);
		sbuf_adds(b, "DO $$ DECLARE r pg_catalog.regclass; BEGIN\n"
		    "  FOR r IN WITH RECURSIVE tree(oid) AS (SELECT ");
		pgconn_put_literal(b, rel.buf);
		sbuf_adds(b, "::pg_catalog.regclass::pg_catalog.oid\n"
		    "      UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i "
		    "JOIN tree ON i.inhparent = tree.oid)\n"
		    "    SELECT c.oid::pg_catalog.regclass FROM tree JOIN "
		    "pg_catalog.pg_class c ON c.oid = tree.oid\n"
		    "    WHERE c.relkind = 'r' AND c.relreplident <> 'f' AND "
		    "EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a\n"
		    "      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT "
		    "a.attisdropped\n      AND " PGCAT_TOASTABLE ")\n"
		    "  LOOP\n    EXECUTE pg_catalog.format('ALTER TABLE %s "
		    "REPLICA IDENTITY FULL', r);\n  END LOOP;\nEND $$;\n");
	}
	sbuf_release(&rel);
}
