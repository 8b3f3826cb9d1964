/*
 * rejects.c - pg2osync rejects: the documents the target refused that the
 * writer kept aside (engine.on_permanent_rejection: quarantine), listed
 * oldest first; with --replay each is sent again through the target's
 * one blocking write (lib/target.c: the module's own entry, with the
 * original position as its external version, so a replay can never put
 * back an older state than the index holds; retried as the writer
 * retries, within the limits writes.c sets), and its record is cleared
 * only once the target took it or holds a newer version of it already.
 * A document still refused keeps its record. Runs beside a running
 * pipeline: a version is a version, whoever writes it.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "source.h"
#include "target.h"
#include "xio.h"

enum { O_REPLAY = 0x100, O_LIMIT };

/* without --limit: every record (the store is bounded by max_rejects) */
#define ALL	1000000

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "replay", O_REPLAY, NULL, "send each refused document again and "
	    "clear the records of those the target takes now" },
	{ "limit", O_LIMIT, "N", "at most the N oldest records (default: "
	    "all)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

/* "index/id at position" of a record */
static void
describe(const struct target_reject *r, char *buf, size_t len)
{
	char index[256], id[512], pos[64];

	if (jstr_copy(r->index, index, sizeof(index)) == -1)
		snprintf(index, sizeof(index), "(long name)");
	if (jstr_copy(r->id, id, sizeof(id)) == -1)
		snprintf(id, sizeof(id), "(long id)");
	if (r->position == NULL)
		snprintf(pos, sizeof(pos), "version %llu",
		    (unsigned long long)r->version);
	snprintf(buf, len, "%s/%s%s at %s", index, id,
	    r->del ? " (delete)" : "", r->position ? r->position : pos);
}

static int
list(const struct target_rejects *set, const struct target_module *tm)
{
	char name[900];
	int i;

	for (i = 0; i < set->n; i++) {
		describe(&set->r[i], name, sizeof(name));
		printf("%s: %s\n", name, set->r[i].reason ? set->r[i].reason :
		    "(no reason recorded)");
	}
	if ((uint64_t)set->n < set->total)
		printf("%d of %llu refused documents in %s\n", set->n,
		    (unsigned long long)set->total, tm->rejects_place);
	else
		printf("%llu refused document%s in %s\n",
		    (unsigned long long)set->total, set->total == 1 ? "" : "s",
		    tm->rejects_place);
	return P2O_EXIT_OK;
}

/* records [from, from + n) sent again: the keys to clear into clear[],
 * how many still refused into *still; 0 or -1 with e */
static int
replay_chunk(const struct config *cfg, struct target_conn *tc,
    const struct target_retry *retry, const struct target_rejects *set,
    int from, int n, char **clear, int *nclear, int *still,
    struct p2o_err *e)
{
	struct item_result *items;
	struct target_write *w;
	const struct target_reject *r;
	char name[900];
	int i, rc = -1;

	items = xcalloc((size_t)n, sizeof(*items));
	w = xcalloc((size_t)n, sizeof(*w));
	for (i = 0; i < n; i++) {
		r = &set->r[from + i];
		w[i].del = r->del;
		w[i].index = r->index;
		w[i].id = r->id;
		w[i].routing = r->routing;
		w[i].pipeline = r->pipeline;
		w[i].doc = r->doc;
		w[i].version = r->version;
		/* written as the writer wrote it: through the alias */
		w[i].require_alias = cfg->target_require_alias && !r->del &&
		    jstr_copy(r->index, name, sizeof(name)) == 0 &&
		    config_find_index(cfg, name) != NULL;
	}
	if (target_write_all(tc, w, n, items, retry, NULL, e) == -1)
		goto out;
	for (i = 0; i < n; i++) {
		r = &set->r[from + i];
		describe(r, name, sizeof(name));
		switch (items[i].verdict) {
		case ITEM_OK:
			printf("%s: written\n", name);
			clear[(*nclear)++] = set->key[from + i];
			break;
		case ITEM_CONFLICT:
		case ITEM_NOTFOUND:
			printf("%s: superseded: the index holds a newer "
			    "version\n", name);
			clear[(*nclear)++] = set->key[from + i];
			break;
		case ITEM_RETRY:
			printf("%s: not taken yet (HTTP %d): %s: %s\n", name,
			    items[i].status, items[i].type[0] ?
			    items[i].type : "error", items[i].reason);
			(*still)++;
			break;
		default:
			printf("%s: still refused: %s: %s\n", name,
			    items[i].type[0] ? items[i].type : "error",
			    items[i].reason);
			(*still)++;
			break;
		}
	}
	rc = 0;
out:
	free(items);
	free(w);
	return rc;
}

static int
replay(struct target_conn *tc, const struct config *cfg,
    const struct target_rejects *set, struct p2o_err *e)
{
	struct target_retry retry;
	char **clear;
	int i, n, nclear = 0, still = 0;
	uint64_t left;

	cli_write_retry(cfg, &retry);
	clear = xcalloc(set->n ? (size_t)set->n : 1, sizeof(*clear));
	/* a request's worth at a time, its records cleared before the
	 * next is sent */
	for (i = 0; i < set->n; i += n) {
		n = set->n - i < TARGET_WRITE_CHUNK ? set->n - i :
		    TARGET_WRITE_CHUNK;
		if (replay_chunk(cfg, tc, &retry, set, i, n, clear, &nclear,
		    &still,
		    e) == -1 ||
		    tc->mod->rejects->clear(tc, clear, nclear, e) == -1) {
			free(clear);
			return -1;
		}
		nclear = 0;
	}
	free(clear);
	left = set->total - (uint64_t)(set->n - still);
	printf("replayed %d, still refused %d", set->n - still, still);
	if (left > (uint64_t)still)
		printf(" (%llu left in all)", (unsigned long long)left);
	printf("\n");
	return left > 0 ? CLI_EXIT_FAILED : P2O_EXIT_OK;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg;
	struct target_rejects set;
	struct source_ident id;
	struct target_conn tc;
	struct config cfg;
	struct p2o_err e;
	char why[256];
	long long limit = ALL;
	int ch, do_replay = 0, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else if (ch == O_REPLAY)
			do_replay = 1;
		else if (ch == O_LIMIT) {
			if ((limit = cli_number(v, "limit", arg)) < 0)
				return P2O_EXIT_USAGE;
			if (limit == 0 || limit > ALL)
				return cli_usage(v, "--limit must be 1 to %d",
				    ALL);
		}
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if ((rc = cli_config(path, CONFIG_SECRET_TARGET, &cfg)) != 0)
		return rc;
	if (cfg.target_module->rejects == NULL) {
		fprintf(stderr, "pg2osync rejects: target '%s' keeps no "
		    "refused documents\n", cfg.target_module->name);
		config_release(&cfg);
		return P2O_EXIT_CONFIG;
	}
	/* the records of this configuration's stream only */
	if (source_ident_init(&id, &cfg, why, sizeof(why)) == -1) {
		fprintf(stderr, "pg2osync rejects: %s\n", why);
		config_release(&cfg);
		return P2O_EXIT_CONFIG;
	}
	p2o_err_clear(&e);
	if (target_conn_open(&tc, &cfg, &e) == -1) {
		source_ident_release(&id);
		config_release(&cfg);
		return cli_fail(&e);
	}
	if (cfg.target_module->rejects->read(&tc, id.doc_id, (int)limit, &set,
	    &e) == -1)
		rc = cli_fail(&e);
	else if (!do_replay)
		rc = list(&set, cfg.target_module);
	else if ((rc = replay(&tc, &cfg, &set, &e)) == -1)
		rc = cli_fail(&e);
	target_rejects_release(&set);
	target_conn_release(&tc);
	source_ident_release(&id);
	config_release(&cfg);
	return rc;
}

const struct verb verb_rejects = {
	.name = "rejects",
	.summary = "list the refused documents kept aside; --replay sends "
	    "them again",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "[--replay] [--limit N]",
	.about = "Lists the documents the target refused that the writer "
	    "kept aside (engine.on_permanent_rejection: quarantine), oldest "
	    "first, as 'index/id at position: reason', and their total.\n"
	    "With --replay each is sent again with its original position as "
	    "its version (after the mapping or the pipeline was fixed); a "
	    "record is cleared once the target takes the document or already "
	    "holds a newer version of it, and kept while it is still "
	    "refused. Safe beside a running pipeline.",
	.opts = opts,
	.exits = "  0   listed; with --replay: nothing is left refused\n"
	    "  1   --replay: documents are still refused (or left past "
	    "--limit)\n"
	    "  64  bad command line\n"
	    "  69  --replay: the target refused a write request\n"
	    "  75  the target is unreachable or failing (temporary; --replay "
	    "retries it first, by engine.retry_*, else for 30 s)\n"
	    "  77  the target refused the credentials\n"
	    "  78  invalid configuration, or a target without a store for "
	    "refused documents\n",
	.run = run,
};
