/*
 * fuzz-jscan.c - libFuzzer target for the JSON validator and span readers.
 * Whatever jscan_validate accepts is walked completely: every member and
 * element iterated, every string unescaped three ways, every number
 * parsed. jansson is the second opinion: a text it accepts (within our
 * nesting limit) must be valid for jscan too, and the reverse. The
 * members jscan_validate_top notes equal the members a walk finds.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I lib \
 *       tests/fuzz/fuzz-jscan.c lib/jscan.c lib/sbuf.c -ljansson \
 *       -o build/fuzz-jscan
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "jscan.h"
#include "sbuf.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
walk_string(struct jspan s)
{
	char *d = jstr_dup(s), small[8];
	size_t dl = strlen(d);
	int rc;

	/* an embedded \u0000 ends the C string early; then the span is not
	 * equal to the truncated text */
	if (memmem(s.p, s.n, "\\u0000", 6) == NULL)
		check(jstr_eq(s, d) && dl <= s.n - 2);
	rc = jstr_copy(s, small, sizeof(small));
	if (rc == 0)
		check(strcmp(small, d) == 0);
	free(d);
}

static void
walk(struct jspan v, int depth)
{
	struct jiter it;
	struct jspan k, e, found;
	uint64_t u;
	int64_t i;
	char *key;

	check(depth <= 512);
	check(v.n > 0);
	/* every span the readers hand out is itself a valid document */
	check(jscan_validate(v.p, v.n, NULL, NULL) == 0);
	switch (jspan_type(v)) {
	case J_OBJECT:
		check(jiter_init(&it, v) == 0);
		while (jiter_member(&it, &k, &e)) {
			check(jspan_type(k) == J_STRING);
			walk_string(k);
			key = jstr_dup(k);
			/* the first member of that name; NUL in a name makes
			 * it unreachable by a C string */
			if (memmem(k.p, k.n, "\\u0000", 6) == NULL)
				check(jobj_get(v, key, &found));
			free(key);
			walk(e, depth + 1);
		}
		break;
	case J_ARRAY:
		check(jiter_init(&it, v) == 0);
		while (jiter_elem(&it, &e))
			walk(e, depth + 1);
		break;
	case J_STRING:
		walk_string(v);
		break;
	case J_NUMBER:
		if (jnum_u64(v, &u) == 0)
			check(v.p[0] != '-');
		if (jnum_i64(v, &i) == 0 && i >= 0 && v.p[0] != '-')
			check(jnum_u64(v, &u) == 0 && u == (uint64_t)i);
		break;
	case J_TRUE:
		check(v.n == 4);
		break;
	case J_FALSE:
		check(v.n == 5);
		break;
	case J_NULL:
		check(v.n == 4);
		break;
	default:
		check(0);
	}
}

static int
trim(const char *p, size_t n, struct jspan *v)
{
	while (n && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
		n--;
	}
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' ||
	    p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	v->p = p;
	v->n = n;
	return n > 0;
}

/* the noted members are the object's members, in order, and picking
 * through them finds what a walk finds */
static void
check_top(const char *s, size_t size, struct jspan v)
{
	struct jtop top;
	struct jiter it;
	struct jspan k, e, a[2], b[2];
	const char *names[2];
	char *key;
	int i = 0;

	check(jscan_validate_top(s, size, &top, NULL, NULL) == 0);
	check(top.obj.p == v.p && top.obj.n == v.n);
	if (jspan_type(v) != J_OBJECT) {
		check(!top.complete);
		return;
	}
	check(jiter_init(&it, v) == 0);
	while (jiter_member(&it, &k, &e)) {
		if (i < top.n)
			check(top.key[i].p == k.p && top.key[i].n == k.n &&
			    top.val[i].p == e.p && top.val[i].n == e.n);
		i++;
	}
	check(top.complete == (i <= JTOP_MAX) && top.n == (i < JTOP_MAX ?
	    i : JTOP_MAX));
	for (i = 0; i < top.n; i++) {
		if (memmem(top.key[i].p, top.key[i].n, "\\u0000", 6) != NULL)
			continue;
		key = jstr_dup(top.key[i]);
		names[0] = key;
		names[1] = "absent\x01";
		jtop_pick(&top, v, names, 2, a);
		jobj_pick(v, names, 2, b);
		check(a[0].p == b[0].p && a[0].n == b[0].n && a[1].p == NULL &&
		    b[1].p == NULL);
		free(key);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *why = NULL;
	size_t off = 0, i, opens = 0;
	json_error_t jerr;
	struct jspan v;
	json_t *j;
	int rc;

	rc = jscan_validate(s, size, &off, &why);
	if (rc == 0) {
		check(trim(s, size, &v));
		walk(v, 0);
		check_top(s, size, v);
	} else
		check(why != NULL && off <= size);

	/* jansson allows deeper nesting, and it ends a text at a NUL byte */
	for (i = 0; i < size; i++) {
		opens += data[i] == '[' || data[i] == '{';
		if (data[i] == '\0')
			return 0;
	}
	if (opens > 512)
		return 0;
	j = json_loadb(s, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (j != NULL) {
		check(rc == 0);
		json_decref(j);
	} else if (rc == 0) {
		/* jansson refuses integers and reals it cannot hold and
		 * NUL in member names; nothing else valid */
		if (strstr(jerr.text, "too big") == NULL &&
		    strstr(jerr.text, "overflow") == NULL &&
		    strstr(jerr.text, "NUL byte in object key") == NULL) {
			fprintf(stderr, "jansson: %s\n", jerr.text);
			abort();
		}
	}
	return 0;
}
