/*
 * sqltext.c - SQL text the command writes: names and strings quoted for
 * a script it prints without a connection (setup-sql, status's DROP), and
 * a section's table quoted by the connection it is sent on.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pg/pgconn.h"

char *
pg_qrel(struct pg_conn *c, const struct sync_section *s, struct p2o_err *e)
{
	char *a, *b, *q;

	if ((a = pgconn_ident(c, s->schema, e)) == NULL)
		return NULL;
	if ((b = pgconn_ident(c, s->table, e)) == NULL) {
		free(a);
		return NULL;
	}
	q = xmalloc(strlen(a) + strlen(b) + 2);
	sprintf(q, "%s.%s", a, b);
	free(a);
	free(b);
	return q;
}
