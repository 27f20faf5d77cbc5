// lowerDeviceEnqueue: enqueue_kernel's calls pass the block kernel's name and the ndrange by
// pointer, so the host functions of devices/cpu/device_enqueue.cpp can take them.
#include "devices/cpu/jit/device_enqueue_lowering.hpp"
#include "devices/cpu/device_enqueue_hooks.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>

namespace duet::rt {

namespace cpu {
namespace {
const DeviceEnqueueHook* g_hooks = nullptr;
size_t g_hookCount = 0;
} // namespace

const DeviceEnqueueHook* deviceEnqueueHooks(size_t& count) {
    count = g_hookCount;
    return g_hooks;
}

void registerDeviceEnqueueHooks(const DeviceEnqueueHook* hooks, size_t count) {
    g_hooks = hooks;
    g_hookCount = count;
}
} // namespace cpu

using namespace llvm;

bool lowerDeviceEnqueue(Module& m) {
    // Name -> operand that holds the block's kernel (clang's order of arguments).
    static const std::pair<const char*, unsigned> kCalls[] = {
        {"__enqueue_kernel_basic", 3},
        {"__enqueue_kernel_basic_events", 6},
        {"__enqueue_kernel_varargs", 3},
        {"__enqueue_kernel_events_varargs", 6},
        {"__get_kernel_work_group_size_impl", 0},
        {"__get_kernel_preferred_work_group_size_multiple_impl", 0},
        {"__get_kernel_max_sub_group_size_for_ndrange_impl", 1},
        {"__get_kernel_sub_group_count_for_ndrange_impl", 1},
    };
    bool any = false;
    for (const auto& [name, invokeIndex] : kCalls) {
        Function* f = m.getFunction(name);
        if (!f)
            continue;
        any = true;
        for (unsigned i = 0; i < f->arg_size(); ++i)
            f->removeParamAttr(i, Attribute::ByVal);
        for (User* u : f->users()) {
            auto* call = dyn_cast<CallBase>(u);
            if (!call || call->getCalledOperand() != f || invokeIndex >= call->arg_size())
                continue;
            for (unsigned i = 0; i < call->arg_size(); ++i)
                call->removeParamAttr(i, Attribute::ByVal);
            Value* invoke = call->getArgOperand(invokeIndex);
            auto* kernel = dyn_cast<Function>(invoke->stripPointerCasts());
            if (!kernel)
                continue; // the runtime answers "no such kernel" (CLK_INVALID_ARG_SIZE, 0)
            Constant* text = ConstantDataArray::getString(m.getContext(), kernel->getName());
            auto* g = new GlobalVariable(m, text->getType(), true, GlobalValue::PrivateLinkage,
                                         text, kernel->getName() + ".name");
            Constant* ptr = g;
            if (invoke->getType() != g->getType())
                ptr = ConstantExpr::getAddrSpaceCast(g, invoke->getType());
            call->setArgOperand(invokeIndex, ptr);
        }
    }
    // Kernels clang makes of blocks carry no argument metadata, by which the work-group pass
    // knows kernels once their calling convention is gone: give them the address spaces.
    for (Function& f : m) {
        if (f.isDeclaration() || f.getCallingConv() != CallingConv::SPIR_KERNEL ||
            f.hasMetadata("kernel_arg_addr_space"))
            continue;
        SmallVector<Metadata*, 4> spaces;
        for (Argument& a : f.args())
            spaces.push_back(ConstantAsMetadata::get(ConstantInt::get(
                Type::getInt32Ty(m.getContext()),
                a.getType()->isPointerTy() ? a.getType()->getPointerAddressSpace() : 0)));
        f.setMetadata("kernel_arg_addr_space", MDNode::get(m.getContext(), spaces));
    }
    // A block literal holds its invoke function's address, which nothing here calls (the
    // runtime runs the block's kernel): dropping it leaves the invoke functions called only
    // from their kernels, where the work-group pass finds them like any other callee.
    for (Function& f : m) {
        if (f.getCallingConv() == CallingConv::SPIR_KERNEL ||
            !f.getName().contains("_block_invoke"))
            continue;
        SmallVector<Constant*, 4> casts;
        for (User* u : f.users())
            if (auto* ce = dyn_cast<ConstantExpr>(u))
                casts.push_back(ce);
        for (Constant* c : casts)
            c->replaceAllUsesWith(Constant::getNullValue(c->getType()));
        SmallVector<StoreInst*, 4> stores;
        for (User* u : f.users())
            if (auto* st = dyn_cast<StoreInst>(u); st && st->getValueOperand() == &f)
                stores.push_back(st);
        for (StoreInst* st : stores)
            st->setOperand(0, Constant::getNullValue(f.getType()));
        f.removeDeadConstantUsers();
    }
    return any;
}

} // namespace duet::rt
