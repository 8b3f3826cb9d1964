/*
 * meilisearch.h - what the files of the Meilisearch module share; internal
 * to lib/target/meilisearch*.c. Everyone else reaches the module through
 * its table (target_meilisearch, lib/target.h).
 */
#ifndef TARGET_MEILISEARCH_H
#define TARGET_MEILISEARCH_H

#include "target.h"

/* the attribute our document id is stored in: the index's primary key */
#define MS_PRIMARY_KEY	"pg2osync_id"

/* the Meilisearch major version the module was written for */
#define MS_MAJOR	1

/* how long to wait before asking again about a task still enqueued or
 * processing: short at first, since the position it covers waits for it,
 * doubling up to MS_POLL_MAX_MS while it runs (a real server takes from
 * tens of milliseconds to seconds a batch) */
#define MS_POLL_MS	10
#define MS_POLL_MAX_MS	200

/* a blocking wait for a task gives up after this long: ckpt retries */
#define MS_TASK_WAIT_MS	60000

/* meilisearch.c */
void	ms_error_text(const char *body, size_t len, char *out, size_t outlen);
/* "/indexes/<uid><rest>" with the uid escaped */
void	ms_index_path(struct sbuf *path, const char *index, const char *rest);
/* the answer to an enqueueing request: 1 with its task's uid, 0 none */
int	ms_task_uid(const struct sbuf *resp, uint64_t *uid);
/* a task's answer: -1 not one, 0 still waiting, 1 succeeded, 2 failed
 * (code and message of its error), 3 canceled */
int	ms_task_state(const struct sbuf *resp, char *code, size_t ccap,
	    char *message, size_t mcap);
/* the same of a task object (an element of GET /tasks' results) */
int	ms_task_view(struct jspan task, char *code, size_t ccap,
	    char *message, size_t mcap);

/* meilisearch_write.c - the write procedure (target_ops.write_call,
 * write_answer) */
void	ms_write_call(struct target_proc *, const char *body, size_t len,
	    struct http_call *);
enum target_answer ms_write_answer(struct target_proc *, long status,
	    const struct sbuf *resp, const char *body, size_t len, int nsent,
	    struct item_result *items, char *why, size_t whylen);

/* meilisearch_state.c */
int	ms_state_get(struct target_conn *, const char *key, struct sbuf *doc,
	    int *found, struct p2o_err *);
int	ms_state_put(struct target_conn *, const char *key, const char *body,
	    size_t len, uint64_t version, int *conflict, struct p2o_err *);
int	ms_state_prepare(struct target_conn *, int *created, struct p2o_err *);

/* meilisearch_admin.c */
/* a non-2xx answer as err: 77 for refused credentials, else 75 */
int	ms_status_error(long status, const struct sbuf *resp, struct p2o_err *);
/* a task polled to its end: 1 succeeded, 0 failed (its error's code and
 * message into code and msg), -1 (err) */
int	ms_wait_task(struct target_conn *, uint64_t task, char *code,
	    size_t ccap, char *msg, size_t mcap, struct p2o_err *);
int	ms_index_exists(struct target_conn *, const char *index,
	    struct p2o_err *);
int	ms_index_create(struct target_conn *, const char *index,
	    const char *body, int *created, struct p2o_err *);
int	ms_load_settings(struct target_conn *, const char *index,
	    struct sbuf *orig, int *found, struct p2o_err *);
int	ms_load_suspend(struct target_conn *, const char *index,
	    struct p2o_err *);
int	ms_load_restore(struct target_conn *, const char *index,
	    struct jspan orig, struct p2o_err *);
int	ms_pipeline_exists(struct target_conn *, const char *name,
	    struct p2o_err *);
int	ms_index_state(struct target_conn *, const char *name,
	    struct target_index_state *, struct p2o_err *);
int	ms_mapping_conflicts(struct target_conn *, const char *index,
	    const char *body, struct sbuf *report, int *n, struct p2o_err *);
int	ms_refresh(struct target_conn *, const char *indices, struct p2o_err *);

/* meilisearch_scan.c */
extern const struct target_scan_ops ms_scan_ops;

/* meilisearch_rebuild.c */
int	ms_doc_count(struct target_conn *, const char *index, uint64_t *n,
	    struct p2o_err *);
int	ms_index_swap(struct target_conn *, const char *a, const char *b,
	    struct p2o_err *);
int	ms_index_delete(struct target_conn *, const char *index,
	    struct p2o_err *);

#endif
