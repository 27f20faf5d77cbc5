// rsqrt through AVX-512's estimate and one Newton step. Private to the CPU code generator:
// includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

namespace duet::rt::cpu {

/// The builtin library computes rsqrt(float) as `1.0f / sqrt(x)` with both operations marked
/// `arcp` (runtime/builtins/cpu/math.cl; nothing else in the library carries the flag, and user
/// code only under -cl-fast-relaxed-math or -cl-unsafe-math-optimizations). Left as they are,
/// the x86 back end would turn such a pair into its own estimate without the special cases
/// (rsqrt(0) would be NaN, not infinity). This pass runs at the end of either tier's
/// optimisation and rewrites every `fdiv arcp 1.0, sqrt(x)` on float or float vectors of up to
/// 16 elements, unless it carries every fast-math flag (-cl-fast-relaxed-math: the back end's
/// estimate is what the user asked for):
///  - where the target has AVX-512F (and AVX-512VL for fewer than 16 elements) and is not one
///    of AMD's cores (`cpu`, LLVM's name, not "znver*"), into `y = vrsqrt14(x)` (relative error
///    below 2^-14), one Newton step computed with fused multiply-adds, `y + y/2 * (1 -
///    (x*y)*y)`, and one vfixupimmps giving +-inf for x = +-0 and +0 for x = +inf (where
///    the step makes NaN), after the estimate's own special values: at most 1.04 ulp
///    over every non-negative float, NaN for the negative ones, exactly the special values
///    (checked exhaustively; the spec's limit is 2). On the lent Xeon (Emerald Rapids) N-body
///    ran 12-14% faster with it; on Zen 5, whose divider is fast, 10-30% slower than with
///    vsqrtps + vdivps (runtime/devices/cpu/README.md, "rsqrt");
///  - otherwise into the plain correctly rounded `1.0 / sqrt(x)` (the flags dropped).
/// DUET_CPU_RSQRT_ESTIMATE=1 or 0 forces the choice (AVX-512 still needed for the estimate).
/// Returns the number of divisions rewritten into estimates.
unsigned rsqrtEstimates(llvm::Module& module, const std::string& cpu, const std::string& features);

/// What DUET_CPU_RSQRT_ESTIMATE adds to the JIT memo's key (the CPU is in the key already).
std::string rsqrtEstimatesMemoKey();

} // namespace duet::rt::cpu
