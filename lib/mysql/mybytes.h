/*
 * mybytes.h - reading MySQL's wire and binlog integers: little-endian
 * fixed widths and the length-encoded integer, through a bounded cursor
 * that turns a read past the end into a flag instead of a crash. Shared
 * by the binlog decoder (capture-mysql), GTID set bodies and values.
 */
#ifndef MYBYTES_H
#define MYBYTES_H

#include <stddef.h>
#include <stdint.h>

/* mybytes.c (and inline) */

/* little-endian readers: callers check lengths first */
static inline uint32_t
le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t
le24(const unsigned char *p)
{
	return le16(p) | (uint32_t)p[2] << 16;
}

static inline uint32_t
le32(const unsigned char *p)
{
	return le16(p) | (uint32_t)le16(p + 2) << 16;
}

static inline uint64_t
le_n(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static inline uint64_t
le64(const unsigned char *p)
{
	return le_n(p, 8);
}

/* a bounded cursor: reads past the end set bad and return zeros */
struct bcur {
	const unsigned char *p;
	size_t	 n, off;
	int	 bad;
};

void	bcur_init(struct bcur *, const void *p, size_t n);
size_t	bcur_left(const struct bcur *);
/* a pointer to the next k bytes, or NULL (and bad) */
const unsigned char *bcur_take(struct bcur *, size_t k);
uint64_t bcur_le(struct bcur *, int k);
/* MySQL's length-encoded integer (0xfc/0xfd/0xfe prefixes) */
uint64_t bcur_packed(struct bcur *);

#endif
