// describeKernels: KernelDesc from clang's OpenCL kernel metadata and the module's IR.
#include "compiler/front_end.hpp"
#include "compiler/llvm_util.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>

#include <cstring>

namespace duet::rt {
namespace {

// SPIR address-space numbers, which clang uses in !kernel_arg_addr_space on every target.
constexpr unsigned kAsPrivate = 0, kAsGlobal = 1, kAsConstant = 2, kAsLocal = 3;

std::string mdString(const llvm::MDNode* node, unsigned i) {
    if (!node || i >= node->getNumOperands())
        return {};
    if (auto* s = llvm::dyn_cast_or_null<llvm::MDString>(node->getOperand(i).get()))
        return s->getString().str();
    return {};
}

std::optional<uint64_t> mdInt(const llvm::MDNode* node, unsigned i) {
    if (!node || i >= node->getNumOperands())
        return std::nullopt;
    if (auto* c = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(node->getOperand(i)))
        return c->getZExtValue();
    return std::nullopt;
}

/// image*_t names as they appear in !kernel_arg_type (possibly with an access prefix).
struct ImageKind {
    const char* name;
    cl_mem_object_type type;
    bool depth;
};
constexpr ImageKind kImages[] = {
    {"image1d_buffer_t", CL_MEM_OBJECT_IMAGE1D_BUFFER, false},
    {"image1d_array_t", CL_MEM_OBJECT_IMAGE1D_ARRAY, false},
    {"image1d_t", CL_MEM_OBJECT_IMAGE1D, false},
    {"image2d_array_depth_t", CL_MEM_OBJECT_IMAGE2D_ARRAY, true},
    {"image2d_array_t", CL_MEM_OBJECT_IMAGE2D_ARRAY, false},
    {"image2d_depth_t", CL_MEM_OBJECT_IMAGE2D, true},
    {"image2d_t", CL_MEM_OBJECT_IMAGE2D, false},
    {"image3d_t", CL_MEM_OBJECT_IMAGE3D, false},
};

const ImageKind* imageKind(const std::string& typeName) {
    for (const ImageKind& k : kImages) {
        size_t pos = typeName.find(k.name);
        if (pos == std::string::npos)
            continue;
        // Whole-word match: "image2d_t" must not match inside "image2d_array_t".
        size_t end = pos + std::strlen(k.name);
        if ((pos == 0 || typeName[pos - 1] == ' ' || typeName[pos - 1] == '_') &&
            (end == typeName.size() || typeName[end] == ' '))
            return &k;
    }
    return nullptr;
}

/// The OpenCL C spelling of a vec_type_hint type ("float4", "uint").
std::string clTypeName(llvm::Type* t, bool isSigned) {
    unsigned n = 0;
    if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(t)) {
        n = v->getNumElements();
        t = v->getElementType();
    }
    std::string base;
    if (t->isHalfTy())
        base = "half";
    else if (t->isFloatTy())
        base = "float";
    else if (t->isDoubleTy())
        base = "double";
    else if (t->isIntegerTy(8))
        base = isSigned ? "char" : "uchar";
    else if (t->isIntegerTy(16))
        base = isSigned ? "short" : "ushort";
    else if (t->isIntegerTy(32))
        base = isSigned ? "int" : "uint";
    else if (t->isIntegerTy(64))
        base = isSigned ? "long" : "ulong";
    else
        base = "unknown";
    return n ? base + std::to_string(n) : base;
}

/// Every function reachable from `root` through direct calls or other references.
std::vector<const llvm::Function*> reachableFunctions(const llvm::Function& root) {
    std::vector<const llvm::Function*> order{&root};
    llvm::SmallPtrSet<const llvm::Function*, 16> seen{&root};
    for (size_t i = 0; i < order.size(); ++i) {
        for (const llvm::Instruction& inst : llvm::instructions(*order[i])) {
            for (const llvm::Value* op : inst.operands()) {
                llvm::SmallVector<const llvm::Value*, 8> work{op};
                while (!work.empty()) {
                    const llvm::Value* v = work.pop_back_val();
                    if (auto* f = llvm::dyn_cast<llvm::Function>(v)) {
                        if (seen.insert(f).second)
                            order.push_back(f);
                    } else if (auto* ce = llvm::dyn_cast<llvm::ConstantExpr>(v)) {
                        for (const llvm::Value* sub : ce->operands())
                            work.push_back(sub);
                    }
                }
            }
        }
    }
    return order;
}

/// addrspace(3) globals referenced by `f` (directly or inside constant expressions).
void collectLocalGlobals(const llvm::Function& f,
                         llvm::SmallPtrSetImpl<const llvm::GlobalVariable*>& out) {
    for (const llvm::Instruction& inst : llvm::instructions(f)) {
        for (const llvm::Value* op : inst.operands()) {
            llvm::SmallVector<const llvm::Value*, 8> work{op};
            while (!work.empty()) {
                const llvm::Value* v = work.pop_back_val();
                if (auto* gv = llvm::dyn_cast<llvm::GlobalVariable>(v)) {
                    if (gv->getAddressSpace() == kAsLocal)
                        out.insert(gv);
                } else if (auto* ce = llvm::dyn_cast<llvm::ConstantExpr>(v)) {
                    for (const llvm::Value* sub : ce->operands())
                        work.push_back(sub);
                }
            }
        }
    }
}

bool isBarrierName(llvm::StringRef name) {
    // _Z7barrierj, _Z18work_group_barrierj..., and work-group and sub-group collectives and
    // barriers (which synchronise).
    return name.starts_with("_Z7barrier") || name.contains("work_group_") ||
           name.contains("sub_group_");
}

/// The packet size the pipe functions that `arg` (a pipe) reaches use: clang passes it as the
/// second-last operand of each __read_pipe_2, __reserve_write_pipe, ... call. Followed through
/// private copies (-O0 spills the argument) and calls into the program's own functions. 0 when
/// no such call is seen or two disagree: the argument's packet size is then not checked.
uint32_t pipePacketSize(const llvm::Argument& arg) {
    llvm::SmallVector<const llvm::Value*, 8> work{&arg};
    llvm::SmallPtrSet<const llvm::Value*, 16> seen;
    uint64_t size = 0;
    while (!work.empty()) {
        const llvm::Value* v = work.pop_back_val();
        if (!seen.insert(v).second)
            continue;
        for (const llvm::User* u : v->users()) {
            if (auto* call = llvm::dyn_cast<llvm::CallBase>(u)) {
                const llvm::Function* callee = call->getCalledFunction();
                if (!callee)
                    continue;
                const llvm::StringRef name = callee->getName();
                if (callee->isDeclaration()) {
                    // amdgcn: __read_pipe_2_<N> and the like (LLVM's AMDGPU library-call pass
                    // folds a power-of-two size equal to the alignment into the name).
                    uint64_t suffix = 0;
                    if ((name.starts_with("__read_pipe_") || name.starts_with("__write_pipe_")) &&
                        name.count('_') == 5 && !name.rsplit('_').second.getAsInteger(10, suffix)) {
                        if (size && size != suffix)
                            return 0;
                        size = suffix;
                        continue;
                    }
                    if (!name.starts_with("__") || !name.contains("_pipe") || call->arg_size() < 3)
                        continue;
                    auto* c = llvm::dyn_cast<llvm::ConstantInt>(
                        call->getArgOperand(call->arg_size() - 2));
                    if (!c || (size && size != c->getZExtValue()))
                        return 0;
                    size = c->getZExtValue();
                    continue;
                }
                for (unsigned i = 0; i < call->arg_size() && i < callee->arg_size(); ++i)
                    if (call->getArgOperand(i) == v)
                        work.push_back(callee->getArg(i));
            } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(u)) {
                if (store->getValueOperand() == v)
                    work.push_back(store->getPointerOperand());
            } else if (auto* load = llvm::dyn_cast<llvm::LoadInst>(u)) {
                if (load->getPointerOperand() == v)
                    work.push_back(load);
            }
        }
    }
    return uint32_t(size);
}

uint64_t alignTo(uint64_t v, uint64_t a) {
    return a ? (v + a - 1) / a * a : v;
}

KernelDesc describeKernel(const llvm::Function& f, const llvm::DataLayout& dl) {
    KernelDesc k;
    k.name = f.getName().str();

    const llvm::MDNode* addrSpaces = f.getMetadata("kernel_arg_addr_space");
    const llvm::MDNode* accessQuals = f.getMetadata("kernel_arg_access_qual");
    const llvm::MDNode* types = f.getMetadata("kernel_arg_type");
    const llvm::MDNode* typeQuals = f.getMetadata("kernel_arg_type_qual");
    const llvm::MDNode* names = f.getMetadata("kernel_arg_name");
    k.argInfoAvailable = names != nullptr;

    for (const llvm::Argument& arg : f.args()) {
        const unsigned i = arg.getArgNo();
        KernelArgDesc a;
        a.typeName = mdString(types, i);
        a.name = mdString(names, i);
        // Kernels clang makes of blocks (enqueue_kernel) have no argument metadata: their
        // __local pointers say where they point in their type.
        const unsigned irAs =
            arg.getType()->isPointerTy() ? arg.getType()->getPointerAddressSpace() : kAsPrivate;
        const unsigned as = unsigned(mdInt(addrSpaces, i).value_or(irAs));
        const std::string access = mdString(accessQuals, i);
        const std::string quals = mdString(typeQuals, i);

        if (access == "read_only")
            a.accessQualifier = CL_KERNEL_ARG_ACCESS_READ_ONLY;
        else if (access == "write_only")
            a.accessQualifier = CL_KERNEL_ARG_ACCESS_WRITE_ONLY;
        else if (access == "read_write")
            a.accessQualifier = CL_KERNEL_ARG_ACCESS_READ_WRITE;

        cl_kernel_arg_type_qualifier tq = CL_KERNEL_ARG_TYPE_NONE;
        llvm::SmallVector<llvm::StringRef, 4> words;
        llvm::StringRef(quals).split(words, ' ', -1, false);
        for (llvm::StringRef word : words) {
            if (word == "const")
                tq |= CL_KERNEL_ARG_TYPE_CONST;
            else if (word == "restrict")
                tq |= CL_KERNEL_ARG_TYPE_RESTRICT;
            else if (word == "volatile")
                tq |= CL_KERNEL_ARG_TYPE_VOLATILE;
            else if (word == "pipe")
                tq |= CL_KERNEL_ARG_TYPE_PIPE;
        }

        llvm::Type* irType = arg.getType();
        const ImageKind* image = imageKind(a.typeName);
        if (image) {
            a.kind = KernelArgKind::Image;
            a.imageType = image->type;
            a.imageDepth = image->depth;
            a.size = a.align = 8;
            a.addressQualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
            // clang leaves images "none" only when written without a qualifier: read_only.
            if (a.accessQualifier == CL_KERNEL_ARG_ACCESS_NONE)
                a.accessQualifier = CL_KERNEL_ARG_ACCESS_READ_ONLY;
        } else if (tq & CL_KERNEL_ARG_TYPE_PIPE) {
            // A pipe is a cl_mem in the global address space (§6.13.16).
            a.kind = KernelArgKind::GlobalBuffer;
            a.addressQualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
            a.size = a.align = 8;
            a.pipePacketSize = pipePacketSize(arg);
        } else if (a.typeName == "queue_t" || a.typeName == "clk_event_t") {
            // A cl_command_queue (an on-device queue) passed by value: the handle.
            a.kind = KernelArgKind::Value;
            a.size = a.align = 8;
        } else if (a.typeName == "sampler_t") {
            a.kind = KernelArgKind::Sampler;
            a.size = a.align = 8;
        } else if (irType->isPointerTy() && !arg.hasByValAttr()) {
            a.size = a.align = 8;
            switch (as) {
            case kAsGlobal:
                a.kind = KernelArgKind::GlobalBuffer;
                a.addressQualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
                break;
            case kAsConstant:
                a.kind = KernelArgKind::ConstantBuffer;
                a.addressQualifier = CL_KERNEL_ARG_ADDRESS_CONSTANT;
                // §5.9.? CL_KERNEL_ARG_TYPE_CONST: also for __constant pointers.
                tq |= CL_KERNEL_ARG_TYPE_CONST;
                break;
            case kAsLocal:
                a.kind = KernelArgKind::LocalBuffer;
                a.addressQualifier = CL_KERNEL_ARG_ADDRESS_LOCAL;
                break;
            default:
                // Pipes and other opaque global objects.
                a.kind = KernelArgKind::GlobalBuffer;
                a.addressQualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
                break;
            }
        } else {
            llvm::Type* valueType = arg.hasByValAttr() ? arg.getParamByValType() : irType;
            a.kind = KernelArgKind::Value;
            a.size = uint32_t(dl.getTypeAllocSize(valueType).getFixedValue());
            llvm::MaybeAlign paramAlign = arg.getParamAlign();
            uint64_t align = dl.getABITypeAlign(valueType).value();
            if (paramAlign && paramAlign->value() > align)
                align = paramAlign->value();
            a.align = uint32_t(align);
        }
        a.typeQualifier = tq;
        k.args.push_back(std::move(a));
    }

    std::vector<std::string> attributes;
    if (const llvm::MDNode* md = f.getMetadata("reqd_work_group_size")) {
        for (unsigned d = 0; d < 3; ++d)
            k.reqdWorkGroupSize[d] = size_t(mdInt(md, d).value_or(0));
        attributes.push_back("reqd_work_group_size(" + std::to_string(k.reqdWorkGroupSize[0]) +
                             "," + std::to_string(k.reqdWorkGroupSize[1]) + "," +
                             std::to_string(k.reqdWorkGroupSize[2]) + ")");
    }
    if (const llvm::MDNode* md = f.getMetadata("work_group_size_hint")) {
        for (unsigned d = 0; d < 3; ++d)
            k.workGroupSizeHint[d] = size_t(mdInt(md, d).value_or(0));
        attributes.push_back("work_group_size_hint(" + std::to_string(k.workGroupSizeHint[0]) +
                             "," + std::to_string(k.workGroupSizeHint[1]) + "," +
                             std::to_string(k.workGroupSizeHint[2]) + ")");
    }
    if (const llvm::MDNode* md = f.getMetadata("vec_type_hint")) {
        if (md->getNumOperands() >= 1) {
            if (auto* c = llvm::mdconst::dyn_extract_or_null<llvm::Constant>(md->getOperand(0))) {
                bool isSigned = mdInt(md, 1).value_or(1) != 0;
                attributes.push_back("vec_type_hint(" + clTypeName(c->getType(), isSigned) + ")");
            }
        }
    }
    if (const llvm::MDNode* md = f.getMetadata("intel_reqd_sub_group_size"))
        attributes.push_back("intel_reqd_sub_group_size(" +
                             std::to_string(mdInt(md, 0).value_or(0)) + ")");
    for (size_t i = 0; i < attributes.size(); ++i)
        k.attributes += (i ? " " : "") + attributes[i];

    llvm::SmallPtrSet<const llvm::GlobalVariable*, 8> locals;
    for (const llvm::Function* g : reachableFunctions(f)) {
        if (g->isDeclaration()) {
            if (isBarrierName(g->getName()))
                k.hasBarrier = true;
            if (g->getName() == "printf")
                k.usesPrintf = true;
            continue;
        }
        collectLocalGlobals(*g, locals);
        for (const llvm::Instruction& inst : llvm::instructions(*g)) {
            auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst);
            if (!alloca)
                continue;
            if (std::optional<llvm::TypeSize> size = alloca->getAllocationSize(dl))
                if (!size->isScalable())
                    k.privateMemSize = alignTo(k.privateMemSize, alloca->getAlign().value()) +
                                       size->getFixedValue();
        }
    }
    // Lay the kernel's __local variables out in module order, each at its alignment.
    for (const llvm::GlobalVariable& gv : f.getParent()->globals()) {
        if (!locals.contains(&gv))
            continue;
        uint64_t align =
            gv.getAlign() ? gv.getAlign()->value() : dl.getABITypeAlign(gv.getValueType()).value();
        k.staticLocalMemSize = alignTo(k.staticLocalMemSize, align) +
                               dl.getTypeAllocSize(gv.getValueType()).getFixedValue();
    }
    return k;
}

} // namespace

std::vector<KernelDesc> describeKernels(const std::string& bitcode) {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = parseBitcode(bitcode, ctx);
    if (!m)
        return {};
    const llvm::DataLayout& dl = m->getDataLayout();
    std::vector<KernelDesc> kernels;
    for (const llvm::Function& f : *m) {
        if (f.isDeclaration() || (f.getCallingConv() != llvm::CallingConv::SPIR_KERNEL &&
                                  f.getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL))
            continue;
        kernels.push_back(describeKernel(f, dl));
    }
    return kernels;
}

} // namespace duet::rt
