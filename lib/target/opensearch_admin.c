/*
 * opensearch_admin.c - the looks the operator's commands take at an
 * OpenSearch cluster before anything is written (pg2osync validate,
 * status, bootstrap): whether an ingest pipeline exists, what a write to
 * an index name would meet (an alias without one write index, a closed
 * or write-blocked index), and whether an existing index maps a field
 * otherwise than a mapping file does.
 *
 * Every request here is a GET or a HEAD: nothing is created, changed or
 * deleted. Never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opensearch.h"
#include "p2o.h"

int
os_pipeline_exists(struct target_conn *c, const char *name,
    struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj;
	int rc;

	sbuf_adds(&path, "/_ingest/pipeline/");
	http_escape(&path, name, "");
	rc = os_get_object(c, path.buf, &resp, &obj, err);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

/* "true" as a JSON string or a boolean */
static int
truthy(struct jspan v)
{
	return jspan_type(v) == J_TRUE || jstr_eq(v, "true");
}

/* the write blocks of one index's settings ({"index":{"blocks":…}}) */
static void
blocks(struct jspan settings, struct target_index_state *st)
{
	static const char *const names[] = { "write", "read_only",
	    "read_only_allow_delete" };
	struct jspan idx, bl, v;
	size_t i;

	if (!jobj_get(settings, "index", &idx) || !jobj_get(idx, "blocks", &bl))
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (jobj_get(bl, names[i], &v) && truthy(v) &&
		    st->blocked[0] == '\0')
			snprintf(st->blocked, sizeof(st->blocked),
			    "index.blocks.%s", names[i]);
}

int
os_index_state(struct target_conn *c, const char *name,
    struct target_index_state *st, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj, key, val, al, a, v, s;
	struct jiter it, ait;
	int rc;

	memset(st, 0, sizeof(*st));
	/* an alias of that name: the indices it names and its write index */
	sbuf_adds(&path, "/_alias/");
	http_escape(&path, name, HTTP_KEEP_INDEX);
	if ((rc = os_get_object(c, path.buf, &resp, &obj, err)) == -1)
		goto out;
	if (rc == 1 && jiter_init(&it, obj) == 0) {
		while (jiter_member(&it, &key, &val) == 1) {
			if (!jobj_get(val, "aliases", &al) ||
			    jiter_init(&ait, al) == -1)
				continue;
			while (jiter_member(&ait, &a, &v) == 1)
				if (jstr_eq(a, name)) {
					st->alias = st->exists = 1;
					st->nindices++;
					if (jobj_get(v, "is_write_index", &s) &&
					    jspan_type(s) == J_TRUE)
						st->write_index = 1;
				}
		}
		/* one index behind an alias takes its writes */
		if (st->alias && st->nindices == 1)
			st->write_index = 1;
	}
	if (st->alias) {
		rc = 0;
		goto out;
	}
	/* an index: open or closed, and its write blocks */
	sbuf_reset(&path);
	os_index_path(&path, name, "/_settings?expand_wildcards=all");
	if ((rc = os_get_object(c, path.buf, &resp, &obj, err)) == -1)
		goto out;
	if (rc == 1 && jiter_init(&it, obj) == 0)
		while (jiter_member(&it, &key, &val) == 1) {
			st->exists = 1;
			if (jobj_get(val, "settings", &s)) {
				blocks(s, st);
				if (jobj_get(s, "index", &a) &&
				    jobj_get(a, "verified_before_close", &v) &&
				    truthy(v))
					st->closed = 1;
			}
		}
	rc = 0;
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

/* one mapped field: its dotted path and type */
struct field {
	char	*path, *type;
};
struct fields {
	struct field *v;
	int	 n, cap;
};

static void
fields_add(struct fields *f, const char *path, struct jspan type)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 32;
		f->v = xrealloc(f->v, (size_t)f->cap * sizeof(*f->v));
	}
	f->v[f->n].path = xstrdup(path);
	f->v[f->n].type = type.p ? jstr_dup(type) : xstrdup("object");
	f->n++;
}

static void
fields_free(struct fields *f)
{
	int i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].path);
		free(f->v[i].type);
	}
	free(f->v);
}

/* every field under props (a "properties" object), sub-objects and
 * multi-fields as dotted paths */
static void
walk(struct jspan props, const char *prefix, struct fields *f, int depth)
{
	struct jiter it, sit;
	struct jspan key, val, type, sub, skey, sval;
	struct sbuf path = SBUF_INIT;
	char *name;

	if (depth > 32 || jiter_init(&it, props) == -1)
		return;
	while (jiter_member(&it, &key, &val) == 1) {
		if (jspan_type(val) != J_OBJECT)
			continue;
		name = jstr_dup(key);
		sbuf_reset(&path);
		sbuf_addf(&path, "%s%s%s", prefix, prefix[0] ? "." : "", name);
		free(name);
		if (!jobj_get(val, "type", &type) ||
		    jspan_type(type) != J_STRING)
			type.p = NULL;
		fields_add(f, path.buf, type);
		if (jobj_get(val, "properties", &sub))
			walk(sub, path.buf, f, depth + 1);
		if (jobj_get(val, "fields", &sub) && jiter_init(&sit, sub) == 0)
			while (jiter_member(&sit, &skey, &sval) == 1) {
				struct sbuf sp = SBUF_INIT;

				name = jstr_dup(skey);
				sbuf_addf(&sp, "%s.%s", path.buf, name);
				free(name);
				if (!jobj_get(sval, "type", &type) ||
				    jspan_type(type) != J_STRING)
					type.p = NULL;
				fields_add(f, sp.buf, type);
				sbuf_release(&sp);
			}
	}
	sbuf_release(&path);
}

/* the properties of a creation body ({"mappings":{"properties":…}}) */
static int
body_fields(const char *body, struct fields *f)
{
	struct jspan obj, m, p;

	if (target_body_object(body, strlen(body), &obj) == -1)
		return -1;
	if (jobj_get(obj, "mappings", &m) && jobj_get(m, "properties", &p))
		walk(p, "", f, 0);
	return 0;
}

int
os_mapping_conflicts(struct target_conn *c, const char *index,
    const char *body, struct sbuf *report, int *n, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct fields want = { 0 }, have = { 0 };
	struct jspan obj, key, val, m, p;
	struct jiter it;
	int i, k, rc;

	*n = 0;
	if (body_fields(body, &want) == -1) {
		rc = p2o_fail(err, P2O_EXIT_CONFIG, "the mapping body is not a "
		    "JSON object");
		goto out;
	}
	os_index_path(&path, index, "/_mapping");
	if ((rc = os_get_object(c, path.buf, &resp, &obj, err)) <= 0)
		goto out;	/* no index: nothing to contradict */
	if (jiter_init(&it, obj) == 0)
		while (jiter_member(&it, &key, &val) == 1)
			if (jobj_get(val, "mappings", &m) &&
			    jobj_get(m, "properties", &p))
				walk(p, "", &have, 0);
	for (i = 0; i < want.n; i++)
		for (k = 0; k < have.n; k++)
			if (strcmp(want.v[i].path, have.v[k].path) == 0 &&
			    strcmp(want.v[i].type, have.v[k].type) != 0) {
				sbuf_addf(report, "%sfield '%s' is mapped as "
				    "'%s', the mapping file says '%s'",
				    (*n)++ ? "; " : "", want.v[i].path,
				    have.v[k].type, want.v[i].type);
				break;
			}
	rc = 0;
out:
	fields_free(&want);
	fields_free(&have);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}
