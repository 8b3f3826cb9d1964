/*
 * postgres.h - what the files of the PostgreSQL target module share;
 * internal to lib/target/postgres*.c. Everyone else reaches the module
 * through its table (target_postgres, lib/target.h).
 *
 * The module is no HTTP client: the writer's and ckpt's requests are
 * answered in-process (lib/http.h's struct http_local) by
 * postgres_exec.c, on one libpq connection per client, and the requests
 * are the module's own, built and read back here:
 *
 *   GET  /probe            the server's version and pgvector's
 *   POST /create/<table>   the table made from its DDL (the body) if missing
 *   POST /bulk             entries (encode) in one transaction
 *   POST /read             stored rows as documents (TOAST completion)
 *   POST /clear            {"t":..,"f":..,"val":..,"v":N}: a truncate
 *   POST /rejects/...      the quarantine (postgres_rejects.c)
 *
 * An answer is a status (200, 201 created, 404 no such table, 400 refused,
 * 401 credentials, 503 try again) and a JSON body; a lost connection is a
 * transport error, as an unreachable HTTP server is.
 */
#ifndef TARGET_POSTGRES_H
#define TARGET_POSTGRES_H

#include "target.h"

/* the module's own tables, in the url's database */
#define PGT_STATE_TABLE		"pg2osync_state"
#define PGT_REJECTS_TABLE	"pg2osync_rejects"
/* the column every target table has: the version of its row */
#define PGT_VERSION_COL		"_version"

/* the oldest server the module's statements run on (ON CONFLICT with a
 * WHERE on the existing row, to_regclass on text) */
#define PGT_MIN_VERSION_NUM	110000

struct pg_conn;
struct pgt_table;

/* one connection and what it learned of the tables it wrote */
struct pgt_session {
	struct pg_conn *pg;
	struct pgt_table *tables;
	int	 ntables, captables;
	uint64_t requests;	/* writes answered, to tell a table read in
				 * this one from one read before */
};

/* postgres.c */
/* "<schema>"."<table>" (or "<table>") of an index name, quoted */
void	pgt_put_table(struct sbuf *out, const char *index);
/* the "error" of an answer's body, else an excerpt */
void	pgt_error_text(const char *body, size_t len, char *out, size_t outlen);
/* the class of an answer's status: TA_OK (2xx), TA_AUTH, TA_RETRY, or
 * TA_REFUSED */
enum target_answer pgt_status_class(long status);

/* postgres_exec.c */
extern const struct http_local pgt_transport;
/* the session of a blocking connection, opened at its first use: NULL
 * with err (75 unreachable, 77 credentials, 78 a url libpq refuses) */
struct pgt_session *pgt_session_of(struct target_conn *, struct p2o_err *);
/* after a failed statement whose connection is gone: closed, so that
 * the next use opens another */
void	pgt_session_check(struct target_conn *);

/* postgres_admin.c */
int	pgt_state_get(struct target_conn *, const char *key, struct sbuf *doc,
	    int *found, struct p2o_err *);
int	pgt_state_put(struct target_conn *, const char *key, const char *body,
	    size_t len, uint64_t version, int *conflict, struct p2o_err *);
int	pgt_state_prepare(struct target_conn *, int *created,
	    struct p2o_err *);
int	pgt_index_exists(struct target_conn *, const char *index,
	    struct p2o_err *);
int	pgt_index_create(struct target_conn *, const char *index,
	    const char *body, int *created, struct p2o_err *);
int	pgt_load_settings(struct target_conn *, const char *index,
	    struct sbuf *orig, int *found, struct p2o_err *);
int	pgt_load_suspend(struct target_conn *, const char *index,
	    struct p2o_err *);
int	pgt_load_restore(struct target_conn *, const char *index,
	    struct jspan orig, struct p2o_err *);
int	pgt_pipeline_exists(struct target_conn *, const char *name,
	    struct p2o_err *);
int	pgt_index_state(struct target_conn *, const char *name,
	    struct target_index_state *, struct p2o_err *);
int	pgt_mapping_conflicts(struct target_conn *, const char *index,
	    const char *body, struct sbuf *report, int *n, struct p2o_err *);
int	pgt_refresh(struct target_conn *, const char *indices,
	    struct p2o_err *);
int	pgt_doc_count(struct target_conn *, const char *index, uint64_t *n,
	    struct p2o_err *);
int	pgt_index_delete(struct target_conn *, const char *index,
	    struct p2o_err *);

/* postgres_rejects.c */
extern const struct target_rejects_ops pgt_rejects_ops;
/* a /rejects/<what> request on s: 0 answered, -1 with err */
int	pgt_rejects_request(struct pgt_session *, const char *what,
	    const char *body, size_t len, struct sbuf *resp, long *status,
	    struct p2o_err *);

#endif
