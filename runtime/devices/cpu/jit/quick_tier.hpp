// The quick tier's optimisation (tiered compilation: devices/cpu/tiered_code.hpp). Private to
// the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace duet::rt::cpu {

/// The quick tier's optimisation of `m` for `tm` (a target machine with fast instruction
/// selection): inline the small functions that hold atomics that inlineAtomicsEarly left (their
/// constant orders and scopes fold: cpu::inlineAtomicCallees), promote private variables to
/// registers, fold the copies and branches the work-group pass leaves, drop what nothing calls,
/// make __local atomics plain (cpu::plainLocalAtomics: nothing is vectorised here), and call
/// libmvec's variants for the maths functions the optimised tier's vectoriser maps
/// (cpu::sameLibmvecVariant, with `unsafeMath` as there), so both tiers give the same bits. No
/// other inlining, no loop passes, no vectorisers: a few percent of the full pipeline's time.
void quickOptimise(llvm::Module& m, llvm::TargetMachine& tm, bool unsafeMath);

} // namespace duet::rt::cpu
