/*
 * walgate.c - the pause between waves while the replication slot holds
 * more WAL than the server means to keep. Owns the question about the
 * slot; never touches the slot itself.
 *
 * The load runs beside the stream, and only consuming the stream
 * releases WAL: while the slot's wal_status is anything but 'reserved'
 * the stream is behind, so the loader stops adding work in front of it
 * (the shaper already gives the stream priority) until it has caught up.
 * 'lost' means the slot can no longer stream what the load relies on.
 */
#include <string.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "pg/pgserver.h"
#include "xio.h"
#include "loader.h"

#define WALGATE_POLL_MS		1000

/* whether the slot exists, and its wal_status ("" before PostgreSQL 13,
 * which does not report one): the one slot read (lib/pg/pgserver.c) */
static int
status(struct loader *ld, char *s, size_t len, int *present)
{
	struct pgload *pg = ld->src;
	struct pgsrv_slot slot;

	if (pgsrv_slot_get(pg->conns[0], ld->cfg->slot_name, &slot, present,
	    &ld->err) == -1)
		return -1;
	if (*present)
		snprintf(s, len, "%s", slot.wal_status);
	pgsrv_slot_release(&slot);
	return 0;
}

int
walgate_pass(struct loader *ld)
{
	struct pgload *pg = ld->src;
	const char *slot = ld->cfg->slot_name;
	char st[32];
	long long since = 0;
	int present;

	if (pg->version < 130000 && pg->slot_known == 0)
		log_warnx("PostgreSQL %d does not report a slot's wal_status: "
		    "the load does not pause for WAL", pg->version / 10000);
	for (;;) {
		if (status(ld, st, sizeof(st), &present) == -1)
			return -1;
		if (!present) {
			if (ld->supervised)
				return p2o_fail(&ld->err, P2O_EXIT_REFUSED,
				    "replication slot '%s' does not exist: the "
				    "slot must exist before the load (the "
				    "capture creates it)", slot);
			if (pg->slot_known != -1) {
				meter_break(&ld->meter);
				log_warnx("replication slot '%s' does not exist: "
				    "loading without watching its WAL", slot);
			}
			pg->slot_known = -1;
			return 0;
		}
		pg->slot_known = 1;
		if (strcmp(st, "lost") == 0)
			return p2o_fail(&ld->err, P2O_EXIT_REFUSED,
			    "replication slot '%s' has lost WAL it needs "
			    "(wal_status 'lost'): the stream cannot continue, "
			    "so neither can the load; drop the slot and start "
			    "again", slot);
		if (strcmp(st, "reserved") == 0 || st[0] == '\0') {
			if (ld->paused) {
				meter_break(&ld->meter);
				log_info("replication slot '%s' is 'reserved' "
				    "again after %lld s: the load goes on", slot,
				    (now_ms() - since) / 1000);
				ld->paused = 0;
				ld->stats_dirty = 1;
				if (control_stats(ld, 0) == -1)
					return -1;
			}
			return 0;
		}
		if (!ld->paused) {
			meter_break(&ld->meter);
			log_warnx("replication slot '%s' has wal_status '%s': "
			    "the load pauses until the stream has caught up "
			    "and it is 'reserved' again", slot, st);
			ld->paused = 1;
			ld->stats_dirty = 1;
			since = now_ms();
			if (control_stats(ld, 0) == -1)
				return -1;
		}
		if (control_idle(ld, WALGATE_POLL_MS) == -1)
			return -1;
	}
}
