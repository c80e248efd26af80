/* Just enough of the kernel's types and math helpers to compile the BBR
 * variants' *_math.h headers on the host (see harness.c). Helpers that round
 * are copied from the kernel (include/linux/math64.h, lib/math/int_sqrt.c) so
 * host and module truncate the same way. BBR_SCALE and BW_SCALE are
 * tcp_bbr.c's; tests/kernel/test_variant_math.py checks them against the
 * kernel source when it is available.
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <stdbool.h>
#include <stdint.h>

typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;

#define U32_MAX		((u32)~0U)
#define USEC_PER_SEC	1000000L

#define BW_SCALE	24
#define BW_UNIT		(1 << BW_SCALE)
#define BBR_SCALE	8
#define BBR_UNIT	(1 << BBR_SCALE)

#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define max_t(t, a, b)	max((t)(a), (t)(b))
#define clamp(v, lo, hi) min(max(v, lo), hi)

static inline u64 div_u64(u64 a, u32 b) { return a / b; }
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline s64 div64_s64(s64 a, s64 b) { return a / b; }
static inline u64 mul_u32_u32(u32 a, u32 b) { return (u64)a * b; }

static inline u64 mul_u64_u32_shr(u64 a, u32 mul, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * mul) >> shift);
}

/* include/linux/math64.h, generic version (little endian) */
static inline u64 mul_u64_u32_div(u64 a, u32 mul, u32 divisor)
{
	union {
		u64 ll;
		struct {
			u32 low, high;
		} l;
	} u, rl, rh;

	u.ll = a;
	rl.ll = mul_u32_u32(u.l.low, mul);
	rh.ll = mul_u32_u32(u.l.high, mul) + rl.l.high;
	rl.l.high = rh.ll % divisor;
	rh.ll /= divisor;
	rl.ll /= divisor;
	rl.l.high = rh.l.low;
	return rl.ll;
}

/* lib/math/int_sqrt.c (64-bit long) */
static inline u32 int_sqrt64(u64 x)
{
	u64 b, m, y = 0;

	if (x <= 1)
		return x;
	m = 1ULL << ((63 - __builtin_clzll(x)) & ~1U);
	while (m != 0) {
		b = y + m;
		y >>= 1;
		if (x >= b) {
			x -= b;
			y += m;
		}
		m >>= 2;
	}
	return y;
}

#endif /* KSHIM_H */
