/*
 * status.c - pg2osync status: where the stream is against the source, the
 * initial load of each table, and (PostgreSQL) every replication slot on
 * the server with what it retains. Works while the pipeline is down,
 * which is when a slot fills a disk: --max-retained-mb makes it a cron
 * job's check. --caught-up waits for the checkpoint to reach the source's
 * position at the call.
 *
 * This file holds what both sources share: the options, the checkpoint
 * (ckpt's to read: `ckpt get`), the load progress, the wait. Reads only.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "jscan.h"
#include "p2o.h"
#include "source.h"
#include "target.h"
#include "xio.h"

enum { O_JSON = 0x100, O_CAUGHT_UP, O_TIMEOUT, O_MAX_RETAINED };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	{ "json", O_JSON, NULL, "one JSON object on stdout, for machines" },
	{ "caught-up", O_CAUGHT_UP, NULL, "wait until the checkpoint reaches "
	    "the position the source had when status was called" },
	{ "timeout", O_TIMEOUT, "S", "with --caught-up: give up after S "
	    "seconds (default 60)" },
	{ "max-retained-mb", O_MAX_RETAINED, "MB", "exit 1 when any slot on "
	    "the server retains more than MB megabytes (10^6 bytes) of WAL" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

void
status_checkpoint(const struct config *cfg, struct ckpt_view *ck)
{
	char *argv[] = { "ckpt", "-c", cfg->path, "get", NULL };
	struct sbuf out = SBUF_INIT;
	struct p2o_err e;
	struct jspan obj, v;
	int st;

	memset(ck, 0, sizeof(*ck));
	p2o_err_clear(&e);
	if ((st = tool_output(argv, &out, &e)) != 0) {
		snprintf(ck->why, sizeof(ck->why), "%s", st == -1 ? e.msg :
		    "ckpt get failed (its message is above)");
		goto out;
	}
	ck->known = 1;
	while (out.len && (out.buf[out.len - 1] == '\n'))
		out.buf[--out.len] = '\0';
	if (out.len == 0)
		goto out;
	obj.p = out.buf;
	obj.n = out.len;
	if (jscan_validate(out.buf, out.len, NULL, NULL) != 0 ||
	    jspan_type(obj) != J_OBJECT || !jobj_get(obj, "pos", &v) ||
	    jnum_u64(v, &ck->pos) == -1) {
		ck->known = 0;
		snprintf(ck->why, sizeof(ck->why), "ckpt get printed no "
		    "checkpoint");
		goto out;
	}
	ck->found = 1;
	if (jobj_get(obj, "text", &v))
		(void)jstr_copy(v, ck->text, sizeof(ck->text));
	if (jobj_get(obj, "updated_at", &v))
		(void)jstr_copy(v, ck->updated_at, sizeof(ck->updated_at));
out:
	sbuf_release(&out);
}

/* a number member of obj as text, or NULL */
static int
num(struct jspan obj, const char *name, uint64_t *out)
{
	struct jspan v;

	return jobj_get(obj, name, &v) && jnum_u64(v, out) == 0;
}

int
status_loads(const struct config *cfg, FILE *f, struct sbuf *json)
{
	struct source_ident id;
	struct target_conn tc;
	struct sbuf key = SBUF_INIT, doc = SBUF_INIT;
	struct p2o_err e;
	struct jspan obj, v, prog;
	char err[256];
	uint64_t done, of;
	int i, found, fin, rc = -1, has;

	p2o_err_clear(&e);
	if (source_ident_init(&id, cfg, err, sizeof(err)) == -1)
		return -1;
	if (target_conn_open(&tc, cfg, &e) == -1) {
		source_ident_release(&id);
		return -1;
	}
	if (json)
		sbuf_addc(json, '[');
	for (i = 0; i < cfg->nsyncs; i++) {
		/* ckpt/load.c keeps a table's progress beside the checkpoint */
		sbuf_reset(&key);
		sbuf_addf(&key, "%s/load/%s", id.doc_id, cfg->syncs[i].rel);
		if (tc.mod->ops->state_get(&tc, key.buf, &doc, &found,
		    &e) == -1) {
			if (f)
				fprintf(f, "load        %s: unknown (%s)\n",
				    cfg->syncs[i].rel, e.msg);
			goto out;
		}
		obj.p = doc.buf;
		obj.n = doc.len;
		fin = found && jobj_get(obj, "done", &v) &&
		    jspan_type(v) == J_TRUE;
		has = found && jobj_get(obj, "progress", &prog) &&
		    num(prog, "done", &done) && num(prog, "of", &of);
		if (f)
			fprintf(f, "load        %s: %s", cfg->syncs[i].rel,
			    !found ? "not started (loaded when the pipeline "
			    "starts)" : fin ? "finished" : "in progress");
		if (f && has)
			fprintf(f, " (%llu of %llu ranges)",
			    (unsigned long long)done, (unsigned long long)of);
		if (f)
			fputc('\n', f);
		if (json) {
			sbuf_addf(json, "%s{\"table\":", i ? "," : "");
			sbuf_add_jstr(json, cfg->syncs[i].rel,
			    strlen(cfg->syncs[i].rel));
			sbuf_addf(json, ",\"state\":\"%s\"", !found ? "none" :
			    fin ? "finished" : "loading");
			if (has)
				sbuf_addf(json, ",\"done\":%llu,\"of\":%llu",
				    (unsigned long long)done,
				    (unsigned long long)of);
			sbuf_addc(json, '}');
		}
	}
	if (json)
		sbuf_addc(json, ']');
	rc = 0;
out:
	sbuf_release(&key);
	sbuf_release(&doc);
	target_conn_release(&tc);
	source_ident_release(&id);
	return rc;
}

int
status_wait(const struct config *cfg, long long timeout_ms,
    int (*reached)(const struct ckpt_view *, void *), void *arg, FILE *f)
{
	struct ckpt_view ck;
	long long end = now_ms() + timeout_ms;

	for (;;) {
		status_checkpoint(cfg, &ck);
		if (ck.found && reached(&ck, arg)) {
			if (f)
				fprintf(f, "caught up: checkpoint %s\n", ck.text);
			return 0;
		}
		if (now_ms() >= end)
			break;
		usleep(250 * 1000);
	}
	if (f)
		fprintf(f, "not caught up after %lld s: checkpoint %s\n",
		    timeout_ms / 1000, ck.found ? ck.text : "none");
	return CLI_EXIT_FAILED;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	struct status_opts so = { .max_retained = -1, .timeout_ms = 60000 };
	const char *path = CLI_DEFAULT_CONFIG, *arg;
	struct config cfg;
	struct p2o_err e;
	long long n;
	int ch, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		switch (ch) {
		case 'c':
			path = arg;
			break;
		case O_JSON:
			so.json = 1;
			break;
		case O_CAUGHT_UP:
			so.caught_up = 1;
			break;
		case O_TIMEOUT:
			if ((n = cli_number(v, "timeout", arg)) < 0)
				return P2O_EXIT_USAGE;
			so.timeout_ms = n * 1000;
			break;
		case O_MAX_RETAINED:
			if ((n = cli_number(v, "max-retained-mb", arg)) < 0)
				return P2O_EXIT_USAGE;
			so.max_retained = n * 1000000;
			break;
		}
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	/* the slots are the source's: a cron job without the target's
	 * password still gets them (the checkpoint and loads say unknown) */
	p2o_err_clear(&e);
	if (config_load_with(path, CONFIG_SECRETS_ALL, &cfg, &e) == -1) {
		if ((rc = cli_config(path, CONFIG_SECRET_SOURCE, &cfg)) != 0)
			return rc;
		fprintf(stderr, "pg2osync status: %s; the target is read "
		    "without it\n", e.msg);
	}
	if (strcmp(cfg.source->kind, "mysql") == 0 && so.max_retained >= 0) {
		config_release(&cfg);
		return cli_usage(v, "--max-retained-mb: a MySQL source has no "
		    "slot; the server purges its binlog by its own retention");
	}
	rc = strcmp(cfg.source->kind, "mysql") == 0 ? status_my(&cfg, &so) :
	    status_pg(&cfg, &so);
	config_release(&cfg);
	return rc;
}

const struct verb verb_status = {
	.name = "status",
	.summary = "the stream against the source, the loads, every slot "
	    "and what it retains",
	.synopsis = "[-c FILE] [--json] [--caught-up [--timeout S]] "
	    "[--max-retained-mb MB]",
	.about = "Shows the stored checkpoint against the source's current "
	    "position (the lag in bytes, and in seconds where the server "
	    "reports it), the initial load of each table, and on PostgreSQL "
	    "every replication slot on the server: active or not, the WAL it "
	    "retains, safe_wal_size, wal_status; the configured slot marked, "
	    "an inactive slot of no configuration listed with the statement "
	    "that drops it, a slot whose wal_status is 'lost' called out. On "
	    "MySQL: the checkpoint against SHOW MASTER STATUS, and whether "
	    "the binlog file it needs still exists. It reads only, and works "
	    "while the pipeline is down.",
	.opts = opts,
	.exits = "  0   shown (--caught-up: caught up)\n  1   a slot retains "
	    "more than --max-retained-mb, a slot is lost,\n      the binlog "
	    "file the checkpoint needs is gone, or --caught-up ran out\n"
	    "  64  bad command line\n  69  refused by the server\n  75  the "
	    "source or the target is unreachable\n  77  authentication "
	    "failed\n  78  invalid configuration\n",
	.run = run,
};
