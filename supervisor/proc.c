/*
 * proc.c - the process: one pipeline per source of its configuration (a
 * file, or every file of a --config-dir), all under one poll loop, with
 * one /metrics, /healthz, /ready (and /ready/<name>) and /synced.
 *
 * A source that stops for good - a permanent failure, or reconnect_max
 * failures in a row - is a state of its own, halted, logged "source
 * <name> halted: <why>" and shown by /ready and pg2osync_source_state,
 * while the others stream. The process ends once every source is done:
 * 0 when a SIGTERM drained them all (75 when one could not store its
 * last position), else the code of the first source that halted. SIGTERM
 * drains every pipeline; SIGHUP reloads the one file (reload.c), or the
 * directory: read and checked as one set first (nothing changes when a
 * file or a rule of the set fails), then a file added starts its source,
 * a file removed drains and stops its source, a file still there is
 * reloaded by reload.c's rules, and a halted source starts again.
 *
 * What a pipeline does in its turn is loop.c's; this file owns the list,
 * the loop around all of them, which pipeline a reaped child belongs to
 * and the label of the lines each one's turn writes. Never exits:
 * sv_proc_run returns the code.
 */
#include <sys/wait.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_set.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "stage.h"
#include "supervisor.h"
#include "xio.h"

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* the lines written from here on are about sv (NULL: the process) */
static void
enter(struct sv *sv)
{
	log_set_source(sv != NULL ? sv->tag : NULL);
}

/* the program each stage runs, and the children's names: 0, or -1 */
static int
set_up_children(struct sv *sv, const struct sv_proc *p, struct p2o_err *e)
{
	char *path;
	int s;

	for (s = 0; s < SV_NSTAGES; s++) {
		sv->tap[s] = p->tap[s];
		sv->tap4[s] = p->tap4[s];
		sv->tap[s].max = sv->tap4[s].max = p->tap_max;
		sv->pending_out[s] = -1;
		if (p->program[s] != NULL) {
			/* a path the user named is run as named */
			path = strchr(p->program[s], '/') ?
			    xstrdup(p->program[s]) : sv_find_exe(p->program[s]);
			if (path == NULL || access(path, X_OK) == -1) {
				free(path);
				return p2o_fail(e, P2O_EXIT_USAGE, "--stage %s: "
				    "'%s' is not an executable",
				    sv_stages[s].role, p->program[s]);
			}
		} else if ((path = sv_find_exe(sv_stage_program(s,
		    &sv->cf))) == NULL) {
			/* an optional stage is looked for when it is needed */
			if (!sv_stages[s].optional)
				return p2o_fail(e, P2O_EXIT_INTERNAL, "could not "
				    "find '%s' next to this program or on $PATH",
				    sv_stage_program(s, &sv->cf));
			path = NULL;
		}
		snprintf(sv->kidname[s], sizeof(sv->kidname[s]), "%s",
		    base_name(path ? path : sv_stage_program(s, &sv->cf)));
		sv_child_init(&sv->kid[s], sv->kidname[s], path);
		snprintf(sv->kidname[SV_TAP_OF(s)], sizeof(sv->kidname[0]),
		    "tap %s", sv_stages[s].tap ? sv_stages[s].tap : "-");
		sv_child_init(&sv->kid[SV_TAP_OF(s)], sv->kidname[SV_TAP_OF(s)],
		    NULL);
		snprintf(sv->kidname[SV_TAP4_OF(s)], sizeof(sv->kidname[0]),
		    "tap %s", sv_stages[s].fd4_tap ? sv_stages[s].fd4_tap : "-");
		sv_child_init(&sv->kid[SV_TAP4_OF(s)],
		    sv->kidname[SV_TAP4_OF(s)], NULL);
	}
	for (s = 0; s < SV_NKIDS; s++)
		sv->kid[s].tag = sv->tag;
	return 0;
}

struct sv *
sv_pipe_new(struct sv_proc *p, const char *path, struct config *cf,
    struct p2o_err *e)
{
	struct sv *sv = xcalloc(1, sizeof(*sv));

	sv->proc = p;
	sv->cfgpath = xstrdup(path);
	sv->cf = *cf;
	memset(cf, 0, sizeof(*cf));
	/* every series' source label: source.name, else the stream's
	 * identity ("postgres:<slot>", "mysql:<server_id>") */
	config_source_name(&sv->cf, sv->source_name, sizeof(sv->source_name));
	/* one file: the lines are the stages' as they always were */
	sv->tag = p->cfgdir != NULL ? sv->source_name : NULL;
	if (set_up_children(sv, p, e) == -1) {
		sv_pipe_free(sv);
		return NULL;
	}
	sv_reload_remember(sv);
	sv_metrics_init(&sv->m);
	sv->m.source = sv->source_name;
	sv_health_init(&sv->health, sv->cf.ready_stall_s);
	sv->backoff.first_ms = sv->cf.reconnect_backoff_ms;
	sv->hello_timeout_s = p->hello_timeout_s;
	sv->restart_at_ms = now_ms();
	return sv;
}

void
sv_pipe_free(struct sv *sv)
{
	int k;

	if (sv == NULL)
		return;
	for (k = 0; k < SV_NSTAGES; k++)
		free(sv->kid[k].path);
	if (sv->cf.path != NULL)
		config_release(&sv->cf);
	sv_metrics_release(&sv->m);
	sv_bc_release(&sv->bc);
	free(sv->cp_text);
	free(sv->load_frame);
	free(sv->cfg_text);
	free(sv->cfgpath);
	free(sv);
}

struct sv *
sv_proc_find(struct sv_proc *p, const char *name)
{
	int i;

	for (i = 0; i < p->npipes; i++)
		if (strcmp(p->pipes[i]->source_name, name) == 0)
			return p->pipes[i];
	return NULL;
}

/* the file that holds a listener's bind names its token */
void
sv_proc_tokens(struct sv_proc *p)
{
	int i;

	for (i = 0; i < p->npipes; i++) {
		if (p->pipes[i]->cf.metrics_bind != NULL) {
			free(p->metrics_token);
			p->metrics_token = p->pipes[i]->cf.metrics_token ?
			    xstrdup(p->pipes[i]->cf.metrics_token) : NULL;
		}
		if (p->pipes[i]->cf.api_bind != NULL) {
			free(p->api_token);
			p->api_token = p->pipes[i]->cf.api_token ?
			    xstrdup(p->pipes[i]->cf.api_token) : NULL;
		}
	}
}

void
sv_proc_reap(struct sv_proc *p, long long now)
{
	pid_t pid;
	int status, i;

	for (i = 0; i < p->npipes; i++)
		p->pipes[i]->reap_round++;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (i = 0; i < p->npipes; i++) {
			enter(p->pipes[i]);
			if (sv_reaped(p->pipes[i], pid, status))
				break;
		}
	for (i = 0; i < p->npipes; i++) {
		enter(p->pipes[i]);
		sv_ended(p->pipes[i], now);
	}
}

/* sv out of the list, and freed */
static void
drop(struct sv_proc *p, struct sv *sv)
{
	int i;

	for (i = 0; i < p->npipes && p->pipes[i] != sv; i++)
		;
	if (i == p->npipes)
		return;
	memmove(&p->pipes[i], &p->pipes[i + 1], (size_t)(p->npipes - i - 1) *
	    sizeof(*p->pipes));
	p->npipes--;
	sv_pipe_free(sv);
}

/* a pipeline done: its helpers gone, and said when it halted; one whose
 * file was removed leaves the list */
static void
settle(struct sv_proc *p)
{
	struct sv *sv;
	int i;

	for (i = 0; i < p->npipes; ) {
		sv = p->pipes[i];
		if (sv->st.pl != PL_DONE) {
			i++;
			continue;
		}
		if (!sv->finished) {
			enter(sv);
			sv_end(sv);
			sv->finished = 1;
			/* stopped without being asked: a state of its own,
			 * while the others stream */
			sv->is_halted = sv->st.plan != PLAN_STOP;
			if (sv->is_halted)
				log_error("source %s halted: %s",
				    sv->source_name, sv->halted[0] ?
				    sv->halted : "stopped");
			enter(NULL);
		}
		if (sv->removed) {
			log_info("source %s stopped: its file '%s' is gone",
			    sv->source_name, sv->cfgpath);
			drop(p, sv);
			continue;
		}
		i++;
	}
}

static int
live(const struct sv_proc *p)
{
	int i;

	for (i = 0; i < p->npipes; i++)
		if (p->pipes[i]->st.pl != PL_DONE)
			return 1;
	return 0;
}

/* after a SIGTERM, what the drains did; else every source halted: the
 * first one's code */
static int
exit_code(const struct sv_proc *p)
{
	int i;

	for (i = 0; i < p->npipes; i++)
		if ((!p->stopping || !p->pipes[i]->is_halted) &&
		    p->pipes[i]->exit_code != 0)
			return p->pipes[i]->exit_code;
	return P2O_EXIT_OK;
}

/* room in the loop's pollfds for every pipeline */
static void
grow(struct sv_proc *p)
{
	int need = 1 + p->npipes * (SV_NKIDS * 3 + SV_NAUX * 3) +
	    2 * SV_HTTPD_POLLFDS;

	if (need <= p->npfd)
		return;
	p->pfd = xrealloc(p->pfd, (size_t)need * sizeof(*p->pfd));
	p->npfd = need;
}

/* ---- a directory's reload ---- */

static int
has_path(char *const *paths, int n, const char *path)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(paths[i], path) == 0)
			return i;
	return -1;
}

static struct sv *
pipe_of(struct sv_proc *p, const char *path)
{
	int i;

	for (i = 0; i < p->npipes; i++)
		if (strcmp(p->pipes[i]->cfgpath, path) == 0)
			return p->pipes[i];
	return NULL;
}

static int
differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0);
}

/* the directory refused: every source counts it and runs on */
static void
refused(struct sv_proc *p, const struct sbuf *why, const char *what)
{
	const char *s, *nl;
	int i;

	for (s = why->buf; s != NULL && *s; s = nl + 1) {
		nl = strchr(s, '\n');
		log_warnx("reload refused: %.*s", (int)(nl - s), s);
	}
	log_warnx("reload refused: %s; nothing changed, every source goes on "
	    "with the configuration it runs", what);
	for (i = 0; i < p->npipes; i++)
		p->pipes[i]->m.reloads[RL_REFUSED]++;
}

/* the listeners the new set names: those listening, or refused */
static int
same_listeners(const struct sv_proc *p, const struct config_set *set,
    struct sbuf *why)
{
	const char *mb = NULL, *ab = NULL;
	int i;

	for (i = 0; i < set->n; i++) {
		if (set->cf[i].metrics_bind != NULL)
			mb = set->cf[i].metrics_bind;
		if (set->cf[i].api_bind != NULL)
			ab = set->cf[i].api_bind;
	}
	if (differs(mb, p->metrics_bind))
		sbuf_addf(why, "metrics.bind cannot change while the process "
		    "listens on it ('%s'): restart pg2osync-supervise to change "
		    "it\n", p->metrics_bind ? p->metrics_bind : "none");
	if (differs(ab, p->api_bind))
		sbuf_addf(why, "api.bind cannot change while the process "
		    "listens on it ('%s'): restart pg2osync-supervise to change "
		    "it\n", p->api_bind ? p->api_bind : "none");
	return why->len == 0 ? 0 : -1;
}

/* the new file at set index i as a pipeline of the list, started now */
static void
add_pipe(struct sv_proc *p, struct config_set *set, int i, long long now)
{
	struct p2o_err e;
	struct sv *sv;
	int k;

	p2o_err_clear(&e);
	if ((sv = sv_pipe_new(p, set->paths[i], &set->cf[i], &e)) == NULL) {
		log_error("reload: '%s' could not be started: %s",
		    set->paths[i], e.msg);
		return;
	}
	sv->restart_at_ms = now;
	p->pipes = xrealloc(p->pipes, (size_t)(p->npipes + 1) *
	    sizeof(*p->pipes));
	/* in the order of the file names, as at the start */
	for (k = p->npipes; k > 0 && strcmp(p->pipes[k - 1]->cfgpath,
	    sv->cfgpath) > 0; k--)
		p->pipes[k] = p->pipes[k - 1];
	p->pipes[k] = sv;
	p->npipes++;
}

static void
reload_dir(struct sv_proc *p, long long now)
{
	struct config_set set;
	struct sbuf why = SBUF_INIT;
	struct p2o_err e;
	struct sv *sv;
	int i, k;

	log_info("SIGHUP: reloading the directory '%s'", p->cfgdir);
	p2o_err_clear(&e);
	/* every secret a stage reads, as at the start */
	if (config_set_load(p->cfgdir, sv_stage_secrets() |
	    CONFIG_SECRET_LISTEN, &set, &why, &e) == -1) {
		refused(p, &why, e.msg);
		goto out;
	}
	if (same_listeners(p, &set, &why) == -1) {
		refused(p, &why, "the listeners are the process's");
		goto out;
	}
	/* a file gone: its source drains and stops (settle drops it) */
	for (i = 0; i < p->npipes; i++) {
		sv = p->pipes[i];
		if (sv->removed || has_path(set.paths, set.n, sv->cfgpath) != -1)
			continue;
		log_info("reload: '%s' is gone: source %s drains and stops",
		    sv->cfgpath, sv->source_name);
		sv->removed = 1;
		enter(sv);
		sv_term(sv, now);
		enter(NULL);
	}
	for (k = 0; k < set.n; k++) {
		sv = pipe_of(p, set.paths[k]);
		if (sv != NULL && sv->removed)
			continue;
		if (sv == NULL) {
			log_info("reload: '%s' is new: starting source %s",
			    set.paths[k], set.names[k]);
			add_pipe(p, &set, k, now);
		} else if (sv->st.pl == PL_DONE) {
			/* halted: the operator fixed what stopped it, or
			 * wants it tried again */
			log_info("reload: source %s was halted: starting it "
			    "again on '%s'", sv->source_name, sv->cfgpath);
			drop(p, sv);
			add_pipe(p, &set, k, now);
		} else {
			/* its own checks, in its helper, by reload.c */
			enter(sv);
			sv_reload(sv, now);
			enter(NULL);
		}
	}
out:
	config_set_release(&set);
	sbuf_release(&why);
}

/* ---- the loop ---- */

int
sv_proc_run(struct sv_proc *p)
{
	struct sv *sv;
	long long now, at;
	int i, k, n, h0, a0, timeout;

	while (1) {
		now = now_ms();
		for (i = 0; i < p->npipes; i++)
			if (p->pipes[i]->st.pl != PL_DONE) {
				enter(p->pipes[i]);
				sv_step(p->pipes[i], now);
			}
		enter(NULL);
		settle(p);
		if (!live(p))
			break;
		grow(p);
		n = 0;
		p->pfd[n].fd = stage_sigfd();
		p->pfd[n++].events = POLLIN;
		at = -1;
		for (i = 0; i < p->npipes; i++) {
			sv = p->pipes[i];
			if (sv->st.pl == PL_DONE)
				continue;
			n = sv_pollfds(sv, p->pfd, n);
			at = sv_earliest(at, sv_deadline(sv, now));
		}
		h0 = n;
		n += sv_httpd_pollfds(&p->httpd, p->pfd + h0);
		a0 = n;
		n += sv_httpd_pollfds(&p->api, p->pfd + a0);
		at = sv_earliest(at, sv_httpd_deadline(&p->httpd));
		at = sv_earliest(at, sv_httpd_deadline(&p->api));
		timeout = at < 0 ? -1 : at <= now ? 0 : at - now > 60000 ?
		    60000 : (int)(at - now);
		for (k = 0; k < n; k++)
			p->pfd[k].revents = 0;
		if (poll(p->pfd, (nfds_t)n, timeout) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("poll");
			for (i = 0; i < p->npipes; i++) {
				p->pipes[i]->exit_code = P2O_EXIT_INTERNAL;
				sv_event(p->pipes[i], EV_ABORT, now);
			}
			settle(p);
			break;
		}
		now = now_ms();
		for (i = 0; i < p->npipes; i++)
			if (p->pipes[i]->st.pl != PL_DONE) {
				enter(p->pipes[i]);
				sv_io(p->pipes[i], p->pfd, now);
			}
		enter(NULL);
		if (p->pfd[0].revents)
			stage_sigfd_drain();
		if (stage_signalled(STAGE_CHLD))
			sv_proc_reap(p, now);
		if (stage_signalled(STAGE_TERM)) {
			p->stopping = 1;
			for (i = 0; i < p->npipes; i++) {
				enter(p->pipes[i]);
				sv_term(p->pipes[i], now);
			}
		}
		enter(NULL);
		if (stage_signalled(STAGE_HUP)) {
			if (p->cfgdir != NULL)
				reload_dir(p, now);
			else if (p->npipes > 0)
				sv_reload(p->pipes[0], now);
		}
		sv_httpd_handle(&p->httpd, p->pfd + h0, now);
		sv_httpd_handle(&p->api, p->pfd + a0, now);
		for (i = 0; i < p->npipes; i++) {
			sv = p->pipes[i];
			if (sv->st.pl == PL_DONE)
				continue;
			enter(sv);
			/* an ack above may have reached what a /synced waits
			 * for */
			sv_synced_step(sv, now);
			sv_aux_flush(sv);
			/* frames queued by the handlers above go out now
			 * when they can, without waiting a round for
			 * POLLOUT */
			for (k = 0; k < SV_NKIDS; k++)
				if (sv->kid[k].out.len > 0 ||
				    sv->kid[k].close_after)
					sv_child_flush(&sv->kid[k]);
		}
		enter(NULL);
	}
	enter(NULL);
	return exit_code(p);
}

void
sv_proc_release(struct sv_proc *p)
{
	int i;

	for (i = 0; i < p->npipes; i++)
		sv_pipe_free(p->pipes[i]);
	free(p->pipes);
	free(p->pfd);
	free(p->metrics_bind);
	free(p->api_bind);
	free(p->metrics_token);
	free(p->api_token);
	memset(p, 0, sizeof(*p));
}
