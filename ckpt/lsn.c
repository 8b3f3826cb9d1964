/*
 * lsn.c - PostgreSQL's textual LSN ("16/B374D848") and the 64-bit position
 * it names. ckpt parses it only for `ckpt put --lsn` and for checkpoint
 * documents that stored an LSN without a position; nothing else here knows
 * what a position means.
 */
#include <stdio.h>

#include "ckpt.h"

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 1 to 8 hex digits ending at stop; returns the end or NULL */
static const char *
hexpart(const char *s, char stop, uint32_t *out)
{
	uint32_t v = 0;
	int n = 0, d;

	while ((d = hexval(*s)) >= 0) {
		if (++n > 8)
			return NULL;
		v = v << 4 | (uint32_t)d;
		s++;
	}
	if (n == 0 || *s != stop)
		return NULL;
	*out = v;
	return s;
}

int
ckpt_lsn_parse(const char *text, uint64_t *pos)
{
	uint32_t hi, lo;
	const char *s;

	if (text == NULL)
		return -1;
	if ((s = hexpart(text, '/', &hi)) == NULL)
		return -1;
	if (hexpart(s + 1, '\0', &lo) == NULL)
		return -1;
	*pos = (uint64_t)hi << 32 | lo;
	return 0;
}

void
ckpt_lsn_format(uint64_t pos, char *buf, size_t len)
{
	snprintf(buf, len, "%X/%X", (unsigned)(pos >> 32), (unsigned)pos);
}
