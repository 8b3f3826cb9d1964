/*
 * opensearch_sync.c - what read-your-writes asks of OpenSearch: a refresh
 * of the indices a configuration writes, so that a search made after it
 * sees every write the target accepted before it (the supervisor's
 * /synced?refresh=true). Blocking, on a struct target_conn, like the
 * other state operations. Never exits.
 */
#include <string.h>

#include "opensearch.h"
#include "p2o.h"

int
os_refresh(struct target_conn *c, const char *indices, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	char why[400];
	long status;
	int rc = -1;

	/* a templated index may match none yet, a literal one may not exist
	 * before its first document: neither is an error */
	os_index_path(&path, indices, "/_refresh?ignore_unavailable=true&"
	    "allow_no_indices=true");
	http_call_set(&call, "POST", path.buf, NULL, NULL, 0);
	if (target_request(c, &call, &resp, &status, err) == 0) {
		if (status >= 200 && status < 300)
			rc = 0;
		else {
			os_error_text(resp.buf, resp.len, why, sizeof(why));
			p2o_fail(err, status == 401 || status == 403 ?
			    P2O_EXIT_AUTH : P2O_EXIT_TEMPFAIL, "refreshing "
			    "'%s': HTTP %ld: %s", indices, status, why);
		}
	}
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}
