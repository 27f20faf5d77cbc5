// Bitcode libraries parsed once per process; each build links the closure of its calls.
#include "compiler/library_closure.hpp"

#include "compiler/llvm_util.hpp"
#include "core/environment.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace duet::rt {
namespace {

using namespace llvm;

/// The library, lazily materialised in a context only this object touches (under its mutex).
/// Kept for the life of the process: never destroyed, so no build can race its destruction at
/// exit.
class SharedLibrary {
public:
    /// The library of these bytes (which live as long as the process), made on first use.
    static SharedLibrary& of(std::string_view bitcode, const std::string& name) {
        static std::mutex mutex;
        static std::map<const char*, SharedLibrary*>* libraries =
            new std::map<const char*, SharedLibrary*>;
        std::lock_guard lock(mutex);
        SharedLibrary*& library = (*libraries)[bitcode.data()];
        if (!library)
            library = new SharedLibrary(bitcode, name);
        return *library;
    }

    /// Bitcode of a module holding the definitions `roots` (sorted, unique) reach in the
    /// library, declarations of what they call outside it, and the library's named metadata.
    /// Empty with `error` set when the library cannot be read.
    std::string closure(const std::vector<std::string>& roots, std::string& error) {
        std::lock_guard lock(m_mutex);
        if (!m_library) {
            error = "error: " + m_name + ": " + m_loadError;
            return {};
        }
        std::string key;
        for (const std::string& r : roots)
            key.append(r).push_back('\n');
        if (auto it = m_cache.find(key); it != m_cache.end())
            return it->second;
        std::vector<GlobalValue*> reached;
        if (!reach(roots, reached, error))
            return {};
        // The library's own order, which linking the whole library keeps.
        std::sort(reached.begin(), reached.end(), [this](GlobalValue* a, GlobalValue* b) {
            return m_position.lookup(a) < m_position.lookup(b);
        });
        std::string bitcode = extract(reached);
        // Programs of one application call a few sets of builtins again and again; the cache
        // stays small (a closure is kilobytes), and is dropped whole past its bound.
        if (m_cacheBytes + bitcode.size() > kCacheBytes) {
            m_cache.clear();
            m_cacheBytes = 0;
        }
        m_cacheBytes += key.size() + bitcode.size();
        m_cache.emplace(std::move(key), bitcode);
        return bitcode;
    }

private:
    static constexpr size_t kCacheBytes = size_t(32) << 20;

    SharedLibrary(std::string_view lib, const std::string& name) : m_name(name) {
        m_diagnostics = collectDiagnostics(m_context);
        auto module = getLazyBitcodeModule(
            MemoryBufferRef(StringRef(lib.data(), lib.size()), m_name), m_context);
        if (!module) {
            m_loadError = toString(module.takeError());
            return;
        }
        m_library = std::move(*module);
        if (Error e = m_library->materializeMetadata()) {
            m_loadError = toString(std::move(e));
            m_library.reset();
            return;
        }
        unsigned n = 0;
        for (GlobalVariable& g : m_library->globals())
            m_position[&g] = n++;
        for (Function& f : *m_library)
            m_position[&f] = n++;
    }

    /// The global values `gv`'s definition refers to (its body materialised on first use).
    const std::vector<GlobalValue*>* references(GlobalValue* gv, std::string& error) {
        auto it = m_references.find(gv);
        if (it != m_references.end())
            return &it->second;
        std::vector<GlobalValue*> refs;
        SmallPtrSet<const Value*, 32> seen;
        std::vector<const Value*> work;
        if (auto* f = dyn_cast<Function>(gv)) {
            if (Error e = f->materialize()) {
                error = "error: " + m_name + ": " + toString(std::move(e));
                return nullptr;
            }
            for (const Instruction& i : instructions(*f))
                for (const Value* op : i.operands())
                    if (isa<Constant>(op))
                        work.push_back(op);
        } else if (auto* g = dyn_cast<GlobalVariable>(gv); g && g->hasInitializer()) {
            work.push_back(g->getInitializer());
        }
        while (!work.empty()) {
            const Value* v = work.back();
            work.pop_back();
            if (!seen.insert(v).second)
                continue;
            if (auto* ref = dyn_cast<GlobalValue>(v))
                refs.push_back(const_cast<GlobalValue*>(ref));
            else if (auto* c = dyn_cast<Constant>(v))
                for (const Value* op : c->operands())
                    work.push_back(op);
        }
        return &m_references.try_emplace(gv, std::move(refs)).first->second;
    }

    /// Every library global value `roots` reach, definitions and declarations, in a stable
    /// order (first reached first).
    bool reach(const std::vector<std::string>& roots, std::vector<GlobalValue*>& reached,
               std::string& error) {
        SmallPtrSet<GlobalValue*, 32> seen;
        std::vector<GlobalValue*> work;
        for (const std::string& name : roots)
            if (GlobalValue* gv = m_library->getNamedValue(name); gv && !gv->isDeclaration())
                work.push_back(gv);
        std::reverse(work.begin(), work.end());
        while (!work.empty()) {
            GlobalValue* gv = work.back();
            work.pop_back();
            if (!seen.insert(gv).second)
                continue;
            reached.push_back(gv);
            if (gv->isDeclaration())
                continue; // outside the library (libm, an intrinsic): declared only
            const std::vector<GlobalValue*>* refs = references(gv, error);
            if (!refs)
                return false;
            for (auto r = refs->rbegin(); r != refs->rend(); ++r)
                if (!seen.count(*r))
                    work.push_back(*r);
        }
        return true;
    }

    /// The reached values copied into a module of their own, as bitcode (the same copy
    /// CloneModule makes, without declaring the library's other ~11,500 functions).
    std::string extract(const std::vector<GlobalValue*>& reached) {
        Module out(m_name, m_context);
        out.setDataLayout(m_library->getDataLayout());
        out.setTargetTriple(m_library->getTargetTriple());
        ValueToValueMapTy vmap;
        for (GlobalValue* gv : reached) {
            if (auto* f = dyn_cast<Function>(gv)) {
                Function* nf = Function::Create(f->getFunctionType(), f->getLinkage(),
                                                f->getAddressSpace(), f->getName(), &out);
                nf->copyAttributesFrom(f);
                vmap[f] = nf;
            } else if (auto* g = dyn_cast<GlobalVariable>(gv)) {
                auto* ng = new GlobalVariable(out, g->getValueType(), g->isConstant(),
                                              g->getLinkage(), nullptr, g->getName(), nullptr,
                                              g->getThreadLocalMode(), g->getAddressSpace());
                ng->copyAttributesFrom(g);
                vmap[g] = ng;
            }
        }
        for (GlobalValue* gv : reached) {
            if (auto* g = dyn_cast<GlobalVariable>(gv)) {
                auto* ng = cast<GlobalVariable>(vmap[g]);
                if (g->hasInitializer())
                    ng->setInitializer(MapValue(g->getInitializer(), vmap));
                SmallVector<std::pair<unsigned, MDNode*>, 1> mds;
                g->getAllMetadata(mds);
                for (auto& [kind, md] : mds)
                    ng->addMetadata(kind, *MapMetadata(md, vmap));
                continue;
            }
            auto* f = dyn_cast<Function>(gv);
            if (!f || f->isDeclaration())
                continue;
            auto* nf = cast<Function>(vmap[f]);
            auto dest = nf->arg_begin();
            for (const Argument& a : f->args()) {
                dest->setName(a.getName());
                vmap[&a] = &*dest++;
            }
            SmallVector<ReturnInst*, 8> returns;
            CloneFunctionInto(nf, f, vmap, CloneFunctionChangeType::DifferentModule, returns);
        }
        matchUseLists(reached, vmap);
        for (const NamedMDNode& nmd : m_library->named_metadata()) {
            NamedMDNode* n = out.getOrInsertNamedMetadata(nmd.getName());
            for (const MDNode* op : nmd.operands())
                n->addOperand(MapMetadata(op, vmap));
        }
        // With the use lists written out, the build reads the closure with the use-list order
        // the library's own bitcode gives (clang writes it), as linking the whole library did:
        // the optimiser visits uses in that order, so the code stays the same.
        std::string bitcode;
        raw_string_ostream os(bitcode);
        WriteBitcodeToFile(out, os, /*ShouldPreserveUseListOrder=*/true);
        os.flush();
        vmap.clear();
        return bitcode;
    }

    /// Puts the uses of each copied value in the order of the original's uses (CloneFunctionInto
    /// makes them in its own order).
    static void matchUseLists(const std::vector<GlobalValue*>& reached, ValueToValueMapTy& vmap) {
        DenseMap<const Value*, const Value*> original;
        for (auto it = vmap.begin(); it != vmap.end(); ++it)
            if (Value* to = it->second)
                original[to] = it->first;
        auto reorder = [&](const Value* from, Value* to) {
            if (!to || to->hasOneUse() || to->use_empty())
                return;
            DenseMap<std::pair<const Value*, unsigned>, unsigned> position;
            unsigned n = 0;
            for (const Use& u : from->uses())
                position[{u.getUser(), u.getOperandNo()}] = n++;
            auto rank = [&](const Use& u) {
                auto user = original.find(u.getUser());
                if (user == original.end())
                    return n;
                auto it = position.find({user->second, u.getOperandNo()});
                return it == position.end() ? n : it->second;
            };
            to->sortUseList([&](const Use& a, const Use& b) { return rank(a) < rank(b); });
        };
        for (GlobalValue* gv : reached) {
            reorder(gv, vmap.lookup(gv));
            auto* f = dyn_cast<Function>(gv);
            if (!f || f->isDeclaration())
                continue;
            for (const Argument& a : f->args())
                reorder(&a, vmap.lookup(&a));
            for (const BasicBlock& bb : *f) {
                reorder(&bb, vmap.lookup(&bb));
                for (const Instruction& i : bb)
                    reorder(&i, vmap.lookup(&i));
            }
        }
    }

    std::string m_name;
    std::mutex m_mutex;
    LLVMContext m_context;
    std::shared_ptr<std::string> m_diagnostics;
    std::unique_ptr<Module> m_library;
    std::string m_loadError;
    DenseMap<const GlobalValue*, std::vector<GlobalValue*>> m_references;
    DenseMap<const GlobalValue*, unsigned> m_position; ///< in the library's lists
    std::map<std::string, std::string> m_cache; ///< sorted roots, one a line -> closure bitcode
    size_t m_cacheBytes = 0;
};

/// The way before the shared library: the whole library lazily into `m`'s context.
std::string linkWholeLibrary(Module& m, std::string_view lib, const std::string& name) {
    auto library = getLazyBitcodeModule(MemoryBufferRef(StringRef(lib.data(), lib.size()), name),
                                        m.getContext());
    if (!library)
        return "error: " + name + ": " + toString(library.takeError());
    (*library)->setDataLayout(m.getDataLayout());
    // Libraries name their own triple spelling (libclc: nvptx64-unknown-nvidiacl).
    (*library)->setTargetTriple(m.getTargetTriple());
    if (Linker::linkModules(m, std::move(*library), Linker::Flags::LinkOnlyNeeded))
        return "error: linking " + name + " failed";
    return {};
}

} // namespace

bool sharedLibrariesEnabled() {
    return envSwitchOn("DUET_SHARED_BUILTINS");
}

std::string linkLibraryClosure(Module& m, std::string_view library, const std::string& name,
                               bool shared) {
    if (!shared)
        return linkWholeLibrary(m, library, name);
    // What LinkOnlyNeeded would link: the library's definitions of m's declarations, and
    // what those reach.
    std::vector<std::string> roots;
    for (const Function& f : m)
        if (f.isDeclaration() && !f.isIntrinsic())
            roots.push_back(f.getName().str());
    for (const GlobalVariable& g : m.globals())
        if (g.isDeclaration())
            roots.push_back(g.getName().str());
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    std::string error;
    const std::string bitcode = SharedLibrary::of(library, name).closure(roots, error);
    if (bitcode.empty())
        return error;
    std::unique_ptr<Module> part = parseBitcode(bitcode, m.getContext(), &error);
    if (!part)
        return "error: " + name + ": " + error;
    part->setDataLayout(m.getDataLayout());
    part->setTargetTriple(m.getTargetTriple());
    if (Linker::linkModules(m, std::move(part), Linker::Flags::LinkOnlyNeeded))
        return "error: linking " + name + " failed";
    return {};
}

} // namespace duet::rt
