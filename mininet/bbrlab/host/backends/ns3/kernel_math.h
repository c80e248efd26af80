// The variants' decision functions (kernel/variants/*_math.h), compiled in C++
// unchanged, as the kernel modules and the host tests (kernel/tests/) compile
// them. kernel/tests/kshim.h gives them the kernel's types and helpers (u32,
// u64, s64, mul_u64_u32_shr, div64_s64, BW_SCALE, BBR_UNIT, ...). Its min, max
// and clamp are macros, which would break the C++ library: they are expanded in
// the math headers' bodies here and undefined afterwards, so this header must
// come after every system and ns-3 header.
#ifndef BBRLAB_KERNEL_MATH_H
#define BBRLAB_KERNEL_MATH_H

#include "kshim.h"

#include "adaptive_bbr_math.h"
#include "bbq_math.h"
#include "bbr_e_math.h"

#undef min
#undef max
#undef min_t
#undef max_t
#undef clamp

#endif // BBRLAB_KERNEL_MATH_H
