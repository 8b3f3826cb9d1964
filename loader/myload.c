/*
 * myload.c - one MySQL or MariaDB table, chunk by chunk: describe it,
 * take the progress an earlier run stored (or start from the first key),
 * then read a chunk, write its mark, wait for the confirmation, and go on
 * past the last key written until a chunk comes back short. Owns that
 * order, which the shaper's tombstone window and the stored progress rely
 * on: no row of a chunk is read before the previous chunk's mark is
 * confirmed. Chunks are sequential by nature (each starts where the last
 * ended), so one connection reads them all. It writes no SQL (mychunk.c,
 * mysrc.c) and never exits.
 *
 * There is no pause analogue of PostgreSQL's WAL pressure: the binlog
 * is the server's whatever the load does, and the load never waits for
 * the stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "xio.h"
#include "../capture-mysql/binlog.h"
#include "loader.h"

/* 1 if progress was written for this table's key (names and types) */
static int
key_matches(const struct my_table *t, const struct myprogress *p)
{
	int i;

	if (p->nkeys != t->nkeys)
		return 0;
	for (i = 0; i < t->nkeys; i++)
		if (strcmp(p->key[i], t->cols[t->keys[i]].name) != 0 ||
		    strcmp(p->types[i], t->cols[t->keys[i]].column_type) != 0)
			return 0;
	return 1;
}

static void
fresh(const struct my_table *t, struct myprogress *p)
{
	const char *names[16], *types[16];
	int i;

	for (i = 0; i < t->nkeys && i < 16; i++) {
		names[i] = t->cols[t->keys[i]].name;
		types[i] = t->cols[t->keys[i]].column_type;
	}
	myprogress_start(p, i, names, types);
}

/* the progress to go on from, when the one stored still applies */
static void
resume_from(const struct my_table *t, const char *json,
    struct myprogress *p)
{
	char err[256];

	if (json != NULL && myprogress_parse((struct jspan){ json,
	    strlen(json) }, p, err, sizeof(err)) == -1)
		log_warnx("table '%s': the stored %s; loading it from the "
		    "start", t->rel, err);
	else if (json != NULL && !key_matches(t, p)) {
		log_warnx("table '%s': its key is not the one its stored "
		    "progress was written for; loading it from the start",
		    t->rel);
		myprogress_release(p);
	} else if (json != NULL) {
		if (p->finished)
			log_info("table '%s' was loaded already (%llu rows)",
			    t->rel, (unsigned long long)p->rows);
		else
			log_info("resuming '%s' after chunk %d (%llu rows "
			    "loaded)", t->rel, p->chunks,
			    (unsigned long long)p->rows);
		return;
	}
	fresh(t, p);
}

static int
mark(struct loader *ld, const struct my_table *t, const struct myprogress *p)
{
	struct sbuf prog = SBUF_INIT;
	int rc;

	myprogress_put(&prog, p);
	/* each chunk is stored before the next is read: the overlap the
	 * PostgreSQL waves have was not measured for chunks */
	rc = load_mark(ld, t->rel, p->chunks, &prog, p->finished);
	if (rc == 0)
		rc = control_wait_confirm(ld);
	sbuf_release(&prog);
	return rc;
}

/* chunks the table should take, for the stats: at least one more than
 * done while it is not finished */
static int
chunks_of(uint64_t estimate, uint64_t limit, const struct myprogress *p)
{
	uint64_t n = (estimate + limit - 1) / limit;

	if (p->finished)
		return p->chunks;
	if (n < (uint64_t)p->chunks + 1)
		n = (uint64_t)p->chunks + 1;
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

int
myload_table(struct loader *ld, const struct sync_section *sec,
    const char *progress_json)
{
	struct my_table t;
	struct myprogress p;
	struct ld_tstat *st;
	struct copy_field *last = NULL;
	uint64_t estimate = 0, rows;
	long long t0;
	int i, rc = -1;

	memset(&t, 0, sizeof(t));
	myprogress_init(&p);
	if (mysrc_describe(ld, sec, &t, &estimate) == -1)
		goto out;
	resume_from(&t, progress_json, &p);
	last = xcalloc(t.nkeys, sizeof(*last));
	st = control_stat(ld, t.rel);
	st->estimate = estimate;
	st->done = p.chunks;
	st->of = chunks_of(estimate, ld->range_rows, &p);
	ld->stats_dirty = 1;
	meter_start(&ld->meter, t.rel, estimate, p.rows, st->of);

	/* a table finished before: its last mark again, so that whoever
	 * asked hears that it is done */
	if (p.finished && mark(ld, &t, &p) == -1)
		goto out;
	while (!p.finished) {
		t0 = now_ms();
		if (mysrc_chunk(ld, &t, p.have_after ? p.after : NULL,
		    ld->range_rows, &rows, last) == -1)
			goto out;
		meter_range(&ld->meter, p.chunks, rows, now_ms() - t0);
		p.chunks++;
		p.rows += rows;
		if (rows > 0)
			myprogress_after(&p, last);
		p.finished = rows < ld->range_rows;
		if (mark(ld, &t, &p) == -1)
			goto out;
		st = control_stat(ld, t.rel);
		st->done = p.chunks;
		st->of = chunks_of(estimate, ld->range_rows, &p);
		ld->stats_dirty = 1;
		if (control_stats(ld, 0) == -1)
			goto out;
	}
	meter_end(&ld->meter);
	rc = 0;
out:
	if (last != NULL)
		for (i = 0; i < t.nkeys; i++)
			free((char *)last[i].p);
	free(last);
	myprogress_release(&p);
	my_table_release(&t);
	return rc;
}
