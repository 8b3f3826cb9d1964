/*
 * writes.c - what verify --repair and reconcile --delete send: writes and
 * deletes through the target module's own encoding and bulk request (a
 * target whose writes are tasks: its write procedure, each task waited
 * for), each versioned by the caller, and a line per key saying what the
 * target did with it. A write the target answers with "I hold a newer
 * version" is not done - the stream got there first, and that is the
 * point of the version - and is said so.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "p2o.h"
#include "xio.h"

/* writes in one bulk request */
#define CHUNK	500

/*
 * A target whose writes are tasks (TCAP_ASYNC_TASKS): the chunk through
 * the module's write procedure, its polls waited out, until every task
 * ended (items filled). 0, or -1 with err: TA_RETRY and TA_REFUSED are
 * 75, for the caller to run again.
 */
static int
task_writes(struct target_conn *tc, const char *body, size_t len, int n,
    struct item_result *items, uint64_t *requests, struct p2o_err *e)
{
	const struct target_ops *ops = tc->mod->ops;
	struct target_proc p;
	struct sbuf resp = SBUF_INIT;
	struct http_call call;
	struct timespec ts;
	enum target_answer a;
	char why[512];
	long status;
	int rc = -1;

	target_proc_init(&p);
	for (;;) {
		ops->write_call(&p, body, len, &call);
		(*requests)++;
		if (target_request(tc, &call, &resp, &status, e) == -1)
			break;
		a = ops->write_answer(&p, status, &resp, body, len, n, items,
		    why, sizeof(why));
		if (a == TA_OK) {
			rc = 0;
			break;
		}
		if (a != TA_NEXT) {
			p2o_fail(e, a == TA_AUTH ? P2O_EXIT_AUTH :
			    P2O_EXIT_TEMPFAIL, "writing (HTTP %ld): %s",
			    status, why);
			break;
		}
		if (p.poll_ms > 0) {
			ts.tv_sec = p.poll_ms / 1000;
			ts.tv_nsec = (p.poll_ms % 1000) * 1000000L;
			nanosleep(&ts, NULL);
		}
	}
	target_proc_release(&p);
	sbuf_release(&resp);
	return rc;
}

void
cli_doc_name(struct jspan index, struct jspan id, char *buf, size_t len)
{
	char a[256], b[512];

	if (jstr_copy(index, a, sizeof(a)) == -1)
		snprintf(a, sizeof(a), "(long name)");
	if (jstr_copy(id, b, sizeof(b)) == -1)
		snprintf(b, sizeof(b), "(long id)");
	snprintf(buf, len, "%s/%s", a, b);
}

int
cli_send_writes(struct target_conn *tc, const struct target_write *w, int n,
    const char *done, int *fixed, uint64_t *requests, struct p2o_err *e)
{
	const struct target_ops *ops = tc->mod->ops;
	struct sbuf arena = SBUF_INIT, resp = SBUF_INIT;
	struct item_result *items;
	struct target_entry te;
	struct http_call call;
	char why[512], name[800];
	long status;
	int i, k, m, rc = -1;

	items = xcalloc(CHUNK, sizeof(*items));
	for (i = 0; i < n; i += m) {
		m = n - i < CHUNK ? n - i : CHUNK;
		sbuf_reset(&arena);
		for (k = 0; k < m; k++)
			if (ops->encode(&arena, &w[i + k], &te, e) == -1)
				goto out;
		if (ops->write_call != NULL) {
			if (task_writes(tc, arena.buf, arena.len, m, items,
			    requests, e) == -1)
				goto out;
		} else {
			ops->bulk_call(arena.buf, arena.len, &call);
			(*requests)++;
			if (target_request(tc, &call, &resp, &status, e) == -1)
				goto out;
			if (ops->bulk_answer(status, resp.buf, resp.len, m,
			    items, why, sizeof(why)) != TA_OK) {
				p2o_fail(e, status == 401 || status == 403 ?
				    P2O_EXIT_AUTH : P2O_EXIT_TEMPFAIL, "bulk "
				    "request failed (HTTP %ld): %s", status,
				    why);
				goto out;
			}
		}
		for (k = 0; k < m; k++) {
			cli_doc_name(w[i + k].index, w[i + k].id, name,
			    sizeof(name));
			switch (items[k].verdict) {
			case ITEM_OK:
			case ITEM_NOTFOUND:
				printf("%s: %s\n", done, name);
				(*fixed)++;
				break;
			case ITEM_CONFLICT:
				printf("not %s: %s: the index holds a "
				    "version newer than the checkpoint\n",
				    done, name);
				break;
			default:
				printf("not %s: %s: %s: %s\n", done, name,
				    items[k].type[0] ? items[k].type : "error",
				    items[k].reason);
				break;
			}
		}
	}
	rc = 0;
out:
	free(items);
	sbuf_release(&arena);
	sbuf_release(&resp);
	return rc;
}

