// Bitcode I/O, the embedded CPU builtin library, and the IR steps both finalizers share.
#include "compiler/llvm_util.hpp"
#include "compiler/library_closure.hpp"
#include "compiler/options.hpp"
#include "core/data_files.hpp"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Operator.h>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <mutex>

extern "C" const unsigned char duet_cpu_builtins_bc[];
extern "C" const unsigned char duet_cpu_builtins_bc_end[];

namespace duet::rt {

std::unique_ptr<llvm::Module> parseBitcode(std::string_view bitcode, llvm::LLVMContext& ctx,
                                           std::string* error) {
    if (!looksLikeBitcode(bitcode)) {
        if (error)
            *error = "not LLVM bitcode";
        return nullptr;
    }
    llvm::MemoryBufferRef ref(llvm::StringRef(bitcode.data(), bitcode.size()), "bitcode");
    auto module = llvm::parseBitcodeFile(ref, ctx);
    if (!module) {
        std::string message = llvm::toString(module.takeError());
        if (error)
            *error = std::move(message);
        return nullptr;
    }
    return std::move(*module);
}

std::string writeBitcode(const llvm::Module& module) {
    std::string out;
    llvm::raw_string_ostream os(out);
    llvm::WriteBitcodeToFile(module, os);
    os.flush();
    return out;
}

std::string_view cpuBuiltinLibraryBitcode() {
    const auto* begin = reinterpret_cast<const char*>(duet_cpu_builtins_bc);
    const auto* end = reinterpret_cast<const char*>(duet_cpu_builtins_bc_end);
    return std::string_view(begin, size_t(end - begin));
}

bool isAtomicScopeMarker(llvm::StringRef name) {
    return name.starts_with("_Z16__duet_scope_all");
}

const llvm::StringSet<>& cpuBuiltinLibrarySymbols() {
    static const llvm::StringSet<> symbols = [] {
        llvm::StringSet<> names;
        llvm::LLVMContext ctx;
        if (auto module = parseBitcode(cpuBuiltinLibraryBitcode(), ctx)) {
            for (const llvm::Function& f : *module)
                if (!f.isDeclaration())
                    names.insert(f.getName());
        }
        return names;
    }();
    return symbols;
}

void applyFastMath(llvm::Module& m, const BuildOptions& o) {
    llvm::FastMathFlags fmf;
    if (o.effectiveUnsafeMath()) {
        fmf.setAllowReassoc();
        fmf.setAllowReciprocal();
        fmf.setApproxFunc();
    }
    if (o.effectiveMadEnable())
        fmf.setAllowContract();
    if (o.effectiveNoSignedZeros())
        fmf.setNoSignedZeros();
    if (o.effectiveFiniteMathOnly()) {
        fmf.setNoNaNs();
        fmf.setNoInfs();
    }
    if (!fmf.any())
        return;
    for (llvm::Function& f : m) {
        if (o.effectiveUnsafeMath())
            f.addFnAttr("unsafe-fp-math", "true");
        if (o.effectiveFiniteMathOnly()) {
            f.addFnAttr("no-nans-fp-math", "true");
            f.addFnAttr("no-infs-fp-math", "true");
        }
        if (o.effectiveNoSignedZeros())
            f.addFnAttr("no-signed-zeros-fp-math", "true");
        for (llvm::Instruction& inst : llvm::instructions(f))
            if (llvm::isa<llvm::FPMathOperator>(inst)) {
                llvm::FastMathFlags flags = inst.getFastMathFlags();
                flags |= fmf;
                inst.setFastMathFlags(flags);
            }
    }
}

std::string undefinedSymbolReport(llvm::Module& m, std::string_view device,
                                  llvm::function_ref<bool(llvm::StringRef, std::string&)> claim) {
    std::string out;
    for (llvm::Function& f : m) {
        if (!f.isDeclaration() || f.isIntrinsic() || f.use_empty())
            continue;
        llvm::StringRef name = f.getName();
        if (claim(name, out))
            continue;
        std::string demangled = llvm::demangle(name.str());
        out += "error: undefined function '" + name.str() + "'";
        if (demangled != name)
            out += " (" + demangled + ")";
        out += ": not an OpenCL C builtin ";
        out += device;
        out += " implements, nor defined in the program\n";
    }
    for (llvm::GlobalVariable& g : m.globals())
        if (g.isDeclaration() && !g.use_empty())
            out += "error: undefined variable '" + g.getName().str() + "'\n";
    return out;
}

void defineImageAccessors(llvm::Module& m) {
    llvm::LLVMContext& ctx = m.getContext();
    for (llvm::Function& f : m) {
        if (!f.isDeclaration() || f.arg_size() != 1)
            continue;
        llvm::StringRef name = f.getName();
        const bool image = name.starts_with("_Z16__duet_image_ptr");
        const bool bits = name.starts_with("_Z19__duet_sampler_bits");
        const bool literal = name == "__translate_sampler_initializer";
        if (!image && !bits && !literal)
            continue;
        llvm::Type* ret = f.getReturnType();
        llvm::Argument* arg = f.getArg(0);
        if ((image && !(ret->isPointerTy() && arg->getType()->isPointerTy())) ||
            (bits && !(ret->isIntegerTy() && arg->getType()->isPointerTy())) ||
            (literal && !(ret->isPointerTy() && arg->getType()->isIntegerTy())))
            continue; // not the shape this file knows: reported as unresolved
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", &f));
        llvm::Value* v;
        if (image) // no cast where the image is already a global pointer (nvptx)
            v = b.CreateAddrSpaceCast(arg, ret);
        else if (bits)
            v = b.CreateTrunc(b.CreatePtrToInt(arg, b.getInt64Ty()), ret);
        else
            v = b.CreateIntToPtr(b.CreateZExt(arg, b.getInt64Ty()), ret);
        b.CreateRet(v);
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
        f.addFnAttr(llvm::Attribute::AlwaysInline);
        f.setDoesNotAccessMemory();
    }
}

void definePipeAccessors(llvm::Module& m) {
    llvm::LLVMContext& ctx = m.getContext();
    for (llvm::Function& f : m) {
        if (!f.isDeclaration() || f.arg_size() != 1)
            continue;
        const llvm::StringRef name = f.getName();
        const bool pipe = name == "__duet_pipe_ptr_ro" || name == "__duet_pipe_ptr_wo";
        const bool make = name == "__duet_make_reserve_id";
        const bool bits = name == "__duet_reserve_id_bits";
        llvm::Type* ret = f.getReturnType();
        llvm::Argument* arg = f.getArg(0);
        if (!((pipe && ret->isPointerTy() && arg->getType()->isPointerTy()) ||
              (make && ret->isPointerTy() && arg->getType()->isIntegerTy(64)) ||
              (bits && ret->isIntegerTy(64) && arg->getType()->isPointerTy())))
            continue; // not the shape this file knows: reported as unresolved
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", &f));
        llvm::Value* v;
        if (pipe)
            v = b.CreateAddrSpaceCast(arg, ret);
        else if (make)
            v = b.CreateIntToPtr(arg, ret);
        else
            v = b.CreatePtrToInt(arg, ret);
        b.CreateRet(v);
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
        f.addFnAttr(llvm::Attribute::AlwaysInline);
        f.setDoesNotAccessMemory();
    }
}

const llvm::MemoryBuffer* libraryBitcode(const std::string& relative, const std::string& installed,
                                         std::string& error) {
    struct Entry {
        std::unique_ptr<llvm::MemoryBuffer> buffer;
        std::string error;
    };
    static std::mutex mutex;
    static std::map<std::string, Entry> cache;
    std::lock_guard lock(mutex);
    auto [it, fresh] = cache.try_emplace(relative);
    if (fresh) {
        const std::string path = runtimeDataPath(relative, installed);
        auto b = llvm::MemoryBuffer::getFile(path);
        if (!b)
            it->second.error =
                "cannot read " + path + " (package libclc-19): " + b.getError().message();
        else
            it->second.buffer = std::move(*b);
    }
    error = it->second.error;
    return it->second.buffer.get();
}

bool linkLazily(llvm::Module& m, llvm::MemoryBufferRef bitcode, const std::string& what,
                std::string& error) {
    std::string e =
        linkLibraryClosure(m, std::string_view(bitcode.getBufferStart(), bitcode.getBufferSize()),
                           what, sharedLibrariesEnabled());
    if (e.empty())
        return true;
    error = e + "\n";
    return false;
}

std::shared_ptr<std::string> collectDiagnostics(llvm::LLVMContext& ctx) {
    auto diagnostics = std::make_shared<std::string>();
    ctx.setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo* info, void* context) {
            if (info->getSeverity() != llvm::DS_Error)
                return;
            std::string text;
            llvm::raw_string_ostream os(text);
            llvm::DiagnosticPrinterRawOStream printer(os);
            info->print(printer);
            *static_cast<std::string*>(context) += "error: " + os.str() + "\n";
        },
        diagnostics.get());
    return diagnostics;
}

std::optional<LoadBinaryResult> startGpuBinaryLoad(std::span<const unsigned char> bytes,
                                                   std::string_view arch, std::string_view device,
                                                   ProgramBinary& executable) {
    ReadProgramBinaryResult read = readProgramBinary(bytes);
    if (read.status != CL_SUCCESS)
        return LoadBinaryResult::invalid(read.reason);
    ProgramBinary& b = read.binary;
    std::string triple;
    {
        llvm::LLVMContext ctx;
        if (std::unique_ptr<llvm::Module> m = parseBitcode(b.bitcode, ctx))
            triple = m->getTargetTriple();
    }
    if (triple.empty())
        return LoadBinaryResult::invalid(".llvmir is not readable bitcode");
    if (!llvm::StringRef(triple).starts_with(arch))
        return LoadBinaryResult::invalid(".llvmir targets '" + triple + "', not " +
                                         std::string(arch) + ": the binary was not built for the " +
                                         std::string(device) + " device");
    if (b.type != CL_PROGRAM_BINARY_TYPE_EXECUTABLE) {
        LoadBinaryResult result;
        result.binaryType = b.type;
        result.source = std::move(b.source);
        result.bitcode = std::move(b.bitcode);
        return result;
    }
    executable = std::move(b);
    return std::nullopt;
}

} // namespace duet::rt
