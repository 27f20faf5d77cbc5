// -save-temps: prefixes, per-kernel modules and temporary files shared by the code generators.
#include "compiler/save_temps.hpp"
#include "compiler/options.hpp"

#include <llvm/IR/InstIterator.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <map>
#include <mutex>
#include <vector>

namespace duet::rt {

using namespace llvm;

std::string saveTempsPrefix(const BuildOptions& options, std::string_view deviceTag) {
    // A prefix naming a folder (ending in '/') gets the default names inside it, not files
    // named only by their extension (".ptx", "_kernel.ll"), which ls does not even show.
    const std::string& given = options.saveTempsPrefix;
    if (!given.empty() && given.back() != '/')
        return given;
    static std::mutex mutex;
    static std::map<std::string, unsigned, std::less<>> counters;
    unsigned n;
    {
        std::lock_guard lock(mutex);
        n = counters[std::string(deviceTag)]++;
    }
    return given + "_temp_" + std::to_string(n) + "_" + std::string(deviceTag);
}

std::set<const GlobalValue*> reachableFrom(const Function& root) {
    std::set<const GlobalValue*> globals;
    std::set<const Value*> seen;
    std::vector<const Value*> work{&root};
    while (!work.empty()) {
        const Value* v = work.back();
        work.pop_back();
        if (!seen.insert(v).second)
            continue;
        if (auto* gv = dyn_cast<GlobalValue>(v)) {
            globals.insert(gv);
            if (auto* f = dyn_cast<Function>(gv)) {
                for (const Instruction& i : instructions(*f))
                    for (const Value* op : i.operands())
                        if (isa<Constant>(op))
                            work.push_back(op);
            } else if (auto* g = dyn_cast<GlobalVariable>(gv)) {
                if (g->hasInitializer())
                    work.push_back(g->getInitializer());
            } else if (auto* a = dyn_cast<GlobalAlias>(gv)) {
                work.push_back(a->getAliasee());
            }
        } else if (auto* c = dyn_cast<Constant>(v)) {
            for (const Value* op : c->operands())
                work.push_back(op);
        }
    }
    return globals;
}

std::unique_ptr<Module> cloneReachable(const Module& m, const Function& root) {
    std::set<const GlobalValue*> keep = reachableFrom(root);
    ValueToValueMapTy vmap;
    return CloneModule(m, vmap, [&](const GlobalValue* gv) { return keep.count(gv) != 0; });
}

std::string writeTempFile(const std::string& path, function_ref<void(raw_pwrite_stream&)> write) {
    std::error_code ec;
    raw_fd_ostream out(path, ec, sys::fs::OF_Text);
    if (ec)
        return "warning: -save-temps: cannot write " + path + ": " + ec.message() + "\n";
    write(out);
    return {};
}

} // namespace duet::rt
