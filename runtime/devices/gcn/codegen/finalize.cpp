// finalizeForGcn: amdgcn bitcode -> Duet's GCN additions and libclc linked (lazily) -> O3 ->
// AMDGPU backend (object file, in memory) -> lld in-process (amdhsa shared object, code
// object v5) -> reader + loader; -save-temps writes each kernel's .ll and disassembled .isa.
#include "compiler/binary.hpp"
#include "compiler/analysis_managers.hpp"
#include "compiler/llvm_util.hpp"
#include "compiler/options.hpp"
#include "compiler/save_temps.hpp"
#include "core/data_files.hpp"
#include "devices/gcn/code_object.hpp"
#include "devices/gcn/codegen/gcn_toolchain.hpp"
#include "devices/gcn/codegen/printf_lowering.hpp"

#include <lld/Common/Driver.h>
#include <llvm/ADT/SCCIterator.h>
#include <llvm/Analysis/CallGraph.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

LLD_HAS_DRIVER(elf)

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUDisassembler();
extern const unsigned char duet_gcn_builtins_bc[];
extern const unsigned char duet_gcn_builtins_bc_end[];
}

namespace duet::rt {
namespace {

using namespace llvm;

constexpr const char* kTriple = "amdgcn-amd-amdhsa";
constexpr const char* kLibclcPath = "/usr/lib/clc/amdgcn--amdhsa.bc";
constexpr uint16_t kEmAmdgpu = 224; // EM_AMDGPU
/// Code object v5: LLVM 19's default, written down so that a newer LLVM cannot change the
/// kernarg layout under the runtime (devices/gcn lays the v5 hidden arguments out).
constexpr unsigned kCodeObjectVersion = 500;

void initialiseAmdgpuOnce() {
    initialiseAmdgpuTarget();
}

} // namespace

void initialiseAmdgpuTarget() {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeAMDGPUTargetInfo();
        LLVMInitializeAMDGPUTarget();
        LLVMInitializeAMDGPUTargetMC();
        LLVMInitializeAMDGPUAsmPrinter();
        LLVMInitializeAMDGPUDisassembler();
    });
}

namespace {

std::string_view gcnAdditionsBitcode() {
    const auto* begin = reinterpret_cast<const char*>(duet_gcn_builtins_bc);
    const auto* end = reinterpret_cast<const char*>(duet_gcn_builtins_bc_end);
    return std::string_view(begin, size_t(end - begin));
}

/// The functions that still call themselves, directly or through others, once optimised: an
/// error. OpenCL C forbids recursion (§6.11), and LLVM 19's AMDGPU backend sizes the private
/// segment of a recursive call chain as if it ran once (no uses_dynamic_stack either), so
/// the second level would write past the work-item's scratch.
std::string recursiveFunctions(Module& m) {
    CallGraph graph(m);
    std::string out;
    for (scc_iterator<CallGraph*> it = scc_begin(&graph); !it.isAtEnd(); ++it) {
        if (!it.hasCycle())
            continue;
        for (const CallGraphNode* node : *it)
            if (const Function* f = node->getFunction(); f && !f->isDeclaration())
                out += "error: function '" + demangle(f->getName().str()) +
                       "' is recursive: OpenCL C does not allow recursion (section 6.11), and "
                       "the GCN device cannot size a recursive call stack\n";
    }
    return out;
}

/// Declarations nothing defines, reported at build time (a user prototype without a body, or
/// a builtin neither libclc nor Duet provides for GCN).
std::string unresolvedFunctions(Module& m) {
    // lowerGcnPrintf has turned every use of printf into a record or an error.
    return undefinedSymbolReport(m, "the GCN device",
                                 [](StringRef, std::string&) { return false; });
}

/// Defines what clang calls for OpenCL C 2.0+ generic pointers and no library provides for
/// amdgcn: `__to_global`/`__to_local`/`__to_private` (to_global() etc.) and `get_fence`. A
/// generic pointer is a FLAT address; the shared and private apertures (src_shared_base /
/// src_private_base on gfx9) tell where it points.
void defineGenericAddressBuiltins(Module& m) {
    LLVMContext& c = m.getContext();
    PointerType* flat = PointerType::get(c, 0);
    for (Function& f : m) {
        if (!f.isDeclaration() || f.arg_size() != 1 || f.getArg(0)->getType() != flat)
            continue;
        StringRef name = f.getName();
        const bool fence = name.starts_with("_Z9get_fenceP") && f.getReturnType()->isIntegerTy(32);
        unsigned target = 0;
        if (name == "__to_global")
            target = 1;
        else if (name == "__to_local")
            target = 3;
        else if (name == "__to_private")
            target = 5;
        if (!fence && (!target || f.getReturnType() != PointerType::get(c, target)))
            continue;
        f.setLinkage(GlobalValue::InternalLinkage);
        f.addFnAttr(Attribute::AlwaysInline);
        f.addFnAttr(Attribute::NoUnwind);
        IRBuilder<> b(BasicBlock::Create(c, "entry", &f));
        Value* p = f.getArg(0);
        Value* shared = b.CreateIntrinsic(Intrinsic::amdgcn_is_shared, {}, {p});
        if (fence) { // CLK_LOCAL_MEM_FENCE for LDS, CLK_GLOBAL_MEM_FENCE otherwise
            b.CreateRet(b.CreateSelect(shared, b.getInt32(1), b.getInt32(2)));
            continue;
        }
        Value* priv = b.CreateIntrinsic(Intrinsic::amdgcn_is_private, {}, {p});
        Value* in = target == 3   ? shared
                    : target == 5 ? priv
                                  : b.CreateNot(b.CreateOr(shared, priv));
        // OpenCL's NULL in that space: the cast of the generic null (all ones for LDS and
        // scratch on AMDGPU, where offset 0 is a valid address), as clang compares against.
        auto* type = PointerType::get(c, target);
        b.CreateRet(
            b.CreateSelect(in, b.CreateAddrSpaceCast(p, type),
                           ConstantExpr::getAddrSpaceCast(ConstantPointerNull::get(flat), type)));
    }
}

/// With the generic address space, clang declares OpenCL C 2.0+'s pointer builtins (fract,
/// sincos, vload/vstore, wait_group_events, ...) on generic pointers ("U3AS0" in the mangled
/// name); libclc defines only the global/local/private overloads. Defines each generic overload
/// used as a dispatch on the pointer's aperture to the named ones, which it declares for libclc
/// to supply. Returns whether it declared any (libclc must then be linked again).
bool defineGenericOverloads(Module& m) {
    LLVMContext& c = m.getContext();
    PointerType* flat = PointerType::get(c, 0);
    std::vector<Function*> needBodies;
    for (Function& f : m)
        if (f.isDeclaration() && !f.use_empty() && f.getName().starts_with("_Z") &&
            f.getName().count("U3AS0") == 1)
            needBodies.push_back(&f);
    bool declared = false;
    for (Function* f : needBodies) {
        int which = -1, pointers = 0;
        for (unsigned i = 0; i < f->arg_size(); ++i)
            if (f->getArg(i)->getType() == flat) {
                which = int(i);
                ++pointers;
            }
        if (pointers != 1)
            continue; // left undefined: reported as such
        FunctionType* ft = f->getFunctionType();
        const std::string name = f->getName().str();
        auto variant = [&](unsigned space) {
            std::string n = name;
            n.replace(n.find("U3AS0"), 5, "U3AS" + std::to_string(space));
            SmallVector<Type*, 4> params(ft->params().begin(), ft->params().end());
            params[which] = PointerType::get(c, space);
            return m.getOrInsertFunction(n, FunctionType::get(ft->getReturnType(), params, false));
        };
        f->setLinkage(GlobalValue::InternalLinkage);
        f->addFnAttr(Attribute::AlwaysInline);
        BasicBlock* entry = BasicBlock::Create(c, "entry", f);
        BasicBlock* notLocal = BasicBlock::Create(c, "not.local", f);
        IRBuilder<> b(entry);
        Value* p = f->getArg(unsigned(which));
        auto callIn = [&](unsigned space) {
            BasicBlock* bb = BasicBlock::Create(c, "as" + std::to_string(space), f);
            IRBuilder<> cb(bb);
            SmallVector<Value*, 4> args;
            for (Argument& a : f->args())
                args.push_back(&a == p ? cb.CreateAddrSpaceCast(p, PointerType::get(c, space))
                                       : static_cast<Value*>(&a));
            CallInst* call = cb.CreateCall(variant(space), args);
            if (ft->getReturnType()->isVoidTy())
                cb.CreateRetVoid();
            else
                cb.CreateRet(call);
            return bb;
        };
        b.CreateCondBr(b.CreateIntrinsic(Intrinsic::amdgcn_is_shared, {}, {p}), callIn(3),
                       notLocal);
        b.SetInsertPoint(notLocal);
        b.CreateCondBr(b.CreateIntrinsic(Intrinsic::amdgcn_is_private, {}, {p}), callIn(5),
                       callIn(1));
        declared = true;
    }
    return declared;
}

/// Named overloads defineGenericOverloads called that libclc lacks (wait_group_events has only
/// the private one): a generic pointer into that space traps instead of linking nothing.
void trapMissingNamedOverloads(Module& m) {
    std::vector<Function*> missing;
    for (Function& f : m)
        if (f.isDeclaration() && !f.use_empty() && f.getName().starts_with("_Z") &&
            !f.getName().contains("U3AS0"))
            for (User* u : f.users())
                if (auto* call = dyn_cast<CallInst>(u);
                    call && call->getFunction()->getName().contains("U3AS0")) {
                    missing.push_back(&f);
                    break;
                }
    for (Function* f : missing) {
        std::vector<CallInst*> calls;
        for (User* u : f->users())
            if (auto* call = dyn_cast<CallInst>(u);
                call && call->getFunction()->getName().contains("U3AS0"))
                calls.push_back(call);
        for (CallInst* call : calls) {
            IRBuilder<> b(call);
            b.CreateIntrinsic(Intrinsic::trap, {}, {});
            if (!call->getType()->isVoidTy())
                call->replaceAllUsesWith(PoisonValue::get(call->getType()));
            call->eraseFromParent();
        }
    }
}

void optimise(Module& m, TargetMachine& tm, unsigned optLevel) {
    AnalysisManagers am;
    PassBuilder pb(&tm, {}, std::nullopt, am.instrumentation(m.getContext()));
    am.registerWith(pb);
    ModulePassManager mpm =
        optLevel == 0 ? pb.buildO0DefaultPipeline(OptimizationLevel::O0)
                      : pb.buildPerModuleDefaultPipeline(optLevel == 1 ? OptimizationLevel::O1
                                                                       : OptimizationLevel::O3);
    mpm.run(m, am.module);
}

/// clang passes enqueue_kernel's ndrange to __enqueue_kernel_basic `byval` (a copy in the
/// callee's stack frame) but by plain private pointer to the other three forms and to the
/// sub-group queries; builtins/gcn/device_enqueue.cl takes a private pointer in all of them.
/// The caller's argument is a temporary copy nothing else uses and the callee only reads it,
/// so dropping `byval` (passing its address) makes the call match the definition.
void passEnqueueNDRangeByPointer(Module& m) {
    Function* f = m.getFunction("__enqueue_kernel_basic");
    if (!f)
        return;
    for (unsigned i = 0; i < f->arg_size(); ++i)
        f->removeParamAttr(i, Attribute::ByVal);
    for (User* u : f->users())
        if (auto* call = dyn_cast<CallBase>(u))
            for (unsigned i = 0; i < call->arg_size(); ++i)
                call->removeParamAttr(i, Attribute::ByVal);
}

/// LLVM 19's AMDGPU backend reads `v[i]` of a vector kernel argument, i varying across the
/// wave, as one scalar load at the first lane's i (v_readfirstlane of the address): with
/// `uint4 v`, `v[get_local_id(0) > 31]` gives lanes 32-63 lane 0's element. Such extracts become
/// selects over the elements, which it compiles right. Likewise `v[k]` of a vector loaded at an
/// address that varies across the wave, k uniform: it becomes a scalar load (s_load_dword) at
/// the first lane's address plus k (the CTS's spirv_new op_vector_int4_extract read lane 0's
/// element in every lane).
void selectDynamicArgumentExtracts(Module& m) {
    SmallVector<ExtractElementInst*, 8> extracts;
    for (Function& f : m)
        if (f.getCallingConv() == CallingConv::AMDGPU_KERNEL)
            for (Instruction& inst : instructions(f))
                if (auto* e = dyn_cast<ExtractElementInst>(&inst);
                    e && !isa<Constant>(e->getIndexOperand()) &&
                    (isa<Argument>(e->getVectorOperand()) || isa<LoadInst>(e->getVectorOperand())))
                    extracts.push_back(e);
    for (ExtractElementInst* e : extracts) {
        IRBuilder<> b(e);
        auto* type = cast<FixedVectorType>(e->getVectorOperandType());
        Value* index = e->getIndexOperand();
        Value* r = b.CreateExtractElement(e->getVectorOperand(), uint64_t(0));
        for (unsigned i = 1; i < type->getNumElements(); ++i)
            r = b.CreateSelect(b.CreateICmpEQ(index, ConstantInt::get(index->getType(), i)),
                               b.CreateExtractElement(e->getVectorOperand(), uint64_t(i)), r);
        e->replaceAllUsesWith(r);
        e->eraseFromParent();
    }
}

/// lld's ELF driver, in-process. It keeps global state, so one link at a time; its input
/// and output are files (lld reads paths), kept in a private temporary directory.
bool linkCodeObject(StringRef object, std::string& codeObject, std::string& error) {
    static std::mutex lldMutex;
    SmallString<128> dir;
    if (std::error_code ec = sys::fs::createUniqueDirectory("duet-gcn", dir)) {
        error = "cannot create a temporary directory for the linker: " + ec.message();
        return false;
    }
    std::string in = (dir + "/kernels.o").str(), out = (dir + "/kernels.co").str();
    auto cleanup = [&] {
        sys::fs::remove(in);
        sys::fs::remove(out);
        sys::fs::remove(dir);
    };
    {
        std::error_code ec;
        raw_fd_ostream os(in, ec, sys::fs::OF_None);
        if (ec) {
            error = "cannot write " + in + ": " + ec.message();
            cleanup();
            return false;
        }
        os << object;
    }
    std::string messages;
    raw_string_ostream msgOs(messages);
    const char* args[] = {"ld.lld", "-shared", "--no-undefined", "-o", out.c_str(), in.c_str()};
    lld::Result result;
    {
        std::lock_guard lock(lldMutex);
        result = lld::lldMain(args, msgOs, msgOs, {{lld::Gnu, &lld::elf::link}});
    }
    msgOs.flush();
    if (result.retCode != 0) {
        error = "the linker (lld) failed:\n" + messages;
        cleanup();
        return false;
    }
    auto buffer = MemoryBuffer::getFile(out);
    if (!buffer) {
        error = "cannot read the linked code object: " + buffer.getError().message();
        cleanup();
        return false;
    }
    codeObject.assign((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
    cleanup();
    return true;
}

/// Disassembles [address, address + size) of the loaded image with the MC disassembler and
/// AMDGPU instruction printer (the syntax of llvm-objdump and AMD's .isa dumps).
std::string disassemble(const unsigned char* image, uint64_t address, uint64_t size,
                        const std::string& cpu) {
    std::string error;
    const Target* t = TargetRegistry::lookupTarget(kTriple, error);
    if (!t)
        return "; no AMDGPU target: " + error + "\n";
    Triple triple(kTriple);
    std::unique_ptr<MCRegisterInfo> mri(t->createMCRegInfo(kTriple));
    MCTargetOptions mcOptions;
    std::unique_ptr<MCAsmInfo> mai(t->createMCAsmInfo(*mri, kTriple, mcOptions));
    std::unique_ptr<MCSubtargetInfo> sti(t->createMCSubtargetInfo(kTriple, cpu, ""));
    std::unique_ptr<MCInstrInfo> mii(t->createMCInstrInfo());
    if (!mri || !mai || !sti || !mii)
        return "; the AMDGPU MC layer is not available\n";
    MCContext ctx(triple, mai.get(), mri.get(), sti.get());
    std::unique_ptr<MCDisassembler> disasm(t->createMCDisassembler(*sti, ctx));
    std::unique_ptr<MCInstPrinter> printer(t->createMCInstPrinter(triple, 0, *mai, *mii, *mri));
    if (!disasm || !printer)
        return "; no AMDGPU disassembler\n";
    std::string text;
    raw_string_ostream os(text);
    ArrayRef<uint8_t> bytes(image + address, size);
    uint64_t pos = 0;
    while (pos < size) {
        MCInst inst;
        uint64_t instSize = 0;
        const uint64_t pc = address + pos;
        std::string line;
        raw_string_ostream ls(line);
        if (disasm->getInstruction(inst, instSize, bytes.slice(pos), pc, nulls()) ==
                MCDisassembler::Success &&
            instSize) {
            printer->printInst(&inst, pc, "", *sti, ls);
        } else {
            instSize = 4;
            ls << "\t; undecodable dword";
        }
        ls.flush();
        os << "\t" << StringRef(line).ltrim() << "\t// " << format_hex(pc, 10) << ":";
        for (uint64_t i = 0; i < instSize && pos + i + 3 < size; i += 4) {
            uint32_t dword;
            std::memcpy(&dword, image + pc + i, 4);
            os << " " << format_hex_no_prefix(dword, 8, true);
        }
        os << "\n";
        pos += instSize;
    }
    os.flush();
    return text;
}

class GcnExecutable final : public DeviceExecutable {
public:
    const std::vector<KernelDesc>& kernels() const override { return m_kernels; }
    void* entry(size_t index) const override {
        return index < m_entries.size() ? const_cast<gcn::KernelEntry*>(&m_entries[index])
                                        : nullptr;
    }
    const std::string& binary() const override { return m_binary; }
    size_t globalVariableTotalSize() const override { return m_globalBytes; }
    ExecutionGuards guards() const override { return m_guards; }

    std::vector<KernelDesc> m_kernels;
    /// What the model watches for when it runs these kernels (DUET_KERNEL_CHECKS,
    /// DUET_KERNEL_TIMEOUT as the build or the binary's load found them); no code of its own.
    ExecutionGuards m_guards;
    gcn::CodeObject m_codeObject;
    gcn::LoadedCodeObject m_loaded;
    std::vector<gcn::KernelEntry> m_entries;
    std::string m_binary;
    size_t m_globalBytes = 0;
};

/// Builds the executable from a code object and the bitcode it came from (for the kernels'
/// OpenCL argument descriptions). Appends the occupancy lines to `log`.
std::shared_ptr<GcnExecutable> makeExecutable(const std::string& codeObject,
                                              const std::string& bitcode, std::string& log,
                                              std::string& error) {
    auto exe = std::make_shared<GcnExecutable>();
    std::span<const unsigned char> bytes(reinterpret_cast<const unsigned char*>(codeObject.data()),
                                         codeObject.size());
    gcn::ReadCodeObjectResult read = gcn::readCodeObject(bytes);
    if (!read) {
        error = "error: the code object is not usable: " + read.error + "\n";
        return nullptr;
    }
    exe->m_codeObject = std::move(read.object);
    if (std::string e = exe->m_loaded.load(bytes); !e.empty()) {
        error = "error: loading the code object: " + e + "\n";
        return nullptr;
    }
    if (std::string e = gcn::kernelsOutsideImage(exe->m_codeObject, exe->m_loaded); !e.empty()) {
        error = "error: the code object is not usable: " + e + "\n";
        return nullptr;
    }
    exe->m_kernels = describeKernels(bitcode);
    for (KernelDesc& k : exe->m_kernels) {
        const gcn::KernelInfo* info = exe->m_codeObject.find(k.name);
        if (!info) {
            error = "error: internal: kernel " + k.name + " is missing from the code object\n";
            return nullptr;
        }
        size_t explicitArgs = 0;
        for (const gcn::KernelArgMeta& a : info->args)
            if (a.valueKind.rfind("hidden_", 0) != 0)
                ++explicitArgs;
        if (explicitArgs != k.args.size()) {
            error = "error: internal: kernel " + k.name + " has " + std::to_string(k.args.size()) +
                    " arguments but its code object metadata lists " +
                    std::to_string(explicitArgs) + "\n";
            return nullptr;
        }
        k.staticLocalMemSize = info->groupSegmentFixedSize;
        k.privateMemSize = info->privateSegmentFixedSize;
        if (info->runtimeHandleAddress) {
            // A block kernel (enqueue_kernel): its handle tells the GPU half of device-side
            // enqueue its index, work-group size limit (the device's 256, or less where the
            // compiler promised less) and preferred multiple (the wave). kernelsOutsideImage
            // checked that the 16 bytes lie inside the image.
            gcn::BlockHandle h{};
            h.kernelIndex = uint32_t(exe->m_entries.size());
            h.workGroupSize = info->maxFlatWorkgroupSize
                                  ? std::min<uint32_t>(256, info->maxFlatWorkgroupSize)
                                  : 256;
            h.preferredMultiple = 64;
            std::memcpy(reinterpret_cast<void*>(exe->m_loaded.base() + info->runtimeHandleAddress),
                        &h, sizeof h);
        }
        exe->m_entries.push_back(
            {&exe->m_codeObject, info, exe->m_loaded.base(), exe->m_loaded.size()});
        unsigned wg = info->reqdWorkgroupSize[0]
                          ? info->reqdWorkgroupSize[0] * info->reqdWorkgroupSize[1] *
                                info->reqdWorkgroupSize[2]
                          : 256;
        log += gcn::occupancyLine(*info, wg) + "\n";
    }
    return exe;
}

/// A kernel's -save-temps .isa: its descriptor, kernel arguments and disassembly.
void writeIsa(raw_ostream& isa, const GcnExecutable& exe, const gcn::KernelInfo& k,
              const unsigned char* image, const std::string& cpu) {
    const gcn::KernelDescriptor& d = k.descriptor;
    isa << "; " << k.name << " for " << exe.m_codeObject.target << " (code object v"
        << (exe.m_codeObject.abiVersion == 3 ? "5" : "?") << ")\n"
        << "; " << gcn::occupancyLine(k, 256) << "\n"
        << "; kernel descriptor " << k.symbol << " at " << format_hex(k.descriptorAddress, 10)
        << ": group_segment_fixed_size " << d.groupSegmentFixedSize
        << ", private_segment_fixed_size " << d.privateSegmentFixedSize << ", kernarg_size "
        << d.kernargSize << ", compute_pgm_rsrc1 " << format_hex(d.computePgmRsrc1, 10)
        << ", compute_pgm_rsrc2 " << format_hex(d.computePgmRsrc2, 10)
        << ", kernel_code_properties " << format_hex(d.kernelCodeProperties, 6) << "\n";
    for (const gcn::KernelArgMeta& a : k.args)
        isa << "; kernarg +" << a.offset << " size " << a.size << " " << a.valueKind
            << (a.name.empty() ? "" : " " + a.name) << "\n";
    isa << k.name << ":\n";
    isa << disassemble(image, k.codeAddress, k.codeSize, cpu);
}

} // namespace

FinalizeResult finalizeForGcn(const std::string& bitcode, std::string_view options,
                              std::string_view source, const TargetSpec& target) {
    initialiseAmdgpuOnce();
    std::string log;
    BuildOptions opts;
    {
        ParsedOptions parsed =
            parseBuildOptions(effectiveBuildOptions(options), OptionsKind::Compile);
        if (!parsed.ok)
            parsed = parseBuildOptions(effectiveBuildOptions(options), OptionsKind::Link);
        if (parsed.ok)
            opts = parsed.options;
        else
            log += "warning: code generator ignores the options: " + parsed.error + "\n";
    }
    const std::string cpu = target.cpuName.empty() ? "gfx900" : target.cpuName;

    LLVMContext ctx;
    std::shared_ptr<std::string> diagnosticsLog = collectDiagnostics(ctx);
    const std::string& diagnostics = *diagnosticsLog;

    std::string error;
    std::unique_ptr<Module> m = parseBitcode(bitcode, ctx, &error);
    if (!m)
        return FinalizeResult::failure(log + "error: invalid program bitcode: " + error);
    if (!StringRef(m->getTargetTriple()).starts_with("amdgcn"))
        return FinalizeResult::failure(log + "error: the program was compiled for '" +
                                       m->getTargetTriple() + "', not for the GCN device (amdgcn)");

    passEnqueueNDRangeByPointer(*m);
    // Duet's additions first (they replace libclc's work-item functions), then libclc.
    std::string_view additions = gcnAdditionsBitcode();
    if (!linkLazily(
            *m, MemoryBufferRef(StringRef(additions.data(), additions.size()), "duet-gcn-builtins"),
            "the GCN builtin additions", error))
        return FinalizeResult::failure(log + diagnostics + error);
    const MemoryBuffer* clc = libraryBitcode("clc/amdgcn--amdhsa.bc", kLibclcPath, error);
    if (!clc)
        return FinalizeResult::failure(log + "error: " + error);
    if (!linkLazily(*m, clc->getMemBufferRef(), "libclc", error))
        return FinalizeResult::failure(log + diagnostics + error);
    defineImageAccessors(*m);
    definePipeAccessors(*m);
    defineGenericAddressBuiltins(*m); // before the overloads: get_fence is one of Duet's own
    if (defineGenericOverloads(*m)) {
        // The named overloads come from Duet's additions (C11 atomics) or libclc.
        if (!linkLazily(
                *m,
                MemoryBufferRef(StringRef(additions.data(), additions.size()), "duet-gcn-builtins"),
                "the GCN builtin additions", error) ||
            !linkLazily(*m, clc->getMemBufferRef(), "libclc", error))
            return FinalizeResult::failure(log + diagnostics + error);
        trapMissingNamedOverloads(*m);
    }
    if (std::string errors = lowerGcnPrintf(*m); !errors.empty())
        return FinalizeResult::failure(log + errors);
    if (std::string missing = unresolvedFunctions(*m); !missing.empty())
        return FinalizeResult::failure(log + missing);

    // One target for every function (libclc's are built for generic amdgcn), kernels the only
    // external symbols so the optimiser drops what they do not reach.
    for (Function& f : *m) {
        if (f.isDeclaration())
            continue;
        f.removeFnAttr("target-cpu");
        f.removeFnAttr("target-features");
        f.addFnAttr("target-cpu", cpu);
        // LLVM 19 allocates the VGPRs that hold spilled SGPRs (whole-wave registers) together
        // with the per-lane ones: splitting such a register's live range makes a whole-wave
        // copy (s_or_saveexec_b64 -1; v_mov_b32; s_mov_b64 exec) into a VGPR that a per-lane
        // value had been spilled out of inside divergent code; the reload restores only the
        // active lanes, so the other lanes' value is lost (sin/cos of a double16 came back
        // wrong in a kernel that also called tgamma). LLVM 20 allocates them in a pass of their
        // own (llvm-project PR 93526); on 19 this attribute (the per-function form of
        // -amdgpu-prealloc-sgpr-spill-vgprs, which lasts for one build only: lld, run in-process,
        // resets LLVM's options) has them assigned before the per-lane allocator runs, so
        // they are never split.
        f.addFnAttr("amdgpu-prealloc-sgpr-spill-vgprs");
        if (f.getCallingConv() != CallingConv::AMDGPU_KERNEL)
            f.setLinkage(GlobalValue::InternalLinkage);
        else if (f.hasFnAttribute("enqueued-block")) {
            // clang makes the kernels of blocks (enqueue_kernel) internal: once the optimiser
            // folds away an enqueue that cannot succeed (ndrange_1D(0)), nothing would name
            // the block kernel and it would vanish from the code object.
            f.setLinkage(GlobalValue::ExternalLinkage);
            // Nor does it give them OpenCL's default flat work-group size (its kernels get
            // 1..256): with the backend's 1..1024, promoting the copy of the block literal to
            // LDS took 24 bytes x 1024 work-items.
            if (!f.hasFnAttribute("amdgpu-flat-work-group-size"))
                f.addFnAttr("amdgpu-flat-work-group-size", "1,256");
        }
    }
    if (!m->getModuleFlag("amdhsa_code_object_version"))
        m->addModuleFlag(Module::Error, "amdhsa_code_object_version", kCodeObjectVersion);
    applyFastMath(*m, opts);

    std::string verifyLog;
    raw_string_ostream vos(verifyLog);
    if (verifyModule(*m, &vos))
        return FinalizeResult::failure(
            log + "error: internal: the linked module does not verify:\n" + vos.str());

    const Target* t = TargetRegistry::lookupTarget(kTriple, error);
    if (!t)
        return FinalizeResult::failure(log + "error: no AMDGPU code generator: " + error);
    TargetOptions to;
    if (opts.effectiveMadEnable())
        to.AllowFPOpFusion = FPOpFusion::Fast;
    const unsigned optLevel = opts.effectiveOptLevel() == 0   ? 0
                              : opts.effectiveOptLevel() == 1 ? 1
                                                              : 3;
    std::unique_ptr<TargetMachine> tm(t->createTargetMachine(
        kTriple, cpu, "", to, Reloc::PIC_, std::nullopt,
        optLevel == 0 ? CodeGenOptLevel::None : CodeGenOptLevel::Aggressive));
    if (!tm)
        return FinalizeResult::failure(log + "error: cannot create the AMDGPU target machine for " +
                                       cpu);
    m->setTargetTriple(kTriple);
    m->setDataLayout(tm->createDataLayout());

    optimise(*m, *tm, optLevel);
    selectDynamicArgumentExtracts(*m);
    if (!diagnostics.empty())
        return FinalizeResult::failure(log + diagnostics);
    if (std::string cycle = recursiveFunctions(*m); !cycle.empty())
        return FinalizeResult::failure(log + cycle);

    size_t globalBytes = 0;
    for (GlobalVariable& g : m->globals())
        if (!g.isDeclaration() && g.getAddressSpace() == 1)
            globalBytes += m->getDataLayout().getTypeAllocSize(g.getValueType());

    // -save-temps: per kernel, the optimised IR it reaches (before code generation, which
    // rewrites the module) — the .isa follows once the code object exists.
    std::string tempPrefix;
    if (opts.saveTemps) {
        tempPrefix = saveTempsPrefix(opts, cpu);
        for (Function& f : *m) {
            if (f.isDeclaration() || f.getCallingConv() != CallingConv::AMDGPU_KERNEL)
                continue;
            std::unique_ptr<Module> part = cloneReachable(*m, f);
            log += writeTempFile(tempPrefix + "_" + f.getName().str() + ".ll",
                                 [&](raw_pwrite_stream& ll) { part->print(ll, nullptr); });
        }
    }

    SmallVector<char, 0> object;
    {
        raw_svector_ostream os(object);
        legacy::PassManager pm;
        if (tm->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::ObjectFile))
            return FinalizeResult::failure(log +
                                           "error: the AMDGPU backend cannot emit object files");
        pm.run(*m);
    }
    if (!diagnostics.empty())
        return FinalizeResult::failure(log + diagnostics);

    std::string codeObject;
    if (!linkCodeObject(StringRef(object.data(), object.size()), codeObject, error))
        return FinalizeResult::failure(log + "error: " + error);

    std::string exeError;
    std::shared_ptr<GcnExecutable> exe = makeExecutable(codeObject, bitcode, log, exeError);
    if (!exe)
        return FinalizeResult::failure(log + exeError);
    exe->m_globalBytes = globalBytes;
    exe->m_guards = executionGuardsFromEnvironment(log);

    if (opts.saveTemps) {
        const auto* image = reinterpret_cast<const unsigned char*>(exe->m_loaded.base());
        for (const gcn::KernelInfo& k : exe->m_codeObject.kernels)
            log += writeTempFile(tempPrefix + "_" + k.name + ".isa", [&](raw_pwrite_stream& isa) {
                writeIsa(isa, *exe, k, image, cpu);
            });
    }

    ProgramBinary bin;
    bin.type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    bin.targetKind = kGcnBinaryKind;
    bin.targetName = cpu;
    bin.options = std::string(options);
    bin.source = std::string(source);
    bin.bitcode = bitcode;
    bin.text = std::move(codeObject);
    bin.machine = kEmAmdgpu;
    exe->m_binary = writeProgramBinary(bin);

    FinalizeResult r;
    r.log = std::move(log);
    r.executable = std::move(exe);
    return r;
}

LoadBinaryResult loadGcnBinary(std::span<const unsigned char> binary, const TargetSpec& target) {
    auto fail = &LoadBinaryResult::invalid;
    ProgramBinary b;
    if (std::optional<LoadBinaryResult> done = startGpuBinaryLoad(binary, "amdgcn", "GCN", b))
        return std::move(*done);
    LoadBinaryResult result;
    result.binaryType = b.type;
    result.source = b.source;
    const std::string cpu = target.cpuName.empty() ? "gfx900" : target.cpuName;
    if (b.targetKind != kGcnBinaryKind)
        return fail("the executable was built for the " + targetKindName(b.targetKind) +
                    " device, not GCN");
    if (b.machine == kEmAmdgpu && !b.text.empty() && b.targetName == cpu) {
        // The code object is what runs: no recompilation.
        initialiseAmdgpuOnce();
        std::string log, error;
        std::shared_ptr<GcnExecutable> exe = makeExecutable(b.text, b.bitcode, log, error);
        if (!exe)
            return fail("the binary's code object cannot be used: " + error);
        exe->m_binary.assign(reinterpret_cast<const char*>(binary.data()), binary.size());
        exe->m_guards = executionGuardsFromEnvironment(log);
        result.log = std::move(log);
        result.executable = std::move(exe);
        return result;
    }
    // Built for another GCN chip, or without code: rebuild from the bitcode.
    FinalizeResult fin = finalizeForGcn(b.bitcode, b.options, b.source, target);
    if (fin.status != CL_SUCCESS || !fin.executable)
        return fail("the executable in the binary could not be rebuilt for " + cpu + ":\n" +
                    fin.log);
    result.log = std::move(fin.log);
    result.executable = std::move(fin.executable);
    return result;
}

TargetSpec withGcnFrontEnd(TargetSpec target) {
    target.triple = "amdgcn-amd-amdhsa";
    if (target.cpuName.empty())
        target.cpuName = "gfx900";
    // printf stays a call, lowered by the finaliser (codegen/printf_lowering.cpp): clang's
    // AMDGPU lowering would print every %s string that is not a literal as "???".
    // clang defines the header-only feature macro of the work-group collective functions (and
    // so declares them) only for SPIR targets; the device implements them (builtins/gcn).
    target.frontEndArgs = {"-target-cpu", target.cpuName, "-fno-builtin-printf", "-D",
                           "__opencl_c_work_group_collective_functions=1"};
    // Likewise the header-only sub-group extensions (builtins/gcn/sub_group_ext.cl) the device
    // lists: their macros declare their functions.
    // And the header-only atomic scope features (clang's header defines them for SPIR only;
    // memory_scope_device/_all_devices and the order- and scope-less C11 functions hang on them).
    for (const std::string& e : target.clExtensions)
        if (e.starts_with("cl_khr_subgroup_") || e == "__opencl_c_atomic_scope_device" ||
            e == "__opencl_c_atomic_scope_all_devices") {
            target.frontEndArgs.push_back("-D");
            target.frontEndArgs.push_back(e + "=1");
        }
    target.initialiseTarget = &initialiseAmdgpuTarget;
    target.binaryKind = kGcnBinaryKind;
    // SPIR-V: the translator's spir64 modules are retargeted to amdgcn by the front end
    // (compiler/spirv_retarget.cpp), then built like OpenCL C.
    target.spirv = true;
    return target;
}

std::unique_ptr<Toolchain> makeGcnToolchain(TargetSpec target) {
    // libclc is read from disk at build time: a new one must not meet old cache entries.
    target.cacheKeyFiles.push_back(runtimeDataPath("clc/amdgcn--amdhsa.bc", kLibclcPath));
    return std::make_unique<FrontEndToolchain>(withGcnFrontEnd(std::move(target)), &finalizeForGcn,
                                               &loadGcnBinary);
}

} // namespace duet::rt
