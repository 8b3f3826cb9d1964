/*
 * lsn.c - the one parser and printer of PostgreSQL's textual LSN.
 */
#include <stdio.h>

#include "hex.h"
#include "lsn.h"

int
lsn_parse(const char *s, uint64_t *pos)
{
	uint64_t part[2] = { 0, 0 };
	int i, nd;

	if (s == NULL)
		return -1;
	for (i = 0; i < 2; i++) {
		for (nd = 0; hex_value(*s) >= 0; s++, nd++) {
			if (nd == 8)
				return -1;
			part[i] = part[i] << 4 | (uint64_t)hex_value(*s);
		}
		if (nd == 0)
			return -1;
		if (i == 0 && *s++ != '/')
			return -1;
	}
	if (*s != '\0')
		return -1;
	*pos = part[0] << 32 | part[1];
	return 0;
}

void
lsn_format(uint64_t pos, char buf[LSN_TEXT_MAX])
{
	snprintf(buf, LSN_TEXT_MAX, "%X/%X", (unsigned)(pos >> 32),
	    (unsigned)pos);
}
