// Integer division that cannot trap on the host: x86's div/idiv fault on a zero divisor and on
// INT_MIN / -1, which OpenCL C leaves undefined but must not kill the process running a kernel.
// Private to the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

namespace duet::rt {

/// Replaces the divisor of every sdiv, udiv, srem and urem (scalar or vector) in `module` that
/// is not a constant known to be safe by one that is: 1 where the divisor is 0, and, for the
/// signed forms, also where the dividend is the type's minimum and the divisor -1. Those lanes
/// then give x / 1 (x) and x % 1 (0), which OpenCL C allows (the results are undefined there);
/// every other lane is unchanged. Runs before optimisation, so that the optimiser sees a
/// divisor it can prove non-zero rather than an undefined division it may reason from.
/// Returns whether anything changed.
bool guardIntegerDivision(llvm::Module& module);

} // namespace duet::rt
