// printf on the GCN device: the shared lowering (compiler/printf_lowering.hpp) with the buffer
// the runtime passes as hidden_printf_buffer, and the formats in `llvm.printf.fmts` for the
// code object's `amdhsa.printf`.
#include "devices/gcn/codegen/printf_lowering.hpp"

#include "compiler/printf_lowering.hpp"
#include "core/printf_buffer.hpp"
#include "devices/gcn/code_object.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include <vector>

namespace duet::rt {
namespace {

using namespace llvm;

constexpr unsigned kFlat = 0, kGlobal = 1;

/// hidden_printf_buffer, read through the implicit-argument pointer (invariant for the launch).
Value* gcnPrintfBuffer(IRBuilderBase& b) {
    Value* implicit = b.CreateIntrinsic(Intrinsic::amdgcn_implicitarg_ptr, {}, {});
    Value* slot =
        b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), implicit, gcn::kImplicitPrintfBufferOffset);
    LoadInst* buffer = b.CreateAlignedLoad(PointerType::get(b.getContext(), kGlobal), slot,
                                           Align(8), "printf.buffer");
    buffer->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(b.getContext(), {}));
    return buffer;
}

/// A relaxed add at agent scope: every wave of the dispatch appends to the same buffer.
Value* gcnReserve(IRBuilderBase& b, Value* offset, Value* bytes) {
    return b.CreateAtomicRMW(AtomicRMWInst::Add, offset, bytes, MaybeAlign(8),
                             AtomicOrdering::Monotonic,
                             b.getContext().getOrInsertSyncScopeID("agent"));
}

} // namespace

std::string lowerGcnPrintf(Module& m) {
    PrintfLoweringTarget target;
    target.deviceName = "GCN";
    target.genericAddressSpace = kFlat;
    target.globalAddressSpace = kGlobal;
    target.bufferAddress = gcnPrintfBuffer;
    target.reserve = gcnReserve;
    std::vector<PrintfFormat> formats;
    std::string errors = lowerPrintf(m, target, formats);
    if (!errors.empty() || formats.empty())
        return errors;
    NamedMDNode* fmts = m.getOrInsertNamedMetadata("llvm.printf.fmts");
    for (const PrintfFormat& f : formats)
        fmts->addOperand(MDNode::get(m.getContext(),
                                     {MDString::get(m.getContext(), gcn::printfFormatEntry(f))}));
    return {};
}

} // namespace duet::rt
