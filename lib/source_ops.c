/*
 * source_ops.c - the kind of source's operations, from the configuration:
 * each light module (lib/source.h) beside its operations table; and what
 * every kind's verdicts share: how one is filled, and how a program that
 * must stop at the first failure takes them. Knows no kind's SQL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "source_ops.h"

extern const struct source_module source_postgres, source_mysql;

/* poll: the operations of the kind's poll mode (source.mode: poll), whose
 * server keeps nothing of the stream's; NULL for a kind without it */
static const struct {
	const struct source_module *mod;
	const struct source_ops *ops, *poll;
} kinds[] = {
	{ &source_postgres, &pgsource_ops, &pgpoll_ops },
	{ &source_mysql, &mysource_ops, NULL },
};

const struct source_ops *
source_ops_of(const struct config *cf)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].mod == cf->source)
			return cf->poll && kinds[i].poll != NULL ?
			    kinds[i].poll : kinds[i].ops;
	/* a configuration always names a kind its loader resolved */
	return NULL;
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

void
source_ckpt_release(struct source_ckpt *ck)
{
	int i, j;

	for (i = 0; i < ck->ntables; i++) {
		for (j = 0; j < ck->tables[i].ncur; j++) {
			free(ck->tables[i].by[j]);
			if (ck->tables[i].at != NULL)
				free(ck->tables[i].at[j]);
		}
		free(ck->tables[i].by);
		free(ck->tables[i].at);
		free(ck->tables[i].table);
	}
	free(ck->tables);
	ck->tables = NULL;
	ck->ntables = 0;
}
