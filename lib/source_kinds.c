/*
 * source_kinds.c - the kind of source's operations, from the
 * configuration: each light module (lib/source.h) beside its operations
 * table. Apart from source_ops.c because naming the tables links every
 * kind's client library (libpq, libmariadb and what they load): only a
 * program that calls source_ops_of carries them all; a capture, which
 * needs only its own kind's, does not (each such library costs a process
 * its relocated pages, docs/benchmarks.md "sources in one process").
 */
#include <stddef.h>

#include "config.h"
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
