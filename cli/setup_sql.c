/*
 * setup_sql.c - pg2osync setup-sql: the script a DBA runs for this
 * configuration, written offline (it connects nowhere): on PostgreSQL the
 * wal_level change, the role with REPLICATION and its grants, REPLICA
 * IDENTITY FULL where the configuration reads columns a before-image must
 * carry, the publications; on MySQL and MariaDB the my.cnf block, the
 * settings for the running server, the user and its grants.
 *
 * What only the catalogue can decide (a table's replica identity) is
 * decided by the script on the server, in DO blocks, so the same text is
 * right whatever the tables are. Every statement can be run twice. No
 * password is ever written: the script says how to set one.
 */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "mysql/myconn.h"
#include "pg/pgconn.h"
#include "p2o.h"

enum { O_ROLE = 0x100 };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	{ "role", O_ROLE, "NAME", "the role (user) pg2osync connects as "
	    "(default: the url's user when its variable is set, else "
	    "pg2osync)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static void
qrel(struct sbuf *b, const struct sync_section *s)
{
	pgconn_put_ident(b, s->schema);
	sbuf_addc(b, '.');
	pgconn_put_ident(b, s->table);
}

/* the columns a before-image must carry: what deletes and moves a
 * document, and what its filter reads */
static int
image_columns(const struct sync_section *s, const char **v, int max)
{
	struct named_col all[256];
	int n = section_columns(s, all, 256), i, k = 0;

	for (i = 0; i < n && k < max; i++)
		if (strcmp(all[i].key, "where") == 0 ||
		    strcmp(all[i].key, "id") == 0 ||
		    strcmp(all[i].key, "index") == 0 ||
		    strcmp(all[i].key, "routing") == 0 ||
		    strcmp(all[i].key, "fan_out.column") == 0 ||
		    strcmp(all[i].key, "join.column") == 0)
			v[k++] = all[i].col;
	return k;
}

/* a table has a replica identity index or primary key, or is FULL: the
 * test capture-pg makes of every table of an append-only tree */
static void
has_identity(struct sbuf *b, const char *reloid)
{
	sbuf_addf(b, "(SELECT c.relreplident = 'f' OR EXISTS (SELECT 1 FROM "
	    "pg_catalog.pg_index i WHERE i.indrelid = c.oid AND "
	    "(CASE c.relreplident WHEN 'i' THEN i.indisreplident ELSE "
	    "i.indisprimary END)) FROM pg_catalog.pg_class c WHERE c.oid = %s)",
	    reloid);
}

static void
pg_role(struct sbuf *b, const struct config *cfg, const char *role)
{
	int i, k, seen;

	sbuf_adds(b, "\n-- 2. The role pg2osync connects as: it may replicate "
	    "and read the tables,\n--    and owns nothing.\nDO $$ BEGIN\n"
	    "  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = ");
	pgconn_put_literal(b, role);
	sbuf_adds(b, ") THEN\n    CREATE ROLE ");
	pgconn_put_ident(b, role);
	sbuf_adds(b, " LOGIN REPLICATION;\n  ELSE\n    ALTER ROLE ");
	pgconn_put_ident(b, role);
	sbuf_adds(b, " LOGIN REPLICATION;\n  END IF;\nEND $$;\n"
	    "--    its password is never written in a file: in psql, \\password ");
	sbuf_adds(b, role);
	sbuf_adds(b, "\nDO $$ BEGIN EXECUTE pg_catalog.format('GRANT CONNECT ON "
	    "DATABASE %I TO %I', pg_catalog.current_database(), ");
	pgconn_put_literal(b, role);
	sbuf_adds(b, "); END $$;\n");
	for (i = 0; i < cfg->nsyncs; i++) {
		for (seen = 0, k = 0; k < i; k++)
			seen |= strcmp(cfg->syncs[k].schema,
			    cfg->syncs[i].schema) == 0;
		if (seen)
			continue;
		sbuf_adds(b, "GRANT USAGE ON SCHEMA ");
		pgconn_put_ident(b, cfg->syncs[i].schema);
		sbuf_adds(b, " TO ");
		pgconn_put_ident(b, role);
		sbuf_adds(b, ";\n");
	}
	/* SELECT on a parent reads its inheritance children and partitions */
	for (i = 0; i < cfg->nsyncs; i++) {
		sbuf_adds(b, "GRANT SELECT ON TABLE ");
		qrel(b, &cfg->syncs[i]);
		sbuf_adds(b, " TO ");
		pgconn_put_ident(b, role);
		sbuf_adds(b, ";\n");
	}
}

static void
pg_identity(struct sbuf *b, const struct config *cfg)
{
	const char *cols[256];
	struct sbuf rel = SBUF_INIT, oid = SBUF_INIT;
	int i, k, n, any = 0;

	for (i = 0; i < cfg->nsyncs; i++) {
		if (cfg->syncs[i].append_only ||
		    (n = image_columns(&cfg->syncs[i], cols, 256)) == 0)
			continue;
		if (!any++)
			sbuf_adds(b, "\n-- 3. Replica identity: a delete or an "
			    "update must carry in its before-image\n--    every "
			    "column that names or filters a document. FULL only "
			    "where the key\n--    does not hold them all.\n");
		sbuf_reset(&rel);
		qrel(&rel, &cfg->syncs[i]);
		sbuf_reset(&oid);
		pgconn_put_literal(&oid, rel.buf);
		sbuf_adds(&oid, "::pg_catalog.regclass");
		sbuf_addf(b, "-- sync.%s reads", cfg->syncs[i].name);
		for (k = 0; k < n; k++)
			sbuf_addf(b, "%s %s", k ? "," : "", cols[k]);
		sbuf_adds(b, "\nDO $$ BEGIN\n  IF (SELECT relreplident <> 'f' "
		    "FROM pg_catalog.pg_class WHERE oid = ");
		sbuf_adds(b, oid.buf);
		sbuf_adds(b, ")\n     AND EXISTS (SELECT 1 FROM pg_catalog.unnest("
		    "ARRAY[");
		for (k = 0; k < n; k++) {
			if (k)
				sbuf_addc(b, ',');
			pgconn_put_literal(b, cols[k]);
		}
		sbuf_adds(b, "]::text[]) AS col(name) WHERE col.name NOT IN (\n"
		    "       SELECT a.attname::text FROM pg_catalog.pg_index i "
		    "JOIN pg_catalog.pg_class c ON c.oid = i.indrelid\n"
		    "       JOIN pg_catalog.pg_attribute a ON a.attrelid = "
		    "i.indrelid AND a.attnum = ANY (i.indkey)\n"
		    "       WHERE i.indrelid = ");
		sbuf_adds(b, oid.buf);
		sbuf_adds(b, " AND (CASE c.relreplident WHEN 'i' THEN "
		    "i.indisreplident ELSE i.indisprimary END)))\n  THEN\n"
		    "    ALTER TABLE ");
		sbuf_adds(b, rel.buf);
		sbuf_adds(b, " REPLICA IDENTITY FULL;\n  END IF;\nEND $$;\n");
	}
	sbuf_release(&rel);
	sbuf_release(&oid);
}

static void
pg_publication(struct sbuf *b, const struct config *cfg)
{
	struct sbuf rel = SBUF_INIT, oid = SBUF_INIT;
	const char **nest;
	int i, append = 0, nnest = config_nest_tables(cfg, &nest);

	sbuf_adds(b, "\n-- 4. The publication of the tables (adding a table "
	    "to one takes its owner,\n--    which pg2osync's role is not). "
	    "An append_only table without a replica\n--    identity goes in "
	    "<publication>_append, which publishes no update or delete,\n"
	    "--    so that the application's own UPDATE and DELETE of it keep "
	    "working.\nDO $$\nDECLARE\n  main text := '';\n  append text := "
	    "'';\nBEGIN\n");
	for (i = 0; i < cfg->nsyncs; i++) {
		sbuf_reset(&rel);
		qrel(&rel, &cfg->syncs[i]);
		sbuf_reset(&oid);
		pgconn_put_literal(&oid, rel.buf);
		sbuf_adds(&oid, "::pg_catalog.regclass");
		if (cfg->syncs[i].append_only) {
			append = 1;
			sbuf_adds(b, "  IF ");
			has_identity(b, oid.buf);
			sbuf_adds(b, " THEN\n    main := main || ', ' || ");
			pgconn_put_literal(b, rel.buf);
			sbuf_adds(b, ";\n  ELSE\n    append := append || ', ' || ");
			pgconn_put_literal(b, rel.buf);
			sbuf_adds(b, ";\n  END IF;\n");
		} else {
			sbuf_adds(b, "  main := main || ', ' || ");
			pgconn_put_literal(b, rel.buf);
			sbuf_adds(b, ";\n");
		}
	}
	/* the tables collections read: their changes rewrite the parents */
	for (i = 0; i < nnest; i++) {
		const char *dot = strchr(nest[i], '.');

		sbuf_reset(&rel);
		sbuf_add(&rel, nest[i], (size_t)(dot - nest[i]));
		sbuf_reset(&oid);
		pgconn_put_ident(&oid, rel.buf);
		sbuf_addc(&oid, '.');
		pgconn_put_ident(&oid, dot + 1);
		sbuf_adds(b, "  main := main || ', ' || ");
		pgconn_put_literal(b, oid.buf);
		sbuf_adds(b, ";\n");
	}
	free(nest);
	sbuf_adds(b, "  IF NOT EXISTS (SELECT FROM pg_catalog.pg_publication "
	    "WHERE pubname = ");
	pgconn_put_literal(b, cfg->publication);
	sbuf_adds(b, ") THEN\n    EXECUTE 'CREATE PUBLICATION ' || "
	    "pg_catalog.quote_ident(");
	pgconn_put_literal(b, cfg->publication);
	sbuf_adds(b, ")\n      || CASE WHEN main = '' THEN '' ELSE ' FOR TABLE "
	    "' || pg_catalog.substr(main, 3) END\n      || ' WITH "
	    "(publish_via_partition_root = true)';\n  END IF;\n");
	if (append) {
		sbuf_adds(b, "  IF append <> '' AND NOT EXISTS (SELECT FROM "
		    "pg_catalog.pg_publication WHERE pubname = ");
		sbuf_addf(&rel, "%s", "");
		sbuf_reset(&rel);
		sbuf_addf(&rel, "%s_append", cfg->publication);
		pgconn_put_literal(b, rel.buf);
		sbuf_adds(b, ") THEN\n    EXECUTE 'CREATE PUBLICATION ' || "
		    "pg_catalog.quote_ident(");
		pgconn_put_literal(b, rel.buf);
		sbuf_adds(b, ")\n      || ' FOR TABLE ' || pg_catalog.substr("
		    "append, 3)\n      || ' WITH (publish = ''insert, "
		    "truncate'', publish_via_partition_root = true)';\n  END "
		    "IF;\n");
	}
	sbuf_adds(b, "END $$;\n");
	sbuf_release(&rel);
	sbuf_release(&oid);
}

static void
pg_script(struct sbuf *b, const struct config *cfg, const char *role,
    const char *db)
{
	sbuf_addf(b, "-- pg2osync setup-sql for '%s' (PostgreSQL)\n"
	    "-- Run as a superuser in database %s:\n"
	    "--   psql -v ON_ERROR_STOP=1 -d %s -f setup.sql\n"
	    "-- Every statement can be run again.\n\n"
	    "-- 1. The server must decode its WAL logically, which takes a "
	    "restart:\n"
	    "--    Amazon RDS and Aurora: rds.logical_replication = 1 in the "
	    "parameter group;\n"
	    "--    Cloud SQL: the flag cloudsql.logical_decoding = on; Azure: "
	    "the server\n"
	    "--    parameter wal_level = logical. Elsewhere:\n"
	    "ALTER SYSTEM SET wal_level = logical;\n"
	    "--    then restart PostgreSQL and check: SHOW wal_level;\n",
	    cfg->path, db ? db : "the source url names", db ? db : "DB");
	pg_role(b, cfg, role);
	pg_identity(b, cfg);
	pg_toast_script(b, cfg);
	pg_publication(b, cfg);
	sbuf_addf(b, "\n-- The replication slot '%s' is created by pg2osync "
	    "(bootstrap, or the first start):\n-- it needs only the role's "
	    "REPLICATION.\n", cfg->slot_name);
}

static void
my_script(struct sbuf *b, const struct config *cfg, const char *role)
{
	const char **nest, *dot;
	char *db;
	int i, k, seen, nnest;

	sbuf_addf(b, "-- pg2osync setup-sql for '%s' (MySQL, MariaDB)\n"
	    "-- Run as an administrator: mysql < setup.sql\n\n"
	    "-- 1. In my.cnf (log_bin takes a restart; MariaDB's is off by "
	    "default):\n"
	    "--   [mysqld]\n"
	    "--   log_bin          = binlog\n"
	    "--   binlog_format    = ROW\n"
	    "--   binlog_row_image = FULL     # MINIMAL and NOBLOB lose "
	    "unchanged columns\n"
	    "--   server_id        = 1        # the server's own: not %lu, "
	    "which is pg2osync's\n"
	    "--   binlog_expire_logs_seconds = 604800   # longer than the "
	    "pipeline may be down\n"
	    "--   # MySQL 8, to resume on a promoted replica: gtid_mode = ON, "
	    "enforce_gtid_consistency = ON\n\n"
	    "-- 2. The same for the running server, until it restarts:\n"
	    "SET GLOBAL binlog_format = 'ROW';\n"
	    "SET GLOBAL binlog_row_image = 'FULL';\n"
	    "-- MySQL 8 only: SET GLOBAL binlog_row_value_options = '';\n\n"
	    "-- 3. The user pg2osync connects as; its password is never "
	    "written in a file:\n"
	    "--    ALTER USER '%s'@'%%' IDENTIFIED BY '...';\n"
	    "CREATE USER IF NOT EXISTS '%s'@'%%';\n", cfg->path,
	    cfg->server_id, role, role);
	for (i = 0; i < cfg->nsyncs; i++) {
		for (seen = 0, k = 0; k < i; k++)
			seen |= strcmp(cfg->syncs[k].rel, cfg->syncs[i].rel) == 0;
		if (seen)
			continue;
		sbuf_adds(b, "GRANT SELECT ON ");
		myconn_ident(b, cfg->syncs[i].schema);
		sbuf_addc(b, '.');
		myconn_ident(b, cfg->syncs[i].table);
		sbuf_addf(b, " TO '%s'@'%%';\n", role);
	}
	/* what collections read: the load's statements and the capture's
	 * re-reads */
	nnest = config_nest_tables(cfg, &nest);
	for (i = 0; i < nnest; i++) {
		dot = strchr(nest[i], '.');
		db = xstrndup(nest[i], (size_t)(dot - nest[i]));
		sbuf_adds(b, "GRANT SELECT ON ");
		myconn_ident(b, db);
		sbuf_addc(b, '.');
		myconn_ident(b, dot + 1);
		sbuf_addf(b, " TO '%s'@'%%';\n", role);
		free(db);
	}
	free(nest);
	sbuf_addf(b, "-- REPLICATION CLIENT is called BINLOG MONITOR on MariaDB "
	    "10.5 and later\nGRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* "
	    "TO '%s'@'%%';\n", role);
}

/* the url's user and database, when its variable is set (never its
 * password) */
static void
from_url(const struct config *cfg, char *user, size_t ulen, char *db,
    size_t dlen)
{
	const char *url = cfg->source_url_env ? getenv(cfg->source_url_env) :
	    cfg->source_url;
	PQconninfoOption *o, *all;
	struct my_url u;
	char err[128];

	if (url == NULL || *url == '\0')
		return;
	if (cfg->source_kind == SOURCE_MYSQL) {
		if (my_url_parse(url, &u, err, sizeof(err)) == 0) {
			snprintf(user, ulen, "%s", u.user ? u.user : "");
			my_url_release(&u);
		}
		return;
	}
	if ((all = PQconninfoParse(url, NULL)) == NULL)
		return;
	for (o = all; o->keyword; o++) {
		if (strcmp(o->keyword, "user") == 0 && o->val)
			snprintf(user, ulen, "%s", o->val);
		if (strcmp(o->keyword, "dbname") == 0 && o->val)
			snprintf(db, dlen, "%s", o->val);
	}
	PQconninfoFree(all);
}

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *role = NULL;
	struct config cfg;
	struct sbuf b = SBUF_INIT;
	char user[128] = "", db[128] = "";
	const char *p;
	int ch, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else
			role = arg;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if ((rc = cli_config(path, CONFIG_SECRETS_NONE, &cfg)) != 0)
		return rc;
	from_url(&cfg, user, sizeof(user), db, sizeof(db));
	if (role == NULL)
		role = user[0] ? user : "pg2osync";
	/* the role is written into SQL: a name, not an expression */
	for (p = role; *p; p++)
		if (!(*p == '_' || *p == '-' || *p == '.' ||
		    (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9'))) {
			config_release(&cfg);
			return cli_usage(v, "--role '%s': letters, digits, '_', "
			    "'-' and '.' only", role);
		}
	if (cfg.source_kind == SOURCE_MYSQL)
		my_script(&b, &cfg, role);
	else
		pg_script(&b, &cfg, role, db[0] ? db : NULL);
	fputs(b.buf, stdout);
	sbuf_release(&b);
	config_release(&cfg);
	return P2O_EXIT_OK;
}

const struct verb verb_setup_sql = {
	.name = "setup-sql",
	.summary = "print the SQL a DBA runs for this configuration "
	    "(offline)",
	.synopsis = "[-c FILE] [--role NAME]",
	.about = "Prints the script that prepares the source for this "
	    "configuration, without connecting anywhere. PostgreSQL: "
	    "wal_level = logical (and its restart, with the managed services' "
	    "names for it), the role with LOGIN REPLICATION, CONNECT, USAGE "
	    "and SELECT grants, REPLICA IDENTITY FULL where a section reads "
	    "columns a before-image must carry and the key does not, the "
	    "publication with publish_via_partition_root (and "
	    "<publication>_append for append-only tables without a replica "
	    "identity). MySQL and MariaDB: the my.cnf block, the settings for "
	    "the running server, the user and its grants. No password is "
	    "written; the script says how to set one.",
	.opts = opts,
	.exits = "  0   printed\n  64  bad command line\n  78  invalid "
	    "configuration\n",
	.run = run,
};
