/*
 * pgserver.h - what a PostgreSQL server says about itself and its
 * replication state, for the programs that look before or beside the
 * stream (the pg2osync command's validate, status and bootstrap, and
 * capture-pg's slot watch): the settings logical decoding needs, the
 * role's attributes, every replication slot and what it retains, a
 * publication and the tables in it, the WAL position now.
 *
 * Every question here reads the catalogue or a statistics view: nothing
 * here writes, creates or drops (the one exception is named as such:
 * pgsrv_create_publication, pgsrv_create_slot, pgsrv_drop_slot, for
 * bootstrap and drop-slot).
 * Never exits.
 */
#ifndef PGSERVER_H
#define PGSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct pg_conn;
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
};

struct pgsrv_pub {
	int	 exists;
	int	 ins, upd, del, trunc;	/* what it publishes */
	int	 via_root;		/* publish_via_partition_root */
	int	 all_tables;		/* FOR ALL TABLES */
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
/* the slot named name among v, or NULL */
const struct pgsrv_slot *pgsrv_slot_find(const struct pgsrv_slot *, int n,
	    const char *name);
/* the publication named name (exists 0 when there is none): 0 or -1 */
int	pgsrv_publication(struct pg_conn *, const char *name,
	    struct pgsrv_pub *, struct p2o_err *);
/* 1 when publication pub holds the table oid, 0 not, -1 with err */
int	pgsrv_publishes(struct pg_conn *, const char *pub, uint32_t oid,
	    struct p2o_err *);
/* 1 when the role may add the table to a publication (it owns it, or is
 * a superuser), 0 not, -1 with err */
int	pgsrv_owns(struct pg_conn *, uint32_t oid, struct p2o_err *);
/*
 * 0 when the server compiles "SELECT 1 FROM rel WHERE (cond) LIMIT 0",
 * 1 when it refuses it (its words in why), -1 when the question could not
 * be asked (err). Reads no row. qrel is the quoted "schema"."table".
 */
int	pgsrv_where_compiles(struct pg_conn *, const char *qrel,
	    const char *cond, char *why, size_t whylen, struct p2o_err *);

/* the only writes: a publication of the tables rels (quoted
 * "schema"."table" each), publishing via the partition root, and for an
 * append publication inserts and truncates only (its tables lack a
 * replica identity: an UPDATE of them must keep working) - the statement
 * capture-pg's slot.c makes at a first start; a logical pgoutput slot (its consistent point in
 * *lsn), and dropping one that nothing streams from. 0 or -1 with err */
int	pgsrv_create_publication(struct pg_conn *, const char *name,
	    const char *const *rels, int n, int append, struct p2o_err *);
int	pgsrv_create_slot(struct pg_conn *, const char *name, uint64_t *lsn,
	    struct p2o_err *);
int	pgsrv_drop_slot(struct pg_conn *, const char *name, struct p2o_err *);

#endif
