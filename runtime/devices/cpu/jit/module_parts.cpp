// What the CPU JIT compiles, cut from a program's module, and what it makes of a module
// (module_parts.hpp).
#include "devices/cpu/jit/module_parts.hpp"

#include "compiler/save_temps.hpp"
#include "core/environment.hpp"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>

namespace duet::rt::cpu {

using namespace llvm;

std::unique_ptr<Module> kernelPart(const Module& m, StringRef entryName) {
    const Function* root = m.getFunction(entryName);
    if (!root)
        return nullptr;
    std::unique_ptr<Module> part = cloneReachable(m, *root);
    for (Function& f : make_early_inc_range(*part)) {
        if (f.isDeclaration()) {
            if (f.use_empty())
                f.eraseFromParent();
        } else if (f.getName() != entryName) {
            f.setLinkage(GlobalValue::InternalLinkage);
        }
    }
    for (GlobalVariable& g : make_early_inc_range(part->globals())) {
        if (g.isDeclaration()) {
            if (g.use_empty())
                g.eraseFromParent();
        } else if (!g.hasAppendingLinkage()) {
            g.setLinkage(GlobalValue::InternalLinkage);
        }
    }
    return part;
}

void prepareWholeTier(Module& m, const std::vector<std::string>& entries, bool quick) {
    auto isEntry = [&](StringRef name) {
        return std::find(entries.begin(), entries.end(), name.str()) != entries.end();
    };
    for (Function& f : m) {
        if (f.isDeclaration())
            continue;
        if (!isEntry(f.getName()))
            f.setLinkage(GlobalValue::InternalLinkage);
        else if (quick)
            f.setName(f.getName().str() + ".quick");
    }
    for (GlobalVariable& g : m.globals()) {
        if (g.isDeclaration() || g.hasAppendingLinkage())
            continue;
        if (g.isConstant()) {
            g.setLinkage(GlobalValue::InternalLinkage);
        } else if (quick) {
            g.setLinkage(GlobalValue::ExternalLinkage);
            g.setVisibility(GlobalValue::DefaultVisibility);
        } else {
            g.setInitializer(nullptr);
            g.setComdat(nullptr);
            g.setLinkage(GlobalValue::ExternalLinkage);
            g.setVisibility(GlobalValue::DefaultVisibility);
            g.setDSOLocal(false);
        }
    }
}

bool realignWideSpillsEnabled() {
    return envSwitchOn("DUET_CPU_REALIGN_SPILLS");
}

void realignWideSpills(Module& m) {
    if (!realignWideSpillsEnabled())
        return;
    const DataLayout& dl = m.getDataLayout();
    for (Function& f : m) {
        if (f.isDeclaration() || f.hasFnAttribute("stackrealign"))
            continue;
        const bool wide = any_of(instructions(f), [&](const Instruction& i) {
            auto* v = dyn_cast<VectorType>(i.getType());
            return v && dl.getTypeStoreSize(v).getKnownMinValue() > 16;
        });
        if (wide)
            f.addFnAttr("stackrealign");
    }
}

std::string emitObject(Module& m, TargetMachine& tm) {
    SmallVector<char, 0> object;
    raw_svector_ostream os(object);
    legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::ObjectFile))
        return {};
    pm.run(m);
    return std::string(object.begin(), object.end());
}

std::string writeAssembly(Module& m, TargetMachine& tm, const std::string& path) {
    std::string log;
    std::string problem = writeTempFile(path, [&](raw_pwrite_stream& s) {
        legacy::PassManager pm;
        if (tm.addPassesToEmitFile(pm, s, nullptr, CodeGenFileType::AssemblyFile))
            log += "warning: -save-temps: no assembly printer for this target\n";
        else
            pm.run(m);
    });
    return log + problem;
}

} // namespace duet::rt::cpu
