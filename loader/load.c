/*
 * load.c - one table, from its first unfinished range to its last mark:
 * describe it, cut it (or take the cut an earlier run stored), then wave
 * by wave: wait for the slot's WAL, read the position, read the ranges,
 * write the mark. Owns that order, which the shaper's tombstone window
 * and the stored progress both rely on: a wave's position is read only
 * after the previous wave's mark is written, so every copy after a mark
 * is newer than the removals the shaper forgets at it; and one mark at a
 * time is being stored, so progress is stored in order. The next wave is
 * read while the previous mark is being stored (the pipeline would
 * otherwise drain once per wave); a crash then redoes what an unstored
 * mark covered, as it redoes a range cut short. It writes no SQL and no
 * row of its own (table.c's and wave.c's) and never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "msg.h"
#include "loader.h"

int
load_mark(struct loader *ld, const char *rel, int n,
    const struct sbuf *progress, int done)
{
	char id[512];

	/* one mark at a time is being stored */
	if (control_wait_confirm(ld) == -1)
		return -1;
	snprintf(id, sizeof(id), "%s#%d", rel, n);
	msg_put_mark(&ld->out, MSG_MARK, id, rel,
	    (struct jspan){ progress->buf, progress->len }, done);
	if (out_flush(ld) == -1)
		return -1;
	if (ld->supervised)
		snprintf(ld->pending, sizeof(ld->pending), "%s", id);
	log_debug("table '%s': mark '%s' written", rel, id);
	return 0;
}

/* the mark after a wave and its progress; the next wave is read while it
 * is stored */
static int
mark(struct loader *ld, const struct ld_table *t, const struct progress *p)
{
	struct sbuf prog = SBUF_INIT;
	int rc;

	progress_put(&prog, p);
	rc = load_mark(ld, t->rel, p->done, &prog, p->done == p->of);
	sbuf_release(&prog);
	return rc;
}

/* the progress to go on from, when the one stored still applies */
static int
resume_from(const struct ld_table *t, const char *json, struct progress *p)
{
	char err[256];

	if (json == NULL)
		return 0;
	if (progress_parse((struct jspan){ json, strlen(json) }, p, err,
	    sizeof(err)) == -1) {
		log_warnx("table '%s': the stored %s; loading it from the start",
		    t->rel, err);
		return 0;
	}
	if (!table_key_matches(t, p)) {
		log_warnx("table '%s': its key is not the one its stored "
		    "progress was cut on; loading it from the start", t->rel);
		progress_release(p);
		return 0;
	}
	if (p->done == p->of)
		log_info("table '%s' was loaded already (%d of %d ranges)",
		    t->rel, p->done, p->of);
	else
		log_info("resuming '%s' at range %d of %d", t->rel, p->done + 1,
		    p->of);
	return 1;
}

int
load_table(struct loader *ld, const struct sync_section *sec,
    const char *progress_json)
{
	struct ld_table t;
	struct progress p;
	struct ld_tstat *st;
	uint64_t v, *rows;
	int i, n, rc = -1;

	if (table_describe(&ld->conns[0], ld->cfg, sec, &t, &ld->err) == -1)
		return -1;
	rows = xcalloc(ld->nconns, sizeof(*rows));
	progress_init(&p);
	if (!resume_from(&t, progress_json, &p) &&
	    table_cut(&ld->conns[0], &t, ld->range_rows, &p, &ld->err) == -1)
		goto out;
	st = control_stat(ld, t.rel);
	st->estimate = t.estimate;
	st->of = p.of;
	st->done = p.done;
	ld->stats_dirty = 1;
	meter_start(&ld->meter, t.rel, t.estimate, p.rows, p.of);

	/* a table finished before: its last mark again, so that whoever
	 * asked hears that it is done */
	if (p.done == p.of && mark(ld, &t, &p) == -1)
		goto out;
	while (p.done < p.of) {
		if (walgate_pass(ld) == -1 ||
		    visible_position(ld, t.rel, p.done, &v) == -1)
			goto out;
		n = p.of - p.done < ld->nconns ? p.of - p.done : ld->nconns;
		if (wave_run(ld, &t, &p, p.done, n, v, rows) == -1)
			goto out;
		for (i = 0; i < n; i++)
			p.rows += rows[i];
		p.done += n;
		if (mark(ld, &t, &p) == -1)
			goto out;
		st = control_stat(ld, t.rel);
		st->done = p.done;
		ld->stats_dirty = 1;
		if (control_stats(ld, 0) == -1)
			goto out;
	}
	/* the table is done once its last mark is stored */
	if (control_wait_confirm(ld) == -1)
		goto out;
	meter_end(&ld->meter);
	rc = 0;
out:
	free(rows);
	progress_release(&p);
	table_release(&t);
	return rc;
}
