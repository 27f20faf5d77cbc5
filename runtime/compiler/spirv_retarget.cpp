// Retargets the spir64 modules llvm-spirv gives (clCreateProgramWithIL) to a GPU device's triple:
// the module cloned through LLVM's ValueMapper with a type remapper that maps every SPIR address
// space to the target's, then names, calling conventions and kernel attributes as clang sets them.
#include "compiler/spirv_retarget.hpp"
#include "compiler/address_space_types.hpp"

#include "compiler/front_end.hpp"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticIDs.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/LangOptions.h>
#include <clang/Basic/LangStandard.h>
#include <clang/Basic/TargetInfo.h>
#include <clang/Basic/TargetOptions.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <cctype>
#include <cstring>

namespace duet::rt {
namespace {

using namespace llvm;

/// SPIR's address spaces, the numbers the translator writes (and clang's spir64 target uses).
enum SpirSpace : unsigned { kPrivate = 0, kGlobal = 1, kConstant = 2, kLocal = 3, kGeneric = 4 };
constexpr unsigned kSpirSpaces = 5;
constexpr const char* kSpaceNames[kSpirSpaces] = {"private", "global", "constant", "local",
                                                  "generic"};

/// What clang's target for the triple says: its data layout and where each OpenCL address space
/// goes, with the language options of OpenCL C 2.0 (AMDGPU's map depends on them).
struct TargetSpaces {
    std::string dataLayout;
    unsigned space[kSpirSpaces] = {};
    /// How the target's Itanium mangling spells each space's pointers ("" for none): clang
    /// writes the target number unless it is 0 and the default (private) space is 0 too.
    std::string qualifier[kSpirSpaces];
};

std::string targetSpaces(const TargetSpec& target, TargetSpaces& out) {
    IntrusiveRefCntPtr<clang::DiagnosticOptions> diagOptions(new clang::DiagnosticOptions);
    clang::DiagnosticsEngine diags(new clang::DiagnosticIDs, diagOptions,
                                   new clang::IgnoringDiagConsumer, true);
    auto options = std::make_shared<clang::TargetOptions>();
    options->Triple = target.triple;
    options->CPU = target.cpuName;
    IntrusiveRefCntPtr<clang::TargetInfo> info(clang::TargetInfo::CreateTargetInfo(diags, options));
    if (!info)
        return "clang has no target '" + target.triple + "' (processor '" + target.cpuName + "')";
    clang::LangOptions lang;
    std::vector<std::string> includes;
    clang::LangOptions::setLangDefaults(lang, clang::Language::OpenCL, Triple(target.triple),
                                        includes, clang::LangStandard::lang_opencl20);
    info->adjust(diags, lang);
    out.dataLayout = info->getDataLayoutString();
    const clang::LangAS lang2spir[kSpirSpaces] = {
        clang::LangAS::opencl_private, clang::LangAS::opencl_global, clang::LangAS::opencl_constant,
        clang::LangAS::opencl_local, clang::LangAS::opencl_generic};
    const bool defaultIsZero = info->getTargetAddressSpace(clang::LangAS::Default) == 0;
    for (unsigned s = 0; s < kSpirSpaces; ++s) {
        out.space[s] = info->getTargetAddressSpace(lang2spir[s]);
        out.qualifier[s] =
            out.space[s] == 0 && defaultIsZero ? "" : "U3AS" + std::to_string(out.space[s]);
    }
    return "";
}

// --- Itanium names -------------------------------------------------------------------------

/// Copies an Itanium-mangled OpenCL C function name, rewriting the address space qualifier of
/// each pointer type. Follows the grammar clang uses for OpenCL C builtins (builtin and vector
/// types, source names, pointers with vendor and CV qualifiers, substitutions) and fails on
/// anything else.
class Respeller {
public:
    Respeller(std::string_view in, const std::string (&qualifiers)[kSpirSpaces])
        : m_in(in), m_qualifiers(qualifiers) {}

    std::string run() {
        if (!eat("_Z") || !sourceName())
            return "";
        while (m_pos < m_in.size())
            if (!type())
                return "";
        return m_out;
    }

private:
    std::string_view m_in;
    const std::string (&m_qualifiers)[kSpirSpaces];
    size_t m_pos = 0;
    std::string m_out;

    bool eat(std::string_view s) {
        if (m_in.substr(m_pos, s.size()) != s)
            return false;
        m_out += s;
        m_pos += s.size();
        return true;
    }
    bool digit() const { return m_pos < m_in.size() && std::isdigit((unsigned char)m_in[m_pos]); }
    /// <number>, not copied.
    bool number(size_t& n) {
        if (!digit())
            return false;
        n = 0;
        while (digit() && n < 100000)
            n = n * 10 + size_t(m_in[m_pos++] - '0');
        return true;
    }
    /// <source-name> ::= <length> <identifier>
    bool sourceName() {
        size_t n = 0;
        if (!number(n) || n == 0 || m_pos + n > m_in.size())
            return false;
        m_out += std::to_string(n);
        m_out += m_in.substr(m_pos, n);
        m_pos += n;
        return true;
    }
    bool type() {
        if (m_pos >= m_in.size())
            return false;
        const char c = m_in[m_pos];
        if (c == 'P') {
            eat("P");
            unsigned space = kPrivate;
            if (m_in.substr(m_pos, 4) == "U3AS") {
                m_pos += 4;
                size_t n = 0;
                if (!number(n) || n >= kSpirSpaces)
                    return false;
                space = unsigned(n);
            }
            m_out += m_qualifiers[space];
            return type();
        }
        if (c == 'r' || c == 'V' || c == 'K') {
            m_out += c;
            ++m_pos;
            return type();
        }
        if (c == 'U') { // a vendor qualifier (_Atomic), then the type it qualifies
            eat("U");
            return sourceName() && type();
        }
        if (c == 'u') { // a vendor extended type
            eat("u");
            return sourceName();
        }
        if (std::isdigit((unsigned char)c))
            return sourceName();
        if (c == 'S') { // S_ or S<seq-id>_
            eat("S");
            while (m_pos < m_in.size() && std::isalnum((unsigned char)m_in[m_pos]))
                m_out += m_in[m_pos++];
            return eat("_");
        }
        if (c == 'D') {
            if (eat("Dv")) {
                size_t n = 0;
                if (!number(n))
                    return false;
                m_out += std::to_string(n);
                return eat("_") && type();
            }
            if (m_pos + 1 < m_in.size() && std::strchr("hfdFn", m_in[m_pos + 1])) {
                m_out += m_in.substr(m_pos, 2);
                m_pos += 2;
                return true;
            }
            return false;
        }
        if (std::strchr("vwbcahstijlmxynofdeg", c)) {
            m_out += c;
            ++m_pos;
            return true;
        }
        return false;
    }
};

// --- types ---------------------------------------------------------------------------------

/// Maps every type to the same type with the target's address spaces. Aggregates whose layout
/// would change (a struct or array holding a pointer whose size differs: AMDGPU's __local and
/// private pointers are 32 bits, SPIR's 64) are an error: the module's sizes and offsets were
/// computed for SPIR's layout.
class SpaceRemapper final : public AddressSpaceTypes {
public:
    SpaceRemapper(LLVMContext& c, const unsigned (&space)[kSpirSpaces], const DataLayout& from,
                  const DataLayout& to)
        : AddressSpaceTypes(c), m_space(space), m_from(from), m_to(to) {}
    std::string error;

private:
    const unsigned (&m_space)[kSpirSpaces];
    const DataLayout& m_from;
    const DataLayout& m_to;

    bool layoutChanges(Type* t) {
        if (auto* p = dyn_cast<PointerType>(t)) {
            unsigned s = p->getAddressSpace();
            return s < kSpirSpaces &&
                   m_from.getPointerSizeInBits(s) != m_to.getPointerSizeInBits(m_space[s]);
        }
        if (auto* v = dyn_cast<VectorType>(t))
            return layoutChanges(v->getElementType());
        if (auto* a = dyn_cast<ArrayType>(t))
            return layoutChanges(a->getElementType());
        if (auto* s = dyn_cast<StructType>(t))
            for (Type* e : s->elements())
                if (layoutChanges(e))
                    return true;
        return false;
    }
    void checkAggregate(Type* t) override {
        if (error.empty() && layoutChanges(t)) {
            std::string name;
            raw_string_ostream os(name);
            t->print(os);
            error = "the module holds pointers in an aggregate (" + os.str() +
                    ") whose layout differs on this device (its __local or private pointers "
                    "are 32 bits, SPIR's are 64); OpenCL C compiled for the device has none of "
                    "this problem";
        }
    }
    Type* remapPointer(PointerType* p) override {
        unsigned s = p->getAddressSpace();
        if (s >= kSpirSpaces) {
            if (error.empty())
                error = "the module uses address space " + std::to_string(s) +
                        ", which SPIR does not have";
            return p;
        }
        return PointerType::get(m_context, m_space[s]);
    }
    std::string copyName(StructType* s) override {
        // The old module goes away: its type gives up the name.
        std::string name = s->getName().str();
        s->setName(name + ".spir");
        return name;
    }
};

AttributeList remapTypedAttributes(LLVMContext& c, AttributeList attrs, unsigned args,
                                   ValueMapTypeRemapper& types) {
    for (unsigned a = 0; a < args; ++a)
        for (Attribute::AttrKind kind :
             {Attribute::ByVal, Attribute::StructRet, Attribute::ByRef, Attribute::InAlloca,
              Attribute::Preallocated, Attribute::ElementType})
            if (Type* t = attrs.getParamAttr(a, kind).getValueAsType())
                attrs = attrs.replaceAttributeTypeAtIndex(c, AttributeList::FirstArgIndex + a, kind,
                                                          types.remapType(t));
    return attrs;
}

/// NULL of a SPIR address space as clang writes it for the target: the cast of the generic NULL
/// wherever the space is not the generic one's (__local always, private on AMDGPU: their NULL
/// is not address 0 there), else the null constant.
struct NullMaterializer final : ValueMaterializer {
    LLVMContext& c;
    const unsigned (&space)[kSpirSpaces];
    ValueToValueMapTy& map;
    NullMaterializer(LLVMContext& ctx, const unsigned (&s)[kSpirSpaces], ValueToValueMapTy& m)
        : c(ctx), space(s), map(m) {}

    Constant* targetNull(unsigned spir) {
        auto* type = PointerType::get(c, space[spir]);
        if ((spir == kLocal || spir == kPrivate) && space[spir] != space[kGeneric])
            return ConstantExpr::getAddrSpaceCast(
                ConstantPointerNull::get(PointerType::get(c, space[kGeneric])), type);
        return ConstantPointerNull::get(type);
    }
    Value* materialize(Value* v) override {
        if (auto* null = dyn_cast<ConstantPointerNull>(v)) {
            unsigned s = null->getType()->getAddressSpace();
            return s < kSpirSpaces ? targetNull(s) : nullptr;
        }
        auto* ce = dyn_cast<ConstantExpr>(v);
        if (!ce || ce->getOpcode() != Instruction::AddrSpaceCast)
            return nullptr;
        unsigned from = ce->getOperand(0)->getType()->getPointerAddressSpace();
        unsigned to = ce->getType()->getPointerAddressSpace();
        if (from >= kSpirSpaces || to >= kSpirSpaces)
            return nullptr;
        if (isa<ConstantPointerNull>(ce->getOperand(0))) // NULL stays NULL in any space
            return targetNull(to);
        if (space[from] == space[to]) // no cast on the target (NVPTX: private is generic)
            if (auto it = map.find(ce->getOperand(0)); it != map.end())
                return it->second;
        return nullptr;
    }
};

// --- the target's conventions --------------------------------------------------------------

/// AMDGPU kernels take aggregates by value in the kernarg segment, as clang passes them; the
/// translator gives `ptr byval(%T)`. Returns the kernel with such parameters made values,
/// stored to a private copy on entry (what clang does at -O0).
Function* aggregatesByValue(Function* k, unsigned allocaSpace) {
    bool any = false;
    for (Argument& a : k->args())
        any |= a.hasByValAttr();
    if (!any)
        return k;
    LLVMContext& c = k->getContext();
    SmallVector<Type*, 8> params;
    for (Argument& a : k->args())
        params.push_back(a.hasByValAttr() ? a.getParamByValType() : a.getType());
    auto* ft = FunctionType::get(k->getReturnType(), params, false);
    // In the old one's place: kernels are listed in module order (CL_PROGRAM_KERNEL_NAMES).
    Function* nk = Function::Create(ft, k->getLinkage(), k->getAddressSpace(), "");
    k->getParent()->getFunctionList().insert(k->getIterator(), nk);
    nk->copyAttributesFrom(k);
    AttributeList attrs = k->getAttributes();
    for (Argument& a : k->args())
        if (a.hasByValAttr())
            attrs = attrs.removeParamAttributes(c, a.getArgNo());
    nk->setAttributes(attrs);
    SmallVector<std::pair<unsigned, MDNode*>, 8> mds;
    k->getAllMetadata(mds);
    for (auto& [kind, node] : mds)
        nk->setMetadata(kind, node);
    nk->takeName(k);
    nk->splice(nk->end(), k);
    IRBuilder<> b(&nk->getEntryBlock(), nk->getEntryBlock().begin());
    for (Argument& a : k->args()) {
        Argument* na = nk->getArg(a.getArgNo());
        na->takeName(&a);
        if (!a.hasByValAttr()) {
            a.replaceAllUsesWith(na);
            continue;
        }
        AllocaInst* copy = b.CreateAlloca(a.getParamByValType(), allocaSpace, nullptr);
        if (MaybeAlign align = a.getParamAlign())
            copy->setAlignment(std::max(*align, copy->getAlign()));
        b.CreateStore(na, copy);
        a.replaceAllUsesWith(copy);
    }
    k->replaceAllUsesWith(nk);
    k->eraseFromParent();
    return nk;
}

/// The product of a kernel's reqd_work_group_size, or 0.
uint64_t requiredGroupSize(const Function& k) {
    const MDNode* md = k.getMetadata("reqd_work_group_size");
    if (!md || md->getNumOperands() != 3)
        return 0;
    uint64_t n = 1;
    for (const MDOperand& op : md->operands()) {
        auto* v = mdconst::dyn_extract_or_null<ConstantInt>(op.get());
        if (!v)
            return 0;
        n *= v->getZExtValue();
    }
    return n;
}

/// Calling conventions, kernel markers and attributes as clang gives them for the triple.
std::string applyConventions(Module& m, bool amdgpu, unsigned allocaSpace) {
    LLVMContext& c = m.getContext();
    std::vector<Function*> kernels;
    for (Function& f : m) {
        if (f.getCallingConv() == CallingConv::SPIR_KERNEL && !f.isDeclaration())
            kernels.push_back(&f);
        else if (f.getCallingConv() == CallingConv::SPIR_FUNC)
            f.setCallingConv(CallingConv::C);
    }
    for (Function* k : kernels)
        for (User* u : k->users())
            if (auto* call = dyn_cast<CallBase>(u); call && call->getCalledOperand() == k && amdgpu)
                return "kernel '" + k->getName().str() + "' is called by '" +
                       call->getFunction()->getName().str() +
                       "': the GCN device cannot call a kernel from IL programs yet";
    NamedMDNode* annotations = amdgpu ? nullptr : m.getOrInsertNamedMetadata("nvvm.annotations");
    for (Function* k : kernels) {
        if (!amdgpu) { // NVPTX: spir_kernel and an nvvm.annotations entry, as clang does
            Metadata* ops[] = {ValueAsMetadata::get(k), MDString::get(c, "kernel"),
                               ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(c), 1))};
            annotations->addOperand(MDNode::get(c, ops));
            continue;
        }
        k = aggregatesByValue(k, allocaSpace);
        k->setCallingConv(CallingConv::AMDGPU_KERNEL);
        // clang's defaults for OpenCL kernels: at most 256 work-items, or exactly the required
        // size; work-groups may be partial (OpenCL 2.0 and later).
        const uint64_t n = requiredGroupSize(*k);
        const std::string sizes = n ? std::to_string(n) + "," + std::to_string(n) : "1,256";
        k->addFnAttr("amdgpu-flat-work-group-size", sizes);
        k->addFnAttr("uniform-work-group-size", "false");
    }
    for (Function& f : m)
        for (Instruction& i : instructions(f))
            if (auto* call = dyn_cast<CallBase>(&i)) {
                if (Function* callee = call->getCalledFunction())
                    call->setCallingConv(callee->getCallingConv());
                else if (call->getCallingConv() == CallingConv::SPIR_FUNC)
                    call->setCallingConv(CallingConv::C);
            }
    return "";
}

} // namespace

std::string respellAddressSpaces(std::string_view mangled,
                                 const std::string (&qualifiers)[kSpirSpaces]) {
    return Respeller(mangled, qualifiers).run();
}

std::string retargetSpirModule(std::unique_ptr<Module>& m, const TargetSpec& target) {
    TargetSpaces spaces;
    if (std::string e = targetSpaces(target, spaces); !e.empty())
        return e;
    const bool amdgpu = Triple(target.triple).isAMDGPU();
    if (!amdgpu && !Triple(target.triple).isNVPTX())
        return "no SPIR-V retargeting to '" + target.triple + "'";
    LLVMContext& c = m->getContext();
    const DataLayout from = m->getDataLayout();
    const DataLayout to(spaces.dataLayout);
    if (to.getAllocaAddrSpace() != spaces.space[kPrivate])
        return "internal: the target's allocas (address space " +
               std::to_string(to.getAllocaAddrSpace()) + ") are not in its private space";

    auto out = std::make_unique<Module>(m->getModuleIdentifier(), c);
    out->setSourceFileName(m->getSourceFileName());
    out->setTargetTriple(target.triple);
    out->setDataLayout(to);

    SpaceRemapper types(c, spaces.space, from, to);
    ValueToValueMapTy map;
    NullMaterializer nulls(c, spaces.space, map);

    // Every global value first (declarations), so that bodies and initialisers can refer to any.
    for (GlobalVariable& g : m->globals()) {
        unsigned s = g.getAddressSpace();
        if (s >= kSpirSpaces)
            return "the module has a variable '" + g.getName().str() + "' in address space " +
                   std::to_string(s) + ", which SPIR does not have";
        auto* ng = new GlobalVariable(*out, types.remapType(g.getValueType()), g.isConstant(),
                                      g.getLinkage(), nullptr, g.getName(), nullptr,
                                      g.getThreadLocalMode(), spaces.space[s],
                                      g.isExternallyInitialized());
        ng->copyAttributesFrom(&g);
        map[&g] = ng;
    }
    if (!m->alias_empty() || !m->ifunc_empty())
        return "the module has aliases or ifuncs, which OpenCL C programs do not";
    for (Function& f : *m) {
        if (f.isIntrinsic()) {
            SmallVector<Type*, 4> overloads;
            if (!Intrinsic::getIntrinsicSignature(&f, overloads))
                return "internal: cannot read the signature of " + f.getName().str();
            for (Type*& t : overloads)
                t = types.remapType(t);
            map[&f] = Intrinsic::getDeclaration(out.get(), f.getIntrinsicID(), overloads);
            continue;
        }
        auto* ft = cast<FunctionType>(types.remapType(f.getFunctionType()));
        std::string name = f.getName().str();
        if (StringRef(name).starts_with("_Z"))
            if (std::string n = respellAddressSpaces(name, spaces.qualifier); !n.empty())
                name = n;
        if (Function* same = out->getFunction(name)) {
            // NVPTX's private and generic pointers are one type: two SPIR overloads of a builtin
            // become one declaration.
            if (f.isDeclaration() && same->isDeclaration() && same->getFunctionType() == ft) {
                map[&f] = same;
                continue;
            }
            return "the functions '" + f.getName().str() + "' and '" + same->getName().str() +
                   "' would have the same name on this device";
        }
        Function* nf = Function::Create(ft, f.getLinkage(), f.getAddressSpace(), name, out.get());
        nf->copyAttributesFrom(&f);
        nf->setAttributes(remapTypedAttributes(c, nf->getAttributes(), nf->arg_size(), types));
        map[&f] = nf;
    }
    if (!types.error.empty())
        return types.error;

    for (GlobalVariable& g : m->globals())
        if (g.hasInitializer())
            cast<GlobalVariable>(map[&g])->setInitializer(
                MapValue(g.getInitializer(), map, RF_None, &types, &nulls));
    for (Function& f : *m) {
        if (f.isDeclaration())
            continue;
        auto* nf = cast<Function>(map[&f]);
        for (Argument& a : f.args()) {
            nf->getArg(a.getArgNo())->setName(a.getName());
            map[&a] = nf->getArg(a.getArgNo());
        }
        SmallVector<ReturnInst*, 4> returns;
        CloneFunctionInto(nf, &f, map, CloneFunctionChangeType::DifferentModule, returns, "",
                          nullptr, &types, &nulls);
        nf->setAttributes(remapTypedAttributes(c, nf->getAttributes(), nf->arg_size(), types));
    }
    if (!types.error.empty())
        return types.error;
    // CloneFunctionInto makes llvm.dbg.cu even when there is no debug info; an empty one has the
    // bitcode reader warn about a debug info version.
    if (NamedMDNode* units = out->getNamedMetadata("llvm.dbg.cu");
        units && !units->getNumOperands())
        out->eraseNamedMetadata(units);
    // Named metadata (module flags, OpenCL versions, llvm.ident); CloneFunctionInto has brought
    // the debug info's compile units.
    for (NamedMDNode& md : m->named_metadata()) {
        if (md.getName() == "llvm.dbg.cu")
            continue;
        NamedMDNode* nmd = out->getOrInsertNamedMetadata(md.getName());
        for (MDNode* op : md.operands())
            nmd->addOperand(MapMetadata(op, map, RF_None, &types, &nulls));
    }

    // Casts between two SPIR spaces that are one on the target are no casts (NVPTX's private and
    // generic).
    for (Function& f : *out) {
        SmallVector<AddrSpaceCastInst*, 8> noops;
        for (Instruction& i : instructions(f))
            if (auto* cast = dyn_cast<AddrSpaceCastInst>(&i);
                cast && cast->getSrcAddressSpace() == cast->getDestAddressSpace())
                noops.push_back(cast);
        for (AddrSpaceCastInst* cast : noops) {
            cast->replaceAllUsesWith(cast->getPointerOperand());
            cast->eraseFromParent();
        }
    }
    if (std::string e = applyConventions(*out, amdgpu, to.getAllocaAddrSpace()); !e.empty())
        return e;
    m = std::move(out);
    return "";
}

} // namespace duet::rt
