// Kernel-scope __local variables as offsets into the launch's dynamic shared memory, laid out
// per kernel ahead of its __local arguments (passes.hpp: lowerLocalVariables).
//
// Always dynamic, not only above 48 KiB: PTX's static .shared is capped at 48 KiB per kernel
// (ptxas), while CL_DEVICE_LOCAL_MEM_SIZE is the opt-in limit (227 KiB on Hopper) and programs
// such as kernels/fft size their __local arrays from it. Putting every variable in dynamic
// shared memory gives one layout and one launch path for all kernels, exercised by every
// kernel that has a __local variable rather than only by the rare large one; the PTX does not
// depend on the GPU it will run on (the limit is checked at launch, where the device is known);
// and the code is the same: a variable is `__duet_local_args + constant`, addressed as
// `[symbol+imm]` in the shared window exactly like a static .shared variable. The cost is
// that the driver's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES no longer includes them: the launcher
// takes KernelEntry::localVariableBytes instead.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/ReplaceConstant.h>

#include <algorithm>

namespace duet::rt::nvptx {

using namespace llvm;

std::string lowerLocalVariables(Module& m, std::vector<nvidia::KernelEntry>& entries) {
    for (nvidia::KernelEntry& e : entries)
        e.localVariableBytes = 0;
    SmallVector<Constant*, 8> vars;
    for (GlobalVariable& g : m.globals())
        if (isLocalVariable(g))
            vars.push_back(&g);
    if (vars.empty())
        return {};
    // The optimiser may have moved a variable into a function the kernels call (a constant
    // argument propagated into the callee): that function goes into its kernels, where the
    // kernel's layout applies.
    std::vector<Function*> helpers;
    for (Function& f : m)
        if (!f.isDeclaration() && !isKernel(f) && usesLocalVariables(f))
            helpers.push_back(&f);
    if (!helpers.empty())
        if (std::string errors = inlineIntoKernels(m, helpers); !errors.empty())
            return errors;
    // Constant expressions of a variable (a GEP into a __local array, its cast to a generic
    // pointer) become instructions, so that each use belongs to one function. (After the
    // inlining, which folds instructions of constants back into constant expressions.)
    convertUsersOfConstantsToInstructions(vars);

    const DataLayout& dl = m.getDataLayout();
    GlobalVariable* shared = dynamicSharedMemory(m);
    Type* i8 = Type::getInt8Ty(m.getContext());
    Type* i64 = Type::getInt64Ty(m.getContext());
    uint64_t maxAlign = shared->getAlign().valueOrOne().value();
    for (nvidia::KernelEntry& e : entries) {
        Function* k = m.getFunction(e.name);
        if (!k)
            continue;
        SmallPtrSet<const GlobalVariable*, 8> used;
        for (Constant* c : vars)
            for (const User* u : c->users())
                if (const auto* i = dyn_cast<Instruction>(u); i && i->getFunction() == k)
                    used.insert(cast<GlobalVariable>(c));
        // Module order, each at its alignment: the layout compiler/metadata.cpp reports as
        // KernelDesc::staticLocalMemSize (and the CPU device uses).
        uint64_t offset = 0;
        for (Constant* c : vars) {
            auto* g = cast<GlobalVariable>(c);
            if (!used.contains(g))
                continue;
            const uint64_t align =
                g->getAlign().value_or(dl.getABITypeAlign(g->getValueType())).value();
            maxAlign = std::max(maxAlign, align);
            offset = alignTo(offset, align);
            Constant* at =
                ConstantExpr::getInBoundsGetElementPtr(i8, shared, ConstantInt::get(i64, offset));
            g->replaceUsesWithIf(at, [k](Use& u) {
                const auto* i = dyn_cast<Instruction>(u.getUser());
                return i && i->getFunction() == k;
            });
            offset += dl.getTypeAllocSize(g->getValueType()).getFixedValue();
        }
        e.localVariableBytes = offset;
    }
    // A variable wider-aligned than 16 bytes (a __local double16) keeps its alignment: the
    // dynamic shared memory starts at the widest one.
    shared->setAlignment(Align(maxAlign));

    std::string errors;
    for (Constant* c : vars) {
        auto* g = cast<GlobalVariable>(c);
        g->removeDeadConstantUsers();
        if (g->use_empty()) {
            g->eraseFromParent();
            continue;
        }
        // Only code outside every kernel can still refer to it (the inlining above moved the
        // rest): nothing that runs.
        std::string where;
        for (const User* u : g->users())
            if (const auto* i = dyn_cast<Instruction>(u))
                where = " by function '" + demangle(i->getFunction()->getName().str()) + "'";
        errors += "error: internal: the __local variable '" + g->getName().str() +
                  "' is still used" + where + " outside the kernels\n";
    }
    return errors;
}

} // namespace duet::rt::nvptx
