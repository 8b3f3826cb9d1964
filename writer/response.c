/*
 * response.c - what the target said about a request: each _bulk item is
 * written, a success in disguise (a newer version is stored, a deleted
 * document was already gone), worth retrying, or refused for good. Parses
 * only the target's responses (with jansson), never an input document, and
 * performs no I/O or logging.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "jscan.h"
#include "writer.h"

enum resp_verdict
resp_status_class(long status)
{
	if (status >= 200 && status < 300)
		return RESP_ITEMS;
	if (status == 401 || status == 403)
		return RESP_AUTH;
	if (status == 429 || status >= 500 || status < 200)
		return RESP_RETRY;
	return RESP_REJECT;
}

static void
copy_str(char *dst, size_t cap, const char *src)
{
	size_t n;

	if (cap == 0)
		return;
	if (!src)
		src = "";
	n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* error objects carry "type" and "reason"; some proxies send a string */
static void
error_fields(json_t *error, char *type, size_t tcap, char *reason,
    size_t rcap)
{
	if (json_is_string(error)) {
		copy_str(type, tcap, "error");
		copy_str(reason, rcap, json_string_value(error));
		return;
	}
	copy_str(type, tcap, json_string_value(json_object_get(error, "type")));
	copy_str(reason, rcap,
	    json_string_value(json_object_get(error, "reason")));
}

void
resp_error_text(const char *body, size_t len, char *out, size_t outlen)
{
	char type[96], reason[320];
	json_t *root, *error;
	size_t i, n;

	if (outlen == 0)
		return;
	root = json_loadb(body, len, 0, NULL);
	error = root ? json_object_get(root, "error") : NULL;
	if (error) {
		error_fields(error, type, sizeof(type), reason, sizeof(reason));
		snprintf(out, outlen, "%s: %s", type[0] ? type : "error",
		    reason);
		json_decref(root);
		return;
	}
	json_decref(root);
	/* an excerpt of whatever came back, on one printable line */
	n = len < outlen - 1 ? len : outlen - 1;
	if (n > 120)
		n = 120;
	for (i = 0; i < n; i++)
		out[i] = (body[i] >= 0x20 && body[i] < 0x7f) ? body[i] : ' ';
	out[n] = '\0';
	if (n == 0)
		copy_str(out, outlen, "empty response");
}

static enum item_verdict
item_verdict(const char *action, int status, const char *type)
{
	if (status >= 200 && status < 300)
		return ITEM_OK;
	if (status == 409)
		return ITEM_CONFLICT;
	/* a versioned delete of a document (or an index) that is not there */
	if (status == 404 && strcmp(action, "delete") == 0)
		return ITEM_NOTFOUND;
	if (status == 429 || status >= 500)
		return ITEM_RETRY;
	if (status < 100) {
		/* no usable status: trust the error type when there is one */
		return type[0] ? ITEM_REJECT : ITEM_RETRY;
	}
	return ITEM_REJECT;
}

static int
classify_item(json_t *item, struct item_result *r, char *why, size_t whylen,
    int i)
{
	const char *action = "";
	json_t *body = NULL, *status, *error;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(item) || json_object_size(item) != 1) {
		snprintf(why, whylen, "bulk response item %d is not an object "
		    "with one action", i);
		return -1;
	}
	json_object_foreach(item, action, body)
		break;
	copy_str(r->action, sizeof(r->action), action);
	status = json_object_get(body, "status");
	if (!json_is_integer(status)) {
		snprintf(why, whylen, "bulk response item %d has no status", i);
		return -1;
	}
	r->status = (int)json_integer_value(status);
	error = json_object_get(body, "error");
	if (error)
		error_fields(error, r->type, sizeof(r->type), r->reason,
		    sizeof(r->reason));
	r->verdict = item_verdict(r->action, r->status, r->type);
	return 0;
}

/*
 * The common answer, {"errors":false,"items":[{"index":{...,"status":201}},
 * ...]}, read from spans without building a tree: parsing every 1,000-item
 * response into jansson objects was most of the writer's instructions.
 * 0 when every item succeeded and items[] is filled; -1 for anything else,
 * which the full reader below then judges (and words the errors of).
 */
static int
all_written(const char *body, size_t len, int nsent,
    struct item_result *items)
{
	static const char *const names[] = { "errors", "items" };
	struct jspan v[2], item, act, val, st, k2, v2;
	struct jiter it, m;
	struct jtop top;
	const char *why;
	size_t off;
	int64_t code;
	int i = 0;

	/* validated once, the members of the root noted on the way: the
	 * items are not walked a second time to find them */
	if (nsent < 0 || jscan_validate_top(body, len, &top, &off, &why) == -1 ||
	    jspan_type(top.obj) != J_OBJECT)
		return -1;
	jtop_pick(&top, top.obj, names, 2, v);
	if (v[0].p == NULL || jspan_type(v[0]) != J_FALSE ||
	    v[1].p == NULL || jiter_init(&it, v[1]) == -1)
		return -1;
	while (jiter_elem(&it, &item)) {
		if (i == nsent || jiter_init(&m, item) == -1 ||
		    !jiter_member(&m, &act, &val) || jiter_member(&m, &k2, &v2))
			return -1;
		if (!jobj_get(val, "status", &st) || jnum_i64(st, &code) == -1 ||
		    code < 200 || code >= 300)
			return -1;
		memset(&items[i], 0, sizeof(items[i]));
		if (jstr_copy(act, items[i].action,
		    sizeof(items[i].action)) == -1)
			return -1;
		items[i].status = (int)code;
		items[i].verdict = ITEM_OK;
		i++;
	}
	return i == nsent ? 0 : -1;
}

enum resp_verdict
bulkresp_classify(long status, const char *body, size_t len, int nsent,
    struct item_result *items, char *why, size_t whylen)
{
	enum resp_verdict rv;
	json_error_t jerr;
	json_t *root, *arr;
	size_t i;

	if (whylen)
		why[0] = '\0';
	rv = resp_status_class(status);
	if (rv != RESP_ITEMS) {
		resp_error_text(body, len, why, whylen);
		return rv;
	}
	if (all_written(body, len, nsent, items) == 0)
		return RESP_ITEMS;
	root = json_loadb(body, len, 0, &jerr);
	if (!root) {
		snprintf(why, whylen, "bulk response is not JSON: %s at byte "
		    "%d", jerr.text, jerr.position);
		return RESP_RETRY;
	}
	rv = RESP_RETRY;
	arr = json_object_get(root, "items");
	if (!json_is_array(arr)) {
		if (json_object_get(root, "error"))
			resp_error_text(body, len, why, whylen);
		else
			snprintf(why, whylen, "bulk response has no items");
		goto out;
	}
	if (nsent < 0 || json_array_size(arr) != (size_t)nsent) {
		snprintf(why, whylen, "bulk response has %zu items for %d sent",
		    json_array_size(arr), nsent);
		goto out;
	}
	for (i = 0; i < (size_t)nsent; i++)
		if (classify_item(json_array_get(arr, i), &items[i], why,
		    whylen, (int)i) == -1)
			goto out;
	rv = RESP_ITEMS;
out:
	json_decref(root);
	return rv;
}

int
dbq_complete(const char *body, size_t len)
{
	json_t *root, *failures, *timed_out;
	int ok;

	if (!(root = json_loadb(body, len, 0, NULL)))
		return 0;
	failures = json_object_get(root, "failures");
	timed_out = json_object_get(root, "timed_out");
	ok = (!failures || (json_is_array(failures) &&
	    json_array_size(failures) == 0)) && !json_is_true(timed_out);
	json_decref(root);
	return ok;
}
