/*
 * routes.c - what each path of the metrics listener answers: /metrics
 * (metrics.c renders every source's series, behind metrics.token_env's
 * bearer token when there is one), /healthz (liveness: the supervisor
 * runs, whatever its pipelines do, a restart backoff included), /ready
 * (readiness: every source loading or streaming, and making progress;
 * loop.c and health.c say which) and /ready/<name> (one source's). The
 * bytes of a request and a response are httpd.c's; this file never
 * touches a socket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xio.h"
#include "supervisor.h"

/* one source's readiness: 200 "ready: <state>", else 503 with why */
static void
ready_one(struct sv *sv, long long now, struct sv_http_resp *resp,
    const char *prefix)
{
	char why[768];

	sv_not_ready(sv, now, why, sizeof(why));
	if (why[0]) {
		resp->status = 503;
		sbuf_addf(&resp->body, "not ready: %s%s\n", prefix, why);
	} else
		sbuf_addf(&resp->body, "ready: %s%s\n", prefix,
		    sv_source_states[sv->m.state]);
}

void
sv_route(void *arg, const struct sv_http_req *req, struct sv_http_resp *resp)
{
	struct sv_proc *p = arg;
	const struct sv_metrics **ms;
	struct sv *sv;
	long long now = now_ms();
	char prefix[200];
	int i;

	if (strcmp(req->path, "/metrics") == 0) {
		if (p->metrics_token != NULL &&
		    !sv_http_bearer_ok(req, p->metrics_token)) {
			resp->status = 401;
			resp->challenge = 1;
			sbuf_adds(&resp->body, "a bearer token is required\n");
			return;
		}
		ms = xcalloc((size_t)p->npipes + 1, sizeof(*ms));
		for (i = 0; i < p->npipes; i++) {
			sv_health_update(p->pipes[i], now);
			ms[i] = &p->pipes[i]->m;
		}
		resp->status = 200;
		resp->ctype = "text/plain; version=0.0.4; charset=utf-8";
		/* the supervisor's own spans, one exporter for the process:
		 * counted since it started, across restarts, on every source's
		 * series alike */
		for (i = 0; i < p->npipes; i++) {
			p->pipes[i]->m.base[MC_TRACE_DROPPED_SUPERVISOR] = 0;
			p->pipes[i]->m.last[MC_TRACE_DROPPED_SUPERVISOR] =
			    trace_dropped();
		}
		sv_metrics_render_all(ms, p->npipes, &resp->body);
		free(ms);
	} else if (strcmp(req->path, "/healthz") == 0) {
		/* a liveness probe must not kill a supervisor that is
		 * waiting out a restart: that is when it recovers */
		resp->status = 200;
		for (i = 0; i < p->npipes; i++) {
			sv = p->pipes[i];
			sv_health_update(sv, now);
			if (p->npipes == 1)
				sbuf_addf(&resp->body, "alive: %s\n",
				    sv_source_states[sv->m.state]);
			else
				sbuf_addf(&resp->body, "alive: %s: %s\n",
				    sv->source_name,
				    sv_source_states[sv->m.state]);
		}
	} else if (strcmp(req->path, "/ready") == 0) {
		/* every source: one that is not ready makes the process
		 * not ready, and each says where it is */
		resp->status = 200;
		for (i = 0; i < p->npipes; i++) {
			sv = p->pipes[i];
			snprintf(prefix, sizeof(prefix), "%s: ", p->npipes == 1 ?
			    "" : sv->source_name);
			ready_one(sv, now, resp, p->npipes == 1 ? "" : prefix);
		}
	} else if (strncmp(req->path, "/ready/", 7) == 0 &&
	    (sv = sv_proc_find(p, req->path + 7)) != NULL) {
		resp->status = 200;
		ready_one(sv, now, resp, "");
	} else {
		resp->status = 404;
		sbuf_adds(&resp->body, strncmp(req->path, "/ready/", 7) == 0 ?
		    "not found: no source of that name\n" : "not found\n");
	}
}
