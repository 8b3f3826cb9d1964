/*
 * slotwatch.c - what every logical replication slot on the server
 * retains, watched while the capture streams: every SLOTWATCH_MS one
 * statement (lib/pg/pgserver.c) reads them all, and a stats frame carries
 * each slot's retained WAL, safe_wal_size, wal_status and whether it is
 * active to the supervisor's /metrics. At the first look, every slot
 * nothing streams from is logged with what it already retains: a slot
 * nobody reads keeps WAL until the disk is full.
 *
 * It runs on the catalogue connection the startup checks opened, kept
 * for it. It never fails the stream: a look that fails is logged, the
 * slot metrics are withdrawn (stale numbers would hide a filling disk)
 * and the watch stops until the capture starts again. Never exits.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "capture-pg.h"
#include "ctl.h"
#include "log.h"
#include "msg.h"
#include "pg/pgconn.h"
#include "pg/pgserver.h"

static const char *const statuses[] = { "reserved", "extended", "unreserved",
	"lost" };
#define NSTATUSES	(sizeof(statuses) / sizeof(statuses[0]))

static uint64_t
clamp(int64_t v)
{
	return v > 0 ? (uint64_t)v : 0;
}

/* the four gauges of every logical slot, as one frame (none: withdrawn) */
static void
report(struct slotwatch *w, const struct pgsrv_slot *v, int n,
    struct ctl *ctl)
{
	struct sbuf j = SBUF_INIT, key = SBUF_INIT;
	size_t k;
	int i;

	msg_stats_begin(&j, "capture-pg");
	msg_stats_keyed_begin(&j, MC_SLOT_RETAINED);
	for (i = 0; i < n; i++)
		if (v[i].logical && v[i].has_retained)
			msg_stats_keyed_add(&j, v[i].name, strlen(v[i].name),
			    clamp(v[i].retained));
	msg_stats_keyed_end(&j);
	msg_stats_keyed_begin(&j, MC_SLOT_SAFE_WAL);
	for (i = 0; i < n; i++)
		if (v[i].logical && v[i].has_safe)
			msg_stats_keyed_add(&j, v[i].name, strlen(v[i].name),
			    clamp(v[i].safe_wal_size));
	msg_stats_keyed_end(&j);
	msg_stats_keyed_begin(&j, MC_SLOT_WAL_STATUS);
	for (i = 0; i < n; i++) {
		if (!v[i].logical || v[i].wal_status[0] == '\0')
			continue;
		/* every state, so that the one a slot left reads 0 */
		for (k = 0; k < NSTATUSES; k++) {
			sbuf_reset(&key);
			sbuf_addf(&key, "%s%c%s", v[i].name, MSG_KEY_SEP,
			    statuses[k]);
			msg_stats_keyed_add(&j, key.buf, key.len,
			    strcmp(v[i].wal_status, statuses[k]) == 0);
		}
	}
	msg_stats_keyed_end(&j);
	msg_stats_keyed_begin(&j, MC_SLOT_ACTIVE);
	for (i = 0; i < n; i++)
		if (v[i].logical)
			msg_stats_keyed_add(&j, v[i].name, strlen(v[i].name),
			    v[i].active);
	msg_stats_keyed_end(&j);
	msg_stats_end(&ctl->out, &j);
	if (ctl_flush(ctl) == -1)
		log_warnx("slot watch: control fd 3 is gone");
	sbuf_release(&j);
	sbuf_release(&key);
	(void)w;
}

/* the first look: what each slot nothing reads already holds */
static void
warn_idle(const struct slotwatch *w, const struct pgsrv_slot *v, int n)
{
	struct sbuf drop = SBUF_INIT;
	int i;

	for (i = 0; i < n; i++) {
		if (!v[i].logical || v[i].active || !v[i].has_retained)
			continue;
		sbuf_reset(&drop);
		pgsrv_drop_slot_sql(&drop, v[i].name);
		log_warnx("slot '%s' is not active and already retains %.1f MB "
		    "of WAL (wal_status '%s'): the server keeps it until the "
		    "slot is read or dropped (%s, or pg2osync status)",
		    v[i].name, (double)v[i].retained / 1e6,
		    v[i].wal_status[0] ? v[i].wal_status : "unknown", drop.buf);
	}
	sbuf_release(&drop);
	(void)w;
}

static long long
sw_due(void *arg)
{
	return ((struct slotwatch *)arg)->next_ms;
}

static void
sw_run(void *arg, long long now, struct ctl *ctl)
{
	struct slotwatch *w = arg;
	struct pgsrv_slot *v;
	struct p2o_err e;
	uint64_t at;
	int n;

	p2o_err_clear(&e);
	if (pgsrv_slots(w->conn, &v, &n, &at, &e) == -1) {
		log_warnx("slot watch: %s; the slot metrics are withdrawn until "
		    "the capture starts again", e.msg);
		if (ctl != NULL)
			report(w, NULL, 0, ctl);
		pgconn_close(w->conn);
		w->conn = NULL;
		w->next_ms = LLONG_MAX;
		return;
	}
	if (!w->looked)
		warn_idle(w, v, n);
	w->looked = 1;
	if (ctl != NULL)
		report(w, v, n, ctl);
	pgsrv_slots_free(v, n);
	/* stand-alone nobody reads the numbers: the first look's warning
	 * was the point */
	w->next_ms = ctl != NULL ? now + SLOTWATCH_MS : LLONG_MAX;
}

void
slotwatch_init(struct slotwatch *w, struct pg_conn *conn)
{
	struct p2o_err e;

	memset(w, 0, sizeof(*w));
	w->conn = conn;
	w->side.due = sw_due;
	w->side.run = sw_run;
	w->side.arg = w;
	/* a look must not hold the stream up for long */
	p2o_err_clear(&e);
	if (pgconn_exec(conn, "bounding the slot watch", "SET "
	    "statement_timeout = '5s'", &e) == -1)
		log_warnx("slot watch: %s", e.msg);
}

void
slotwatch_release(struct slotwatch *w)
{
	pgconn_close(w->conn);
	w->conn = NULL;
}
