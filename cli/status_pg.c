/*
 * status_pg.c - status on PostgreSQL: the WAL position now, every slot on
 * the server from one statement (lib/pg/pgserver.c), the checkpoint, the
 * loads; as lines or as one JSON object. Reads only.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "lsn.h"
#include "p2o.h"
#include "pg/pgconn.h"
#include "pg/pgserver.h"

/* the statement that drops slot s, for the operator to run */
static void
drop_sql(struct sbuf *b, const char *slot)
{
	sbuf_adds(b, "SELECT pg_drop_replication_slot(");
	pgconn_put_literal(b, slot);
	sbuf_adds(b, ");");
}

/* what is said about a slot beside its numbers */
static const char *
verdict(const struct config *cfg, const struct pgsrv_slot *s)
{
	if (strcmp(s->wal_status, "lost") == 0)
		return "lost";
	if (strcmp(s->name, cfg->slot_name) == 0)
		return "configured";
	if (s->logical && !s->active && !s->temporary)
		return "orphan";
	return "other";
}

static void
text_slot(const struct config *cfg, const struct pgsrv_slot *s)
{
	struct sbuf b = SBUF_INIT;
	const char *what = verdict(cfg, s);
	char mb[32], safe[32];

	printf("  %-20s %s %-8s %-9s retains %-10s safe_wal_size %-10s "
	    "wal_status %s\n", s->name, strcmp(s->name, cfg->slot_name) == 0 ?
	    "*" : " ", s->logical ? "logical" : "physical",
	    s->active ? "active" : "inactive", s->has_retained ?
	    check_mb(s->retained, mb, sizeof(mb)) : "-", s->has_safe ?
	    check_mb(s->safe_wal_size, safe, sizeof(safe)) :
	    strcmp(s->wal_status, "lost") == 0 ? "-" : "unlimited",
	    s->wal_status[0] ? s->wal_status : "-");
	drop_sql(&b, s->name);
	if (strcmp(what, "lost") == 0)
		printf("    lost: the server has removed WAL this slot needs "
		    "(max_slot_wal_keep_size); it can never stream again. "
		    "Drop it (%s) and load the tables again\n", b.buf);
	else if (strcmp(what, "orphan") == 0)
		printf("    inactive and not this configuration's: it retains "
		    "WAL until it is dropped. If nothing will read it: %s\n",
		    b.buf);
	sbuf_release(&b);
}

static void
json_slot(struct sbuf *j, const struct config *cfg,
    const struct pgsrv_slot *s, int first)
{
	struct sbuf b = SBUF_INIT;

	drop_sql(&b, s->name);
	sbuf_addf(j, "%s{\"slot\":", first ? "" : ",");
	sbuf_add_jstr(j, s->name, strlen(s->name));
	sbuf_addf(j, ",\"type\":\"%s\",\"active\":%s,\"configured\":%s,"
	    "\"retained_bytes\":", s->logical ? "logical" : "physical",
	    s->active ? "true" : "false",
	    strcmp(s->name, cfg->slot_name) == 0 ? "true" : "false");
	if (s->has_retained)
		sbuf_add_i64(j, s->retained);
	else
		sbuf_adds(j, "null");
	sbuf_adds(j, ",\"safe_wal_size_bytes\":");
	if (s->has_safe)
		sbuf_add_i64(j, s->safe_wal_size);
	else
		sbuf_adds(j, "null");
	sbuf_adds(j, ",\"wal_status\":");
	sbuf_add_jstr(j, s->wal_status, strlen(s->wal_status));
	sbuf_addf(j, ",\"verdict\":\"%s\",\"drop\":", verdict(cfg, s));
	sbuf_add_jstr(j, b.buf, b.len);
	sbuf_addc(j, '}');
	sbuf_release(&b);
}

static int
reached(const struct ckpt_view *ck, void *arg)
{
	return ck->pos >= *(uint64_t *)arg;
}

int
status_pg(const struct config *cfg, const struct status_opts *so)
{
	const struct pgsrv_slot *mine;
	struct pgsrv_slot *v = NULL;
	struct ckpt_view ck;
	struct sbuf j = SBUF_INIT;
	struct p2o_err e;
	struct pg_conn *c;
	char now_s[32], mb[32], lim[32];
	uint64_t now;
	int n = 0, i, rc = 0, over = 0;

	p2o_err_clear(&e);
	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync status", &e)) == NULL)
		return cli_fail(&e);
	if (pgsrv_slots(c, &v, &n, &now, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	lsn_format(now, now_s);
	mine = pgsrv_slot_find(v, n, cfg->slot_name);
	if (so->caught_up) {
		rc = status_wait(cfg, so->timeout_ms, reached, &now,
		    so->json ? NULL : stdout);
		if (!so->json)
			goto out;
	}
	status_checkpoint(cfg, &ck);
	for (i = 0; i < n; i++)
		if (so->max_retained >= 0 && v[i].has_retained &&
		    v[i].retained > so->max_retained)
			over++;

	if (so->json) {
		sbuf_addf(&j, "{\"source\":\"postgres\",\"position\":%" PRIu64
		    ",\"position_text\":\"%s\",\"checkpoint\":", now, now_s);
		if (ck.found) {
			sbuf_addf(&j, "{\"pos\":%" PRIu64 ",\"text\":", ck.pos);
			sbuf_add_jstr(&j, ck.text, strlen(ck.text));
			sbuf_addf(&j, ",\"lag_bytes\":%" PRIu64,
			    now > ck.pos ? now - ck.pos : 0);
			if (mine && mine->has_lag_s)
				sbuf_addf(&j, ",\"lag_seconds\":%.3f",
				    mine->lag_s);
			sbuf_addc(&j, '}');
		} else
			sbuf_adds(&j, "null");
		sbuf_adds(&j, ",\"loads\":");
		if (status_loads(cfg, NULL, &j) == -1)
			sbuf_adds(&j, "null");
		sbuf_adds(&j, ",\"slots\":[");
		for (i = 0; i < n; i++)
			json_slot(&j, cfg, &v[i], i == 0);
		sbuf_addf(&j, "],\"over_limit\":%d", over);
		if (so->caught_up)
			sbuf_addf(&j, ",\"caught_up\":%s", rc == 0 ? "true" :
			    "false");
		sbuf_adds(&j, "}\n");
		fputs(j.buf, stdout);
	} else {
		printf("source      PostgreSQL, WAL at %s\n", now_s);
		if (!ck.known)
			printf("checkpoint  unknown: %s\n", ck.why);
		else if (!ck.found)
			printf("checkpoint  none stored (the pipeline has not "
			    "run)\n");
		else {
			printf("checkpoint  %s (stored %s): %s behind", ck.text,
			    ck.updated_at, check_mb(now > ck.pos ?
			    (int64_t)(now - ck.pos) : 0, mb, sizeof(mb)));
			if (mine && mine->has_lag_s)
				printf(", %.1f s", mine->lag_s);
			putchar('\n');
		}
		status_loads(cfg, stdout, NULL);
		printf("slots       %d on the server (* the configured one)\n",
		    n);
		for (i = 0; i < n; i++)
			text_slot(cfg, &v[i]);
		if (mine == NULL)
			printf("  slot '%s' does not exist (created at the "
			    "pipeline's first start, or by pg2osync "
			    "bootstrap)\n", cfg->slot_name);
		for (i = 0; so->max_retained >= 0 && i < n; i++)
			if (v[i].has_retained &&
			    v[i].retained > so->max_retained)
				printf("over the limit: slot '%s' retains %s, "
				    "more than %s\n", v[i].name,
				    check_mb(v[i].retained, mb, sizeof(mb)),
				    check_mb(so->max_retained, lim,
				    sizeof(lim)));
	}
	if (over || (mine && strcmp(mine->wal_status, "lost") == 0))
		rc = CLI_EXIT_FAILED;
out:
	sbuf_release(&j);
	pgsrv_slots_free(v, n);
	pgconn_close(c);
	return rc;
}
