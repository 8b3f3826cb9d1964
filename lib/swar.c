/*
 * swar.c - the long-run halves of swar.h's scans: a text value of kilobytes
 * (the bench's wide rows, most of their bytes) is crossed sixty-four bytes
 * a step, in AVX2 registers where the CPU has them (asked once, at the
 * first long run), else in four SSE2 ones. Out of line, so that the short
 * strings of a narrow row keep swar.h's inline sixteen-byte loop and never
 * pay a call. Each returns the first byte its set holds, exactly, or the
 * first of the last 0-63 bytes, which the caller's loops look at.
 */
#include <stdint.h>

#include "swar.h"

#ifdef __SSE2__

/* the bytes a JSON string cannot hold as they are: '"', '\\', and below
 * 0x20 in a signed compare, which also takes every byte from 0x80 up */
#define JSON16(v) _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(		\
	_mm_cmpeq_epi8((v), q), _mm_cmpeq_epi8((v), bs)),		\
	_mm_cmplt_epi8((v), sp)))
#define OF4_16(v) _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(		\
	_mm_cmpeq_epi8((v), va), _mm_cmpeq_epi8((v), vb)),		\
	_mm_or_si128(_mm_cmpeq_epi8((v), vc), _mm_cmpeq_epi8((v), vd))))
#define LOAD16(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define MASK64(M, p) ((uint64_t)(unsigned)M(LOAD16(p)) |		\
	(uint64_t)(unsigned)M(LOAD16((p) + 16)) << 16 |			\
	(uint64_t)(unsigned)M(LOAD16((p) + 32)) << 32 |			\
	(uint64_t)(unsigned)M(LOAD16((p) + 48)) << 48)

static const unsigned char *
json_sse2(const unsigned char *p, const unsigned char *end)
{
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const __m128i sp = _mm_set1_epi8(0x20);
	uint64_t m;

	for (; end - p >= 64; p += 64)
		if ((m = MASK64(JSON16, p)) != 0)
			return p + __builtin_ctzll(m);
	return p;
}

static const unsigned char *
of4_sse2(const unsigned char *p, const unsigned char *end, unsigned char a,
    unsigned char b, unsigned char c, unsigned char d)
{
	const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
	const __m128i vc = _mm_set1_epi8((char)c), vd = _mm_set1_epi8((char)d);
	uint64_t m;

	for (; end - p >= 64; p += 64)
		if ((m = MASK64(OF4_16, p)) != 0)
			return p + __builtin_ctzll(m);
	return p;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define JSON32(v) _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(	\
	_mm256_cmpeq_epi8((v), q), _mm256_cmpeq_epi8((v), bs)),		\
	_mm256_cmpgt_epi8(sp, (v))))
#define OF4_32(v) _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(	\
	_mm256_cmpeq_epi8((v), va), _mm256_cmpeq_epi8((v), vb)),		\
	_mm256_or_si256(_mm256_cmpeq_epi8((v), vc),			\
	_mm256_cmpeq_epi8((v), vd))))
#define LOAD32(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define MASK64X2(M, p) ((uint64_t)(uint32_t)M(LOAD32(p)) |		\
	(uint64_t)(uint32_t)M(LOAD32((p) + 32)) << 32)

AVX2 static const unsigned char *
json_avx2(const unsigned char *p, const unsigned char *end)
{
	const __m256i q = _mm256_set1_epi8('"'), bs = _mm256_set1_epi8('\\');
	const __m256i sp = _mm256_set1_epi8(0x20);
	uint64_t m;

	for (; end - p >= 64; p += 64)
		if ((m = MASK64X2(JSON32, p)) != 0)
			return p + __builtin_ctzll(m);
	return p;
}

AVX2 static const unsigned char *
of4_avx2(const unsigned char *p, const unsigned char *end, unsigned char a,
    unsigned char b, unsigned char c, unsigned char d)
{
	const __m256i va = _mm256_set1_epi8((char)a);
	const __m256i vb = _mm256_set1_epi8((char)b);
	const __m256i vc = _mm256_set1_epi8((char)c);
	const __m256i vd = _mm256_set1_epi8((char)d);
	uint64_t m;

	for (; end - p >= 64; p += 64)
		if ((m = MASK64X2(OF4_32, p)) != 0)
			return p + __builtin_ctzll(m);
	return p;
}
#endif

/* 1 when the AVX2 halves are to be used: the CPU asked once (the answer
 * is the same whoever asks first, so a race only asks twice) */
static int
use_avx2(void)
{
	static int known;	/* 0 not asked, 1 no, 2 yes */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (k == 0) {
		k = 1;
#if defined(__x86_64__) && defined(__GNUC__)
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx2"))
			k = 2;
#endif
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == 2;
}

const unsigned char *
swar_json_plain_long(const unsigned char *p, const unsigned char *end)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (use_avx2())
		return json_avx2(p, end);
#endif
	return json_sse2(p, end);
}

const unsigned char *
swar_none_of4_long(const unsigned char *p, const unsigned char *end,
    unsigned char a, unsigned char b, unsigned char c, unsigned char d)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (use_avx2())
		return of4_avx2(p, end, a, b, c, d);
#endif
	return of4_sse2(p, end, a, b, c, d);
}

#else

const unsigned char *
swar_json_plain_long(const unsigned char *p, const unsigned char *end)
{
	(void)end;
	return p;
}

const unsigned char *
swar_none_of4_long(const unsigned char *p, const unsigned char *end,
    unsigned char a, unsigned char b, unsigned char c, unsigned char d)
{
	(void)end; (void)a; (void)b; (void)c; (void)d;
	return p;
}

#endif
