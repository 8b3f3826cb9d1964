/*
 * load.c - the one load driver: every table, whatever its source, goes
 * describe, resume (or count and cut afresh), then read a unit, write its
 * mark, until its last unit's mark is confirmed. Owns that order, which
 * the shaper's tombstone window and the stored progress both rely on:
 *
 * - a unit's version is read (by the source's read) only after the mark
 *   before it is written, so every copy after a mark is newer than the
 *   removals the shaper forgets at it;
 * - one mark of a table at a time is being stored (a mark waits for the
 *   confirmation of its table's one before), so a table's progress is
 *   stored in order. Marks of other tables are stored meanwhile, up to
 *   LOAD_MARKS_OPEN of them: what a mark says is its table's alone, and
 *   confirmations come back in the order the marks were written.
 *
 * A source whose units may overlap the storing of a mark (ops->overlap:
 * PostgreSQL's waves) reads the next unit while the mark before it is
 * being stored, instead of draining the pipeline once per unit; a crash
 * then redoes what an unstored mark covered, as it redoes a unit cut
 * short. A source without it (MySQL's chunks, not measured) waits for
 * each mark before the next read. The same holds between tables: the next
 * tables are read while the last marks of those before are stored. The
 * driver writes no SQL and no row of its own, and never exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "source.h"
#include "xio.h"
#include "loader.h"

/* the operations of each kind of source, by the source module's name for
 * it (lib/source.h): data, so main.c never asks which source it reads */
static const struct {
	const char *kind;
	const struct load_ops *ops;
} sources[] = {
	{ "postgres", &pgload_ops },
	{ "mysql", &myload_ops },
};

const struct load_ops *
load_ops_for(const struct source_module *src)
{
	size_t i;

	for (i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (strcmp(sources[i].kind, src->kind) == 0)
			return sources[i].ops;
	return NULL;
}

int
load_flush(struct loader *ld)
{
	if (ld->out.len == 0)
		return 0;
	if (write_in_full(ld->out_fd, ld->out.buf, ld->out.len) == -1)
		return p2o_fail(&ld->err, P2O_EXIT_TEMPFAIL, "stdout: %s "
		    "(whoever read the copy rows is gone)", strerror(errno));
	sbuf_reset(&ld->out);
	return 0;
}

/* the mark "<rel>#<done>" carrying the table's progress, after
 * (supervised) the confirmation of the mark before it */
static int
mark(struct loader *ld, const struct load_view *v)
{
	struct sbuf prog = SBUF_INIT;
	char id[512];
	int rc = -1;

	/* a table's marks are stored one at a time, in order; other
	 * tables' may be stored meanwhile, together */
	if (control_wait_room(ld, v->rel) == -1)
		goto out;
	ld->ops->progress(v, &prog);
	snprintf(id, sizeof(id), "%s#%d", v->rel, v->done);
	msg_put_mark(&ld->out, MSG_MARK, id, v->rel,
	    (struct jspan){ prog.buf, prog.len }, v->finished);
	if (load_flush(ld) == -1)
		goto out;
	if (ld->supervised)
		control_pending(ld, id);
	log_debug("table '%s': mark '%s' written", v->rel, id);
	rc = ld->ops->overlap ? 0 : control_wait_confirm(ld);
out:
	sbuf_release(&prog);
	return rc;
}

static void
stat_units(struct loader *ld, const struct load_view *v)
{
	struct ld_tstat *st = control_stat(ld, v->rel);

	st->estimate = v->estimate;
	st->done = v->done;
	st->of = v->of;
	ld->stats_dirty = 1;
}

int
load_table(struct loader *ld, const struct sync_section *sec,
    const char *progress_json)
{
	const struct load_ops *o = ld->ops;
	struct load_view *v = NULL;
	int resumed, rc = -1;

	if (o->describe(ld, sec, &v) == -1)
		goto out;
	resumed = progress_json != NULL && o->resume(ld, v, progress_json);
	if (o->count(ld, v, !resumed) == -1)
		goto out;
	stat_units(ld, v);
	meter_start(&ld->meter, v->rel, v->estimate, v->rows, v->of);
	/* each table's load is held to the cap from its own start: the
	 * time spent describing and counting banks no rows */
	pace_init(&ld->pace, ld->pace.rate, now_us_mono());

	/* a table finished before: its last mark again, so that whoever
	 * asked hears that it is done */
	if (v->finished && mark(ld, v) == -1)
		goto out;
	while (!v->finished) {
		if (o->read(ld, v) == -1 || mark(ld, v) == -1)
			goto out;
		stat_units(ld, v);
		if (control_stats(ld, 0) == -1)
			goto out;
	}
	/* the table is done once its last mark is stored; a source whose
	 * reads may overlap the storing of a mark reads the next table
	 * meanwhile (its first mark still waits for this one), main.c
	 * waits for the last */
	if (!o->overlap && control_wait_confirm(ld) == -1)
		goto out;
	meter_end(&ld->meter);
	rc = 0;
out:
	o->release(v);
	return rc;
}
