/*
 * resnapshot.c - pg2osync resnapshot --table T [--where P]: one table read
 * again into the index it is mapped to, beside a running pipeline. The
 * rows go the way a load's go - the loader (scoped to the table, and by
 * --where in its SQL), the shaper from its load fd, the writer - so a
 * document it writes is one the load would have written: mapping,
 * projections, transforms, children, ids. Each row carries the version
 * the loader reads before its range, so a change the stream writes later
 * wins at the target and one it wrote before is overwritten only by a
 * newer copy.
 *
 * It cannot move the checkpoint: a copy row carries a version, never a
 * position, the writer runs without a control channel (it reports
 * nothing), and no mark is stored - the loader runs stand-alone, so no
 * load progress is recorded and an interruption means running it again.
 * It never deletes: the delete the shaper turns a row outside the
 * section's where into is dropped here and counted (reconcile is the
 * verb that removes documents). Refresh is left alone: the index is in
 * use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "frame.h"
#include "p2o.h"
#include "xio.h"

enum { O_TABLE = 0x100, O_WHERE };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	{ "table", O_TABLE, "T", "the sync section to read again (its name, "
	    "its table or schema.table); required" },
	{ "where", O_WHERE, "P", "only the rows matching P, in the syntax of "
	    "a section's where (MySQL: refused when the server cannot run it "
	    "exactly as written)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

struct relay {
	int	 fd;		/* the writer's stdin */
	struct sbuf out;
	uint64_t written, dropped;
	struct p2o_err *err;
};

/* an index operation to the writer as it came; a delete is left out */
static int
forward(void *arg, const struct frame *f, const struct msg_op *m)
{
	struct relay *r = arg;

	if (m->kind != MSG_INDEX) {
		r->dropped++;
		return 0;
	}
	frame_put(&r->out, f->obj.p, f->obj.n);
	r->written++;
	/* the pipe to the writer is the queue: no more than a page here */
	if (r->out.len >= 256 * 1024 && frame_flush(r->fd, &r->out) == -1)
		return p2o_fail(r->err, P2O_EXIT_TEMPFAIL, "the writer "
		    "stopped reading: %s", strerror(errno));
	return 0;
}

static const struct sync_section *
section(const struct config *cfg, const char *name)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (strcmp(cfg->syncs[i].name, name) == 0 ||
		    strcmp(cfg->syncs[i].table, name) == 0 ||
		    strcmp(cfg->syncs[i].rel, name) == 0)
			return &cfg->syncs[i];
	return NULL;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *table = NULL;
	const char *where = NULL;
	char *wargv[] = { "writer", "-c", NULL, NULL };
	char *lextra[8], cparg[1200];
	const struct sync_section *s;
	struct relay r;
	struct ckpt_view ck;
	struct config cfg;
	struct p2o_err e, ignored;
	uint64_t rows = 0;
	int ch, rc, n = 0, wfd[2], null, src;
	pid_t wpid;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else if (ch == O_TABLE)
			table = arg;
		else if (ch == O_WHERE)
			where = arg;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if (table == NULL)
		return cli_usage(v, "--table is required");
	if ((rc = cli_config(path, CONFIG_SECRET_TARGET, &cfg)) != 0)
		return rc;
	if ((s = section(&cfg, table)) == NULL) {
		rc = cli_usage(v, "no sync section is '%s'", table);
		goto out;
	}
	lextra[n++] = "--table";
	lextra[n++] = s->rel;
	if (where != NULL) {
		lextra[n++] = "--where";
		lextra[n++] = (char *)where;
	}
	/* MySQL versions copies from the generation the checkpoint is in,
	 * as a supervised load does; none stored is the first generation */
	if (cfg.source_kind == SOURCE_MYSQL) {
		status_checkpoint(&cfg, &ck);
		if (!ck.known) {
			fprintf(stderr, "pg2osync resnapshot: the stored "
			    "checkpoint could not be read: %s\n", ck.why);
			rc = P2O_EXIT_TEMPFAIL;
			goto out;
		}
		if (ck.found) {
			snprintf(cparg, sizeof(cparg), "%llu:%s",
			    (unsigned long long)ck.pos, ck.text);
			lextra[n++] = "--checkpoint";
			lextra[n++] = cparg;
		}
	}
	lextra[n] = NULL;

	memset(&r, 0, sizeof(r));
	sbuf_init(&r.out);
	r.err = &e;
	p2o_err_clear(&e);
	wargv[2] = cfg.path;
	if (pipe2(wfd, O_CLOEXEC) == -1 ||
	    (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "pg2osync resnapshot: %s\n", strerror(errno));
		rc = P2O_EXIT_INTERNAL;
		goto out;
	}
	wpid = rows_spawn(wargv, wfd[0], null, -1);
	close(wfd[0]);
	close(null);
	if (wpid == -1) {
		close(wfd[1]);
		fprintf(stderr, "pg2osync resnapshot: fork: %s\n",
		    strerror(errno));
		rc = P2O_EXIT_INTERNAL;
		goto relay;
	}
	r.fd = wfd[1];
	src = shape_rows(&cfg, lextra, forward, &r, &rows, &e);
	if (src == 0 && frame_flush(r.fd, &r.out) == -1)
		src = p2o_fail(&e, P2O_EXIT_TEMPFAIL, "the writer stopped "
		    "reading: %s", strerror(errno));
	/* end of input: the writer writes what it has and exits 0 */
	close(r.fd);
	if (src == -1) {
		rows_reap(wpid, "writer", &ignored);
		rc = cli_fail(&e);
		goto relay;
	}
	if (rows_reap(wpid, "writer", &e) == -1) {
		rc = cli_fail(&e);
		goto relay;
	}
	printf("resnapshot of '%s'%s%s%s: %llu documents written, each at the "
	    "version read before its range (a newer streamed change kept)\n",
	    s->rel, where ? " (where " : "", where ? where : "",
	    where ? ")" : "", (unsigned long long)r.written);
	if (r.dropped)
		printf("%llu rows outside the section's where left alone: "
		    "pg2osync reconcile names and removes their documents\n",
		    (unsigned long long)r.dropped);
	rc = P2O_EXIT_OK;
relay:
	sbuf_release(&r.out);
out:
	config_release(&cfg);
	return rc;
}

const struct verb verb_resnapshot = {
	.name = "resnapshot",
	.summary = "read one table again into its index, beside the running "
	    "pipeline",
	.synopsis = "[-c FILE] --table T [--where P]",
	.about = "Reads the table of sync section T again (with --where, only "
	    "the rows matching P) and writes every row through the ordinary "
	    "write path - the loader, the shaper, the writer: mapping, "
	    "projections, transforms, ids - each versioned with the source "
	    "position read before its range, as the initial load does, so a "
	    "change the running pipeline streams meanwhile still wins. It "
	    "adds and updates, never deletes (pg2osync reconcile does), "
	    "records no load progress (an interrupted run is run again) and "
	    "never moves the checkpoint. Safe beside a running pipeline; "
	    "refresh is left as it is.",
	.opts = opts,
	.exits = "  0   every row read was written\n"
	    "  64  bad command line, no such section, or a --where that "
	    "cannot be read\n"
	    "  65  the loader or the shaper failed on a row\n"
	    "  69  the source refused (a table missing or unreadable)\n"
	    "  75  a server is unreachable or failing (temporary)\n"
	    "  77  authentication failed\n"
	    "  78  invalid configuration\n",
	.run = run,
};
