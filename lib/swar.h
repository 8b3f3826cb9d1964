/*
 * swar.h - eight bytes tested at once in a 64-bit word, for the loops that
 * cross long runs of ordinary text: JSON strings (jscan.c reading them,
 * sbuf.c writing them) and COPY text fields (loader/copytext.c). Inline:
 * each sits in an inner loop. A test may flag a byte that is fine (after
 * a flagged one): callers then look byte by byte; it never misses one.
 */
#ifndef SWAR_H
#define SWAR_H

#include <stdint.h>
#include <string.h>

#define SWAR_ONES	0x0101010101010101ULL
#define SWAR_HIGHS	0x8080808080808080ULL

/* nonzero when one of the 8 bytes of x is zero */
static inline uint64_t
swar_zero8(uint64_t x)
{
	return (x - SWAR_ONES) & ~x & SWAR_HIGHS;
}

/* nonzero when one of the 8 bytes of x is byte c */
static inline uint64_t
swar_has8(uint64_t x, unsigned char c)
{
	return swar_zero8(x ^ (SWAR_ONES * c));
}

/* nonzero when one of the 8 bytes of x cannot stand as it is inside a
 * JSON string: a quote, a backslash, a control character or a non-ASCII
 * byte (which needs its UTF-8 sequence checked) */
static inline uint64_t
swar_json_special8(uint64_t x)
{
	return swar_has8(x, '"') | swar_has8(x, '\\') |
	    ((x - SWAR_ONES * 0x20) & SWAR_HIGHS) | (x & SWAR_HIGHS);
}

/* past the 8-byte blocks at p that hold nothing swar_json_special8 flags;
 * the bytes after it are for the caller to look at one by one */
static inline const unsigned char *
swar_json_plain(const unsigned char *p, const unsigned char *end)
{
	uint64_t x;

	while (end - p >= 8) {
		memcpy(&x, p, 8);
		if (swar_json_special8(x))
			break;
		p += 8;
	}
	return p;
}

#endif
