/*
 * status.c - pg2osync status: where the stream is against the source, what
 * the supervisor running it says (its /ready/<name>, a halted source
 * included, when a metrics listener is configured), the initial load of
 * each table, and (a source whose server keeps slots) every replication
 * slot on the server with what it retains. Works while
 * the pipeline is down, which is when a slot fills a disk:
 * --max-retained-mb makes it a cron job's check. --caught-up waits for
 * the checkpoint to reach the source's position at the call. A source
 * read again in rounds (poll mode) has no load or slot to show: its
 * tables' cursors and its last round instead.
 *
 * The source says what it is now and judges a checkpoint against it, as
 * facts (its status operation, source_ops.h); this file is their one
 * renderer, as lines or as one JSON object, beside the checkpoint (ckpt's
 * to read: `ckpt get`) and the load progress. Reads only.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config_set.h"
#include "http.h"
#include "jscan.h"
#include "p2o.h"
#include "source.h"
#include "source_ops.h"
#include "target.h"
#include "xio.h"

enum { O_JSON = 0x100, O_CAUGHT_UP, O_TIMEOUT, O_MAX_RETAINED };

struct status_opts {
	int	 json;
	long long max_retained;		/* bytes, -1: no limit */
	int	 caught_up;
	long long timeout_ms;
};

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
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
	ck->text = xstrdup("");
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
	/* a poll's text names every table's cursor: as long as it is */
	if (jobj_get(obj, "text", &v) && jspan_type(v) == J_STRING) {
		free(ck->text);
		ck->text = jstr_dup(v);
	}
	if (jobj_get(obj, "updated_at", &v))
		(void)jstr_copy(v, ck->updated_at, sizeof(ck->updated_at));
	if (jobj_get(obj, "instance", &v))
		(void)jstr_copy(v, ck->instance, sizeof(ck->instance));
out:
	sbuf_release(&out);
}

void
ckpt_view_release(struct ckpt_view *ck)
{
	free(ck->text);
	ck->text = NULL;
}

/* a number member of obj as text, or NULL */
static int
num(struct jspan obj, const char *name, uint64_t *out)
{
	struct jspan v;

	return jobj_get(obj, name, &v) && jnum_u64(v, out) == 0;
}

/* the load progress of every section as JSON array text appended to out
 * (json) or lines on f; 0, or -1 when the target could not be read */
static int
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

/* a stored checkpoint judged against the source as it was at the call */
struct judge {
	const struct source_ops *ops;
	const struct source_status *st;
};

/* 1 reached, 0 not, -1 with err */
static int
reached(const struct ckpt_view *ck, const struct judge *j,
    struct p2o_err *e)
{
	struct source_ckpt c;
	int rc;

	rc = j->ops->status_ckpt(j->st, ck->text, ck->pos, &c, e);
	if (rc == 0)
		rc = c.reached;
	source_ckpt_release(&c);
	return rc;
}

/* the checkpoint as a line says it: a source read in rounds names it by
 * its number (its text is every table's cursor, shown apart) */
static void
ckpt_line(FILE *f, const struct ckpt_view *ck, const struct judge *j)
{
	if (!ck->found)
		fputs("none", f);
	else if (j->st->rounds)
		fprintf(f, "position %llu", (unsigned long long)ck->pos);
	else
		fputs(ck->text, f);
	fputc('\n', f);
}

/* --caught-up: poll the checkpoint until it reaches the source's
 * position at the call, at most timeout_ms */
static int
status_wait(const struct config *cfg, long long timeout_ms,
    const struct judge *j, FILE *f)
{
	struct ckpt_view ck;
	struct p2o_err e;
	long long end = now_ms() + timeout_ms;
	int r;

	p2o_err_clear(&e);
	for (;;) {
		status_checkpoint(cfg, &ck);
		if (ck.found && (r = reached(&ck, j, &e)) != 0) {
			if (r == 1 && f) {
				fputs("caught up: checkpoint ", f);
				ckpt_line(f, &ck, j);
			}
			ckpt_view_release(&ck);
			return r == 1 ? 0 : cli_fail(&e);
		}
		if (now_ms() >= end)
			break;
		ckpt_view_release(&ck);
		usleep(250 * 1000);
	}
	if (f) {
		fprintf(f, "not caught up after %lld s: checkpoint ",
		    timeout_ms / 1000);
		ckpt_line(f, &ck, j);
	}
	ckpt_view_release(&ck);
	return CLI_EXIT_FAILED;
}

static void
text_slot(const struct source_slot *s)
{
	char mb[32], safe[32];

	printf("  %-20s %s %-8s %-9s retains %-10s safe_wal_size %-10s "
	    "wal_status %s\n", s->name, s->configured ? "*" : " ", s->type,
	    s->active ? "active" : "inactive", s->has_retained ?
	    check_mb(s->retained, mb, sizeof(mb)) : "-", s->has_safe ?
	    check_mb(s->safe, safe, sizeof(safe)) :
	    strcmp(s->verdict, "lost") == 0 ? "-" : "unlimited",
	    s->wal_status[0] ? s->wal_status : "-");
	if (strcmp(s->verdict, "lost") == 0)
		printf("    lost: the server has removed WAL this slot needs "
		    "(max_slot_wal_keep_size); it can never stream again. "
		    "Drop it (%s) and load the tables again\n", s->drop);
	else if (strcmp(s->verdict, "orphan") == 0)
		printf("    inactive and not this configuration's: it retains "
		    "WAL until it is dropped. If nothing will read it: %s\n",
		    s->drop);
	if (s->synced)
		printf("    synchronized from the primary (sync_replication_"
		    "slots): a copy this standby resumes from once promoted\n");
	else if (s->failover)
		printf("    failover: a standby running sync_replication_slots "
		    "keeps a copy\n");
}

static void
json_slot(struct sbuf *j, const struct source_slot *s, int first)
{
	sbuf_addf(j, "%s{\"slot\":", first ? "" : ",");
	sbuf_add_jstr(j, s->name, strlen(s->name));
	sbuf_addf(j, ",\"type\":\"%s\",\"active\":%s,\"configured\":%s,"
	    "\"retained_bytes\":", s->type, s->active ? "true" : "false",
	    s->configured ? "true" : "false");
	if (s->has_retained)
		sbuf_add_i64(j, s->retained);
	else
		sbuf_adds(j, "null");
	sbuf_adds(j, ",\"safe_wal_size_bytes\":");
	if (s->has_safe)
		sbuf_add_i64(j, s->safe);
	else
		sbuf_adds(j, "null");
	sbuf_adds(j, ",\"wal_status\":");
	sbuf_add_jstr(j, s->wal_status, strlen(s->wal_status));
	sbuf_addf(j, ",\"failover\":%s,\"synced\":%s", s->failover ? "true" :
	    "false", s->synced ? "true" : "false");
	sbuf_addf(j, ",\"verdict\":\"%s\",\"drop\":", s->verdict);
	sbuf_add_jstr(j, s->drop, strlen(s->drop));
	sbuf_addc(j, '}');
}

/* the standby verdict's word: "ok", "note" or "fail" */
static const char *
standby_word(const struct source_verdict *v)
{
	return v->kind == SV_FAIL ? "fail" : v->kind == SV_NOTE ? "note" :
	    "ok";
}

/*
 * What the supervisor running this source says of it, when a metrics
 * listener is configured: its /ready/<name> ("ready: streaming", "not
 * ready: halted: ..."), or why it could not be asked, in buf.
 */
enum sup_view
supervisor_ask(const struct config *cfg, char *buf, size_t len)
{
	const char *bind = cfg->metrics_bind ? cfg->metrics_bind :
	    cli_set ? cli_set->metrics_bind : NULL;
	struct http_client hc;
	struct sbuf base = SBUF_INIT, path = SBUF_INIT, resp = SBUF_INIT;
	char name[CONFIG_NAME_MAX];
	enum sup_view v;
	long status = 0;

	if (bind == NULL)
		return SUP_NONE;
	sbuf_addf(&base, "http://%s", bind);
	sbuf_adds(&path, "/ready/");
	http_escape(&path, config_source_name(cfg, name, sizeof(name)),
	    ":");
	if (http_init(&hc, (const char *const *)&base.buf, 1, NULL) == -1) {
		snprintf(buf, len, "not asked: %s", hc.err);
		v = SUP_UNASKED;
	} else {
		hc.timeout_ms = 5000;
		if (http_request(&hc, "GET", path.buf, NULL, NULL, 0, &resp,
		    &status) == -1) {
			snprintf(buf, len, "not running (or not reachable at "
			    "%s: %s)", bind, hc.err);
			v = SUP_DOWN;
		} else if (status == 404) {
			snprintf(buf, len, "the one at %s runs no source named "
			    "'%s'", bind, name);
			v = SUP_OTHER;
		} else {
			while (resp.len > 0 && resp.buf[resp.len - 1] == '\n')
				resp.buf[--resp.len] = '\0';
			snprintf(buf, len, "%s", resp.buf ? resp.buf : "");
			v = SUP_RUNS;
		}
		http_release(&hc);
	}
	sbuf_release(&base);
	sbuf_release(&path);
	sbuf_release(&resp);
	return v;
}

/* the same for status's line: 1 with the answer in buf, 0 none
 * configured */
static int
supervisor_view(const struct config *cfg, char *buf, size_t len)
{
	return supervisor_ask(cfg, buf, len) != SUP_NONE;
}

/* ms since the epoch as "2026-12-07T12:50:00.596Z" */
static const char *
iso_ms(long long ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "%lld", ms);
	else
		snprintf(buf + strlen(buf), len - strlen(buf), ".%03dZ",
		    (int)(ms % 1000));
	return buf;
}

/* "rev, id" or "2000, 17" */
static void
list(struct sbuf *b, char *const *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sbuf_addf(b, "%s%s", i ? ", " : "", v[i]);
}

static void
json_list(struct sbuf *j, char *const *v, int n)
{
	int i;

	sbuf_addc(j, '[');
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(j, ',');
		sbuf_add_jstr(j, v[i], strlen(v[i]));
	}
	sbuf_addc(j, ']');
}

/* a source read in rounds: the last round and each table's cursor */
static void
json_rounds(struct sbuf *j, const struct source_ckpt *c)
{
	const struct source_table *t;
	char at[64];
	int i;

	sbuf_adds(j, ",\"rounds\":");
	if (c->has_round) {
		sbuf_adds(j, "{\"last_end\":");
		iso_ms(c->round_end_ms, at, sizeof(at));
		sbuf_add_jstr(j, at, strlen(at));
		sbuf_addf(j, ",\"age_seconds\":%.3f,\"took_seconds\":%.3f,"
		    "\"rows\":", c->round_age_s, c->round_took_s);
		sbuf_add_u64(j, c->round_rows);
		sbuf_addf(j, ",\"interval_seconds\":%d,\"late\":%s}",
		    c->interval_s, c->round_late ? "true" : "false");
	} else
		sbuf_adds(j, "null");
	sbuf_adds(j, ",\"tables\":[");
	for (i = 0; i < c->ntables; i++) {
		t = &c->tables[i];
		sbuf_addf(j, "%s{\"table\":", i ? "," : "");
		sbuf_add_jstr(j, t->table, strlen(t->table));
		sbuf_adds(j, ",\"by\":");
		json_list(j, t->by, t->ncur);
		sbuf_adds(j, ",\"cursor\":");
		if (t->at != NULL)
			json_list(j, t->at, t->ncur);
		else
			sbuf_adds(j, "null");
		/* no checkpoint yet: nothing read, nothing measured */
		if (!t->judged) {
			sbuf_adds(j, ",\"rows_behind\":null,"
			    "\"rows_behind_capped\":false,\"caught_up\":false}");
			continue;
		}
		sbuf_adds(j, ",\"rows_behind\":");
		sbuf_add_i64(j, t->behind);
		sbuf_addf(j, ",\"rows_behind_capped\":%s,\"caught_up\":%s}",
		    t->capped ? "true" : "false", t->reached ? "true" : "false");
	}
	sbuf_addc(j, ']');
}

static void text_tables(const struct source_ckpt *);

/* the same as lines */
static void
text_rounds(const struct source_ckpt *c)
{
	char at[64];

	if (!c->has_round)
		printf("rounds      none ended yet (the first reads every "
		    "row)\n");
	else
		printf("rounds      the last ended %s, %.1f s ago, and read "
		    "%llu row(s) in %.1f s: %s\n", iso_ms(c->round_end_ms, at,
		    sizeof(at)), c->round_age_s,
		    (unsigned long long)c->round_rows, c->round_took_s,
		    c->round_late ? "LATE (one starts every few seconds): "
		    "the round now running reads far more, or none runs" :
		    "keeping up");
	text_tables(c);
}

/* each table read in rounds and its cursor */
static void
text_tables(const struct source_ckpt *c)
{
	const struct source_table *t;
	struct sbuf b = SBUF_INIT;
	int i;

	for (i = 0; i < c->ntables; i++) {
		t = &c->tables[i];
		sbuf_reset(&b);
		sbuf_addf(&b, "table       %s: ", t->table);
		if (!t->judged) {
			/* no checkpoint yet: the first round reads it all */
			sbuf_adds(&b, "cursor (");
			list(&b, t->by, t->ncur);
			sbuf_adds(&b, ") none yet (read from its first row)\n");
			fputs(b.buf, stdout);
			continue;
		}
		if (t->at == NULL)
			sbuf_adds(&b, "no cursor stored (read from its first "
			    "row)");
		else {
			sbuf_adds(&b, "cursor (");
			list(&b, t->by, t->ncur);
			sbuf_adds(&b, ") = (");
			list(&b, t->at, t->ncur);
			sbuf_adds(&b, ")");
		}
		sbuf_addf(&b, ", %s%lld row(s) behind\n", t->capped ?
		    "more than " : "", (long long)t->behind);
		fputs(b.buf, stdout);
	}
	sbuf_release(&b);
}

static void
json(const struct config *cfg, const struct status_opts *so,
    const struct source_status *st, const struct ckpt_view *ck,
    const struct source_ckpt *c, int over, int rc)
{
	struct sbuf j = SBUF_INIT;
	char sup[600];
	int i;

	sbuf_addf(&j, "{\"source\":\"%s\"", st->kind);
	if (st->mode != NULL)
		sbuf_addf(&j, ",\"mode\":\"%s\"", st->mode);
	if (st->has_pos) {
		sbuf_adds(&j, ",\"position\":");
		sbuf_add_u64(&j, st->pos);
	}
	if (supervisor_view(cfg, sup, sizeof(sup))) {
		sbuf_adds(&j, ",\"supervisor\":");
		sbuf_add_jstr(&j, sup, strlen(sup));
	}
	if (st->pos_text[0]) {
		sbuf_adds(&j, ",\"position_text\":");
		sbuf_add_jstr(&j, st->pos_text, strlen(st->pos_text));
	}
	sbuf_adds(&j, ",\"checkpoint\":");
	if (ck->found) {
		sbuf_adds(&j, "{\"pos\":");
		sbuf_add_u64(&j, ck->pos);
		sbuf_adds(&j, ",\"text\":");
		sbuf_add_jstr(&j, ck->text, strlen(ck->text));
		if (ck->instance[0]) {
			sbuf_adds(&j, ",\"instance\":");
			sbuf_add_jstr(&j, ck->instance, strlen(ck->instance));
		}
		if (c->resume_file[0]) {
			sbuf_adds(&j, ",\"file\":");
			sbuf_add_jstr(&j, c->resume_file, strlen(c->resume_file));
			sbuf_addf(&j, ",\"file_exists\":%s", c->gone ? "false" :
			    "true");
		}
		if (c->lag_bytes >= 0) {
			sbuf_adds(&j, ",\"lag_bytes\":");
			sbuf_add_i64(&j, c->lag_bytes);
		}
		if (c->has_lag_s)
			sbuf_addf(&j, ",\"lag_seconds\":%.3f", c->lag_s);
		sbuf_addc(&j, '}');
	} else
		sbuf_adds(&j, "null");
	/* before the first checkpoint, the tables the configuration names */
	if (st->rounds && ((ck->found && c->parsed) || (!ck->found &&
	    c->ntables > 0)))
		json_rounds(&j, c);
	if (!st->rounds) {
		sbuf_adds(&j, ",\"loads\":");
		if (status_loads(cfg, NULL, &j) == -1)
			sbuf_adds(&j, "null");
	}
	if (st->has_slots) {
		sbuf_adds(&j, ",\"slots\":[");
		for (i = 0; i < st->nslots; i++)
			json_slot(&j, &st->slots[i], i == 0);
		sbuf_addf(&j, "],\"over_limit\":%d", over);
	}
	if (st->has_standby) {
		sbuf_addf(&j, ",\"standby\":{\"verdict\":\"%s\",\"text\":",
		    standby_word(&st->standby));
		sbuf_add_jstr(&j, st->standby.text, strlen(st->standby.text));
		sbuf_addc(&j, '}');
	}
	if (so->caught_up)
		sbuf_addf(&j, ",\"caught_up\":%s", rc == 0 ? "true" : "false");
	sbuf_adds(&j, "}\n");
	fputs(j.buf, stdout);
	sbuf_release(&j);
}

static void
text(const struct config *cfg, const struct status_opts *so,
    const struct source_status *st, const struct ckpt_view *ck,
    const struct source_ckpt *c)
{
	char mb[32], lim[32], sup[600];
	int i;

	printf("source      %s, %s\n", st->engine, st->where);
	if (supervisor_view(cfg, sup, sizeof(sup)))
		printf("supervisor  %s\n", sup);
	if (!ck->known)
		printf("checkpoint  unknown: %s\n", ck->why);
	else if (!ck->found) {
		printf("checkpoint  none stored (the pipeline has not run)\n");
		if (st->rounds)
			text_tables(c);
	} else if (!c->parsed)
		printf("checkpoint  %s: not a %s position\n", ck->text,
		    cfg->source->title);
	else if (st->rounds) {
		/* its text is every table's cursor: they have lines below */
		printf("checkpoint  position %llu (stored %s%s%s)\n",
		    (unsigned long long)ck->pos, ck->updated_at,
		    ck->instance[0] ? " by " : "", ck->instance);
		text_rounds(c);
	}
	else if (c->gone)
		printf("checkpoint  %s: %s is no longer on the server (purged): "
		    "the stream cannot resume from it; the tables must be "
		    "loaded again into a fresh index\n", ck->text, c->resume);
	else {
		printf("checkpoint  %s (stored %s%s%s): %s behind", ck->text,
		    ck->updated_at, ck->instance[0] ? " by " : "",
		    ck->instance, check_mb(c->lag_bytes > 0 ? c->lag_bytes :
		    0, mb, sizeof(mb)));
		if (c->has_lag_s)
			printf(", %.1f s", c->lag_s);
		if (c->resume[0])
			printf("; %s is still on the server", c->resume);
		putchar('\n');
	}
	if (!st->rounds)
		status_loads(cfg, stdout, NULL);
	if (!st->has_slots)
		return;
	printf("slots       %d on the server (* the configured one)\n",
	    st->nslots);
	for (i = 0; i < st->nslots; i++)
		text_slot(&st->slots[i]);
	if (st->mine == NULL)
		printf("  slot '%s' does not exist (created at the pipeline's "
		    "first start, or by pg2osync bootstrap)\n", cfg->slot_name);
	if (st->has_standby)
		printf("standby     %s%s\n", st->standby.kind == SV_FAIL ?
		    "STALLED: " : "", st->standby.text);
	for (i = 0; so->max_retained >= 0 && i < st->nslots; i++)
		if (st->slots[i].has_retained &&
		    st->slots[i].retained > so->max_retained)
			printf("over the limit: slot '%s' retains %s, more than "
			    "%s\n", st->slots[i].name, check_mb(
			    st->slots[i].retained, mb, sizeof(mb)),
			    check_mb(so->max_retained, lim, sizeof(lim)));
}

static int
show(const struct config *cfg, const struct status_opts *so)
{
	const struct source_ops *ops = source_ops_of(cfg);
	struct source_status st;
	struct source_ckpt c;
	struct ckpt_view ck;
	struct judge j = { ops, &st };
	struct p2o_err e;
	int i, over = 0, rc = 0;

	p2o_err_clear(&e);
	if (ops->status(cfg, &st, &e) == -1) {
		source_status_release(&st);
		return cli_fail(&e);
	}
	if (so->caught_up) {
		rc = status_wait(cfg, so->timeout_ms, &j, so->json ? NULL :
		    stdout);
		if (!so->json)
			goto out;
	}
	status_checkpoint(cfg, &ck);
	memset(&c, 0, sizeof(c));
	c.lag_bytes = -1;
	/* none stored: a source read in rounds lists its tables anyway */
	if ((ck.found || (ck.known && st.rounds)) && ops->status_ckpt(&st,
	    ck.found ? ck.text : NULL, ck.pos, &c, &e) == -1) {
		rc = cli_fail(&e);
		goto done;
	}
	for (i = 0; i < st.nslots; i++)
		if (so->max_retained >= 0 && st.slots[i].has_retained &&
		    st.slots[i].retained > so->max_retained)
			over++;
	if (so->json)
		json(cfg, so, &st, &ck, &c, over, rc);
	else
		text(cfg, so, &st, &ck, &c);
	if (over || c.gone || (st.mine != NULL &&
	    strcmp(st.mine->verdict, "lost") == 0) ||
	    (st.has_standby && st.standby.kind == SV_FAIL))
		rc = CLI_EXIT_FAILED;
done:
	source_ckpt_release(&c);
	ckpt_view_release(&ck);
out:
	source_status_release(&st);
	return rc;
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
	/* a source without a slot to drop keeps none to measure */
	if (so.max_retained >= 0 && source_ops_of(&cfg)->drop_stream == NULL) {
		rc = cli_usage(v, "--max-retained-mb: %s has no slot; its "
		    "server keeps what it keeps by its own retention",
		    source_ops_of(&cfg)->what);
		config_release(&cfg);
		return rc;
	}
	rc = show(&cfg, &so);
	config_release(&cfg);
	return rc;
}

const struct verb verb_status = {
	.name = "status",
	.summary = "the stream against the source, the loads, every slot "
	    "and what it retains",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "[--json] [--caught-up [--timeout S]] "
	    "[--max-retained-mb MB]",
	.about = "Shows the stored checkpoint against the source's current "
	    "position (the lag in bytes, and in seconds where the server "
	    "reports it), the initial load of each table, and on PostgreSQL "
	    "every replication slot on the server: active or not, the WAL it "
	    "retains, safe_wal_size, wal_status; the configured slot marked, "
	    "an inactive slot of no configuration listed with the statement "
	    "that drops it, a slot whose wal_status is 'lost' called out, a "
	    "failover slot and the standby slots it waits for "
	    "(synchronized_standby_slots; one this server lacks stalls it). On "
	    "MySQL: the checkpoint against the binlog position now, and whether "
	    "the binlog file it needs still exists. On PostgreSQL in poll "
	    "mode: each table's cursor and the rows after it, the last "
	    "round and whether the next is late, and no slot. It reads only, "
	    "and works while the pipeline is down.",
	.opts = opts,
	.exits = "  0   shown (--caught-up: caught up)\n  1   a slot retains "
	    "more than --max-retained-mb, a slot is lost,\n      a failover "
	    "slot waits for a standby slot the server lacks,\n      the binlog "
	    "file the checkpoint needs is gone, or --caught-up ran out\n"
	    "  64  bad command line\n  69  refused by the server\n  75  the "
	    "source or the target is unreachable\n  77  authentication "
	    "failed\n  78  invalid configuration\n",
	.run = run,
	.dir = CLI_DIR_EACH,
};
