// The GCN device's side of checked and timed dispatches on the software model
// (DUET_KERNEL_CHECKS, DUET_KERNEL_TIMEOUT): what memory a launch may touch, and the messages of
// a stopped one. No LLVM headers.
#pragma once

#include "core/kernel.hpp"
#include "devices/gcn/model/model.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace duet::rt::gcn_device {

/// The model's guards for `launch`: a deadline `timeoutSeconds` from now (none when 0); with
/// `checks`, the host ranges the dispatch was given (`ranges`: buffers, SVM, images, the
/// dispatch's own blocks, the loaded code object) plus any SVM allocation.
gcn::DispatchGuards dispatchGuards(double timeoutSeconds, bool checks,
                                   const std::vector<std::pair<const void*, uint64_t>>& ranges);

/// The message of a dispatch stopped by a checked access: kernel, the argument whose buffer is
/// nearest to the address (byte offset from the pointer the kernel was given), access, work-item
/// (global id) and instruction.
std::string describeFault(const KernelLaunch& launch, const gcn::MemoryFault& fault);

/// The message of a dispatch stopped at its deadline.
/// The message of a launch the model stopped for a barrier divergence (checked barriers): the
/// CPU device's text, core/kernel_checks.hpp.
std::string describeDivergence(const KernelLaunch& launch, const gcn::BarrierDivergence& d);

std::string describeTimeout(const KernelLaunch& launch, double timeoutSeconds, double ran);

} // namespace duet::rt::gcn_device
