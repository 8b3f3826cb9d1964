/*
 * writes.c - the writes the verbs send themselves (verify --repair,
 * reconcile --delete, rejects --replay): through the target's one
 * blocking write (lib/target.c, target_write_all - the module's own
 * encoding, its bulk request or its task procedure), each versioned by
 * the caller, retried within the limits cli_write_retry sets, and a line
 * per key saying what the target did with it. A write the target answers
 * with "I hold a newer version" is not done - the stream got there
 * first, and that is the point of the version - and is said so.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "xio.h"

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

void
cli_write_retry(const struct config *cfg, struct target_retry *r)
{
	r->first_ms = cfg->retry_backoff_ms;
	r->max = cfg->retry_max;
	r->max_elapsed_ms = cfg->retry_max_elapsed_ms;
	/* the writer may wait for ever; someone waits at a command */
	if (r->max == 0 && r->max_elapsed_ms == 0)
		r->max_elapsed_ms = CLI_WRITE_RETRY_MS;
}

int
cli_send_writes(struct target_conn *tc, const struct config *cfg,
    const struct target_write *w, int n, const char *done, int *fixed,
    uint64_t *requests, struct p2o_err *e)
{
	struct item_result *items;
	struct target_retry retry;
	char name[800];
	int i, k, m, rc = -1;

	cli_write_retry(cfg, &retry);
	items = xcalloc(TARGET_WRITE_CHUNK, sizeof(*items));
	/* a chunk at a time, so what was done is said before a request
	 * that fails */
	for (i = 0; i < n; i += m) {
		m = n - i < TARGET_WRITE_CHUNK ? n - i : TARGET_WRITE_CHUNK;
		if (target_write_all(tc, w + i, m, items, &retry, requests,
		    e) == -1)
			goto out;
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
	return rc;
}
