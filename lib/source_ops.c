/*
 * source_ops.c - the lookup of a configuration's source operations, and
 * what every kind's verdicts share: how one is filled, and how a program
 * that must stop at the first failure takes them. Knows no kind's SQL.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "source_ops.h"

const struct source_ops *
source_ops_of(const struct config *cfg)
{
	switch (cfg->source_kind) {
	case SOURCE_MYSQL:
		return &my_source_ops;
	case SOURCE_POSTGRES:
	default:
		return &pg_source_ops;
	}
}

void
source_verdict_set(struct source_verdict *v, enum source_verdict_kind kind,
    int code, const char *subject, const char *fmt, ...)
{
	va_list ap;

	v->kind = kind;
	v->code = kind == SV_FAIL ? code : 0;
	v->subject = subject;
	va_start(ap, fmt);
	vsnprintf(v->text, sizeof(v->text), fmt, ap);
	va_end(ap);
	v->remedy[0] = '\0';
	v->apply = 0;
}

int
source_refuse(void *arg, const struct source_verdict *v)
{
	struct p2o_err *e = arg;

	switch (v->kind) {
	case SV_FAIL:
		return p2o_fail(e, v->code, "%s", v->text);
	case SV_NOTE:
		log_warnx("%s", v->text);
		break;
	case SV_OK:
	case SV_ABSENT:
		log_debug("%s%s%s", v->subject ? v->subject : "",
		    v->subject ? ": " : "", v->text);
		break;
	}
	return 0;
}

void
source_status_release(struct source_status *st)
{
	int i;

	for (i = 0; i < st->nslots; i++) {
		free(st->slots[i].name);
		free(st->slots[i].wal_status);
		free(st->slots[i].drop);
	}
	free(st->slots);
	if (st->priv_free != NULL)
		st->priv_free(st->priv);
	memset(st, 0, sizeof(*st));
}
