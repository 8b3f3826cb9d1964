/*
 * reindex.c - pg2osync reindex --table T --alias A [--drop-old]: a fresh
 * index built from the table and the name readers use moved onto it, for
 * a mapping or transform change no live index can take.
 *
 * In order:
 * - refused while the pipeline streams, on positive evidence only: the
 *   slot active (PostgreSQL), a binlog dump thread of the source's user
 *   (MySQL), a supervisor answering for the source at its metrics.bind
 *   (poll mode, whose server keeps nothing of the reader's), or on any
 *   the stored checkpoint seen moving. A fresh
 *   index the stream does not write to has no second version to lose
 *   to: a row changed during the build would stay wrong there while the
 *   count still matched. Stopped, the restart replays everything since
 *   the checkpoint into the new index through the alias.
 * - `<index>-<unix seconds>` created with the section's creation body,
 *   its refresh and replicas suspended for the build (nothing reads an
 *   index no alias names yet) and restored after;
 * - the rows written into it the way a load writes them (relay.c);
 * - the source's row count, read before and after the build, and the
 *   index's document count must all agree; only then is the alias moved,
 *   in one atomic request. A mismatch (rows deleted or added during the
 *   build) leaves the alias where it was and exits 1.
 * - the index the alias named before is the rollback (pg2osync
 *   switch-alias) and is kept, unless --drop-old.
 *
 * A target without aliases that can swap two indexes (TCAP_INDEX_SWAP,
 * Meilisearch) keeps the name readers search as the section's index:
 * the counts agreeing, the fresh index is swapped with it in one atomic
 * task, after which the timestamped one holds the old documents - the
 * rollback is the same swap again - and is deleted with --drop-old.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "p2o.h"
#include "source_ops.h"

enum { O_TABLE = 0x100, O_ALIAS, O_DROP_OLD };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "table", O_TABLE, "T", "the sync section to rebuild (its name, its "
	    "table or schema.table); required" },
	{ "alias", O_ALIAS, "A", "the name readers use, moved onto the new "
	    "index; required (Meilisearch, which swaps instead: optional, "
	    "the section's index)" },
	{ "drop-old", O_DROP_OLD, NULL, "delete the indices the alias named "
	    "before (Meilisearch: the timestamped index, which holds the old "
	    "documents after the swap); without it they are kept: the "
	    "rollback" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

/* 1 (why says so) when a supervisor answers for the source, else 0 */
static int
supervisor_runs(const struct config *cfg, char *why, size_t len)
{
	char sup[600];

	switch (supervisor_ask(cfg, sup, sizeof(sup))) {
	case SUP_RUNS:
		snprintf(why, len, "the supervisor at metrics.bind runs it: "
		    "%.400s", sup);
		return 1;
	case SUP_NONE:
		fprintf(stderr, "pg2osync reindex: %s keeps nothing on its "
		    "server that shows a pipeline reading it, and no "
		    "metrics.bind names a supervisor to ask: only a moving "
		    "checkpoint is seen - make sure none runs\n",
		    source_ops_of(cfg)->what);
		return 0;
	default:
		return 0;
	}
}

/* 1 (why says what was seen) when the pipeline streams, 0, -1 */
static int
streaming(const struct config *cfg, char *why, size_t len,
    struct p2o_err *e)
{
	const struct source_ops *ops = source_ops_of(cfg);
	struct ckpt_view a, b;
	long long wait_ms;
	int rc;

	/* the slot active, a binlog dump of the source's user; a source
	 * whose server keeps nothing of the reader's (poll mode): the
	 * supervisor running it, when a metrics listener says where */
	if (ops->stream_live != NULL)
		rc = ops->stream_live(cfg, why, len, e);
	else
		rc = supervisor_runs(cfg, why, len);
	if (rc != 0)
		return rc;
	/* a pipeline between connections still stores checkpoints */
	status_checkpoint(cfg, &a);
	wait_ms = 3LL * cfg->checkpoint_interval_ms;
	usleep((useconds_t)(wait_ms < 2000 ? 2000 : wait_ms) * 1000);
	status_checkpoint(cfg, &b);
	rc = 0;
	if (a.found && b.found && (a.pos != b.pos ||
	    strcmp(a.updated_at, b.updated_at) != 0)) {
		snprintf(why, len, "the stored checkpoint moved from %.200s to "
		    "%.200s while watched", a.text, b.text);
		rc = 1;
	}
	ckpt_view_release(&a);
	ckpt_view_release(&b);
	return rc;
}

/* the rows a load of s would copy now: the loader's --count, spawned
 * with every other descriptor closed (an open fd 3 - the target's
 * connection - would be taken for a control channel) */
static int
source_count(const struct config *cfg, const struct sync_section *s,
    uint64_t *n, struct p2o_err *e)
{
	char *argv[] = { "loader", "-c", cfg->path, "--table", s->rel,
	    "--count", NULL };
	char buf[64], *end;
	size_t len = 0;
	ssize_t got;
	int fd[2];
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC) == -1)
		return p2o_fail(e, P2O_EXIT_INTERNAL, "pipe: %s",
		    strerror(errno));
	pid = rows_spawn(argv, -1, fd[1], -1);
	close(fd[1]);
	while (pid != -1 && len < sizeof(buf) - 1 &&
	    ((got = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0 ||
	    (got == -1 && errno == EINTR)))
		len += got > 0 ? (size_t)got : 0;
	close(fd[0]);
	buf[len] = '\0';
	if (pid == -1)
		return p2o_fail(e, P2O_EXIT_INTERNAL, "fork: %s",
		    strerror(errno));
	if (rows_reap(pid, "loader --count", e) == -1)
		return -1;
	*n = strtoull(buf, &end, 10);
	if (end == buf)
		return p2o_fail(e, P2O_EXIT_INTERNAL, "counting the rows of "
		    "'%s': the loader printed no number", s->rel);
	return 0;
}

/* the new index, its load settings suspended, the rows written into it,
 * its settings restored */
static int
build(struct target_conn *tc, const struct config *cfg,
    const struct sync_section *s, const char *fresh, uint64_t *written,
    struct p2o_err *e)
{
	const struct target_ops *ops = tc->mod->ops;
	struct sbuf orig = SBUF_INIT;
	uint64_t dropped;
	int created, found, rc = -1;

	if (ops->index_create(tc, fresh, config_index_body(cfg, s->index),
	    &created, e) == -1)
		goto out;
	if (!created) {
		p2o_fail(e, CLI_EXIT_FAILED, "index '%s' exists already: "
		    "run reindex again in a second", fresh);
		goto out;
	}
	if (ops->load_settings(tc, fresh, &orig, &found, e) == -1 ||
	    ops->load_suspend(tc, fresh, e) == -1)
		goto out;
	rc = relay_rows(cfg, s, NULL, fresh, written, &dropped, e);
	if (ops->load_restore(tc, fresh, (struct jspan){ orig.buf, orig.len },
	    rc == 0 ? e : &(struct p2o_err){ 0 }) == -1)
		rc = -1;
out:
	sbuf_release(&orig);
	return rc;
}

/* --drop-old: what the alias named before, but an index a section
 * writes to by name (its documents would come back empty) */
static int
drop_old(struct target_conn *tc, const struct config *cfg, const char *was,
    const char *fresh, struct p2o_err *e)
{
	const char *p, *q;
	char one[512];

	for (p = was; *p; p = *q ? q + 1 : q) {
		q = p + strcspn(p, ",");
		snprintf(one, sizeof(one), "%.*s", (int)(q - p), p);
		if (strcmp(one, fresh) == 0)
			continue;
		if (config_find_index(cfg, one) != NULL) {
			printf("kept '%s': a sync section writes to it by "
			    "name\n", one);
			continue;
		}
		if (tc->mod->ops->index_delete(tc, one, e) == -1)
			return -1;
		printf("deleted the old index '%s'\n", one);
	}
	return 0;
}

/* a target that swaps instead of aliasing: the built index exchanged
 * with the live one, which keeps its name; the old documents are then
 * in fresh, the rollback unless --drop-old */
static int
swap_in(struct target_conn *tc, const struct sync_section *s,
    const char *fresh, int dropold, struct p2o_err *e)
{
	if (tc->mod->ops->index_swap(tc, s->index, fresh, e) == -1)
		return -1;
	printf("swapped '%s' and '%s': '%s' holds the rebuilt documents, "
	    "'%s' the ones it held before\n", s->index, fresh, s->index,
	    fresh);
	if (dropold) {
		if (tc->mod->ops->index_delete(tc, fresh, e) == -1)
			return -1;
		printf("deleted the old documents' index '%s'\n", fresh);
	} else
		printf("rollback (swaps them back): pg2osync switch-alias "
		    "--alias %s --index %s\n", s->index, fresh);
	printf("next:\n  - start the pipeline: it replays every change "
	    "committed since the checkpoint into '%s'\n", s->index);
	return 0;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *table = NULL;
	const char *alias = NULL;
	const struct sync_section *s;
	struct target_index_state ist;
	struct target_conn tc;
	struct config cfg;
	struct p2o_err e;
	struct sbuf was = SBUF_INIT;
	uint64_t before, after, docs, written = 0;
	char fresh[600], why[600];
	int ch, rc, dropold = 0, open = 0, swap;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else if (ch == O_TABLE)
			table = arg;
		else if (ch == O_ALIAS)
			alias = arg;
		else if (ch == O_DROP_OLD)
			dropold = 1;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if (table == NULL)
		return cli_usage(v, "--table is required");
	if ((rc = cli_config(path, CONFIG_SECRET_SOURCE | CONFIG_SECRET_TARGET |
	    CONFIG_SECRET_TRANSFORM, &cfg)) != 0)
		return rc;
	p2o_err_clear(&e);
	rc = P2O_EXIT_CONFIG;
	swap = !target_can(cfg.target_module, TCAP_ALIASES);
	if ((s = config_find_named(&cfg, table)) == NULL) {
		rc = cli_usage(v, "no sync section is '%s'", table);
		goto out;
	}
	if (swap && !target_can(cfg.target_module, TCAP_INDEX_SWAP)) {
		fprintf(stderr, "pg2osync reindex: target '%s' has neither "
		    "aliases nor index swaps: no rebuild\n",
		    cfg.target_module->name);
		goto out;
	}
	if (alias == NULL && !swap) {
		rc = cli_usage(v, "--alias is required");
		goto out;
	}
	/* no alias to move: readers search the index the pipeline writes */
	if (swap && alias != NULL && strcmp(alias, s->index) != 0) {
		fprintf(stderr, "pg2osync reindex: target '%s' has no aliases: "
		    "the rebuilt index is swapped into the section's index "
		    "'%s', which readers search; --alias can only name it\n",
		    cfg.target_module->name, s->index);
		goto out;
	}
	if (swap)
		alias = s->index;
	if (s->index_templated || s->has_fan_out) {
		fprintf(stderr, "pg2osync reindex: section '%s' %s: its "
		    "documents cannot be counted against its rows in one "
		    "index\n", s->name, s->index_templated ? "renders its "
		    "index from a column" : "fans a row out into several "
		    "documents");
		goto out;
	}
	if (target_conn_open(&tc, &cfg, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	open = 1;
	if (tc.mod->ops->index_state(&tc, alias, &ist, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	if (swap && !ist.exists) {
		fprintf(stderr, "pg2osync reindex: there is no index '%s' to "
		    "swap the rebuilt one with (the pipeline's load creates "
		    "it)\n", alias);
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	if (!swap && ist.exists && !ist.alias) {
		fprintf(stderr, "pg2osync reindex: '%s' is an index, not an "
		    "alias: an alias cannot take its name (rebuild under "
		    "another alias, point readers at it, and write the "
		    "section's index as that alias)\n", alias);
		goto out;
	}
	if ((rc = streaming(&cfg, why, sizeof(why), &e)) != 0) {
		if (rc == -1)
			rc = cli_fail(&e);
		else {
			fprintf(stderr, "pg2osync reindex: the pipeline is "
			    "streaming (%s): stop it first - a fresh index the "
			    "stream does not write to would keep every row "
			    "changed during the build wrong\n", why);
			rc = CLI_EXIT_FAILED;
		}
		goto out;
	}
	snprintf(fresh, sizeof(fresh), "%s-%lld", s->index,
	    (long long)time(NULL));
	if (source_count(&cfg, s, &before, &e) == -1 ||
	    build(&tc, &cfg, s, fresh, &written, &e) == -1 ||
	    source_count(&cfg, s, &after, &e) == -1 ||
	    tc.mod->ops->doc_count(&tc, fresh, &docs, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	printf("built '%s': %llu documents written; '%s' had %llu rows "
	    "before and %llu after, the index holds %llu\n", fresh,
	    (unsigned long long)written, s->rel, (unsigned long long)before,
	    (unsigned long long)after, (unsigned long long)docs);
	if (before != after || docs != before) {
		printf("the counts differ: %s '%s' left as it was; '%s' "
		    "kept for a look (delete it, or run reindex again once "
		    "nothing writes to the table)\n", swap ? "index" : "alias",
		    alias, fresh);
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	if (swap) {
		rc = swap_in(&tc, s, fresh, dropold, &e) == -1 ? cli_fail(&e) :
		    P2O_EXIT_OK;
		goto out;
	}
	if (tc.mod->ops->alias_switch(&tc, alias, fresh, &was, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	printf("alias '%s' now names '%s'%s%s\n", alias, fresh,
	    was.len ? " (before: " : " (it is new)", was.len ? was.buf : "");
	if (was.len)
		printf(")\n");
	if (dropold && was.len && drop_old(&tc, &cfg, was.buf, fresh,
	    &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	if (was.len && !dropold)
		printf("rollback: pg2osync switch-alias --alias %s --index "
		    "%.*s\n", alias, (int)strcspn(was.buf, ","), was.buf);
	printf("next:\n");
	if (strcmp(s->index, alias) != 0)
		printf("  - set sync.%s.index to '%s' in %s, so that the "
		    "pipeline writes through the alias\n", s->name, alias,
		    cfg.path);
	printf("  - start the pipeline: it replays every change committed "
	    "since the checkpoint into '%s'\n", fresh);
	rc = P2O_EXIT_OK;
out:
	if (open)
		target_conn_release(&tc);
	sbuf_release(&was);
	config_release(&cfg);
	return rc;
}

const struct verb verb_reindex = {
	.name = "reindex",
	.summary = "rebuild a table's index fresh and move an alias onto it",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "--table T --alias A [--drop-old]",
	.about = "Refuses while the pipeline streams (the slot active, a "
	    "binlog dump thread of the source's user, or the stored "
	    "checkpoint seen moving). Then creates <index>-<unix seconds> "
	    "with the section's mapping, loads the table into it the way "
	    "the initial load does with refresh and replicas suspended, and "
	    "compares the source's row count before and after with the new "
	    "index's documents: only when all three agree is alias A moved "
	    "onto it, in one atomic request. The index the alias named "
	    "before is kept as the rollback (pg2osync switch-alias) unless "
	    "--drop-old. Prints what follows: the configuration edit that "
	    "makes the pipeline write through the alias, and the restart "
	    "that replays what changed since the checkpoint. On a target "
	    "without aliases that swaps indexes (Meilisearch), --alias may "
	    "be left out (it can only name the section's index): the "
	    "rebuilt index is swapped with the section's index in one "
	    "atomic task, readers keep searching the same name, and the "
	    "timestamped index then holds the old documents - the rollback "
	    "is swapping them back (switch-alias), --drop-old deletes it.",
	.opts = opts,
	.exits = "  0   built and the alias moved (or the indexes swapped)\n"
	    "  1   the pipeline is streaming, or the counts differ (the "
	    "alias left alone); no index to swap with\n"
	    "  64  bad command line, or no such section\n"
	    "  65  the loader or the shaper failed on a row\n"
	    "  69  a server refused (a table, the index, the alias request, "
	    "the swap task)\n"
	    "  75  a server is unreachable or failing (temporary)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration; the alias is an index's name; a "
	    "templated or fan-out section; --alias other than the section's "
	    "index on a target without aliases\n",
	.run = run,
};
