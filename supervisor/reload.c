/*
 * reload.c - what a SIGHUP (systemctl reload) does to a running
 * supervisor: the configuration file is read again and, if it passes the
 * checks `pg2osync validate` runs (lib/validate, against the live
 * servers), the stages are cycled onto it; otherwise nothing changes.
 *
 * The checks block on the servers, so they run in a helper process of the
 * supervisor's (aux.c), never in its loop, which goes on carrying
 * acknowledgements and answering probes meanwhile. The helper reads the
 * file, refuses a key that cannot change while the stream runs (the
 * source's url, slot, publication and server_id, the target's url, the
 * listeners' binds, source.name) naming it, and a change the documents
 * already written cannot follow (lib/config_diff.c) naming its line and
 * remedy, runs the checks (the source's validate operation), and applies
 * what the checks left for the source (its reload_apply: on PostgreSQL
 * the tables of new sections added to their publication, the one change
 * a reload makes on the source). It answers one frame, private to
 * this file: {"k":"reload","result":"applied"|"unchanged"|"refused",
 * "why":...}.
 *
 * Applied, the supervisor takes the new file (the stages read it at
 * their start) and cycles the stages as a drain does: the capture stops
 * reading, everything read is written and its position stored, then every
 * stage starts again at once, from that checkpoint, with the new file -
 * no backoff, the supervisor's pid and listeners unchanged, nothing lost
 * (the stored checkpoint is past everything acknowledged, and ckpt's load
 * frame names the new sections' tables, which the loader copies beside
 * the stream). A section removed is no longer written: the new shaper has
 * no section for its rows. Its index is left alone. docs/operations.md
 * says why a cycle and not an edit of running stages.
 *
 * Each SIGHUP logs one line "SIGHUP: reloading '<file>'" and its end one
 * line "reload applied|unchanged|refused: ...", counted in
 * pg2osync_config_reloads_total{result}. The stages never see the signal
 * (child.c starts them with SIGHUP ignored, in process groups of their
 * own).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_diff.h"
#include "frame.h"
#include "jscan.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "source_ops.h"
#include "supervisor.h"
#include "validate/check.h"
#include "xio.h"

const char *const sv_reload_results[RL_N] = {
	[RL_APPLIED] = "applied",
	[RL_UNCHANGED] = "unchanged",
	[RL_REFUSED] = "refused",
};

/* the whole file, or NULL with errno */
static char *
read_file(const char *path, size_t *len)
{
	struct sbuf b = SBUF_INIT;
	char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_add(&b, buf, n);
	fclose(f);
	*len = b.len;
	return b.buf ? b.buf : xstrdup("");
}

void
sv_reload_remember(struct sv *sv)
{
	free(sv->cfg_text);
	if ((sv->cfg_text = read_file(sv->cfgpath, &sv->cfg_len)) == NULL)
		sv->cfg_len = 0;
}

/* ---- the helper process ---- */

static int
differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0);
}

/* the nodes of two files' targets differ (a list in another order is
 * the same nodes) */
static int
nodes_differ(const struct config *was, const struct config *now)
{
	const char *const *a, *const *b;
	int na, nb, i, k;

	a = config_target_urls(was, &na);
	b = config_target_urls(now, &nb);
	if (na != nb)
		return 1;
	for (i = 0; i < na; i++) {
		for (k = 0; k < nb && strcmp(a[i], b[k]) != 0; k++)
			;
		if (k == nb)
			return 1;
	}
	return 0;
}

/* the first key that may not change live, or NULL */
static const char *
fixed_key(const struct config *was, const struct config *now)
{
	if (was->source != now->source)
		return "source.url (the kind of source)";
	if (differs(was->source_url, now->source_url))
		return "source.url";
	if (differs(was->slot_name, now->slot_name))
		return "source.slot_name";
	if (differs(was->publication, now->publication))
		return "source.publication";
	if (was->server_id != now->server_id)
		return "source.server_id";
	if (differs(was->source_name, now->source_name))
		return "source.name";
	if (nodes_differ(was, now))
		return was->ntarget_urls || now->ntarget_urls ? "target.urls" :
		    "target.url";
	if (differs(was->metrics_bind, now->metrics_bind))
		return "metrics.bind";
	if (differs(was->api_bind, now->api_bind))
		return "api.bind";
	return NULL;
}

static void
verdict(enum sv_reload_result r, const char *why)
{
	struct sbuf j = SBUF_INIT, out = SBUF_INIT;

	sbuf_adds(&j, "{\"k\":\"reload\",\"result\":");
	sbuf_add_jstr(&j, sv_reload_results[r], strlen(sv_reload_results[r]));
	sbuf_adds(&j, ",\"why\":");
	sbuf_add_jstr(&j, why, strlen(why));
	sbuf_addc(&j, '}');
	frame_put(&out, j.buf, j.len);
	(void)frame_flush(P2O_FD_OUT, &out);
	sbuf_release(&j);
	sbuf_release(&out);
}

/* the FAIL lines of a report, joined */
static void
failures(const char *report, struct sbuf *why)
{
	const char *p = report, *nl;
	int n = 0;

	for (; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (strncmp(p, "FAIL", 4) != 0)
			continue;
		if (n++ > 0)
			sbuf_adds(why, "; ");
		p += 4;
		while (*p == ' ')
			p++;
		sbuf_add(why, p, nl ? (size_t)(nl - p) : strlen(p));
	}
}

/* what the checks left for the source to apply, applied: 0, or -1 with
 * why */
static int
apply(const struct config *cf, const struct source_ops *ops,
    const char *applies, struct sbuf *done, struct sbuf *why)
{
	struct p2o_err e;

	if (ops->reload_apply == NULL || *applies == '\0')
		return 0;
	p2o_err_clear(&e);
	if (ops->reload_apply(cf, applies, done, &e) == 0)
		return 0;
	sbuf_addf(why, "applying the reload to the source: %s", e.msg);
	return -1;
}

static int
reload_main(void *arg)
{
	struct sv *sv = arg;
	struct config nc;
	const struct source_ops *ops;
	struct config_diff changed;
	struct check_report r;
	struct sbuf why = SBUF_INIT, adds = SBUF_INIT, added = SBUF_INIT;
	struct p2o_err e;
	const char *key;
	char *text, *report = NULL;
	size_t len, rlen = 0;
	FILE *mem;
	int failed;

	if ((text = read_file(sv->cfgpath, &len)) == NULL) {
		sbuf_addf(&why, "%s: %s", sv->cfgpath, strerror(errno));
		verdict(RL_REFUSED, why.buf);
		return P2O_EXIT_OK;
	}
	if (sv->cfg_text != NULL && len == sv->cfg_len &&
	    memcmp(text, sv->cfg_text, len) == 0) {
		verdict(RL_UNCHANGED, "the file is the one running");
		return P2O_EXIT_OK;
	}
	free(text);
	/* its warnings are the checks' to say, in the verdict */
	log_set_level(LOG_LVL_ERROR);
	p2o_err_clear(&e);
	if (config_load_with(sv->cfgpath, sv_stage_secrets() |
	    CONFIG_SECRET_LISTEN, &nc, &e) == -1) {
		verdict(RL_REFUSED, e.msg);
		return P2O_EXIT_OK;
	}
	if ((key = fixed_key(&sv->cf, &nc)) != NULL) {
		sbuf_addf(&why, "%s: %s cannot change while the pipeline runs; "
		    "restart pg2osync-supervise to change it", sv->cfgpath, key);
		verdict(RL_REFUSED, why.buf);
		return P2O_EXIT_OK;
	}
	/* what the documents already written cannot follow: named with
	 * its line and remedy, never taken */
	if (config_diff(&sv->cf, &nc, &changed) > 0) {
		config_diff_say(&changed, &nc, &why);
		config_diff_release(&changed);
		config_release(&nc);
		verdict(RL_REFUSED, why.buf);
		sbuf_release(&why);
		return P2O_EXIT_OK;
	}
	if ((mem = open_memstream(&report, &rlen)) == NULL) {
		verdict(RL_REFUSED, "could not run the checks: out of memory");
		return P2O_EXIT_OK;
	}
	check_init(&r, mem);
	ops = source_ops_of(&nc);
	if (ops->reload_apply != NULL)
		r.applies = &adds;
	ops->validate(&r, &nc);
	validate_target(&r, &nc);
	failed = check_end(&r) != 0;
	fclose(mem);
	if (failed) {
		sbuf_addf(&why, "%s: ", sv->cfgpath);
		failures(report, &why);
		verdict(RL_REFUSED, why.buf);
	} else if (apply(&nc, ops, adds.buf ? adds.buf : "", &added,
	    &why) == -1)
		verdict(RL_REFUSED, why.buf);
	else {
		sbuf_addf(&why, "every check passed (%d)%s%s", r.passed,
		    added.len ? "; " : "", added.len ? added.buf : "");
		verdict(RL_APPLIED, why.buf);
	}
	free(report);
	sbuf_release(&why);
	sbuf_release(&adds);
	sbuf_release(&added);
	config_release(&nc);
	return P2O_EXIT_OK;
}

/* ---- the supervisor's side ---- */

static void
count(struct sv *sv, enum sv_reload_result r)
{
	sv->m.reloads[r]++;
}

static void
refused(struct sv *sv, const char *why)
{
	count(sv, RL_REFUSED);
	log_warnx("reload refused: %s; nothing changed, the pipeline goes on "
	    "with the configuration it runs", why);
}

/* the verdict was applied: the file becomes the running one */
static void
take(struct sv *sv, const char *why, long long now)
{
	struct config nc;
	struct p2o_err e;

	p2o_err_clear(&e);
	if (config_load_with(sv->cfgpath, sv_stage_secrets() |
	    CONFIG_SECRET_LISTEN, &nc, &e) == -1) {
		/* the file changed again since the checks */
		refused(sv, e.msg);
		return;
	}
	config_release(&sv->cf);
	sv->cf = nc;
	sv_reload_remember(sv);
	sv_apply_log(&sv->cf);
	sv_health_init(&sv->health, sv->cf.ready_stall_s);
	sv->backoff.first_ms = sv->cf.reconnect_backoff_ms;
	/* /synced's helper reads the indices from the configuration */
	sv_helper_forget(sv);
	/* a listener's token follows the file holding its bind */
	sv_proc_tokens(sv->proc);
	count(sv, RL_APPLIED);
	log_info("reload applied: %s", why);
	/* the stages cycle onto it, or the next start reads it */
	sv_event(sv, EV_RELOAD, now);
}

static void
on_frame(struct sv *sv, const struct frame *f)
{
	struct jspan res, whyv;
	char *why;

	if (!jobj_get(f->obj, "result", &res) ||
	    !jobj_get(f->obj, "why", &whyv))
		return;
	sv->reload_answered = 1;
	why = jstr_dup(whyv);
	if (jstr_eq(res, "applied"))
		take(sv, why, now_ms());
	else if (jstr_eq(res, "unchanged")) {
		count(sv, RL_UNCHANGED);
		log_info("reload unchanged: %s", why);
	} else
		refused(sv, why);
	free(why);
}

static void	start_checks(struct sv *);

static void
on_end(struct sv *sv, int code)
{
	char why[128];

	if (!sv->reload_answered) {
		snprintf(why, sizeof(why), "the reload's checks ended without "
		    "a verdict (%s %d)", code < 0 ? "signal" : "exit code",
		    code < 0 ? -code : code);
		refused(sv, why);
	}
	if (sv->reload_again) {
		/* a SIGHUP during the checks: the file may have changed */
		sv->reload_again = 0;
		log_info("reload: reading '%s' again, for the SIGHUP that came "
		    "during the checks", sv->cfgpath);
		start_checks(sv);
	}
}

static const struct sv_aux_ops reload_ops = {
	.name = "the reload's checks",
	.on_frame = on_frame,
	.on_end = on_end,
};

/* the checks started in their helper */
static void
start_checks(struct sv *sv)
{
	char err[256];

	sv->reload_answered = 0;
	if (sv_aux_start(sv, SV_AUX_RELOAD, &reload_ops, reload_main, sv,
	    err, sizeof(err)) == -1)
		refused(sv, err);
}

void
sv_reload(struct sv *sv, long long now)
{
	(void)now;
	if (sv_aux_running(sv, SV_AUX_RELOAD)) {
		log_info("SIGHUP: reloading '%s' once the reload being checked "
		    "ends", sv->cfgpath);
		sv->reload_again = 1;
		return;
	}
	log_info("SIGHUP: reloading '%s': checking it against the servers "
	    "while the pipeline goes on", sv->cfgpath);
	start_checks(sv);
}
