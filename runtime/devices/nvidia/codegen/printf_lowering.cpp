// printf on the NVIDIA device: the shared lowering (compiler/printf_lowering.hpp) with the buffer
// that the launch block names (LaunchBlock::printfBuffer, 0 when the launch has none).
#include "compiler/printf_lowering.hpp"
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/IR/IRBuilder.h>

#include <cstddef>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

constexpr unsigned kGeneric = 0, kGlobal = 1;
/// Where LaunchBlock keeps the printf buffer's address.
constexpr uint64_t kPrintfBufferField = offsetof(nvidia::LaunchBlock, printfBuffer);

/// LaunchBlock::printfBuffer, read through the launch block accessor (applyKernelAbi makes it
/// the kernel's hidden parameter).
Value* nvidiaPrintfBuffer(IRBuilderBase& b) {
    Module& m = *b.GetInsertBlock()->getModule();
    FunctionCallee accessor =
        m.getOrInsertFunction(kLaunchBlockAccessor, PointerType::get(b.getContext(), kGeneric));
    Value* launch = b.CreateCall(accessor, {}, "launch");
    LoadInst* address = b.CreateAlignedLoad(
        b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), launch, kPrintfBufferField),
        Align(8), "printf.buffer");
    return b.CreateIntToPtr(address, PointerType::get(b.getContext(), kGlobal));
}

/// A relaxed atom.global.add.u64: PTX's default scope (.gpu) covers every block of the launch.
Value* nvidiaReserve(IRBuilderBase& b, Value* offset, Value* bytes) {
    return b.CreateAtomicRMW(AtomicRMWInst::Add, offset, bytes, MaybeAlign(8),
                             AtomicOrdering::Monotonic);
}

} // namespace

std::string lowerPrintf(Module& m, std::vector<PrintfFormat>& formats) {
    PrintfLoweringTarget target;
    target.deviceName = "NVIDIA";
    target.genericAddressSpace = kGeneric;
    target.globalAddressSpace = kGlobal;
    target.bufferAddress = nvidiaPrintfBuffer;
    target.reserve = nvidiaReserve;
    return rt::lowerPrintf(m, target, formats);
}

} // namespace duet::rt::nvptx
