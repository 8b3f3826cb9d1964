/*
 * writer-test.h - what the writer's unit tests share: a frame over a JSON
 * literal, and appending one to a batch. Header-only, like tap.h.
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

/* 0, or -1 with the reason as a TAP comment */
static inline int
add(struct batch *b, const char *json)
{
	struct frame f = mkframe(json);
	char err[256];

	if (batch_add(b, &f, err, sizeof(err)) == -1) {
		printf("# batch_add: %s: %s\n", err, json);
		return -1;
	}
	return 0;
}

#endif
