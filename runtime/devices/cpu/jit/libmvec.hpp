// The loop vectoriser's table of glibc's libmvec vector maths functions for the CPU JIT.
#pragma once

#include <llvm/Analysis/TargetLibraryInfo.h>

#include <string>
#include <vector>

namespace duet::rt::cpu {

/// Vector variants of libm functions from glibc's libmvec, for the loop vectoriser: what
/// libmvec exports at each width the target's `features` have; the functions whose OpenCL
/// ulp limit is under libmvec's 4 only with `unsafeMath`.
std::vector<llvm::VecDesc> libmvecTable(const std::string& features, bool unsafeMath);

} // namespace duet::rt::cpu
