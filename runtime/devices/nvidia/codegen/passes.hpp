// The NVIDIA code generator's module transformations, run in order by finalize.cpp. Private to
// devices/nvidia/codegen: includes LLVM headers.
#pragma once

#include "devices/nvidia/codegen/ptx_module.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/Module.h>

namespace llvm {
class PassBuilder;
}

#include <map>
#include <string>
#include <vector>

namespace duet::rt::nvptx {

/// The function the work-item builtins call for the launch block (builtins/nvidia/workitem.cl);
/// applyKernelAbi replaces each call with the kernel's hidden parameter.
inline constexpr const char* kLaunchBlockAccessor = "__duet_nv_launch";
/// The function checked code calls for its launch's guard record (ptx_module.hpp: GuardRecord,
/// a `ptr addrspace(1)`); applyKernelAbi replaces each call with the kernel's guard parameter.
inline constexpr const char* kGuardRecordAccessor = "__duet_nv_guard";
/// The dynamic shared memory that __local pointer arguments and kernel-scope __local variables
/// are offsets into.
inline constexpr const char* kLocalArgsSymbol = "__duet_local_args";

/// Defines what clang calls for OpenCL C 2.0+ generic pointers and no library provides for
/// nvptx: `__to_global`, `__to_local`, `__to_private` and `get_fence`, with the isspacep
/// intrinsics (a generic pointer into private memory points into PTX .local); "not in that
/// space" is NULL as clang spells it for the space (address_spaces.cpp).
void defineGenericAddressBuiltins(llvm::Module& m);

/// Makes every __constant pointer (nvptx address space 4, PTX .const) a generic pointer, so
/// that a __constant kernel argument, a buffer in global memory, is not read with ld.const
/// (constant_space.cpp says why). Program-scope __constant variables stay in .const.
void constantPointersToGeneric(llvm::Module& m);

/// Rewrites what LLVM 19's NVPTX backend cannot select, and which would abort the process
/// there ("Cannot select"): IR fences (to membar.cta / membar.gl by scope), atomic loads and
/// stores stronger than monotonic, and atomic read-modify-writes stronger than monotonic (the
/// backend would drop the ordering and emit a relaxed atom: fences go around them instead);
/// float sin, cos, exp, exp2, exp10, log, log2, log10 and tan intrinsics (libclc's native_ and
/// half_ functions) to the PTX approximate instructions; casts between two named address
/// spaces (legalizeAddressSpaceCasts). Returns one "error:" line per operation it cannot
/// rewrite (such an intrinsic on double, a program-scope variable initialised with a __local
/// pointer), empty when the module is fit for the backend. Idempotent: finalize runs it before
/// and after optimisation, the second time right before code generation.
std::string legalizeForNvptx(llvm::Module& m);

/// Adds to the optimiser's loop pipeline (after induction variables are simplified, before
/// LLVM's full unrolling) a pass that asks for full unrolling of loops with a constant count of
/// at most 32 iterations and at most 4096 instructions unrolled, and runtime unrolling by 4 of
/// short innermost loops that load global memory (loop_unrolling.cpp says why).
void registerLoopUnrolling(llvm::PassBuilder& pb);

/// Replaces each float division that may be 2.5 ulp off (clang's !fpmath on OpenCL C
/// divisions, absent under -cl-fp32-correctly-rounded-divide-sqrt) with PTX div.full.f32
/// (2 ulp), which is several times faster than the correctly rounded div.rn.f32 the back end
/// would emit. Runs after optimisation: the inline PTX would hide the division from it.
void relaxFloatDivision(llvm::Module& m);

/// Replaces each call of the float sqrt builtin that may be 3 ulp off (clang's !fpmath on
/// OpenCL C sqrt calls, absent under -cl-fp32-correctly-rounded-divide-sqrt) with PTX
/// sqrt.approx.f32 (relative error within 2^-23, denormals included), where libclc's sqrt is
/// the correctly rounded sqrt.rn.f32 sequence. Runs before optimisation, on the calls themselves:
/// libclc's own functions inline their square roots and keep them correctly rounded.
void relaxFloatSqrt(llvm::Module& m);

/// Rewrites global variables whose initializers hold three-element vectors (`__constant float3
/// t[6] = ...`) with those vectors widened to four elements: the same bytes at the same offsets,
/// which LLVM 19's NVPTX asm printer otherwise writes unpadded (vec3_initializers.cpp).
void widenVec3Initializers(llvm::Module& m);

/// Casts between two different non-generic address spaces, on which NVPTX's instruction
/// selector aborts ("Cannot cast between two non-generic address spaces"). OpenCL C cannot
/// write one, but the optimiser folds two casts through generic into one: a pointer made
/// generic and then cast to another named space, by to_local & co or an explicit cast, on a
/// path where it is not in that space. Each becomes the two casts again, the second as
/// nvvm.ptr.gen.to.* (cvta.to), which no IR pass folds back (constant expressions are made
/// instructions first). Returns "error:" lines for what would still abort the backend: such a
/// cast left anywhere in a function (internal), and a global whose initial value casts to a
/// non-generic space (`local int* global p = NULL;`, or clang's constant copy of a local
/// struct's initializer holding a __local NULL: the asm printer can only strip casts to
/// generic). Part of legalizeForNvptx (address_spaces.cpp).
std::string legalizeAddressSpaceCasts(llvm::Module& m);

/// Turns every printf call into one record in the printf buffer of the launch block
/// (compiler/printf_lowering.hpp; layout in core/printf_buffer.hpp) and appends the formats to
/// `formats`. The front end leaves printf a plain call (-fno-builtin-printf): clang would
/// otherwise emit CUDA's vprintf. Returns "error: ..." lines for calls that cannot be lowered.
std::string lowerPrintf(llvm::Module& m, std::vector<PrintfFormat>& formats);

/// The kernel ABI (ptx_module.hpp): each kernel gets the launch block as a hidden last
/// parameter, its __local pointer parameters become u64 offsets into __duet_local_args, every
/// function that reaches kLaunchBlockAccessor or a kernel-scope __local variable is inlined
/// into the kernels and the accessor replaced with the parameter; a kernel that other code
/// calls gets an internal copy for those calls (PTX cannot call an .entry);
/// reqd_work_group_size becomes `.maxntid`. Non-kernel functions become internal. Appends one
/// KernelEntry per kernel (localVariableBytes and usesPrintf are filled later). `guarded`
/// (DUET_KERNEL_CHECKS or DUET_KERNEL_TIMEOUT): each kernel also gets the guard record's address
/// as a last parameter (`ptr addrspace(1)`), which replaces the calls of kGuardRecordAccessor.
/// Returns "error: ..." lines on failure.
std::string applyKernelAbi(llvm::Module& m, std::vector<nvidia::KernelEntry>& kernels,
                           bool guarded);

/// DUET_KERNEL_CHECKS: puts a bounds check before every access of every kernel
/// (compiler/bounds_checks.hpp) through a pointer that derives from an argument or a program
/// variable. Argument bounds come from the guard record (kGuardRecordAccessor, GuardRecord);
/// a failed check claims the record's fault fields if it is the launch's first, sets
/// kStoppedByCheck and exits the work-item (PTX `exit`). Runs before applyKernelAbi, on kernels
/// into which inlineForGuards has inlined what they call. `names`: per kernel, the names its
/// checks report (KernelEntry::checkNames). Returns build-log notes (kernels with accesses
/// left unchecked).
std::string insertKernelChecks(llvm::Module& m,
                               std::map<std::string, std::vector<std::string>>& names);

/// Kernel-scope __local variables (addrspace(3) globals, also those that the kernel reaches
/// through the functions it calls) become offsets into the launch's dynamic shared memory
/// (__duet_local_args): per kernel, in module order, each at its alignment, from offset 0; the
/// kernel's __local arguments follow (launch_plan.hpp). Sets each KernelEntry's
/// localVariableBytes. Run after optimisation, just before the backend: until then the
/// variables are distinct objects to alias analysis. A function other than a kernel that still
/// uses one (the optimiser may propagate a variable into a helper's body) is inlined into its
/// kernels first. Returns "error: ..." lines on failure.
std::string lowerLocalVariables(llvm::Module& m, std::vector<nvidia::KernelEntry>& kernels);

/// The function the image library calls before each out-of-line software read (cpu/image.cl
/// under DUET_NVIDIA_TEXTURES) with the image, the sampler bits, the texture class wanted, the
/// dimensions and the layer: what addTextureVariants reads; removeSoftwareReadMarks deletes
/// the calls. Nothing defines it.
inline constexpr const char* kSoftwareReadMark = "__duet_software_read";
/// Whether an sRGB image may reach a texture read (builtins/nvidia/texture.h): false in the
/// texture-only variants, true elsewhere. Nothing defines it.
inline constexpr const char* kSrgbQuery = "__duet_textures_srgb";
/// Whether every texture read has its texture (texture.h): true in the texture-only variants,
/// false elsewhere. Nothing defines it.
inline constexpr const char* kTexturesOnly = "__duet_textures_only";

/// For each kernel whose image reads could all go through textures, a texture-only variant:
/// a copy named `__duet_textured_<kernel>` without the software reads, and what it needs of
/// the launch's images and samplers (KernelEntry::texturedName, textureRequirements;
/// texture_variants.cpp says why), read from the kSoftwareReadMark calls. Run after
/// lowerLocalVariables, which the copy then shares, and before removeSoftwareReadMarks.
/// Returns "error: ..." lines on failure.
std::string addTextureVariants(llvm::Module& m, std::vector<nvidia::KernelEntry>& kernels);
/// Deletes every call of kSoftwareReadMark, makes every kSrgbQuery true and every
/// kTexturesOnly false, and deletes their declarations.
void removeSoftwareReadMarks(llvm::Module& m);

/// DUET_KERNEL_TIMEOUT: makes every loop of every kernel that may run long (all but those with a
/// constant trip count of at most 4096) count its iterations; every 1024th back-edge reads
/// %globaltimer and the guard record (the kernel's last parameter, GuardRecord): the first poll
/// of the launch sets its start (atom.cas), and once the timer is past that start plus
/// `timeoutNs` the work-item sets kStoppedByTimeout and exits (PTX `exit`), as it does when it
/// finds the launch stopped already. Runs after optimisation, on the code the backend gets, with
/// every function inlined into the kernels (inlineForGuards). Returns the number of loops
/// instrumented; `missed` counts loops of functions other than kernels, which cannot reach the
/// record and are not polled.
unsigned insertTimeoutPolls(llvm::Module& m, uint64_t timeoutNs, unsigned& missed);

/// Whether `f` is a kernel of the module (listed as such in !nvvm.annotations).
bool isKernel(const llvm::Function& f);

/// Inlines into the kernels each of `seeds` that has a body (code that must run inside a
/// kernel's body) and every function that calls a seed, directly or not (for a declaration
/// such as kLaunchBlockAccessor: its callers), then erases the internal functions left unused.
/// Returns "error: ..." lines (recursion, a call that cannot be inlined).
std::string inlineIntoKernels(llvm::Module& m, llvm::ArrayRef<llvm::Function*> seeds);

/// Whether `f`'s instructions use a kernel-scope __local variable (through constant
/// expressions too).
bool usesLocalVariables(const llvm::Function& f);
/// A kernel-scope __local variable: an addrspace(3) global other than __duet_local_args.
bool isLocalVariable(const llvm::GlobalVariable& g);
/// The module's __duet_local_args declaration (`.extern .shared .align 16 .b8 []`), made on
/// first use.
llvm::GlobalVariable* dynamicSharedMemory(llvm::Module& m);

} // namespace duet::rt::nvptx
