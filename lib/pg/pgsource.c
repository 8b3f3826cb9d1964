/*
 * pgsource.c - PostgreSQL's operations table (lib/source_ops.h): each
 * entry is the source layer's own function.
 */
#include "pglist.h"
#include "source_ops.h"

const struct source_ops pgsource_ops = {
	.catalogue = pglist_catalogue,
};
