/*
 * writer-test.h - what the writer's unit tests share: a frame over a JSON
 * literal, appending one to a batch, and the target module. Header-only, like tap.h.
 */
#ifndef WRITER_TEST_H
#define WRITER_TEST_H

#include <stdio.h>
#include <string.h>

#include "../../writer/writer.h"

static inline struct frame
mkframe(const char *json)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.obj.p = json;
	f.obj.n = strlen(json);
	if (!jobj_get(f.obj, "k", &f.kind))
		f.kind.p = NULL;
	return f;
}

/* the target the writer's tests write to */
static inline const struct target_module *
tmod(void)
{
	return target_module_find("opensearch");
}

/* 0, or -1 with the reason as a TAP comment */
static inline int
add(struct batch *b, const char *json)
{
	struct frame f = mkframe(json);
	struct p2o_err err;

	if (batch_add(b, &f, &err) == -1) {
		printf("# batch_add: %s: %s\n", err.msg, json);
		return -1;
	}
	return 0;
}

#endif
