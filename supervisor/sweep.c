/*
 * sweep.c - the deletes a full load cannot make. When the stream's
 * position was gone (a lost slot, a purged binlog) every table is loaded
 * again beside a new stream, and a load only writes: the documents of rows
 * deleted while nothing was streaming would stay for ever. So once every
 * table is loaded again and the new stream has a checkpoint of its own,
 * `pg2osync verify --repair` runs in a helper: it deletes exactly the
 * documents no row renders, versioned by the stored checkpoint read before
 * the rows (a row the stream re-inserts later carries a higher version and
 * wins), and writes again a document that differs, under the same rule.
 *
 * The sweep is owed from the moment the load progress is forgotten until
 * it ends: ckpt keeps the marker among the stream's state documents and
 * says so in its load frame, so a crash anywhere in between sweeps again.
 * It is tried whenever its conditions may have become true: the pipeline
 * up (a restart with nothing left to load), the loader's end, and each
 * stored checkpoint (the new stream's first).
 * Never exits; blocks on nothing (the helper does).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "supervisor.h"
#include "xio.h"

/* what the verb exits with when it wrote what it could: 1 leaves only
 * documents the stream wrote a newer version of, or refused ones it
 * named */
#define VERIFY_DIFFERED	1

static int
sweep_main(void *arg)
{
	struct sv *sv = arg;
	char *path = sv_find_exe("pg2osync");

	if (path == NULL) {
		log_warnx("sweep: could not find 'pg2osync' next to this "
		    "program or on $PATH");
		return P2O_EXIT_INTERNAL;
	}
	/* its report goes to the log, not into the frame channel */
	if (dup2(P2O_FD_LOG, P2O_FD_OUT) == -1)
		return P2O_EXIT_INTERNAL;
	execl(path, "pg2osync", "verify", "-c", sv->cfgpath, "--repair",
	    (char *)NULL);
	log_warnx("sweep: could not run '%s'", path);
	return P2O_EXIT_INTERNAL;
}

static void
on_frame(struct sv *sv, const struct frame *f)
{
	(void)sv;
	(void)f;
}

static void
on_end(struct sv *sv, int code)
{
	struct sv_child *ck = &sv->kid[SV_CKPT];

	if (code != P2O_EXIT_OK && code != VERIFY_DIFFERED) {
		/* the marker stays: the next incarnation sweeps again */
		log_warnx("sweep: 'pg2osync verify --repair' ended with %d; "
		    "it runs again at the next start", code);
		sv_event(sv, EV_SWEEP_FAILED, now_ms());
		return;
	}
	if (code == VERIFY_DIFFERED)
		log_warnx("sweep: some documents were left (named above): "
		    "the stream holds newer versions of them, or the target "
		    "refused them");
	if (!sv_child_running(ck)) {
		log_warnx("sweep: done, but ckpt is not running to record "
		    "it; it runs again at the next start");
		sv_event(sv, EV_SWEEP_FAILED, now_ms());
		return;
	}
	log_info("sweep: the documents of rows deleted while the position "
	    "was gone are removed");
	msg_put_swept(sv_child_out(ck));
	sv_event(sv, EV_SWEEP_DONE, now_ms());
}

static const struct sv_aux_ops sweep_ops = {
	.name = "the sweep after a reload",
	.on_frame = on_frame,
	.on_end = on_end,
};

void
sv_sweep_maybe(struct sv *sv, long long now)
{
	const struct sv_child *ld = &sv->kid[SV_LOADER];
	char err[256];

	/* owed, not running, the stream's checkpoint its own, the stages
	 * running: the table says */
	if (!sv_state_allows(&sv->st, EV_SWEEP_START))
		return;
	/* after the last table's load: the sweep reads what it wrote */
	if (sv_will_run(sv, SV_LOADER) &&
	    !(ld->exited && sv_child_code(ld) == 0))
		return;
	log_info("sweep: every table is loaded again; removing the "
	    "documents whose rows are gone ('pg2osync verify --repair')");
	if (sv_aux_start(sv, SV_AUX_SWEEP, &sweep_ops, sweep_main, sv, err,
	    sizeof(err)) == -1) {
		log_warnx("sweep: %s", err);
		return;
	}
	sv_event(sv, EV_SWEEP_START, now);
}
