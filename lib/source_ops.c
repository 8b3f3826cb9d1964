/*
 * source_ops.c - the kind of source's operations, from the configuration:
 * each light module (lib/source.h) beside its operations table.
 */
#include <stddef.h>

#include "config.h"
#include "source.h"
#include "source_ops.h"

extern const struct source_module source_postgres, source_mysql;
extern const struct source_ops pgsource_ops, mysource_ops;

static const struct {
	const struct source_module *mod;
	const struct source_ops *ops;
} kinds[] = {
	{ &source_postgres, &pgsource_ops },
	{ &source_mysql, &mysource_ops },
};

const struct source_ops *
source_ops_of(const struct config *cf)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].mod == cf->source)
			return kinds[i].ops;
	/* a configuration always names a kind its loader resolved */
	return NULL;
}
