/*
 * source.h - what the engine needs to know about a kind of source without
 * knowing the source: which capture program reads it, and what identifies
 * one stream of it (the checkpoint's document id and the members a stored
 * checkpoint is bound by). Everything else about a source stays in its
 * capture and its loader; positions travel as an opaque u64 and text.
 */
#ifndef SOURCE_H
#define SOURCE_H

#include "config.h"

#define SOURCE_BIND_MAX	4

struct source_ident {
	const char *kind;	/* "postgres", "mysql": stored as "source" */
	char	*doc_id;	/* "postgres:<slot>", "mysql:<server_id>" */
	int	 nbind;
	const char *bind_name[SOURCE_BIND_MAX];	/* "slot", "publication" */
	char	*bind_value[SOURCE_BIND_MAX];
};

/* source.c */

/* 0, or -1 with a message (a kind no capture exists for) */
int	source_ident_init(struct source_ident *, const struct config *,
	    char *err, size_t errlen);
void	source_ident_release(struct source_ident *);
/* the capture program for a kind of source ("capture-pg") */
const char *source_capture(enum source_kind);

#endif
