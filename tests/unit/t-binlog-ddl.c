/*
 * t-binlog-ddl.c - capture-mysql's reading of a QUERY event's SQL
 * (ddl.c): BEGIN, COMMIT and ROLLBACK alone, XA, and the statements that
 * change tables - TRUNCATE, DROP, ALTER, RENAME, CREATE - with the
 * tables they name, in the forms the servers write them to the binlog:
 * any letter case, comments before and between the words, `quoted`
 * names with doubled backquotes, a bare name in the event's default
 * database. What it does not recognise is another statement, never an
 * error.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "../../capture-mysql/binlog.h"

static struct ddl d;

static const char *const verbs[] = {
	"OTHER", "BEGIN", "COMMIT", "XA", "TRUNCATE", "DROP", "ALTER",
	"RENAME", "CREATE",
};

/* "VERB db.name db.name ...", a RENAME's pairs as "a>b" ("-" for a to
 * that is no name), for sql read with default database db */
static const char *
reads(const char *sql, const char *db)
{
	static char out[512];
	const char *p, *q;
	size_t n, m, at;
	int i;

	ddl_read(&d, sql, strlen(sql), db, strlen(db));
	at = (size_t)snprintf(out, sizeof(out), "%s", verbs[d.verb]);
	for (i = 0; i < d.n && at < sizeof(out); i++) {
		p = ddl_db(&d, i, &n);
		q = ddl_name(&d, i, &m);
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s",
		    d.verb == DDL_RENAME && i % 2 ? ">" : " ");
		if (!d.t[i].named)
			at += (size_t)snprintf(out + at, sizeof(out) - at, "-");
		else
			at += (size_t)snprintf(out + at, sizeof(out) - at,
			    "%.*s.%.*s", (int)n, p, (int)m, q);
	}
	return out;
}

int
main(void)
{
	ddl_init(&d);

	/* a transaction's bounds: the word alone */
	is_str(reads("BEGIN", "p2o"), "BEGIN", "BEGIN");
	is_str(reads("/* c */ begin ;", "p2o"), "BEGIN",
	    "begin after a comment, before a ';'");
	is_str(reads("BEGIN WORK", "p2o"), "OTHER",
	    "BEGIN with more words is no transaction's start");
	is_str(reads("BEGIN NOT ATOMIC SELECT 1; END", "p2o"), "OTHER",
	    "nor MariaDB's compound statement");
	is_str(reads("COMMIT", "p2o"), "COMMIT", "COMMIT");
	is_str(reads("rollback -- why\n", "p2o"), "COMMIT",
	    "ROLLBACK ends a transaction too, a comment after it");
	is_str(reads("COMMIT AND CHAIN", "p2o"), "OTHER",
	    "COMMIT with more words is another statement");
	is_str(reads("XA END X'31',X'',1", "p2o"), "XA", "XA END");
	is_str(reads("xa commit X'31'", "p2o"), "XA", "xa commit");

	/* TRUNCATE */
	is_str(reads("/* x */ TRUNCATE TABLE `every`", "p2o"),
	    "TRUNCATE p2o.every", "TRUNCATE TABLE `t`: the default database");
	is_str(reads("truncate t2", "p2o"), "TRUNCATE p2o.t2",
	    "TRUNCATE without TABLE");
	is_str(reads("TRUNCATE `a``b`.`c d`", "p2o"), "TRUNCATE a`b.c d",
	    "quoted names: a doubled backquote, a blank");
	is_str(reads("TRUNCATE t", ""), "TRUNCATE .t",
	    "a bare name without a default database");
	is_str(reads("TRUNCATE `unended", "p2o"), "TRUNCATE",
	    "a quoted name without its end names nothing");
	is_str(reads("TRUNCATEX t", "p2o"), "OTHER",
	    "a word is whole: TRUNCATEX is not TRUNCATE");

	/* DROP */
	is_str(reads("DROP TABLE IF EXISTS `p2o`.`x`, `every` /* generated "
	    "by server */", "p2o"), "DROP p2o.x p2o.every",
	    "DROP TABLE IF EXISTS of two, as the server writes it");
	is_str(reads("drop temporary tables a ,b,c.d", "p2o"),
	    "DROP p2o.a p2o.b c.d", "DROP TEMPORARY TABLES of three");
	is_str(reads("DROP TABLE caf\xc3\xa9, `t`", "p2o"),
	    "DROP p2o.caf\xc3\xa9 p2o.t", "a bare name in UTF-8");
	is_str(reads("DROP TABLE a, 'b'", "p2o"), "DROP p2o.a",
	    "the list ends at what is no name");
	is_str(reads("DROP INDEX i ON t", "p2o"), "OTHER",
	    "DROP INDEX is no table's");
	is_str(reads("DROP DATABASE p2o", "p2o"), "OTHER", "nor DROP DATABASE");

	/* ALTER */
	is_str(reads("ALTER TABLE p2o.every ADD COLUMN added int", "p2o"),
	    "ALTER p2o.every", "ALTER TABLE db.t");
	is_str(reads("alter online ignore table `t` drop x", "x"),
	    "ALTER x.t", "ALTER ONLINE IGNORE TABLE");
	is_str(reads("ALTER TABLE a . b ADD x int", "p2o"), "ALTER a.b",
	    "blanks around the dot");
	is_str(reads("ALTER TABLE a.", "p2o"), "ALTER",
	    "a database without its table names nothing");
	is_str(reads("ALTER VIEW v AS SELECT 1", "p2o"), "OTHER",
	    "ALTER VIEW is no table's");

	/* RENAME */
	is_str(reads("RENAME TABLE a TO b, c.d TO `e`", "p2o"),
	    "RENAME p2o.a>p2o.b c.d>p2o.e", "RENAME TABLE of two pairs");
	is_str(reads("rename tables `a` to a_old", "p2o"),
	    "RENAME p2o.a>p2o.a_old", "rename tables, lower case");
	is_str(reads("RENAME TABLE a", "p2o"), "RENAME",
	    "a from without TO is left out");
	is_str(reads("RENAME TABLE a TO 'b'", "p2o"), "RENAME p2o.a>-",
	    "a to that is no name keeps its from");
	is_str(reads("RENAME USER x TO y", "p2o"), "OTHER",
	    "RENAME USER is no table's");

	/* CREATE */
	is_str(reads("CREATE OR REPLACE TEMPORARY TABLE IF NOT EXISTS t "
	    "(id int)", "p2o"), "CREATE p2o.t", "CREATE with every option");
	is_str(reads("create table x.y like z", "p2o"), "CREATE x.y",
	    "CREATE TABLE ... LIKE names the new table only");
	is_str(reads("CREATE INDEX i ON t (a)", "p2o"), "OTHER",
	    "CREATE INDEX is no table's");

	/* comments and other statements */
	is_str(reads("# TRUNCATE t\nSELECT 1", "p2o"), "OTHER",
	    "a statement commented out is not read");
	is_str(reads("-- x\n\t TRUNCATE t", "p2o"), "TRUNCATE p2o.t",
	    "a line comment and blanks before the statement");
	is_str(reads("/* TRUNCATE t", "p2o"), "OTHER",
	    "a comment without its end hides the rest");
	is_str(reads("", "p2o"), "OTHER", "an empty statement");
	is_str(reads("INSERT INTO t VALUES (1)", "p2o"), "OTHER",
	    "INSERT is another statement");

	/* one struct read again and again keeps no earlier names */
	reads("DROP TABLE a, b, c, d, e, f, g, h, i, j", "p2o");
	is_str(reads("TRUNCATE z", "q"), "TRUNCATE q.z",
	    "a second read forgets the first's ten tables");
	ddl_release(&d);
	return done_testing();
}
