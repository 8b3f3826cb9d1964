/*
 * routes.c - what each path of the metrics listener answers: /metrics
 * (metrics.c renders it, behind metrics.token_env's bearer token when
 * there is one), /healthz (liveness: the supervisor runs, whatever the
 * pipeline does, a restart backoff included) and /ready (readiness:
 * loading or streaming, and making progress; loop.c and health.c say
 * which). The bytes of a request and a response are httpd.c's; this file
 * never touches a socket.
 */
#include <string.h>

#include "xio.h"
#include "supervisor.h"

void
sv_route(void *arg, const struct sv_http_req *req, struct sv_http_resp *resp)
{
	struct sv *sv = arg;
	long long now = now_ms();
	char why[768];

	if (strcmp(req->path, "/metrics") == 0) {
		if (sv->cf.metrics_token != NULL &&
		    !sv_http_bearer_ok(req, sv->cf.metrics_token)) {
			resp->status = 401;
			resp->challenge = 1;
			sbuf_adds(&resp->body, "a bearer token is required\n");
			return;
		}
		sv_health_update(sv, now);
		resp->status = 200;
		resp->ctype = "text/plain; version=0.0.4; charset=utf-8";
		/* the supervisor's own spans: counted since it started,
		 * across the pipeline's restarts */
		sv->m.base[MC_TRACE_DROPPED_SUPERVISOR] = 0;
		sv->m.last[MC_TRACE_DROPPED_SUPERVISOR] = trace_dropped();
		sv_metrics_render(&sv->m, &resp->body);
	} else if (strcmp(req->path, "/healthz") == 0) {
		/* a liveness probe must not kill a supervisor that is
		 * waiting out a restart: that is when it recovers */
		sv_health_update(sv, now);
		resp->status = 200;
		sbuf_addf(&resp->body, "alive: %s\n",
		    sv_source_states[sv->m.state]);
	} else if (strcmp(req->path, "/ready") == 0) {
		sv_not_ready(sv, now, why, sizeof(why));
		resp->status = why[0] ? 503 : 200;
		if (why[0])
			sbuf_addf(&resp->body, "not ready: %s\n", why);
		else
			sbuf_addf(&resp->body, "ready: %s\n",
			    sv_source_states[sv->m.state]);
	} else {
		resp->status = 404;
		sbuf_adds(&resp->body, "not found\n");
	}
}
