/*
 * source_ops.c - what every kind's verdicts share: how one is filled, and
 * how a program that must stop at the first failure takes them; and the
 * release of what status fills. Knows no kind's SQL, and names no kind's
 * operations table (source_kinds.c does): a capture judges its own
 * server's verdicts through source_refuse without linking every other
 * kind's database client.
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
