// Checked kernels (DUET_KERNEL_CHECKS), the device-neutral part: where each access's pointer
// comes from (a kernel argument or a program variable, through GEPs, casts, selects and phis)
// and the comparison of the accessed bytes with that origin's bounds. Each device says where an
// argument's bounds are and what a failed check does (BoundsCheckTarget). Includes LLVM headers:
// for the devices' code generators only.
#pragma once

#include "core/kernel_checks.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <string>
#include <utility>
#include <vector>

namespace duet::rt {

/// Where a pointer comes from: known bounds; memory not checked by design (private memory, an
/// image's texels, which the image builtins keep inside the image, memory of the runtime's own
/// such as a launch block); or unknown (loaded from memory, made from an integer). NULL merges
/// with either of the first two (a pointer that is memory not checked, or NULL, is not checked:
/// the printf lowering's record, say); on its own it has empty bounds.
enum class PointerOrigin : uint8_t { None, Known, Skip, Unknown, Null };

/// One failed check as generated code sees it, for BoundsCheckTarget::fail: i32 `id` (argument
/// index, argument count + variable index, or kCheckNullId), i64 `address`, `low`, `high`,
/// `bytes`.
struct FailedCheck {
    llvm::Value* id;
    AccessKind kind;
    llvm::Value* address;
    llvm::Value* low;
    llvm::Value* high;
    llvm::Value* bytes;
};

/// What a device's code generator tells insertBoundsChecks.
class BoundsCheckTarget {
public:
    virtual ~BoundsCheckTarget() = default;
    /// Accesses through pointers in address space `as` are to private memory: not checked.
    virtual bool isPrivate(unsigned as) const = 0;
    /// The device's own leaves (e.g. memory of the runtime's): PointerOrigin::None to apply the
    /// common rules to `root`.
    virtual PointerOrigin classify(llvm::Value* /*root*/) const { return PointerOrigin::None; }
    /// [low, high) of kernel argument `a` as i64, comparable with the ptrtoint of a pointer in
    /// address space `as`, emitted at `b`.
    virtual std::pair<llvm::Value*, llvm::Value*> argumentBounds(llvm::Argument& a, unsigned as,
                                                                 llvm::IRBuilder<>& b) = 0;
    /// Whether the code a failed check runs returns to the access (false: the device's fail()
    /// ends the work-item, and the block it writes into ends in `unreachable`).
    virtual bool failureReturns() const = 0;
    /// Emits what a failed check does, at `b` (in a block of its own).
    virtual void fail(llvm::IRBuilder<>& b, const FailedCheck& check) = 0;
    /// Whether failed checks may be deferred: asked for plain (non-atomic, non-volatile) loads
    /// and stores outside the kernel's loops whose pointer derives from one kernel argument or
    /// NULL (`check.id` and `check.bytes` are constants). Such an access is made only when its
    /// check passes (a load that fails gives zero) and deferFailure() records the failure, which
    /// the target reports later: no branch to a call at the access, so that the code around it
    /// stays vectorisable.
    virtual bool defersFailures() const { return false; }
    /// Emits, at `b`, the recording of `check` failing when `bad` (i1) is true.
    virtual void deferFailure(llvm::IRBuilder<>& /*b*/, const FailedCheck& /*check*/,
                              llvm::Value* /*bad*/) {}
};

/// What insertBoundsChecks did to one kernel.
struct KernelCheckCounts {
    unsigned checked = 0;
    unsigned unchecked = 0; ///< accesses whose pointer's origin is unknown
    unsigned deferred = 0;  ///< checked accesses whose failures are deferred (of `checked`)
    /// The program variables checked accesses reach, in id order (id = argument count + index).
    std::vector<llvm::GlobalVariable*> variables;
};

/// Puts a bounds check before each load, store, atomic, memory intrinsic and
/// capture_event_profiling_info (its destination: 16 bytes) of `kernel` whose
/// pointer is not private: the accessed bytes are compared with the bounds of the argument the
/// pointer derives from (the target's), or with the program variable's own extent; NULL has empty
/// bounds. Accesses through pointers of unknown origin stay unchecked and are counted.
KernelCheckCounts insertBoundsChecks(llvm::Function& kernel, BoundsCheckTarget& target);

/// The kernel's names table for the messages (CheckFault::names): each argument's name
/// (kernel_arg_name metadata, else the IR name; empty when unknown), then each variable's, each
/// ending in NUL.
std::string checkNamesTable(const llvm::Function& kernel,
                            llvm::ArrayRef<llvm::GlobalVariable*> variables);

/// A build-log note for a kernel with unchecked accesses ("note: <variable>: kernel k: 2 of 9
/// memory accesses are not checked (...)"); empty when all are checked.
std::string uncheckedAccessesNote(const char* variable, const llvm::Function& kernel,
                                  const KernelCheckCounts& counts);

/// Inlines into each of `kernels` every function it calls that takes a pointer or may touch
/// memory (`everything`: every function it calls), so that every access sees the kernel
/// argument or program variable its pointer derives from, and every loop is the kernel's own.
/// What cannot be inlined stays a call.
void inlineForGuards(llvm::ArrayRef<llvm::Function*> kernels, bool everything);

} // namespace duet::rt
