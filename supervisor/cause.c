/*
 * cause.c - which child's end caused a failed incarnation, decided from
 * what each child did (struct sv_end) and the stage table's topology,
 * whatever order their exits reached the supervisor in. Owns the rules
 * that tell a cause from its consequences: a downstream stage that saw
 * its input end, a 65 for a frame its upstream cut short. Pure: no I/O,
 * no clock, no process; the loop fills the records and acts on the answer.
 */
#include <signal.h>

#include "p2o.h"
#include "supervisor.h"

/* ended by itself: exited with a code, or killed by a signal the
 * supervisor did not send (a kill -9 from outside, a crash) */
static int
on_its_own(const struct sv_end *e)
{
	return e->started && e->exited && (e->code >= 0 || !e->signalled);
}

/*
 * Whether u's end explains c's 65, c's input from u ending inside a
 * frame. Reaping order is no proof: a process killed by a signal closes
 * its pipes before its parent can reap it, so its reader may be reaped
 * first. So a signal no one here sent (not SIGPIPE, which c's own end
 * would cause) explains it whenever it was reaped; any other end only
 * when reaped no later than c, and for the load descriptor only a failed
 * one (a loader that exited 0 wrote whole frames).
 */
static int
cuts(const struct sv_end *ends, int u, const struct sv_end *c, int fd4)
{
	const struct sv_end *ue;

	if (u < 0)
		return 0;
	ue = &ends[u];
	if (!ue->started || !ue->exited)
		return 0;
	if (ue->code < 0 && ue->code != -SIGPIPE && !ue->signalled)
		return 1;
	return ue->round <= c->round && (!fd4 || ue->code != 0);
}

int
sv_cause_permanent(const struct sv_end ends[SV_NKIDS])
{
	const struct sv_end *c;
	int k, fd4_from;

	for (k = 0; k < SV_NKIDS; k++) {
		c = &ends[k];
		if (!c->started || !c->exited || c->code <= 0 ||
		    !p2o_exit_permanent(c->code))
			continue;
		fd4_from = SV_IS_TAP(k) ? -1 : sv_stages[k].fd4_from;
		if (c->code == P2O_EXIT_DATA &&
		    (cuts(ends, sv_kid_upstream(k), c, 0) ||
		    cuts(ends, fd4_from, c, 1)))
			continue;
		return k;
	}
	return -1;
}

int
sv_cause_first(const struct sv_end ends[SV_NKIDS])
{
	int k, best = -1, bfail = 0, fail;

	for (k = 0; k < SV_NKIDS; k++) {
		if (!on_its_own(&ends[k]))
			continue;
		/* a death by a signal no one here sent (a kill -9 from
		 * outside, a crash) ranks before an exit code: the stages
		 * around it exit because of it (a broken pipe, a cut frame).
		 * A SIGPIPE ranks below an exit code: it is what writing to
		 * a reader that ended does, so the reader's end is the cause
		 * whichever of the two was reaped first */
		fail = ends[k].code == 0 ? 0 : ends[k].code == -SIGPIPE ? 1 :
		    ends[k].code < 0 ? 3 : 2;
		/* a loader that finished is not what stopped the pipeline */
		if (!fail && !SV_IS_TAP(k) && sv_stages[k].exit0_done)
			continue;
		if (best == -1 || fail > bfail ||
		    (fail == bfail && sv_kid_depth(k) < sv_kid_depth(best))) {
			best = k;
			bfail = fail;
		}
	}
	return best;
}
