/*
 * hex.h - the value of one hexadecimal digit, for the parsers of LSNs,
 * bytea, URL escapes and GTID sets. Inline: it sits in their inner loops.
 */
#ifndef HEX_H
#define HEX_H

/* 0-15, or -1 when c is not a hexadecimal digit (either case) */
static inline int
hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
