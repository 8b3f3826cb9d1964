/*
 * opensearch.h - what the files of the OpenSearch module share; internal
 * to lib/target/opensearch*.c. Everyone else reaches the module through
 * its table (target_opensearch, lib/target.h).
 */
#ifndef TARGET_OPENSEARCH_H
#define TARGET_OPENSEARCH_H

#include "target.h"

/* the hidden index of our own documents */
#define OS_STATE_INDEX	".pg2osync_meta"
/* and of the refused documents kept aside (opensearch_rejects.c) */
#define OS_REJECTS_INDEX	".pg2osync_rejects"

/* the OpenSearch major versions the module was written for */
#define OS_MAJOR_MIN	1
#define OS_MAJOR_MAX	3

/*
 * The operations Elasticsearch 8 and 9 answer as OpenSearch does (the same
 * bulk action lines, external_gte versions, _mget, settings, state
 * documents): both modules' tables start with these, and differ in the
 * probe and in the mapping file's type of a JSON value kept whole.
 */
#define OS_SHARED_OPS \
	.index_name = os_index_name, \
	.index_body = os_index_body, \
	.error_text = os_error_text, \
	.create_call = os_create_call, \
	.create_answer = os_create_answer, \
	.encode = os_encode, \
	.bulk_call = os_bulk_call, \
	.bulk_answer = os_bulk_answer, \
	.read_call = os_read_call, \
	.read_answer = os_read_answer, \
	.state_get = os_state_get, \
	.state_put = os_state_put, \
	.state_get_many = os_state_get_many, \
	.state_put_many = os_state_put_many, \
	.index_exists = os_index_exists, \
	.index_create = os_index_create, \
	.load_settings = os_load_settings, \
	.load_suspend = os_load_suspend, \
	.load_restore = os_load_restore, \
	.state_prepare = os_state_prepare, \
	.pipeline_exists = os_pipeline_exists, \
	.index_state = os_index_state, \
	.mapping_conflicts = os_mapping_conflicts, \
	.refresh = os_refresh, \
	.proc_call = os_proc_call, \
	.proc_answer = os_proc_answer, \
	.doc_count = os_doc_count, \
	.alias_switch = os_alias_switch, \
	.index_delete = os_index_delete

/* opensearch.c */
/* the class of an answer by its status and error body: TA_OK (2xx),
 * TA_AUTH (401, a 403 that is not a block), TA_RETRY (429, 5xx, a block),
 * TA_REFUSED (another 4xx) */
enum target_answer os_answer_class(long status, const char *body,
	    size_t len);
/* 1 if an error of this type and reason is a cluster or index block */
int	os_blocked(const char *type, const char *reason);
/* the error of an answer, {"error":{"type":..,"reason":..}} or
 * {"error":"text"}: 1 with type and reason (truncated), 0 when there is
 * none */
int	os_error(const char *body, size_t len, char *type, size_t tcap,
	    char *reason, size_t rcap);
void	os_error_text(const char *body, size_t len, char *out, size_t outlen);
/* a string span into buf, unescaped and cut to fit */
void	os_copy_cut(struct jspan s, char *buf, size_t cap);
/* the major of a version number ("8.19.3": 8), -1 if it is none */
int	os_major(const char *number);
int	os_encode(struct sbuf *arena, const struct target_write *,
	    struct target_entry *, struct p2o_err *);
void	os_read_call(const struct docref *refs, int n, struct sbuf *body,
	    struct http_call *);
enum target_answer os_read_answer(long status, const struct sbuf *resp,
	    int n, struct jspan *found, char *why, size_t whylen);
void	os_create_call(const char *index, const char *body, struct sbuf *path,
	    struct http_call *);
enum target_answer os_create_answer(long status, const struct sbuf *resp,
	    char *why, size_t whylen);
void	os_bulk_call(const char *body, size_t len, struct http_call *);
enum target_answer os_bulk_answer(long status, const char *body, size_t len,
	    int nsent, struct item_result *items, char *why, size_t whylen);
/* "/<index><rest>" with the index escaped */
void	os_index_path(struct sbuf *path, const char *index, const char *rest);

/* opensearch_index.c */
int	os_index_name(const char *text, enum target_name_part, char *why,
	    size_t whylen);
void	os_mapping_file(const struct target_field *, int n,
	    struct sbuf *out);
/* the same with flat as the type of a JSON value kept whole */
void	os_mapping_fields(const struct target_field *, int n,
	    const char *flat, struct sbuf *out);
int	os_index_body(const struct sync_section *, const char *mapping,
	    size_t len, char **body, char *why, size_t whylen);

/* opensearch_proc.c */
void	os_proc_call(struct target_proc *, struct http_call *);
enum target_answer os_proc_answer(struct target_proc *, long status,
	    const struct sbuf *resp, char *why, size_t whylen);

/* opensearch_state.c */
int	os_state_get(struct target_conn *, const char *key, struct sbuf *doc,
	    int *found, struct p2o_err *);
int	os_state_put(struct target_conn *, const char *key, const char *body,
	    size_t len, uint64_t version, int *conflict, struct p2o_err *);
int	os_state_get_many(struct target_conn *, const char *const *keys,
	    int n, struct sbuf *docs, int *found, struct p2o_err *);
int	os_state_put_many(struct target_conn *, const char *const *keys,
	    const struct sbuf *bodies, int n, struct p2o_err *);
int	os_index_exists(struct target_conn *, const char *index,
	    struct p2o_err *);
int	os_index_create(struct target_conn *, const char *index,
	    const char *body, int *created, struct p2o_err *);
int	os_load_settings(struct target_conn *, const char *index,
	    struct sbuf *orig, int *found, struct p2o_err *);
int	os_load_suspend(struct target_conn *, const char *index,
	    struct p2o_err *);
int	os_load_restore(struct target_conn *, const char *index,
	    struct jspan orig, struct p2o_err *);

/* opensearch_state.c: GET path, 1 with the answer's object (into resp),
 * 0 on a 404, -1 with err (77 refused credentials, 75 anything else) */
int	os_get_object(struct target_conn *, const char *path, struct sbuf *resp,
	    struct jspan *obj, struct p2o_err *);
/* the state index made ready ahead of the first write */
int	os_state_prepare(struct target_conn *, int *created, struct p2o_err *);

/* opensearch_alias.c: a rebuild's count, alias move and index delete */
int	os_doc_count(struct target_conn *, const char *index, uint64_t *n,
	    struct p2o_err *);
int	os_alias_switch(struct target_conn *, const char *alias,
	    const char *index, struct sbuf *was, struct p2o_err *);
int	os_index_delete(struct target_conn *, const char *index,
	    struct p2o_err *);

/* opensearch_rejects.c */
extern const struct target_rejects_ops os_rejects_ops;

/* opensearch_scan.c */
extern const struct target_scan_ops os_scan_ops;

/* opensearch_admin.c */
int	os_pipeline_exists(struct target_conn *, const char *name,
	    struct p2o_err *);
int	os_index_state(struct target_conn *, const char *name,
	    struct target_index_state *, struct p2o_err *);
int	os_mapping_conflicts(struct target_conn *, const char *index,
	    const char *body, struct sbuf *report, int *n, struct p2o_err *);

/* opensearch_sync.c */
int	os_refresh(struct target_conn *, const char *indices, struct p2o_err *);

#endif
