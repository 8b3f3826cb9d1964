/*
 * opensearch_index.c - what the configuration asks of OpenSearch about an
 * index before anything is sent: the rules for its name (a whole name, or
 * the literal text of a template), and the body it is created with: a
 * section's mapping file as an index creation body, checked against the
 * names the section's documents carry, or the join mapping a join parent
 * needs; and the mapping file init writes from the columns' field kinds.
 *
 * Pure: reads no file (the configuration read the mapping file and
 * checked it is a JSON object), never logs, never exits.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "opensearch.h"
#include "p2o.h"

/* OpenSearch refuses longer names */
#define NAME_MAX_BYTES	255

/* the characters OpenSearch refuses anywhere in an index name */
static int
check_chars(const char *s, char *why, size_t len)
{
	const char *c;

	for (c = s; *c; c++) {
		if (isupper((unsigned char)*c)) {
			snprintf(why, len, "must be lowercase");
			return -1;
		}
		if (strchr("\\/*?\"<>|,#: ", *c) ||
		    iscntrl((unsigned char)*c)) {
			if (isprint((unsigned char)*c))
				snprintf(why, len, "must not contain '%c'", *c);
			else
				snprintf(why, len, "must not contain control "
				    "characters");
			return -1;
		}
	}
	return 0;
}

int
os_index_name(const char *s, enum target_name_part part, char *why,
    size_t len)
{
	if (part == TNAME_WHOLE) {
		if (*s == '\0') {
			snprintf(why, len, "must not be empty");
			return -1;
		}
		if (strlen(s) > NAME_MAX_BYTES) {
			snprintf(why, len, "must be at most %d bytes long",
			    NAME_MAX_BYTES);
			return -1;
		}
		if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
			snprintf(why, len, "must not be '.' or '..'");
			return -1;
		}
	}
	/* a template's glob starting with '.' would claim hidden indices,
	 * ours among them */
	if (part != TNAME_INSIDE && (*s == '_' || *s == '-' || *s == '+' ||
	    (part == TNAME_HEAD && *s == '.'))) {
		snprintf(why, len, "must not start with '%c'", *s);
		return -1;
	}
	return check_chars(s, why, len);
}

/* the value of obj's members path[0].path[1]...; 1 when found */
static int
json_path(struct jspan obj, const char *const *path, int n, struct jspan *v)
{
	int i;

	*v = obj;
	for (i = 0; i < n; i++)
		if (jspan_type(*v) != J_OBJECT || !jobj_get(*v, path[i], v))
			return 0;
	return 1;
}

/* does a rename of s land on name? */
static int
renamed_onto(const struct sync_section *s, const char *name)
{
	const struct sync_more *more = sync_more(s);
	int i;

	for (i = 0; i < more->nfields; i++)
		if (strcmp(more->fields[i].value, name) == 0)
			return 1;
	return 0;
}

/*
 * What the mapping says about names: a field 'fields' renames away must
 * not be mapped (the documents never carry it), and a join field must be
 * mapped as a join.
 */
static int
check_names(const struct sync_section *s, struct jspan body, char *why,
    size_t len)
{
	const struct sync_more *more = sync_more(s);
	const char *props[] = { "mappings", "properties", NULL, "type" };
	struct jspan v;
	int i;

	for (i = 0; i < more->nfields; i++) {
		props[2] = more->fields[i].name;
		if (json_path(body, props, 3, &v) &&
		    !renamed_onto(s, more->fields[i].name)) {
			snprintf(why, len, "maps field '%s', which 'fields' "
			    "renames to '%s': the mapping must use the names "
			    "the documents carry", more->fields[i].name,
			    more->fields[i].value);
			return -1;
		}
	}
	if (s->has_join) {
		props[2] = more->join.field;
		if (!json_path(body, props, 4, &v) || !jstr_eq(v, "join")) {
			snprintf(why, len, "must map the join field '%s' as "
			    "type join (or leave mapping_file out: the join "
			    "mapping is then generated)", more->join.field);
			return -1;
		}
	}
	return 0;
}

/* a mapping file: an index creation body, or a bare mapping wrapped as
 * one; then checked against the section's names */
static int
file_body(const struct sync_section *s, const char *mapping, size_t mlen,
    char **body, char *why, size_t len)
{
	static const char *const body_keys[] = { "mappings", "settings",
	    "aliases" };
	struct sbuf b = SBUF_INIT;
	struct jspan obj, name, val;
	struct jiter it;
	int nbody = 0, nother = 0;
	size_t k;

	if (target_body_object(mapping, mlen, &obj) == -1) {
		snprintf(why, len, "must hold a JSON object");
		return -1;
	}
	jiter_init(&it, obj);
	while (jiter_member(&it, &name, &val)) {
		for (k = 0; k < 3; k++)
			if (jkey_is(name, body_keys[k], strlen(body_keys[k])))
				break;
		if (k < 3)
			nbody++;
		else
			nother++;
	}
	if (nbody && nother) {
		snprintf(why, len, "must be an index creation body (mappings, "
		    "settings, aliases) or a bare mapping, not both");
		return -1;
	}
	/* a bare mapping ({"properties": ...}) is wrapped */
	if (!nbody)
		sbuf_adds(&b, "{\"mappings\":");
	sbuf_add(&b, obj.p, obj.n);
	if (!nbody)
		sbuf_addc(&b, '}');
	obj.p = b.buf;
	obj.n = b.len;
	if (check_names(s, obj, why, len) == -1) {
		sbuf_release(&b);
		return -1;
	}
	*body = b.buf;
	return 0;
}

/* the mapping a join parent's index needs: its field, a join of the
 * parent's relation to its children's */
static char *
join_body(const struct sync_section *p)
{
	const struct sync_more *more = sync_more(p);
	struct sbuf b = SBUF_INIT;
	int i;

	sbuf_adds(&b, "{\"mappings\":{\"properties\":{");
	sbuf_add_jstr(&b, more->join.field, strlen(more->join.field));
	sbuf_adds(&b, ":{\"type\":\"join\",\"relations\":{");
	sbuf_add_jstr(&b, more->join.name, strlen(more->join.name));
	sbuf_adds(&b, ":[");
	for (i = 0; i < more->join.nchildren; i++) {
		if (i > 0)
			sbuf_addc(&b, ',');
		sbuf_add_jstr(&b, more->join.children[i],
		    strlen(more->join.children[i]));
	}
	sbuf_adds(&b, "]}}}}}");
	return b.buf;
}

int
os_index_body(const struct sync_section *s, const char *mapping,
    size_t len, char **body, char *why, size_t whylen)
{
	const struct sync_more *more = sync_more(s);
	*body = NULL;
	if (mapping != NULL)
		return file_body(s, mapping, len, body, why, whylen);
	if (s->has_join && more->join.parent == NULL &&
	    more->join.nchildren > 0)
		*body = join_body(s);
	return 0;
}

/* the field type of each kind (the engines differ only in what keeps a
 * JSON value whole as one field: flat); text keeps a keyword beside the
 * words for sorting */
static void
field(struct sbuf *out, const struct target_field *f, const char *flat)
{
	static const char *const types[] = {
		[TF_KEYWORD] = "keyword", [TF_BOOLEAN] = "boolean",
		[TF_BYTE] = "byte", [TF_SHORT] = "short",
		[TF_INTEGER] = "integer", [TF_LONG] = "long",
		[TF_UNSIGNED_LONG] = "unsigned_long", [TF_FLOAT] = "float",
		[TF_DOUBLE] = "double", [TF_DATE] = "date",
		[TF_DATE_NANOS] = "date_nanos", [TF_OBJECT] = "object",
		[TF_BINARY] = "binary",
	};

	switch (f->kind) {
	case TF_TEXT:
		sbuf_adds(out, "{\"type\":\"text\",\"fields\":{\"keyword\":"
		    "{\"type\":\"keyword\",\"ignore_above\":256}}}");
		break;
	case TF_SCALED:
		sbuf_addf(out, "{\"type\":\"scaled_float\","
		    "\"scaling_factor\":%lld}", f->factor);
		break;
	case TF_FLAT:
		sbuf_addf(out, "{\"type\":\"%s\"}", flat);
		break;
	default:
		sbuf_addf(out, "{\"type\":\"%s\"}", types[f->kind]);
	}
}

void
os_mapping_fields(const struct target_field *f, int n, const char *flat,
    struct sbuf *out)
{
	int i;

	sbuf_adds(out, "{\"mappings\":{\"properties\":{");
	for (i = 0; i < n; i++) {
		if (i > 0)
			sbuf_addc(out, ',');
		sbuf_add_jstr(out, f[i].name, strlen(f[i].name));
		sbuf_addc(out, ':');
		field(out, &f[i], flat);
	}
	sbuf_adds(out, "}}}\n");
}

/* OpenSearch keeps a JSON value whole as a flat_object */
void
os_mapping_file(const struct target_field *f, int n, struct sbuf *out)
{
	os_mapping_fields(f, n, "flat_object", out);
}
