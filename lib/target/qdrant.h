/*
 * qdrant.h - what the files of the Qdrant module share; internal to
 * lib/target/qdrant*.c. Everyone else reaches the module through its table
 * (target_qdrant, lib/target.h).
 */
#ifndef TARGET_QDRANT_H
#define TARGET_QDRANT_H

#include "target.h"

/* the payload member our document id is kept in (a point's own id is a
 * UUID made from it, qd_point_id) */
#define QD_ID_FIELD	"pg2osync_id"

/* the document member whose object holds the point's named vectors; the
 * other members are its payload */
#define QD_VECTORS	"_vectors"

/* the collection our checkpoint and load progress are kept in */
#define QD_STATE	"pg2osync_state"

/* the Qdrant major version the module was written for (its REST API) */
#define QD_MAJOR	1

/*
 * The UUIDv5 namespace of every point id we make: itself the UUIDv5 of
 * the name "pg2osync:qdrant:id" in RFC 9562's URL namespace, fixed for
 * ever - a point written by one release is found by the next.
 * 0f68c911-f42e-53f4-bb91-44ce008130fe.
 */
#define QD_NAMESPACE \
	"\x0f\x68\xc9\x11\xf4\x2e\x53\xf4\xbb\x91\x44\xce\x00\x81\x30\xfe"

/* qdrant.c */
/* {"status":{"error":".."}} as its message, else an excerpt */
void	qd_error_text(const char *body, size_t len, char *out, size_t outlen);
/* "/collections/<name><rest>" with the name escaped */
void	qd_collection_path(struct sbuf *path, const char *name,
	    const char *rest);
/* the UUIDv5 (RFC 9562 5.5) of name in namespace ns (16 bytes), as its
 * 36 characters and a NUL into out */
void	qd_uuid5(const unsigned char *ns, const char *name, size_t len,
	    char out[37]);
/* a point's id: the UUIDv5 of the document id's text in QD_NAMESPACE */
void	qd_point_id(const char *id, size_t len, char out[37]);
/* the creation body of a collection: its mapping file, or one without
 * vectors (payload only) for NULL */
const char *qd_create_body(const char *body);

/* qdrant_write.c - the write procedure (target_ops.write_call,
 * write_answer) */
void	qd_write_call(struct target_proc *, const char *body, size_t len,
	    struct http_call *);
enum target_answer qd_write_answer(struct target_proc *, long status,
	    const struct sbuf *resp, const char *body, size_t len, int nsent,
	    struct item_result *items, char *why, size_t whylen);
/* a point of a document: {"id":..,"vector":..,"payload":{..}} appended to
 * out; id is the raw JSON string of the document id */
void	qd_add_point(struct sbuf *out, const char *id, size_t idlen,
	    const char *doc, size_t dlen);

/* qdrant_admin.c */
/* a non-2xx answer as err: 77 for refused credentials, else 75 */
int	qd_status_error(long status, const struct sbuf *resp, struct p2o_err *);
int	qd_index_exists(struct target_conn *, const char *index,
	    struct p2o_err *);
int	qd_index_create(struct target_conn *, const char *index,
	    const char *body, int *created, struct p2o_err *);
int	qd_load_settings(struct target_conn *, const char *index,
	    struct sbuf *orig, int *found, struct p2o_err *);
int	qd_load_suspend(struct target_conn *, const char *index,
	    struct p2o_err *);
int	qd_load_restore(struct target_conn *, const char *index,
	    struct jspan orig, struct p2o_err *);
int	qd_pipeline_exists(struct target_conn *, const char *name,
	    struct p2o_err *);
int	qd_index_state(struct target_conn *, const char *name,
	    struct target_index_state *, struct p2o_err *);
int	qd_mapping_conflicts(struct target_conn *, const char *index,
	    const char *body, struct sbuf *report, int *n, struct p2o_err *);
int	qd_refresh(struct target_conn *, const char *indices, struct p2o_err *);

/* qdrant_state.c */
int	qd_state_get(struct target_conn *, const char *key, struct sbuf *doc,
	    int *found, struct p2o_err *);
int	qd_state_put(struct target_conn *, const char *key, const char *body,
	    size_t len, uint64_t version, int *conflict, struct p2o_err *);
int	qd_state_prepare(struct target_conn *, int *created, struct p2o_err *);

#endif
