/*
 * source_ops.h - what a kind of source does against its server, behind one
 * table of operations (beside the light facts of lib/source.h): the
 * catalogue init reads. Implemented in lib/pg (pgsource.c) and lib/mysql
 * (mysource.c); found from the configuration's kind. Kept apart from
 * source.h so that a program that never connects to a source (the
 * shaper, the writer, ckpt) links no database client.
 */
#ifndef SOURCE_OPS_H
#define SOURCE_OPS_H

#include "err.h"
#include "source_cat.h"

struct config;

struct source_ops {
	/* init: the tables the role may read, those named chosen, their
	 * fields by mo (NULL: none): 0, 1 a name is not eligible (why in
	 * err), -1 with err */
	int	(*catalogue)(const struct config *, const char *const *want,
		    int n, const struct mapping_opts *mo, struct source_cat *,
		    struct p2o_err *);
};

/* source_ops.c */

/* the operations of cf's kind of source */
const struct source_ops *source_ops_of(const struct config *);

#endif
