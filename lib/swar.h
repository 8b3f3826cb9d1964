/*
 * swar.h - eight bytes tested at once in a 64-bit word (sixteen in an SSE2
 * register where there is one), for the loops that cross long runs of
 * ordinary text: JSON strings (jscan.c reading them,
 * sbuf.c writing them) and COPY text fields (loader/copytext.c). Inline:
 * each sits in an inner loop. A test may flag a byte that is fine (after
 * a flagged one): callers then look byte by byte; it never misses one.
 */
#ifndef SWAR_H
#define SWAR_H

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* swar.c: past the 64-byte blocks at p that hold none of the bytes the
 * inline scan of the same name looks for, and at the first such byte of
 * the block that holds one; called once a run is long (SWAR_LONG bytes
 * left after a clean sixteen) */
#define SWAR_LONG	128
const unsigned char *swar_json_plain_long(const unsigned char *,
    const unsigned char *);
const unsigned char *swar_none_of4_long(const unsigned char *,
    const unsigned char *, unsigned char, unsigned char, unsigned char,
    unsigned char);

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

/* the index in its block of the first byte a nonzero mask of the tests
 * above flags. The first flag is never a false one (a false flag only
 * follows a true one, in the order a little-endian load gives the bytes),
 * so the caller lands on the byte itself and need not walk up to it; on
 * a big-endian machine it is 0 and the caller's byte loop walks. */
static inline unsigned
swar_first(uint64_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (unsigned)__builtin_ctzll(m) >> 3;
#else
	(void)m;
	return 0;
#endif
}

#ifdef __SSE2__
/* one bit for each of the sixteen bytes at p that swar_json_special8
 * would flag (a signed compare: below 0x20 is a control character, and a
 * byte from 0x80 up is negative) */
static inline unsigned
swar_json_mask16(const unsigned char *p)
{
	const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);

	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
	    _mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
	    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
	    _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
}
#endif

/* past the blocks at p that hold nothing swar_json_special8 flags, and up
 * to the first flagged byte of the block that holds one; the bytes after
 * it are for the caller to look at one by one. Sixteen bytes at a time
 * where SSE2 is (every x86-64): a long text value is most of a wide row,
 * and each stage crosses it once or twice. */
static inline const unsigned char *
swar_json_plain(const unsigned char *p, const unsigned char *end)
{
	uint64_t x, m;
#ifdef __SSE2__
	const __m128i v_quote = _mm_set1_epi8('"');
	const __m128i v_bslash = _mm_set1_epi8('\\');
	const __m128i v_space = _mm_set1_epi8(0x20);
	__m128i v;
	unsigned vm;

	while (end - p >= 16) {
		v = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* a signed compare: below 0x20 is a control character, and a
		 * byte from 0x80 up is negative */
		vm = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
		    _mm_cmpeq_epi8(v, v_quote), _mm_cmpeq_epi8(v, v_bslash)),
		    _mm_cmplt_epi8(v, v_space)));
		if (vm != 0)
			return p + __builtin_ctz(vm);
		p += 16;
		if (end - p >= SWAR_LONG) {
			p = swar_json_plain_long(p, end);
			if (end - p >= 64)
				return p;	/* at the byte */
		}
	}
#endif
	while (end - p >= 8) {
		memcpy(&x, p, 8);
		if ((m = swar_json_special8(x)) != 0)
			return p + swar_first(m);
		p += 8;
	}
	return p;
}

/* past the 16-byte blocks at p that hold none of the bytes a, b, c and
 * d, and up to the first of them in the block that holds one (SSE2); p
 * itself without SSE2. The caller's 8-byte and byte loops go on from
 * there. */
static inline const unsigned char *
swar_none_of4(const unsigned char *p, const unsigned char *end,
    unsigned char a, unsigned char b, unsigned char c, unsigned char d)
{
#ifdef __SSE2__
	const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
	const __m128i vc = _mm_set1_epi8((char)c), vd = _mm_set1_epi8((char)d);
	__m128i v;
	unsigned vm;

	while (end - p >= 16) {
		v = _mm_loadu_si128((const __m128i *)(const void *)p);
		vm = (unsigned)_mm_movemask_epi8(_mm_or_si128(
		    _mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)),
		    _mm_or_si128(_mm_cmpeq_epi8(v, vc), _mm_cmpeq_epi8(v, vd))));
		if (vm != 0)
			return p + __builtin_ctz(vm);
		p += 16;
		if (end - p >= SWAR_LONG) {
			p = swar_none_of4_long(p, end, a, b, c, d);
			if (end - p >= 64)
				return p;	/* at the byte */
		}
	}
#else
	(void)end; (void)a; (void)b; (void)c; (void)d;
#endif
	return p;
}

#endif
