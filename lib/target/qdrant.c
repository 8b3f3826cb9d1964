/*
 * qdrant.c - the Qdrant 1.x target: its probe, collection names and
 * creation bodies, errors, point ids, the entries of the data path, and
 * the clear of a collection. A section's index is a collection, created
 * from its mapping file (a Qdrant collection body naming its vectors); a
 * document is a point: its id the UUIDv5 of our document id (Qdrant takes
 * only unsigned integers and UUIDs), the document id itself kept in the
 * payload (QD_ID_FIELD), the document's QD_VECTORS object as the point's
 * named vectors and its other members as the payload.
 *
 * Qdrant keeps no versions of ours, so the order of the writes is the
 * order of the stream: one write request open at a time (no
 * TCAP_CONCURRENT_WRITES, so engine.write_concurrency above 1 is refused
 * at load), each sent with wait=true and answered only once applied, and
 * the next sent only after it. A replay after a crash sends the same
 * upserts again: a point is replaced whole by the latest state of its row,
 * which is what it held, or will hold once the replay reaches that state.
 *
 * Pure: never makes a request, logs or exits (qdrant_admin.c and
 * qdrant_state.c hold the blocking operations).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "config.h"
#include "qdrant.h"
#include "entry.h"
#include "p2o.h"

/* {"status":{"error":".."},"time":..}; a 2xx has "status":"ok" */
void
qd_error_text(const char *body, size_t len, char *out, size_t outlen)
{
	struct jspan obj, st, v;

	if (body != NULL && target_body_object(body, len, &obj) == 0 &&
	    jobj_get(obj, "status", &st) && jspan_type(st) == J_OBJECT &&
	    jobj_get(st, "error", &v) && jspan_type(v) == J_STRING &&
	    jstr_copy(v, out, outlen) == 0)
		return;
	snprintf(out, outlen, "%.*s", (int)(len > 200 ? 200 : len),
	    body ? body : "");
}

void
qd_collection_path(struct sbuf *path, const char *name, const char *rest)
{
	sbuf_reset(path);
	sbuf_adds(path, "/collections/");
	http_escape(path, name, "");
	sbuf_adds(path, rest);
}

void
qd_uuid5(const unsigned char *ns, const char *name, size_t len,
    char out[37])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE], *in;
	unsigned int mdlen = 0;
	int i, o = 0;

	in = xmalloc(16 + len + 1);
	memcpy(in, ns, 16);
	memcpy(in + 16, name, len);
	/* SHA-1 cannot fail on memory we hold; a zero digest would still
	 * be a UUID, never a write to the wrong place twice */
	if (EVP_Digest(in, 16 + len, md, &mdlen, EVP_sha1(), NULL) != 1)
		memset(md, 0, sizeof(md));
	free(in);
	md[6] = (unsigned char)((md[6] & 0x0f) | 0x50);	/* version 5 */
	md[8] = (unsigned char)((md[8] & 0x3f) | 0x80);	/* variant 10 */
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[md[i] >> 4];
		out[o++] = hex[md[i] & 15];
	}
	out[o] = '\0';
}

void
qd_point_id(const char *id, size_t len, char out[37])
{
	qd_uuid5((const unsigned char *)QD_NAMESPACE, id, len, out);
}

const char *
qd_create_body(const char *body)
{
	return body != NULL ? body : "{\"vectors\":{}}";
}

/* collection names: letters, digits, '-', '_' and '.', at most 255
 * bytes; Qdrant takes more, but a name that is also a safe path segment
 * and file name is one no server version refuses */
static int
index_name(const char *text, enum target_name_part part, char *why,
    size_t whylen)
{
	if (target_name_chars(text, part, 255, "-_.", "'-', '_' and '.' (a "
	    "Qdrant collection name)", why, whylen) == -1)
		return -1;
	if (part != TNAME_INSIDE && text[0] == '.') {
		snprintf(why, whylen, "must not start with '.'");
		return -1;
	}
	if (part == TNAME_WHOLE && strcmp(text, QD_STATE) == 0) {
		snprintf(why, whylen, "is the collection our checkpoint is "
		    "kept in");
		return -1;
	}
	return 0;
}

static int
check_vector(struct jspan name, struct jspan v, char *why, size_t whylen)
{
	struct jspan size, dist;
	uint64_t n;
	char nm[128];

	if (jstr_copy(name, nm, sizeof(nm)) == -1)
		snprintf(nm, sizeof(nm), "(long name)");
	if (jspan_type(v) != J_OBJECT || !jobj_get(v, "size", &size) ||
	    jnum_u64(size, &n) == -1 || n == 0 ||
	    !jobj_get(v, "distance", &dist) || jspan_type(dist) != J_STRING) {
		snprintf(why, whylen, "vector '%s' must be an object with a "
		    "positive integer 'size' and a 'distance'", nm);
		return -1;
	}
	if (!jstr_eq(dist, "Cosine") && !jstr_eq(dist, "Euclid") &&
	    !jstr_eq(dist, "Dot") && !jstr_eq(dist, "Manhattan")) {
		snprintf(why, whylen, "vector '%s': distance must be Cosine, "
		    "Euclid, Dot or Manhattan", nm);
		return -1;
	}
	return 0;
}

/*
 * A mapping file is the collection's creation body: an object whose
 * "vectors" names each vector ({"vectors":{"<name>":{"size":N,
 * "distance":"Cosine"}}}); a single unnamed vector is refused, since a
 * document's vectors are found by name (its QD_VECTORS object). Without
 * a mapping file a collection holds payload only.
 */
static int
index_body(const struct sync_section *s, const char *mapping, size_t len,
    char **body, char *why, size_t whylen)
{
	struct jspan obj, vecs, k, v;
	struct jiter it;

	(void)s;
	*body = NULL;
	if (mapping == NULL)
		return 0;
	if (target_body_object(mapping, len, &obj) == -1) {
		snprintf(why, whylen, "must be a JSON object (a Qdrant "
		    "collection creation body)");
		return -1;
	}
	if (jobj_get(obj, "vectors", &vecs)) {
		if (jspan_type(vecs) != J_OBJECT ||
		    jobj_get(vecs, "size", &v) || jobj_get(vecs, "distance", &v)) {
			snprintf(why, whylen, "must name its vectors: "
			    "{\"vectors\":{\"<name>\":{\"size\":N,\"distance\":"
			    "\"Cosine\"}}}, each filled from the document's "
			    "'" QD_VECTORS "' member of that name");
			return -1;
		}
		jiter_init(&it, vecs);
		while (jiter_member(&it, &k, &v))
			if (check_vector(k, v, why, whylen) == -1)
				return -1;
	}
	*body = xstrndup(obj.p, obj.n);
	return 0;
}

static void
probe_call(struct http_call *call)
{
	http_call_set(call, "GET", "/", NULL, NULL, 0);
}

/* {"title":"qdrant - vector search engine","version":"1.12.4",..} */
static enum target_answer
probe_answer(long status, const struct sbuf *resp, char *node,
    size_t nodelen, char *why, size_t whylen)
{
	enum target_answer a = target_status_class(status);
	struct jspan obj, v;
	char title[64] = "";

	if (nodelen)
		node[0] = '\0';
	if (a != TA_OK) {
		qd_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (target_body_object(resp->buf, resp->len, &obj) == 0 &&
	    jobj_get(obj, "title", &v))
		target_copy_cut(v, title, sizeof(title));
	if (strncmp(title, "qdrant", 6) != 0 || !jobj_get(obj, "version", &v)) {
		snprintf(why, whylen, "target.flavor is qdrant but GET / is "
		    "not a Qdrant node's answer (no qdrant title and version)");
		return TA_REFUSED;
	}
	return target_node_major(v, QD_MAJOR, "qdrant", "Qdrant", node,
	    nodelen, why, whylen);
}

/* the collection created with its body; one already there is answered
 * 409 (earlier servers: 400 naming it "already exists") */
static void
create_call(const char *index, const char *body, struct sbuf *path,
    struct http_call *call)
{
	const char *b = qd_create_body(body);

	qd_collection_path(path, index, "");
	http_call_set(call, "PUT", path->buf, "application/json", b,
	    strlen(b));
}

static enum target_answer
create_answer(long status, const struct sbuf *resp, char *why,
    size_t whylen)
{
	enum target_answer a = target_status_class(status);

	if (a == TA_OK)
		return TA_OK;
	qd_error_text(resp->buf, resp->len, why, whylen);
	if (status == 409 || (status == 400 && strstr(why, "already exists")))
		return TA_EXISTS;
	return a;
}

static int
doc_refusal(const struct target_write *w, struct p2o_err *err,
    const char *what)
{
	char ix[256], id[512];

	if (jstr_copy(w->index, ix, sizeof(ix)) == -1)
		snprintf(ix, sizeof(ix), "(long name)");
	if (jstr_copy(w->id, id, sizeof(id)) == -1)
		snprintf(id, sizeof(id), "(long id)");
	return p2o_fail(err, P2O_EXIT_DATA, "document '%s/%s' %s", ix, id,
	    what);
}

/*
 * An entry is one line of our own, read back by the write procedure
 * (qdrant_write.c), which makes the point of it:
 *   {"index":<collection>,"id":<id>,"doc":<document>}  or
 *   {"index":<collection>,"id":<id>,"delete":true}
 * A document with a member named as our id's payload member is refused
 * (it would overwrite the id), and so is one whose QD_VECTORS member is
 * not an object of named vectors (null is none: a row without vectors).
 */
static int
encode(struct sbuf *out, const struct target_write *w,
    struct target_entry *e, struct p2o_err *err)
{
	struct jspan v;

	if (w->routing.p || (w->pipeline.p && !w->del))
		return p2o_fail(err, P2O_EXIT_CONFIG, "qdrant takes no routing "
		    "and no pipeline");
	if (!w->del && jobj_get(w->doc, QD_ID_FIELD, &v))
		return doc_refusal(w, err, "has a member '" QD_ID_FIELD "', "
		    "the payload member target qdrant keeps our document id "
		    "in: rename that column (sync.<name>.fields, or leave it "
		    "out with exclude_columns)");
	if (!w->del && jobj_get(w->doc, QD_VECTORS, &v) &&
	    jspan_type(v) != J_OBJECT && jspan_type(v) != J_NULL)
		return doc_refusal(w, err, "has a member '" QD_VECTORS "' that "
		    "is not an object of named vectors");
	tentry_put(out, w, e);
	return 0;
}

/* TOAST completion would read the stored points back: not written for
 * this module (no TCAP_COMPLETE_DOCS: pg2osync validate fails such a
 * table without REPLICA IDENTITY FULL), so an unchanged TOAST value met
 * all the same is a refusal the operator sees */
static void
read_call(const struct docref *refs, int n, struct sbuf *body,
    struct http_call *call)
{
	(void)refs, (void)n, (void)body;
	http_call_set(call, "GET", "/", NULL, NULL, 0);
}

static enum target_answer
read_answer(long status, const struct sbuf *resp, int n, struct jspan *found,
    char *why, size_t whylen)
{
	(void)status, (void)resp, (void)n, (void)found;
	snprintf(why, whylen, "target qdrant does not read points back for an "
	    "unchanged TOAST value; set REPLICA IDENTITY FULL on the table");
	return TA_REFUSED;
}

/*
 * A clear is one delete by filter, waited for: every point of the
 * collection (an empty filter), or those whose payload field holds the
 * value (a table's documents in a collection several tables share). No
 * versions: the writes before the truncate were all answered before it
 * is sent, those after it are sent after its answer. A glob of
 * collections is refused (Qdrant has none); a cascade needs a join, which
 * this module does not declare.
 */
static void
proc_call(struct target_proc *p, struct http_call *call)
{
	char *field;

	qd_collection_path(&p->path, p->index, "/points/delete?wait=true");
	sbuf_reset(&p->body);
	if (p->field.p == NULL)
		sbuf_adds(&p->body, "{\"filter\":{}}");
	else {
		field = jstr_dup(p->field);
		sbuf_adds(&p->body, "{\"filter\":{\"must\":[{\"key\":");
		sbuf_add_jstr(&p->body, field, strlen(field));
		sbuf_adds(&p->body, ",\"match\":{\"value\":");
		sbuf_add(&p->body, p->value.p, p->value.n);
		sbuf_adds(&p->body, "}}]}}");
		free(field);
	}
	http_call_set(call, "POST", p->path.buf, "application/json",
	    p->body.buf, p->body.len);
}

static enum target_answer
proc_answer(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a = target_status_class(status);

	p->poll_ms = 0;
	if (p->kind != PROC_CLEAR || strpbrk(p->index, "*,") != NULL) {
		snprintf(why, whylen, "target qdrant clears one collection, "
		    "not '%s'%s", p->index, p->kind != PROC_CLEAR ?
		    " by a cascade" : "");
		return TA_REFUSED;
	}
	if (status == 404) {
		/* no collection, no points to clear */
		p->gone = 1;
		return TA_OK;
	}
	if (a != TA_OK)
		qd_error_text(resp->buf, resp->len, why, whylen);
	return a;
}

static const struct target_ops ops = {
	.index_name = index_name,
	.index_body = index_body,
	.mapping_file = NULL,
	.probe_call = probe_call,
	.probe_answer = probe_answer,
	.error_text = qd_error_text,
	.create_call = create_call,
	.create_answer = create_answer,
	.encode = encode,
	.write_call = qd_write_call,
	.write_answer = qd_write_answer,
	.read_call = read_call,
	.read_answer = read_answer,
	.proc_call = proc_call,
	.proc_answer = proc_answer,
	.state_get = qd_state_get,
	.state_put = qd_state_put,
	.index_exists = qd_index_exists,
	.index_create = qd_index_create,
	.load_settings = qd_load_settings,
	.load_suspend = qd_load_suspend,
	.load_restore = qd_load_restore,
	.state_prepare = qd_state_prepare,
	.pipeline_exists = qd_pipeline_exists,
	.index_state = qd_index_state,
	.mapping_conflicts = qd_mapping_conflicts,
	.refresh = qd_refresh,
};

/* writes answered once applied (wait=true), one at a time, in the
 * stream's order; collections created from mapping files; our state in
 * a collection of its own. No versions, routing, join, pipelines,
 * aliases or swaps, and no store of refused documents (a refusal halts,
 * engine.on_permanent_rejection: quarantine is refused at load) */
const struct target_module target_qdrant = {
	.name = "qdrant",
	.state_place = "collection '" QD_STATE "'",
	.caps = TCAP_MAPPINGS | TCAP_STATE_DOCS,
	.ops = &ops,
	/* Qdrant takes its API key as a bearer token as well as in its own
	 * api-key header */
	.api_key_scheme = "Bearer",
};
