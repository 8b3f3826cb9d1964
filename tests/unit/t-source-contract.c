/*
 * t-source-contract.c - the source servers' contracts as lib/pg/pgcontract.c
 * and lib/mysql/myserver.c judge them, without a server: the verdicts of
 * each check over facts and catalogue read by hand here (the server and
 * the role; the slot; each publication, the placement of each table in it
 * and the one CREATE PUBLICATION; the binlog settings and which of them a
 * capture refuses by), and source_refuse, which stops at the first
 * failure with its exit class.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "mysql/myserver.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgserver.h"
#include "sbuf.h"
#include "source_ops.h"
#include "tap.h"

#define MAXV	16

/* every verdict of a judge, in order */
struct seen {
	int	 n;
	struct source_verdict v[MAXV];
};

static int
collect(void *arg, const struct source_verdict *v)
{
	struct seen *s = arg;

	if (s->n < MAXV)
		s->v[s->n] = *v;
	s->n++;
	return 0;
}

/* the first verdict of kind k, or NULL */
static const struct source_verdict *
first(const struct seen *s, enum source_verdict_kind k)
{
	int i;

	for (i = 0; i < s->n && i < MAXV; i++)
		if (s->v[i].kind == k)
			return &s->v[i];
	return NULL;
}

static int
count(const struct seen *s, enum source_verdict_kind k)
{
	int i, n = 0;

	for (i = 0; i < s->n && i < MAXV; i++)
		n += s->v[i].kind == k;
	return n;
}

static int
has(const struct source_verdict *v, const char *text)
{
	return v != NULL && strstr(v->text, text) != NULL;
}

static void
good_facts(struct pgsrv_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->version = 150000;
	snprintf(f->wal_level, sizeof(f->wal_level), "logical");
	snprintf(f->role, sizeof(f->role), "sync");
	snprintf(f->db, sizeof(f->db), "app");
	f->replication = 1;
	f->db_create = 1;
	f->max_slots = 10;
	f->used_slots = 1;
	f->max_senders = 10;
}

static void
test_pg_server(void)
{
	struct pgsrv_facts f;
	struct seen s;
	struct p2o_err e;
	const struct source_verdict *v;

	good_facts(&f);
	memset(&s, 0, sizeof(s));
	pgsrv_judge_server(&f, collect, &s);
	is_int(s.n, 4, "the server: four checks (wal_level, standby, "
	    "max_wal_senders, the role)");
	is_int(count(&s, SV_OK), 4, "... each passes on a good server");
	is_str(s.v[0].subject, "source", "... about the source");

	snprintf(f.wal_level, sizeof(f.wal_level), "replica");
	memset(&s, 0, sizeof(s));
	pgsrv_judge_server(&f, collect, &s);
	v = first(&s, SV_FAIL);
	ok(has(v, "wal_level is 'replica'; logical replication needs "
	    "wal_level = logical (ALTER SYSTEM SET wal_level = logical; then "
	    "restart the server)"), "wal_level replica: refused, with the "
	    "statement that fixes it");
	ok(v && v->code == P2O_EXIT_REFUSED && strcmp(v->remedy, "ALTER SYSTEM "
	    "SET wal_level = logical; then restart the server") == 0,
	    "... exit class 69, the remedy apart");
	snprintf(f.managed, sizeof(f.managed), "rds");
	memset(&s, 0, sizeof(s));
	pgsrv_judge_server(&f, collect, &s);
	ok(has(first(&s, SV_FAIL), "rds.logical_replication = 1"),
	    "... on RDS the parameter group's switch");

	good_facts(&f);
	f.in_recovery = 1;
	memset(&s, 0, sizeof(s));
	pgsrv_judge_server(&f, collect, &s);
	ok(has(first(&s, SV_FAIL), "a standby, which cannot decode before "
	    "PostgreSQL 16"), "a standby of PostgreSQL 15: refused");
	f.version = 160002;
	memset(&s, 0, sizeof(s));
	pgsrv_judge_server(&f, collect, &s);
	is_int(count(&s, SV_FAIL), 0, "a standby of PostgreSQL 16: passes");

	good_facts(&f);
	f.max_senders = 0;
	memset(&s, 0, sizeof(s));
	pgsrv_judge_server(&f, collect, &s);
	ok(has(first(&s, SV_FAIL), "max_wal_senders is 0"),
	    "max_wal_senders 0: refused");

	good_facts(&f);
	f.replication = 0;
	memset(&s, 0, sizeof(s));
	pgsrv_judge_server(&f, collect, &s);
	v = first(&s, SV_FAIL);
	ok(has(v, "role 'sync' has neither REPLICATION nor SUPERUSER") &&
	    strcmp(v->remedy, "ALTER ROLE \"sync\" REPLICATION") == 0,
	    "a role without REPLICATION: refused, ALTER ROLE the remedy");

	/* the capture's way: the first failure, its class, the list stops */
	good_facts(&f);
	snprintf(f.wal_level, sizeof(f.wal_level), "minimal");
	f.replication = 0;
	p2o_err_clear(&e);
	ok(pgsrv_judge_server(&f, source_refuse, &e) == -1 &&
	    e.code == P2O_EXIT_REFUSED && strstr(e.msg, "wal_level is "
	    "'minimal'") != NULL, "source_refuse: the first failure is the "
	    "error, with its exit class (%s)", e.msg);
}

static char dir[] = "/tmp/t-source-contract.XXXXXX";
static char path[128];

static int
load(struct config *cfg)
{
	static const char text[] =
	    "source:\n"
	    "  url: postgres://sync@db:5432/app\n"
	    "  slot_name: s1\n"
	    "  publication: p\n"
	    "target:\n"
	    "  url: http://127.0.0.1:9200\n"
	    "sync:\n"
	    "  items:\n"
	    "    table: public.items\n"
	    "  log:\n"
	    "    table: public.log\n"
	    "    append_only: true\n"
	    "  customers:\n"
	    "    table: public.customers\n"
	    "    children:\n"
	    "      - table: public.orders\n"
	    "        field: orders\n"
	    "        foreign_key: customer_id\n";
	struct p2o_err e;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/c.yaml", dir);
	if ((fp = fopen(path, "w")) == NULL || fputs(text, fp) == EOF ||
	    fclose(fp) == EOF)
		return -1;
	if (config_load_with(path, CONFIG_SECRETS_NONE, cfg, &e) == -1) {
		diag("%s", e.msg);
		return -1;
	}
	return 0;
}

/* a described table as pgcat_describe leaves it: heap, as it frees */
static void
table(struct pgcat_table *t, const struct sync_section *sec, uint32_t oid,
    int identity, const char *child, uint32_t child_oid)
{
	memset(t, 0, sizeof(*t));
	t->sec = sec;
	t->oid = oid;
	t->kind = 'r';
	t->ident = 'd';
	if (identity) {
		t->nidkey = 1;
		t->idkey = calloc(1, sizeof(int));
	}
	if (child != NULL) {
		t->nrels = 1;
		t->rels = calloc(1, sizeof(*t->rels));
		t->rels[0].qname = strdup(child);
		t->rels[0].oid = child_oid;
		t->rels[0].kind = 'r';
		t->rels[0].ident = 'd';
	}
}

static void
pub(struct pgsrv_pub *p, const char *acts, const uint32_t *oids,
    const char *const *names, int n)
{
	int i;

	pgsrv_pub_release(p);
	p->exists = 1;
	p->ins = strchr(acts, 'i') != NULL;
	p->upd = strchr(acts, 'u') != NULL;
	p->del = strchr(acts, 'd') != NULL;
	p->trunc = strchr(acts, 't') != NULL;
	p->members = calloc((size_t)n + 1, sizeof(*p->members));
	for (i = 0; i < n; i++) {
		p->members[i].oid = oids[i];
		p->members[i].qname = strdup(names[i]);
	}
	p->nmembers = n;
}

static void
judge(const struct pgsrv_contract *k, enum pgsrv_which w, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	pgsrv_judge_pub(k, w, collect, s);
}

static void
test_pg_publications(void)
{
	static const uint32_t all[] = { 100, 101, 300, 301 };
	static const char *const all_names[] = { "public.items",
	    "public.items_2024", "public.customers", "public.orders" };
	static const uint32_t app[] = { 200 };
	static const char *const app_names[] = { "public.log" };
	struct pgsrv_contract k;
	struct config cfg;
	struct seen s;
	struct sbuf b = SBUF_INIT;
	const struct source_verdict *v;
	int i;

	if (mkdtemp(dir) == NULL || load(&cfg) == -1) {
		ok(0, "the configuration loads");
		return;
	}
	pgsrv_contract_init(&k, &cfg);
	good_facts(&k.facts);
	table(&k.tables[0], &cfg.syncs[0], 100, 1, "public.items_2024", 101);
	table(&k.tables[1], &cfg.syncs[1], 200, 0, NULL, 0);
	table(&k.tables[2], &cfg.syncs[2], 300, 1, NULL, 0);
	for (i = 0; i < 3; i++)
		k.usable[i] = 1;
	pgsrv_place(&k);
	ok(k.append[0] == 0 && k.append[1] == 1 && k.append[2] == 0 &&
	    k.nappend == 1, "placement: the keyless append_only table in "
	    "p_append, the others in p");
	is_str(k.pubname[PGSRV_APPEND], "p_append", "... named <pub>_append");

	pgsrv_create_pub_sql(&b, &k, PGSRV_MAIN);
	is_str(b.buf, "CREATE PUBLICATION \"p\" FOR TABLE \"public\".\"items\", "
	    "\"public\".\"customers\", \"public\".\"orders\" WITH "
	    "(publish_via_partition_root = true)", "the one CREATE PUBLICATION: "
	    "the tables placed in p and the table a collection reads");
	sbuf_reset(&b);
	pgsrv_create_pub_sql(&b, &k, PGSRV_APPEND);
	is_str(b.buf, "CREATE PUBLICATION \"p_append\" FOR TABLE "
	    "\"public\".\"log\" WITH (publish = 'insert, truncate', "
	    "publish_via_partition_root = true)", "... and p_append, inserts "
	    "and truncates only");
	sbuf_release(&b);

	/* absent: created by whoever applies it, or a DBA's statement */
	k.may_create[PGSRV_MAIN] = 1;
	judge(&k, PGSRV_MAIN, &s);
	ok(s.n == 1 && s.v[0].kind == SV_ABSENT && strstr(s.v[0].remedy,
	    "CREATE PUBLICATION \"p\" FOR TABLE") == s.v[0].remedy, "an absent "
	    "publication the role may create: one verdict, absent, the "
	    "statement its remedy");
	k.may_create[PGSRV_MAIN] = 0;
	judge(&k, PGSRV_MAIN, &s);
	ok(s.n == 1 && has(first(&s, SV_FAIL), "may not create it") &&
	    has(first(&s, SV_FAIL), "a DBA runs CREATE PUBLICATION \"p\""),
	    "... one it may not: refused, naming what a DBA runs");

	pub(&k.pub[PGSRV_MAIN], "iudt", all, all_names, 4);
	pub(&k.pub[PGSRV_APPEND], "it", app, app_names, 1);
	judge(&k, PGSRV_MAIN, &s);
	ok(s.n == 2 && count(&s, SV_OK) == 2, "p as the configuration "
	    "wants it: two checks pass");
	judge(&k, PGSRV_APPEND, &s);
	ok(s.n == 2 && count(&s, SV_OK) == 2, "p_append as it must be: "
	    "two checks pass");

	pub(&k.pub[PGSRV_MAIN], "iudt", all + 1, all_names + 1, 3);
	judge(&k, PGSRV_MAIN, &s);
	v = first(&s, SV_FAIL);
	ok(has(v, "publication 'p' does not include table 'public.items' "
	    "(sync section 'items')") && v->apply && strcmp(v->remedy,
	    "ALTER PUBLICATION \"p\" ADD TABLE \"public\".\"items\"") == 0,
	    "a section's table missing: refused, and the ALTER a reload may "
	    "run");

	pub(&k.pub[PGSRV_MAIN], "iudt", (const uint32_t[]){ 100, 300, 301 },
	    (const char *const[]){ "public.items", "public.customers",
	    "public.orders" }, 3);
	judge(&k, PGSRV_MAIN, &s);
	v = first(&s, SV_FAIL);
	ok(has(v, "'public.items_2024', which inherits from 'public.items'") &&
	    !v->apply, "an inheritance child missing: refused, not applied");

	pub(&k.pub[PGSRV_MAIN], "iudt", all, all_names, 3);
	judge(&k, PGSRV_MAIN, &s);
	ok(has(first(&s, SV_FAIL), "'public.orders', which a collection "
	    "reads"), "a table a collection reads missing: refused");

	pub(&k.pub[PGSRV_MAIN], "iudt", (const uint32_t[]){ 100, 101, 300, 301,
	    200 }, (const char *const[]){ "public.items", "public.items_2024",
	    "public.customers", "public.orders", "public.log" }, 5);
	judge(&k, PGSRV_MAIN, &s);
	v = first(&s, SV_FAIL);
	ok(has(v, "includes table 'public.log', which has no replica "
	    "identity") && strstr(v->remedy, "DROP TABLE") != NULL,
	    "a table without a replica identity in p: refused, DROP TABLE the "
	    "remedy");

	pub(&k.pub[PGSRV_MAIN], "iut", all, all_names, 4);
	judge(&k, PGSRV_MAIN, &s);
	ok(count(&s, SV_FAIL) == 1 && has(first(&s, SV_FAIL), "does not "
	    "publish deletes"), "p without deletes: refused");
	pub(&k.pub[PGSRV_MAIN], "iud", all, all_names, 4);
	judge(&k, PGSRV_MAIN, &s);
	ok(has(first(&s, SV_NOTE), "does not publish truncate") &&
	    count(&s, SV_FAIL) == 0, "p without truncate: a note, no failure");
	pub(&k.pub[PGSRV_APPEND], "iut", app, app_names, 1);
	judge(&k, PGSRV_APPEND, &s);
	ok(has(first(&s, SV_FAIL), "must publish 'insert, truncate' only"),
	    "p_append publishing updates: refused");

	/* the slot */
	memset(&s, 0, sizeof(s));
	pgsrv_judge_slot(&k, collect, &s);
	ok(s.n == 1 && s.v[0].kind == SV_ABSENT, "no slot: absent, the role "
	    "may create it");
	k.facts.used_slots = 10;
	memset(&s, 0, sizeof(s));
	pgsrv_judge_slot(&k, collect, &s);
	ok(has(first(&s, SV_FAIL), "all 10 of max_replication_slots are in "
	    "use"), "... every slot in use: refused");
	k.slot_found = 1;
	k.slot.name = strdup("s1");
	k.slot.plugin = strdup("pgoutput");
	k.slot.database = strdup("app");
	k.slot.wal_status = strdup("lost");
	k.slot.logical = 1;
	k.slot.confirmed = 1;
	memset(&s, 0, sizeof(s));
	pgsrv_judge_slot(&k, collect, &s);
	v = first(&s, SV_FAIL);
	ok(has(v, "replication slot 's1' has lost WAL it needs") &&
	    v->code == P2O_EXIT_LOST, "a lost slot: refused with 67");
	free(k.slot.database);
	k.slot.database = strdup("other");
	memset(&s, 0, sizeof(s));
	pgsrv_judge_slot(&k, collect, &s);
	ok(has(first(&s, SV_FAIL), "belongs to database 'other', not 'app'"),
	    "a slot of another database: refused");
	free(k.slot.database);
	k.slot.database = strdup("app");
	free(k.slot.wal_status);
	k.slot.wal_status = strdup("reserved");
	memset(&s, 0, sizeof(s));
	pgsrv_judge_slot(&k, collect, &s);
	ok(s.n == 1 && s.v[0].kind == SV_OK, "a logical pgoutput slot of this "
	    "database: passes");

	pgsrv_contract_release(&k);
	config_release(&cfg);
	unlink(path);
	rmdir(dir);
}

static void
test_mysql(void)
{
	struct mysrv_facts f;
	struct config cfg;
	struct seen s;
	struct p2o_err e;

	memset(&cfg, 0, sizeof(cfg));
	cfg.server_id = 7;
	memset(&f, 0, sizeof(f));
	snprintf(f.log_bin, sizeof(f.log_bin), "ON");
	snprintf(f.binlog_format, sizeof(f.binlog_format), "ROW");
	snprintf(f.row_image, sizeof(f.row_image), "FULL");
	f.server_id = 7;
	memset(&s, 0, sizeof(s));
	mysrv_judge(&f, &cfg, 1, collect, &s);
	ok(s.n == 4 && count(&s, SV_OK) == 4, "a capture's checks: the four "
	    "binlog settings, passing");
	memset(&s, 0, sizeof(s));
	mysrv_judge(&f, &cfg, 0, collect, &s);
	ok(s.n == 7 && count(&s, SV_FAIL) == 3 && has(first(&s, SV_FAIL),
	    "source.server_id 7 is the server's own"), "validate's: every "
	    "one, the replica id and the grants too");

	snprintf(f.binlog_format, sizeof(f.binlog_format), "STATEMENT");
	snprintf(f.row_image, sizeof(f.row_image), "MINIMAL");
	p2o_err_clear(&e);
	ok(mysrv_judge(&f, &cfg, 1, source_refuse, &e) == -1 &&
	    e.code == P2O_EXIT_REFUSED && strstr(e.msg, "binlog_format is "
	    "STATEMENT: row-based logging is required") != NULL,
	    "STATEMENT: the capture's error, the first failure (%s)", e.msg);
	snprintf(f.binlog_format, sizeof(f.binlog_format), "ROW");
	snprintf(f.value_options, sizeof(f.value_options), "PARTIAL_JSON");
	snprintf(f.row_image, sizeof(f.row_image), "FULL");
	p2o_err_clear(&e);
	ok(mysrv_judge(&f, &cfg, 1, source_refuse, &e) == -1 &&
	    strstr(e.msg, "PARTIAL_JSON") != NULL, "PARTIAL_JSON: refused");
}

int
main(void)
{
	test_pg_server();
	test_pg_publications();
	test_mysql();
	return done_testing();
}
