/*
 * pgserver.h - a PostgreSQL server's side of the pipeline, with one owner:
 * what the server says about itself and its replication state (the
 * settings logical decoding needs, the role, every replication slot and
 * what it retains, a publication and the tables in it, the WAL position
 * now), the contract a pipeline needs it to keep, judged as a list of
 * checks, and the only statements that create, change or drop what the
 * contract names (a publication, a slot).
 *
 * pgserver.c answers and writes; pgcontract.c judges. The contract is
 * judged in three parts, each a list of checks over what was read (struct
 * pgsrv_contract), each yielding verdicts
 * (source_ops.h): the server and the role; each publication the
 * configuration's tables go in, by the one placement rule (pgcat.h's
 * pgcat_in_append); the slot. capture-pg refuses at the first failure,
 * validate reports every verdict, bootstrap and a reload apply what they
 * may, setup-sql prints the same statements for a DBA. Never exits.
 */
#ifndef PGSERVER_H
#define PGSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "source_ops.h"

struct config;
struct pg_conn;
struct pgcat_table;
struct sbuf;

/* the server and the role the connection runs as */
struct pgsrv_facts {
	int	 version;		/* PQserverVersion: 150020 */
	char	 version_text[64];	/* server_version: "15.20 (Debian …)" */
	char	 wal_level[32];
	char	 role[128];
	char	 db[128];
	int	 replication;		/* rolreplication */
	int	 superuser;		/* rolsuper */
	int	 db_create;		/* CREATE on the database (publications) */
	int	 in_recovery;		/* a standby */
	int	 max_slots, used_slots;	/* max_replication_slots, and in use */
	int	 max_senders;		/* max_wal_senders */
	/* a managed service the settings say this is: "rds", "aurora",
	 * "cloudsql", "supabase", "azure" or "" */
	char	 managed[16];
	/* PostgreSQL 17 on: synchronized_standby_slots, the physical slots
	 * a failover slot's changes wait for, and those of them this server
	 * has no physical slot of, or one no standby streams from now
	 * (", "-separated; "" none) */
	char	 standby_slots[512];
	char	 standby_missing[512];
	char	 standby_idle[512];
};

/* one replication slot (pg_replication_slots) */
struct pgsrv_slot {
	char	*name, *plugin, *database;
	char	*wal_status;		/* "reserved" … "lost"; "" before 13 */
	int	 logical;		/* 0: a physical slot */
	int	 active, temporary;
	int	 active_pid;		/* 0 when none */
	int	 has_retained;		/* restart_lsn is known */
	int64_t	 retained;		/* bytes of WAL from restart_lsn to now */
	int	 has_safe;		/* safe_wal_size is not NULL */
	int64_t	 safe_wal_size;		/* bytes before it would be lost; may
					 * be negative once it is unreserved */
	uint64_t confirmed;		/* confirmed_flush_lsn, 0 none */
	int	 has_lag_s;		/* the walsender reports a flush lag */
	double	 lag_s;			/* pg_stat_replication.flush_lag */
	int	 failover;		/* PostgreSQL 17 on: a standby running
					 * sync_replication_slots keeps a copy */
	int	 synced;		/* a standby's copy of a primary's slot */
};

/* a table a publication carries */
struct pgsrv_member {
	uint32_t oid;
	char	*qname;			/* "schema.table" */
};

struct pgsrv_pub {
	int	 exists;
	int	 ins, upd, del, trunc;	/* what it publishes */
	int	 via_root;		/* publish_via_partition_root */
	int	 all_tables;		/* FOR ALL TABLES */
	int	 nmembers;
	struct pgsrv_member *members;	/* pg_publication_tables */
};

/* a publication's name with "_append": the configuration keeps a name
 * within 63 bytes */
#define PGSRV_PUB_MAX	80

enum pgsrv_which {
	PGSRV_MAIN,		/* <publication>: inserts, updates, deletes */
	PGSRV_APPEND,		/* <publication>_append: inserts and
				 * truncates of tables without a replica
				 * identity */
};

/*
 * What the contract is judged on, read by the pgsrv_read_* functions in
 * the order the judges want it: the facts, then (the caller describing
 * the tables with pgcat_describe) the placement and the publications,
 * then the slot.
 */
struct pgsrv_contract {
	const struct config *cfg;
	struct pgsrv_facts facts;
	/* one per sync section, described by the caller; usable[i] 0 when
	 * its table could not be described or its own checks failed (it is
	 * left out of the publications' checks) */
	struct pgcat_table *tables;
	int	*usable;
	/* the placement (pgsrv_place): per section, where it goes */
	int	*append;
	int	 nappend;
	/* the tables collections read ("schema.table"): in <publication> */
	const char **nest;
	int	 nnest;
	char	 pubname[2][PGSRV_PUB_MAX];
	struct pgsrv_pub pub[2];	/* pgsrv_read_pub */
	int	 may_create[2];		/* absent: the role may create it */
	int	 slot_found;		/* pgsrv_read_slot */
	struct pgsrv_slot slot;
};

/* pgserver.c */

/* 0, or -1 with err */
int	pgsrv_facts(struct pg_conn *, struct pgsrv_facts *, struct p2o_err *);
/* the WAL position now (the insert position; on a standby the last one
 * received): 0, or -1 with err */
int	pgsrv_wal_now(struct pg_conn *, uint64_t *lsn, struct p2o_err *);
/* every slot, by name, with the WAL position now they were measured
 * against (one statement): 0 with *v (pgsrv_slots_free) and *n, or -1 */
int	pgsrv_slots(struct pg_conn *, struct pgsrv_slot **v, int *n,
	    uint64_t *now, struct p2o_err *);
void	pgsrv_slots_free(struct pgsrv_slot *, int n);
/* the slot named name, by the same statement: 0 with *found and, when
 * found, *s (pgsrv_slot_release), or -1 with err */
int	pgsrv_slot_get(struct pg_conn *, const char *name, struct pgsrv_slot *,
	    int *found, struct p2o_err *);
void	pgsrv_slot_release(struct pgsrv_slot *);
/* the slot named name among v, or NULL */
const struct pgsrv_slot *pgsrv_slot_find(const struct pgsrv_slot *, int n,
	    const char *name);
/* the statement that drops slot name, for an operator to run */
void	pgsrv_drop_slot_sql(struct sbuf *, const char *name);
/* the publication named name (exists 0 when there is none) and its
 * tables: 0 (pgsrv_pub_release) or -1 */
int	pgsrv_publication(struct pg_conn *, const char *name,
	    struct pgsrv_pub *, struct p2o_err *);
void	pgsrv_pub_release(struct pgsrv_pub *);
/* 1 when the publication carries the table oid / "schema.table" */
int	pgsrv_pub_has(const struct pgsrv_pub *, uint32_t oid);
int	pgsrv_pub_has_name(const struct pgsrv_pub *, const char *qname);
/* "<publication>_append" */
void	pgsrv_append_name(const char *pub, char *buf, size_t len);
/*
 * 0 when the server compiles "SELECT 1 FROM rel WHERE (cond) LIMIT 0",
 * 1 when it refuses it (its words in why), -1 when the question could not
 * be asked (err). Reads no row. qrel is the quoted "schema"."table".
 */
int	pgsrv_where_compiles(struct pg_conn *, const char *qrel,
	    const char *cond, char *why, size_t whylen, struct p2o_err *);
/* the position of a logical message written now (non-transactional: no
 * table is touched and no transaction held), as text: a position a
 * capture reaches even on a quiet server. 0, or -1 with err */
int	pgsrv_mark(struct pg_conn *, struct sbuf *text, struct p2o_err *);

/* "schema"."table" of a "schema.table" name, quoted for SQL */
void	pgsrv_qname_sql(struct sbuf *, const char *qname);
/* the one CREATE PUBLICATION, in parts for a script that lists the
 * tables on the server (setup-sql): its head, then when there are tables
 * " FOR TABLE " and them, then its options - via the partition root, and
 * for <publication>_append inserts and truncates only (its tables lack a
 * replica identity: an UPDATE of them must keep working) */
void	pgsrv_create_pub_head(struct sbuf *, const char *name);
const char *pgsrv_pub_options(enum pgsrv_which);
/* the one ALTER PUBLICATION ... ADD TABLE / DROP TABLE ("schema.table") */
void	pgsrv_add_table_sql(struct sbuf *, const char *pub, const char *qname);
void	pgsrv_drop_table_sql(struct sbuf *, const char *pub,
	    const char *qname);
/* the ALTER PUBLICATION that makes it publish what publication which must */
void	pgsrv_set_publish_sql(struct sbuf *, const char *pub,
	    enum pgsrv_which which);
/* the statement that creates slot name, for an operator to run */
void	pgsrv_create_slot_sql(struct sbuf *, const char *name, int failover);
/* the only writes: a logical pgoutput slot (with failover: marked so,
 * PostgreSQL 17 on; its consistent point in *lsn), and dropping a slot
 * or a publication. 0 or -1 with err */
int	pgsrv_create_slot(struct pg_conn *, const char *name, int failover,
	    uint64_t *lsn, struct p2o_err *);
int	pgsrv_drop_slot(struct pg_conn *, const char *name, struct p2o_err *);
int	pgsrv_drop_pub(struct pg_conn *, const char *name, struct p2o_err *);
/* the statements a reload's checks gathered (verdicts with apply), one
 * a line: each run; done lists them. 0 or -1 with err */
int	pgsrv_apply(struct pg_conn *, const char *lines, struct sbuf *done,
	    struct p2o_err *);

/* pgcontract.c: what was read, judged */
void	pgsrv_contract_init(struct pgsrv_contract *, const struct config *);
void	pgsrv_contract_release(struct pgsrv_contract *);
/* the catalogue's descriptions of the tables let go (k->tables NULL),
 * the verdicts kept: a stream without collections to read needs no more */
void	pgsrv_contract_forget_tables(struct pgsrv_contract *);
/* the server and the role (k->facts, read first): wal_level, a standby
 * before PostgreSQL 16, max_wal_senders, REPLICATION or SUPERUSER */
int	pgsrv_judge_server(const struct pgsrv_facts *, source_emit, void *);
/* every usable table in <publication> or <publication>_append, by
 * pgcat_in_append */
void	pgsrv_place(struct pgsrv_contract *);
/* one publication as it is, and when it is absent whether the role may
 * create it: 0 or -1 with err */
int	pgsrv_read_pub(struct pg_conn *, struct pgsrv_contract *,
	    enum pgsrv_which, struct p2o_err *);
/* one publication: it exists (or may be created), publishes what it
 * must, carries each table placed in it (their inheritance children, and
 * in <publication> the tables collections read) and no table placed in
 * the other */
int	pgsrv_judge_pub(const struct pgsrv_contract *, enum pgsrv_which,
	    source_emit, void *);
/* for a failover slot on a primary of PostgreSQL 17 on, the standby
 * slots its changes wait for (synchronized_standby_slots), each a physical
 * slot of this server; nothing emitted otherwise */
int	pgsrv_judge_standby(const struct pgsrv_contract *, source_emit, void *);
/* the configured slot as it is (k->slot_found, k->slot): 0 or -1 */
int	pgsrv_read_slot(struct pg_conn *, struct pgsrv_contract *,
	    struct p2o_err *);
/* the slot: logical, pgoutput, of this database, not lost (or absent,
 * and the role may create it), marked failover when the configuration
 * says so; then, for a failover slot, the standby slots its changes wait
 * for (synchronized_standby_slots): each a physical slot of this server
 * (a promoted standby keeps the setting its base backup copied, and
 * decoding stalls on a slot it lacks) */
int	pgsrv_judge_slot(const struct pgsrv_contract *, source_emit, void *);

/* the whole CREATE PUBLICATION for the tables placed in it now, and
 * running it: the only write here. 0 or -1 with err */
void	pgsrv_create_pub_sql(struct sbuf *, const struct pgsrv_contract *,
	    enum pgsrv_which);
int	pgsrv_create_pub(struct pg_conn *, const struct pgsrv_contract *,
	    enum pgsrv_which, struct p2o_err *);

#endif
