// glibc's libmvec vector maths for the CPU JIT: the loop vectoriser's table, and every other call
// of those functions made through the same variant. Private to the CPU code generator: includes
// LLVM headers.
#pragma once

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <string>
#include <vector>

namespace duet::rt::cpu {

/// What decides the libmvec variants of a module's code: the ISA (AVX2, AVX-512F) and the vector
/// width the code is generated for (`prefer-vector-width`, host_cpu.hpp).
struct LibmvecTarget {
    bool avx2 = false;
    bool avx512 = false;
    unsigned vectorBits = 128;
};

/// `tm`'s ISA and the vector width of `m`'s functions (the widest its ISA has where they name
/// none).
LibmvecTarget libmvecTarget(const llvm::TargetMachine& tm, const llvm::Module& m);

/// Vector variants of libm functions from glibc's libmvec, for the loop vectoriser. Each function
/// and type computes with one variant on a host, its *own* one: the widest the vector width and
/// the ISA allow (AVX-512's at 512 bits, AVX2's at 256, SSE's otherwise). The table holds that
/// variant and, at the other widths, only the variants measured to give the same bits on every
/// input (libmvec.cpp), so the vectoriser never picks one that computes differently. The
/// functions whose OpenCL ulp limit is under libmvec's 4 only with `unsafeMath`.
std::vector<llvm::VecDesc> libmvecTable(const LibmvecTarget& target, bool unsafeMath);

/// After either tier's optimisation: every call of a function the table maps (with `unsafeMath`:
/// the same functions as libmvecTable) that is not already a call of its own variant — a scalar
/// libm call or intrinsic (the quick tier's, a vectorised loop's remainder, a loop left scalar)
/// or a vector intrinsic of another width — becomes calls of the function's own variant: a
/// scalar broadcast into every lane and lane 0 taken, a vector cut into (padded) pieces of the
/// variant's width. So one kernel gives the same bits for the same input in every work-item,
/// tier and loop shape. Returns the number of calls rewritten.
unsigned sameLibmvecVariant(llvm::Module& m, const LibmvecTarget& target, bool unsafeMath);

/// DUET_CPU_SAME_MATH=0 (for comparisons): the table with every width libmvec exports and scalar
/// calls left to libm, as before the rewrite (different bits in different loop shapes and tiers).
bool sameMathEnabled();

/// What the choices above add to the JIT memo's key.
std::string libmvecMemoKey();

} // namespace duet::rt::cpu
