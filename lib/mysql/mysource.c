/*
 * mysource.c - MySQL's and MariaDB's operations table (lib/source_ops.h):
 * each entry is the source layer's own function.
 */
#include "mylist.h"
#include "source_ops.h"

const struct source_ops mysource_ops = {
	.catalogue = mylist_catalogue,
};
