/*
 * reload.c - what a SIGHUP (systemctl reload) does to a running
 * supervisor. Reading the configuration again is not supported yet, so it
 * changes nothing: it says so in one line, and the pipeline goes on. What
 * it must never do is stop the stream; the stages never see the signal
 * (child.c starts them with SIGHUP ignored, in process groups of their
 * own).
 */
#include "log.h"
#include "supervisor.h"

const char *const sv_reload_results[RL_N] = {
	[RL_APPLIED] = "applied",
	[RL_UNCHANGED] = "unchanged",
	[RL_REFUSED] = "refused",
};

void
sv_reload(struct sv *sv, long long now)
{
	(void)now;
	log_info("SIGHUP: reloading '%s' is not supported yet; the signal is "
	    "ignored and the pipeline goes on", sv->cfgpath);
}
