/*
 * fuzz-ddl.c - libFuzzer target for capture-mysql's reading of a QUERY
 * event's SQL (ddl.c). Input: a statement's text. Whatever it is, the
 * read ends with a verb and tables whose names lie inside its buffer, as
 * many as the verb can name (none for BEGIN, COMMIT, XA and the others,
 * at most one for TRUNCATE, ALTER, CREATE, pairs for RENAME), and a
 * second read of the same text into the same struct gives the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../capture-mysql/binlog.h"

static void
check(const struct ddl *d)
{
	int i;

	if (d->n < 0 || d->verb < DDL_OTHER || d->verb > DDL_CREATE)
		abort();
	switch (d->verb) {
	case DDL_TRUNCATE:
	case DDL_ALTER:
	case DDL_CREATE:
		if (d->n > 1)
			abort();
		break;
	case DDL_RENAME:
		if (d->n % 2)
			abort();
		break;
	case DDL_DROP:
		break;
	default:
		if (d->n != 0)
			abort();
	}
	for (i = 0; i < d->n; i++) {
		if (d->t[i].db + d->t[i].dblen > d->names.len ||
		    d->t[i].table + d->t[i].tablelen > d->names.len)
			abort();
		if (!d->t[i].named && (d->verb != DDL_RENAME || i % 2 == 0))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ddl d;
	enum ddl_verb verb;
	char *names;
	size_t nlen;
	int n;

	ddl_init(&d);
	ddl_read(&d, (const char *)data, size, "db", 2);
	check(&d);
	verb = d.verb;
	n = d.n;
	nlen = d.names.len;
	names = malloc(nlen + 1);
	if (nlen)
		memcpy(names, d.names.buf, nlen);
	ddl_read(&d, (const char *)data, size, "db", 2);
	if (d.verb != verb || d.n != n || d.names.len != nlen ||
	    (nlen && memcmp(names, d.names.buf, nlen) != 0))
		abort();
	free(names);
	ddl_release(&d);
	return 0;
}
