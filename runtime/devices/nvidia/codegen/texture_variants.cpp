// Texture-only variants of the kernels that read images: the kernel's code with its calls of the
// image library's out-of-line software reads taken out, launched where every read it makes goes
// through a texture object.
//
// Why: a kernel that reads an image through textures keeps the software read of cpu/image.cl
// as a cold call for the images and samplers textures cannot serve. ptxas gives a kernel as many
// registers as the deepest function it calls needs, and the software bilinear read needs about
// 56 on sm_90 where the texture path alone needs 28: half the warps per multiprocessor, and
// a texture-bound kernel then samples at half the rate (measured on an H200: 302 against
// NVIDIA's 550 G samples/s before, resample kernel of bench/runtime).
//
// Which software read needs which texture comes from the call of kSoftwareReadMark that the
// library puts before each (cpu/image.cl), once the optimiser has inlined the library into the
// kernel: the image descriptor (a kernel argument), the sampler's bits (a kernel argument or a
// literal), the texture class the builtin wanted and the image's dimensions. A kernel gets a
// variant only where every mark traces back to its own arguments or constants and reads a 1D or
// 2D image: anything else (an image passed through a helper the optimiser did not inline, a 3D
// read) keeps the kernel as it is. The marks go from every function afterwards; being calls of
// an unknown function until then, they also keep the optimiser from merging or moving the
// software reads they stand before.
#include "compiler/analysis_managers.hpp"
#include "compiler/save_temps.hpp"
#include "core/program_cache.hpp"
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/ADCE.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

/// The library's software reads start with this prefix (image.cl: duet_soft_read_f, ...; the
/// optimiser may specialise them under longer names).
constexpr const char* kSoftwareReadPrefix = "duet_soft_";
/// The variant's name is this prefix and the kernel's (names with "__" are the
/// implementation's in OpenCL C, so no kernel of the program has it).
constexpr const char* kVariantPrefix = "__duet_textured_";

bool isMark(const CallInst* call) {
    const Function* f = call ? call->getCalledFunction() : nullptr;
    return f && f->getName() == kSoftwareReadMark && call->arg_size() == 5;
}
bool isSoftwareRead(const CallInst* call) {
    const Function* f = call ? call->getCalledFunction() : nullptr;
    return f && !f->isDeclaration() && f->getName().starts_with(kSoftwareReadPrefix);
}

/// The software read a mark stands before: the next call in its block.
CallInst* readAfter(CallInst* mark) {
    for (Instruction* i = mark->getNextNode(); i; i = i->getNextNode())
        if (auto* call = dyn_cast<CallInst>(i); call && !isa<IntrinsicInst>(call))
            return isSoftwareRead(call) ? call : nullptr;
    return nullptr;
}

/// Where a value comes from, through casts: one of `kernel`'s arguments or a constant.
struct Origin {
    int argument = -1;
    std::optional<uint64_t> constant;
};
Origin originOf(Value* v, const Function& kernel) {
    for (unsigned depth = 0; depth < 8 && v; ++depth) {
        if (auto* a = dyn_cast<Argument>(v))
            return a->getParent() == &kernel ? Origin{int(a->getArgNo()), {}} : Origin{};
        if (auto* c = dyn_cast<ConstantInt>(v))
            return Origin{-1, c->getZExtValue()};
        if (auto* cast = dyn_cast<CastInst>(v)) {
            v = cast->getOperand(0);
            continue;
        }
        if (auto* ce = dyn_cast<ConstantExpr>(v); ce && ce->isCast()) {
            v = ce->getOperand(0);
            continue;
        }
        break;
    }
    return {};
}

std::optional<int64_t> constantArg(const CallInst& call, unsigned index) {
    if (index >= call.arg_size())
        return std::nullopt;
    if (auto* c = dyn_cast<ConstantInt>(call.getArgOperand(index)))
        return c->getSExtValue();
    return std::nullopt;
}

/// The requirement of the software read that `mark` stands before, or why it has none.
std::optional<nvidia::TextureRequirement> requirementOf(const CallInst& mark,
                                                        const Function& kernel, std::string& why) {
    const std::optional<int64_t> cls = constantArg(mark, 2);
    const std::optional<int64_t> dims = constantArg(mark, 3);
    const std::optional<int64_t> layer = constantArg(mark, 4);
    if (!dims || !layer || !cls || *cls < 1 || *cls > 3) {
        why = "a software read whose image shape or class is not a constant";
        return std::nullopt;
    }
    // Every shape reads through textures now: 1D and 2D images pitch-linear, 3D images and
    // arrays through CUDA arrays (the executor checks each launch's slots, as for 2D).
    const Origin image = originOf(mark.getArgOperand(0), kernel);
    if (image.argument < 0) {
        why = "a read of an image that is not one of the kernel's arguments";
        return std::nullopt;
    }
    nvidia::TextureRequirement r;
    r.image = uint32_t(image.argument);
    r.textureClass = uint32_t(*cls);
    const Origin sampler = originOf(mark.getArgOperand(1), kernel);
    if (sampler.argument >= 0)
        r.samplerArg = sampler.argument;
    else if (sampler.constant)
        r.samplerBits = uint32_t(*sampler.constant);
    else {
        why = "a read with a sampler that is neither an argument nor a literal";
        return std::nullopt;
    }
    return r;
}

/// Replaces the calls of `query` (kSrgbQuery, kTexturesOnly) in `f` with `value`.
bool replaceQuery(Function& f, const char* query, bool value) {
    std::vector<CallInst*> calls;
    for (BasicBlock& bb : f)
        for (Instruction& i : bb)
            if (auto* call = dyn_cast<CallInst>(&i);
                call && call->getCalledFunction() && call->getCalledFunction()->getName() == query)
                calls.push_back(call);
    for (CallInst* call : calls) {
        call->replaceAllUsesWith(ConstantInt::getBool(call->getType(), value));
        call->eraseFromParent();
    }
    return !calls.empty();
}

/// Folds what a replacement made constant or unreachable.
void simplify(Function& f) {
    AnalysisManagers am;
    PassBuilder pb;
    am.registerWith(pb);
    FunctionPassManager fpm;
    fpm.addPass(SimplifyCFGPass());
    fpm.addPass(InstCombinePass());
    fpm.addPass(SimplifyCFGPass());
    fpm.addPass(ADCEPass());
    fpm.run(f, am.function);
}

void logVariant(const std::string& kernel, const std::string& what) {
    if (program_cache::logEnabled())
        std::fprintf(stderr, "duet: NVIDIA: kernel %s: %s\n", kernel.c_str(), what.c_str());
}

/// A copy of kernel `k` named `name`.
Function* cloneKernel(Function& k, const std::string& name) {
    ValueToValueMapTy map;
    Function* copy = CloneFunction(&k, map);
    copy->setName(name);
    copy->setLinkage(k.getLinkage());
    // A kernel by its calling convention too, not only by !nvvm.annotations: LLVM 19's NVPTX
    // backend caches annotations by the function's address (finalize.cpp:
    // releaseNvptxModule), and the copy may take the memory of a function of this module that
    // was erased after the cache saw it, whose entry says "no kernel"; without a "kernel"
    // entry the backend goes by the calling convention.
    copy->setCallingConv(CallingConv::PTX_Kernel);
    return copy;
}

/// What of the software path is left in `f` (null: nothing).
const char* softwareReadsIn(const Function& f) {
    for (const BasicBlock& bb : f)
        for (const Instruction& i : bb)
            if (auto* call = dyn_cast<CallInst>(&i)) {
                if (isSoftwareRead(call))
                    return "a software read the texture path does not cover";
                if (isMark(call))
                    return "a software read's mark is left";
            }
    return nullptr;
}

/// Makes `copy` a kernel like `k`: their !nvvm.annotations entries (kernel, .maxntid).
void annotateLike(Module& m, Function& k, Function& copy) {
    if (NamedMDNode* md = m.getNamedMetadata("nvvm.annotations")) {
        std::vector<MDNode*> added;
        for (MDNode* node : md->operands()) {
            if (node->getNumOperands() < 1 ||
                mdconst::dyn_extract_or_null<Function>(node->getOperand(0)) != &k)
                continue;
            SmallVector<Metadata*, 4> ops(node->op_begin(), node->op_end());
            ops[0] = ValueAsMetadata::get(&copy);
            added.push_back(MDNode::get(m.getContext(), ops));
        }
        for (MDNode* node : added)
            md->addOperand(node);
    }
}

} // namespace

std::string addTextureVariants(Module& m, std::vector<nvidia::KernelEntry>& kernels) {
    Function* markFn = m.getFunction(kSoftwareReadMark);
    if (!markFn)
        return {};
    for (nvidia::KernelEntry& entry : kernels) {
        Function* kernel = m.getFunction(entry.name);
        if (!kernel || kernel->isDeclaration())
            continue;
        std::vector<CallInst*> marks;
        size_t reads = 0;
        for (BasicBlock& bb : *kernel)
            for (Instruction& i : bb)
                if (auto* call = dyn_cast<CallInst>(&i)) {
                    if (isMark(call))
                        marks.push_back(call);
                    else if (isSoftwareRead(call))
                        ++reads;
                }
        if (marks.empty() && !reads)
            continue;
        // Software reads or marks in the functions the kernel calls would stay in the variant.
        const std::set<const GlobalValue*> reached = reachableFrom(*kernel);
        bool elsewhere = false;
        for (const GlobalValue* g : reached) {
            const auto* f = dyn_cast<Function>(g);
            if (!f || f == kernel || f->isDeclaration() ||
                f->getName().starts_with(kSoftwareReadPrefix))
                continue;
            for (const BasicBlock& bb : *f)
                for (const Instruction& i : bb)
                    if (auto* call = dyn_cast<CallInst>(&i); isMark(call) || isSoftwareRead(call))
                        elsewhere = true;
        }
        std::string why;
        std::vector<nvidia::TextureRequirement> requirements;
        if (elsewhere)
            why = "a software read in a function it calls";
        else if (reads != marks.size())
            why = "a software read without its mark";
        for (CallInst* mark : marks) {
            if (!why.empty())
                break;
            if (!readAfter(mark)) {
                why = "a mark with no software read after it";
                break;
            }
            std::optional<nvidia::TextureRequirement> r = requirementOf(*mark, *kernel, why);
            if (r && std::find(requirements.begin(), requirements.end(), *r) == requirements.end())
                requirements.push_back(*r);
        }
        if (!why.empty()) {
            logVariant(entry.name, "no texture-only variant: " + why);
            continue;
        }
        const std::string name = kVariantPrefix + entry.name;
        if (m.getNamedValue(name))
            return "error: internal: the module already has a function named " + name + "\n";
        // Where the executor runs the variant, every read goes through its texture and no
        // image is sRGB (texture.h's queries): the checks that led to the software reads fold
        // away, and with them the reads, leaving the texture fetches of several reads with no
        // branch between them.
        Function* variant = cloneKernel(*kernel, name);
        replaceQuery(*variant, kTexturesOnly, true);
        replaceQuery(*variant, kSrgbQuery, false);
        simplify(*variant);
        if (const char* left = softwareReadsIn(*variant)) {
            variant->eraseFromParent();
            logVariant(entry.name, std::string("no texture-only variant: ") + left);
            continue;
        }
        annotateLike(m, *kernel, *variant);
        entry.texturedName = name;
        entry.textureRequirements = std::move(requirements);
        logVariant(entry.name, "texture-only variant " + name + " (" +
                                   std::to_string(entry.textureRequirements.size()) +
                                   " image and sampler pairs)");
    }
    return {};
}

void removeSoftwareReadMarks(Module& m) {
    if (Function* markFn = m.getFunction(kSoftwareReadMark)) {
        for (User* u : make_early_inc_range(markFn->users()))
            if (auto* call = dyn_cast<CallInst>(u))
                call->eraseFromParent();
        if (markFn->use_empty())
            markFn->eraseFromParent();
    }
    for (auto [query, value] : {std::pair(kSrgbQuery, true), std::pair(kTexturesOnly, false)}) {
        Function* q = m.getFunction(query);
        if (!q)
            continue;
        for (Function& f : m)
            if (!f.isDeclaration() && replaceQuery(f, query, value))
                simplify(f);
        if (q->use_empty())
            q->eraseFromParent();
    }
}

} // namespace duet::rt::nvptx
