/*
 * control.c - the loader's side of fd 3 (framing.md §6): the one load
 * frame that says what to load, the confirmation each mark waits for,
 * and the stats. Stand-alone (no fd 3) there is nothing to read: every
 * table is loaded from the start and no mark waits.
 *
 * What the frames say is lib/msg.c's; this file decides what a frame
 * arriving at the wrong moment means: a confirmation of another mark is
 * a protocol error (65), fd 3 closing is the supervisor gone (75). It
 * never decides what is loaded or when: load.c asks.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "xio.h"
#include "loader.h"

#define STATS_MS	1000

/*
 * The next frame on fd 3 within ms (< 0: however long it takes), sending
 * stats while it waits: 1 with *f, 0 when the time is up, -1 with err.
 */
static int
next_frame(struct loader *ld, struct frame *f, int ms, const char *when)
{
	struct frame_reader *rd = &ld->ctl->rd;
	struct pollfd pfd;
	long long end = now_ms() + ms, left;
	int rc;

	for (;;) {
		if ((rc = frame_next(rd, f)) == 1)
			return 1;
		if (rc == -1)
			return p2o_fail(&ld->err, P2O_EXIT_DATA, "%s", rd->err);
		if (rd->eof)
			return p2o_fail(&ld->err, P2O_EXIT_TEMPFAIL, "control "
			    "fd 3 closed %s", when);
		left = ms < 0 ? STATS_MS : end - now_ms();
		if (left <= 0)
			return 0;
		pfd = (struct pollfd){ .fd = rd->fd, .events = POLLIN };
		if (poll(&pfd, 1, left > STATS_MS ? STATS_MS : (int)left) > 0 &&
		    frame_fill(rd) < 0 && errno != EAGAIN && errno != EINTR)
			return p2o_fail(&ld->err, P2O_EXIT_TEMPFAIL, "control "
			    "fd 3: %s %s", strerror(errno), when);
		if (control_stats(ld, 0) == -1)
			return -1;
	}
}

int
control_read_load(struct loader *ld, struct ld_job **jobs, int *njobs)
{
	struct frame f;
	struct jspan tables, progress;
	struct msg_pos cp;
	struct jiter it;
	char err[256], *table;
	int rc, cap = 0;

	*jobs = NULL;
	*njobs = 0;
	if (next_frame(ld, &f, -1, "before the load frame arrived") == -1)
		return -1;
	/* PostgreSQL versions copies by the WAL position read before each
	 * range; MySQL adds the generation base the checkpoint implies */
	if (msg_read_load(&f, &tables, &cp, err, sizeof(err)) == -1)
		return p2o_fail(&ld->err, P2O_EXIT_DATA, "control fd 3: offset "
		    "%llu: %s", (unsigned long long)f.offset, err);
	ld->cp_present = cp.present;
	ld->cp_pos = cp.pos;
	ld->cp_text = cp.text;
	cp.text = NULL;
	msg_pos_release(&cp);
	jiter_init(&it, tables);
	while ((rc = msg_load_next(&it, &table, &progress, err,
	    sizeof(err))) == 1) {
		if (*njobs == cap)
			*jobs = xrealloc(*jobs, (cap = cap ? cap * 2 : 8) *
			    sizeof(**jobs));
		(*jobs)[*njobs].table = table;
		(*jobs)[*njobs].progress = progress.p == NULL ? NULL :
		    xstrndup(progress.p, progress.n);
		(*njobs)++;
	}
	if (rc == -1)
		return p2o_fail(&ld->err, P2O_EXIT_DATA, "control fd 3: offset "
		    "%llu: %s", (unsigned long long)f.offset, err);
	return 0;
}

/* the oldest pending mark's id, or NULL */
static const char *
oldest(const struct loader *ld)
{
	return ld->npending ? ld->pending[ld->pend_first] : NULL;
}

/* whether the newest pending mark is one of rel's ("<rel>#<n>") */
static int
newest_is(const struct loader *ld, const char *rel)
{
	const char *id;
	size_t n = strlen(rel);

	if (ld->npending == 0)
		return 0;
	id = ld->pending[(ld->pend_first + ld->npending - 1) %
	    LOAD_MARKS_OPEN];
	return strncmp(id, rel, n) == 0 && id[n] == '#';
}

void
control_pending(struct loader *ld, const char *id)
{
	/* control_wait_room made the room */
	ld->pending[(ld->pend_first + ld->npending) % LOAD_MARKS_OPEN] =
	    xstrdup(id);
	ld->npending++;
}

/* a confirmation: of the oldest pending mark, which is then done (marks
 * are stored in the order written); of any other mark, or of none, a
 * broken protocol */
static int
take_confirm(struct loader *ld, const struct frame *f)
{
	struct msg_mark m;
	char err[256];
	int rc = 0;

	if (msg_read_mark(f, &m, err, sizeof(err)) == -1)
		return p2o_fail(&ld->err, P2O_EXIT_DATA, "control fd 3: "
		    "offset %llu: %s", (unsigned long long)f->offset, err);
	if (oldest(ld) == NULL)
		rc = p2o_fail(&ld->err, P2O_EXIT_DATA, "control fd 3: offset "
		    "%llu: a confirmation of mark '%s' while no mark waits for "
		    "one", (unsigned long long)f->offset, m.id);
	else if (strcmp(m.id, oldest(ld)) != 0)
		rc = p2o_fail(&ld->err, P2O_EXIT_DATA, "control fd 3: offset "
		    "%llu: a confirmation of mark '%s' while mark '%s' waits",
		    (unsigned long long)f->offset, m.id, oldest(ld));
	else {
		log_debug("mark '%s' confirmed", m.id);
		free(ld->pending[ld->pend_first]);
		ld->pending[ld->pend_first] = NULL;
		ld->pend_first = (ld->pend_first + 1) % LOAD_MARKS_OPEN;
		ld->npending--;
	}
	msg_mark_release(&m);
	return rc;
}

/* a frame that arrived while the loader was busy; 0 or -1 */
static int
unexpected(struct loader *ld, const struct frame *f)
{
	if (msg_kind(f) == MSG_MARK_CONFIRM)
		return take_confirm(ld, f);
	log_debug("control fd 3: ignoring a '%s' frame",
	    msg_kind_name(msg_kind(f)));
	return 0;
}

/* wait until fewer than max marks are pending and, with rel, none of
 * rel's */
static int
wait_pending(struct loader *ld, int max, const char *rel)
{
	struct frame f;
	char when[600];

	if (!ld->supervised)
		return 0;
	while (ld->npending >= max || (rel != NULL && newest_is(ld, rel))) {
		snprintf(when, sizeof(when), "before mark '%s' was confirmed",
		    oldest(ld));
		if (next_frame(ld, &f, -1, when) == -1)
			return -1;
		if (unexpected(ld, &f) == -1)
			return -1;
	}
	return 0;
}

int
control_wait_confirm(struct loader *ld)
{
	return wait_pending(ld, 1, NULL);
}

int
control_wait_room(struct loader *ld, const char *rel)
{
	return wait_pending(ld, LOAD_MARKS_OPEN, rel);
}

int
control_idle(struct loader *ld, int ms)
{
	struct frame f;
	long long end = now_ms() + ms, left;
	int rc;

	if (!ld->supervised) {
		poll(NULL, 0, ms);
		return 0;
	}
	while ((left = end - now_ms()) > 0) {
		if ((rc = next_frame(ld, &f, (int)left,
		    "while the load waited")) == -1)
			return -1;
		if (rc == 1 && unexpected(ld, &f) == -1)
			return -1;
	}
	return control_stats(ld, 0);
}

static const char *
stat_name(const void *arg, int pos, int *tag)
{
	const struct loader *ld = arg;

	*tag = 0;
	return ld->stats[pos].rel;
}

struct ld_tstat *
control_stat(struct loader *ld, const char *rel)
{
	int i;

	if (ld->statidx.name_of == NULL)
		strindex_init(&ld->statidx, stat_name);
	if ((i = strindex_get(&ld->statidx, ld, 0, rel, strlen(rel))) >= 0)
		return &ld->stats[i];
	ld->stats = xrealloc(ld->stats, (ld->nstats + 1) * sizeof(*ld->stats));
	memset(&ld->stats[ld->nstats], 0, sizeof(*ld->stats));
	ld->stats[ld->nstats].rel = xstrdup(rel);
	strindex_put(&ld->statidx, ld, ld->nstats);
	return &ld->stats[ld->nstats++];
}

void
control_rows(struct loader *ld, const char *rel, uint64_t n)
{
	long long owe;

	meter_rows(&ld->meter, n);
	control_stat(ld, rel)->rows += n;
	ld->stats_dirty = 1;
	if ((owe = pace_take(&ld->pace, n, now_us_mono())) > ld->owed_us)
		ld->owed_us = owe;
}

int
control_pace(struct loader *ld)
{
	long long owe = ld->owed_us;

	ld->owed_us = 0;
	if (owe <= 0)
		return 0;
	if (load_flush(ld) == -1)
		return -1;
	return control_idle(ld, (int)((owe + 999) / 1000));
}

/* one keyed counter over every table started */
static void
keyed(struct loader *ld, struct sbuf *j, enum msg_counter c)
{
	const struct ld_tstat *t;
	uint64_t v;
	int i;

	msg_stats_keyed_begin(j, c);
	for (i = 0; i < ld->nstats; i++) {
		t = &ld->stats[i];
		v = c == MC_LOAD_ROWS ? t->rows :
		    c == MC_LOAD_ROWS_ESTIMATE ? t->estimate :
		    c == MC_LOAD_RANGES_DONE ? (uint64_t)t->done :
		    (uint64_t)t->of;
		msg_stats_keyed_add(j, t->rel, strlen(t->rel), v);
	}
	msg_stats_keyed_end(j);
}

int
control_stats(struct loader *ld, int force)
{
	struct sbuf j = SBUF_INIT;
	long long now = now_ms();

	if (!ld->supervised || (!force && (!ld->stats_dirty ||
	    now - ld->stats_ms < STATS_MS)))
		return 0;
	msg_stats_begin(&j, "loader");
	keyed(ld, &j, MC_LOAD_ROWS);
	keyed(ld, &j, MC_LOAD_ROWS_ESTIMATE);
	keyed(ld, &j, MC_LOAD_RANGES_DONE);
	keyed(ld, &j, MC_LOAD_RANGES);
	msg_stats_add(&j, MC_LOAD_WAL_PAUSED, ld->paused);
	msg_stats_end(&ld->ctl->out, &j);
	sbuf_release(&j);
	ld->stats_ms = now;
	ld->stats_dirty = 0;
	if (ctl_flush(ld->ctl) == -1)
		return p2o_fail(&ld->err, P2O_EXIT_TEMPFAIL, "control fd 3: %s "
		    "(the supervisor is gone)", strerror(errno));
	return 0;
}
