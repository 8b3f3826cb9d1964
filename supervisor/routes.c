/*
 * routes.c - what each path of the metrics listener answers: /metrics
 * (metrics.c renders it) and /healthz (the pipeline's state). The bytes
 * of a request and a response are httpd.c's; this file never touches a
 * socket.
 */
#include <string.h>

#include "supervisor.h"

void
sv_route(void *arg, const struct sv_http_req *req, struct sv_http_resp *resp)
{
	struct sv *sv = arg;

	if (strcmp(req->path, "/metrics") == 0) {
		resp->status = 200;
		resp->ctype = "text/plain; version=0.0.4; charset=utf-8";
		sv_metrics_render(&sv->m, &resp->body);
	} else if (strcmp(req->path, "/healthz") == 0) {
		resp->status = sv->state == PL_UP ? 200 : 503;
		sbuf_addf(&resp->body, "%s\n", sv->state == PL_UP ? "ok" :
		    sv_state_name(sv));
	} else {
		resp->status = 404;
		sbuf_adds(&resp->body, "not found\n");
	}
}
