/*
 * source_ops.h - what a kind of source does against its server, behind one
 * table of operations (beside the light facts of lib/source.h), as
 * lib/target.h is for the search engines: the catalogue init reads, and
 * what the pg2osync command and the supervisor do to the server.
 * Implemented in lib/pg (pgsource.c) and lib/mysql (mysource.c); found
 * from the configuration's kind. Kept apart from source.h so that a
 * program that never connects to a source (the shaper, the writer, ckpt)
 * links no database client. The callers (cli's verbs, the supervisor's
 * reload and its /synced helper) parse options and print; the SQL, the
 * catalogue and the connections stay in lib/pg and lib/mysql.
 *
 * A kind's server contract - what the server must provide for a pipeline
 * to stream from it - is a list of checks kept as data in that kind's
 * lib/pg/pgcontract.c or lib/mysql/myserver.c. Each check yields verdicts
 * (struct source_verdict), and each program takes them its way: a capture
 * refuses at the first failure (source_refuse), `pg2osync validate`
 * reports every one (validate/check.h), bootstrap and a reload apply what
 * they can, setup-sql prints what a DBA runs.
 */
#ifndef SOURCE_OPS_H
#define SOURCE_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "source_cat.h"

struct check_report;
struct config;
struct sbuf;

enum source_verdict_kind {
	SV_OK,		/* the server provides it */
	SV_NOTE,	/* it passes, with a caveat the text says */
	SV_ABSENT,	/* not there yet, and whoever applies the contract
			 * (the capture at its first start, bootstrap) may
			 * create it */
	SV_FAIL,	/* refused: nothing may stream until it is fixed */
};

#define SOURCE_REMEDY_MAX	1024

/* one verdict of a source's contract */
struct source_verdict {
	enum source_verdict_kind kind;
	int	 code;		/* SV_FAIL: its exit class (lib/p2o.h) */
	/* what it is about when the text does not name it ("source": the
	 * server or the role), else NULL */
	const char *subject;
	char	 text[P2O_ERR_MAX];	/* the whole sentence, a failure with
					 * what fixes it */
	/* what fixes it on its own: the SQL or the setting ("" none) */
	char	 remedy[SOURCE_REMEDY_MAX];
	/* the remedy is SQL a reload may run itself (a table added to a
	 * publication), once every check has passed */
	int	 apply;
};

/* how a program takes each verdict: 0 goes on with the list, nonzero
 * stops it (the judge returns that value) */
typedef int (*source_emit)(void *arg, const struct source_verdict *);

/* what `pg2osync status` shows of one slot the server keeps (a source
 * without slots shows none) */
struct source_slot {
	char	*name;
	const char *type;	/* "logical", "physical" */
	int	 active, configured;
	int	 has_retained;
	int64_t	 retained;	/* bytes of WAL it keeps */
	int	 has_safe;
	int64_t	 safe;		/* bytes before it would be lost */
	char	*wal_status;	/* "" when the server does not say */
	int	 has_lag_s;	/* its reader reports a flush lag */
	double	 lag_s;
	/* "configured", "lost", "orphan" (inactive, of no configuration,
	 * retaining WAL) or "other" */
	const char *verdict;
	int	 failover;	/* a standby keeps a copy (PostgreSQL 17 on) */
	int	 synced;	/* a standby's copy of its primary's slot */
	char	*drop;		/* the statement that drops it */
};

/* what `pg2osync status` shows of the source now: facts, which
 * cli/status.c alone renders */
struct source_status {
	const char *kind;	/* the module's kind: --json's "source" */
	const char *mode;	/* --json's "mode" when not a stream: "poll" */
	char	 engine[16];	/* "PostgreSQL", "MySQL", "MariaDB" */
	char	 where[1200];	/* the rest of its line: "WAL at 0/3000148" */
	char	 pos_text[600];	/* the position now, as a checkpoint says it */
	int	 has_pos;	/* pos is the position as a number too */
	uint64_t pos;
	/* the slots the server keeps (has_slots: a kind that has them) */
	int	 has_slots;
	int	 nslots;
	struct source_slot *slots;
	const struct source_slot *mine;	/* the configured one, or NULL */
	/* what the server does to the stream beyond its numbers, as the
	 * contract judges it (PostgreSQL: the standby slots a failover slot
	 * waits for); has_standby 0 when there is nothing to say */
	int	 has_standby;
	struct source_verdict standby;
	/* the tables are read in rounds, no initial load (poll mode): no
	 * load to show, each table's cursor and the last round instead
	 * (struct source_ckpt) */
	int	 rounds;
	void	*priv;		/* the kind's own (files, coordinates) */
	void	(*priv_free)(void *);
};

/* one table a source reads again in rounds (poll mode): its cursor as the
 * checkpoint stores it, against the rows the table holds */
struct source_table {
	char	*table;		/* "public.items" */
	int	 ncur;
	char	**by;		/* the cursor's columns: poll column, key */
	char	**at;		/* their values in the checkpoint, as text;
				 * NULL: none (read from its first row) */
	int64_t	 behind;	/* rows after the cursor, at most ... */
	int	 capped;	/* ... the cap: at least behind */
	int	 reached;	/* no row the table held at the call is
				 * after the cursor */
	int	 judged;	/* behind and reached were measured; 0: no
				 * checkpoint is stored yet, only the table
				 * and its cursor's columns are known */
};

/* a stored checkpoint judged against the source now */
struct source_ckpt {
	int	 parsed;	/* the text is a position of this source */
	int	 reached;	/* at or past the position now */
	int64_t	 lag_bytes;	/* -1 unknown */
	int	 has_lag_s;
	double	 lag_s;
	/* what the stream resumes from, when the source can lose it
	 * ("binlog file 'b.000003'"), and whether it is gone */
	char	 resume[600];
	char	 resume_file[512];
	int	 gone;
	/* a source read in rounds (source_status.rounds): each table, and
	 * the last round the checkpoint names (has_round) */
	int	 ntables;
	struct source_table *tables;
	int	 has_round;
	long long round_end_ms;	/* when it ended, ms since the epoch */
	double	 round_age_s;	/* how long ago, at the judgement */
	double	 round_took_s;	/* how long it read */
	uint64_t round_rows;	/* the rows it sent */
	int	 interval_s;	/* the rounds' period */
	int	 round_late;	/* the round after it is overdue */
};

struct source_ops {
	/* what messages call a source of it: "a MySQL source" */
	const char *what;
	/* init: the tables the role may read, those named chosen, their
	 * fields by mo (NULL: none): 0, 1 a name is not eligible (why in
	 * err), -1 with err */
	int	(*catalogue)(const struct config *, const char *const *want,
		    int n, const struct mapping_opts *mo, struct source_cat *,
		    struct p2o_err *);
	/* pg2osync validate's lines for the source: the connection, the
	 * contract, the tables; a reload's too, which then sets
	 * report->applies (validate/check.h) */
	void	(*validate)(struct check_report *, const struct config *);
	/* what a reload applies once all its checks passed: the lines its
	 * checks put in report->applies. done gets what was done, for the
	 * reload's verdict. 0, or -1 with err. NULL: a reload applies
	 * nothing to this source */
	int	(*reload_apply)(const struct config *, const char *applies,
		    struct sbuf *done, struct p2o_err *);
	/* the url's user when its variable is set, else "" (never a
	 * password): setup-sql's role */
	void	(*url_user)(const struct config *, char *user, size_t len);
	/* the script a DBA runs for this configuration, connecting
	 * nowhere; role is checked to be a plain name */
	void	(*setup_sql)(struct sbuf *, const struct config *,
		    const char *role);
	/* the source's part of pg2osync bootstrap: what the first start
	 * would create, each line said on out. 0, or -1 with err */
	int	(*bootstrap)(const struct config *, FILE *out, struct p2o_err *);
	/* pg2osync drop-slot: the slot (and with publications, those the
	 * configuration names); lines on out. 0, 1 refused because a
	 * reader streams from it (why says so), -1 with err. NULL: the
	 * server keeps no slot for a reader */
	int	(*drop_stream)(const struct config *, int publications,
		    FILE *out, char *why, size_t whylen, struct p2o_err *);
	/* pg2osync status: the source now (source_status_release); 0, or
	 * -1 with err */
	int	(*status)(const struct config *, struct source_status *,
		    struct p2o_err *);
	/* a stored checkpoint (its text and number) against st, into a
	 * struct source_ckpt (source_ckpt_release): 0, or -1 with err (a
	 * kind that asks its server again, through st). text NULL: none
	 * is stored yet; a source read in rounds still lists the tables
	 * its configuration names, their cursors none yet and unjudged */
	int	(*status_ckpt)(const struct source_status *, const char *text,
		    uint64_t pos, struct source_ckpt *, struct p2o_err *);
	/* 1 when a reader streams from the source now (why says what was
	 * seen), 0 not, -1 with err. NULL: the server keeps nothing that
	 * shows a reader (poll mode); the caller asks the supervisor */
	int	(*stream_live)(const struct config *, char *why, size_t len,
		    struct p2o_err *);
	/*
	 * The source's position now as a checkpoint's text, one the
	 * capture is sure to reach even on a quiet server. *conn keeps the
	 * connection between calls (NULL at first; pos_close ends it); on
	 * -1 (err) it is closed, and the next call connects afresh.
	 */
	int	(*pos_now)(const struct config *, void **conn, struct sbuf *text,
		    struct p2o_err *);
	void	(*pos_close)(void *conn);
};

/* source_kinds.c */

/* the operations of cf's kind of source */
const struct source_ops *source_ops_of(const struct config *);

/* source_ops.c */

/* a capture's and bootstrap's way with a verdict (arg: a struct
 * p2o_err): the first failure becomes the error, with its exit class,
 * and stops the list; a note is logged as a warning, the rest at debug */
int	source_refuse(void *err, const struct source_verdict *);
/* fills a verdict: kind, code (SV_FAIL), subject, the text; the remedy
 * and apply are left empty */
void	source_verdict_set(struct source_verdict *, enum source_verdict_kind,
	    int code, const char *subject, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
void	source_status_release(struct source_status *);
void	source_ckpt_release(struct source_ckpt *);

/* pgsource.c */
extern const struct source_ops pgsource_ops;
/* PostgreSQL in poll mode (source.mode: poll): no slot, no publication */
extern const struct source_ops pgpoll_ops;

/* mysource.c */
extern const struct source_ops mysource_ops;

#endif
