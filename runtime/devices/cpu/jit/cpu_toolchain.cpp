// CPU program binaries (ELF with .llvmir re-JITed on load) and the CPU device's Toolchain.
#include "compiler/binary.hpp"
#include "compiler/llvm_util.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"

#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace duet::rt {

LoadBinaryResult loadCpuBinary(std::span<const unsigned char> binary, const TargetSpec& target) {
    LoadBinaryResult result;
    auto fail = &LoadBinaryResult::invalid;
    ReadProgramBinaryResult read = readProgramBinary(binary);
    if (read.status != CL_SUCCESS)
        return fail(read.reason);
    ProgramBinary& b = read.binary;
    if (b.targetKind != kCpuBinaryKind)
        return fail("binary was built for another kind of device (" + targetKindName(b.targetKind) +
                    "), not the CPU");

    // The bitcode is all we run from (executables are re-JITed), so it must be sound IR.
    {
        llvm::LLVMContext ctx;
        std::string error;
        std::unique_ptr<llvm::Module> m = parseBitcode(b.bitcode, ctx, &error);
        if (!m)
            return fail(".llvmir is not readable: " + error);
        if (!llvm::StringRef(m->getTargetTriple()).starts_with("spir64"))
            return fail(".llvmir targets '" + m->getTargetTriple() + "', not spir64");
        std::string verify;
        llvm::raw_string_ostream os(verify);
        if (llvm::verifyModule(*m, &os)) {
            os.flush();
            return fail(".llvmir is not valid LLVM IR: " + verify);
        }
    }

    result.binaryType = b.type;
    result.source = b.source;
    if (b.type != CL_PROGRAM_BINARY_TYPE_EXECUTABLE) {
        result.bitcode = std::move(b.bitcode);
        return result;
    }
    FinalizeResult fin = finalizeForCpu(b.bitcode, b.options, b.source, target);
    if (fin.status != CL_SUCCESS || !fin.executable)
        return fail(std::string("the ") + binaryTypeName(b.type) +
                    " in the binary could not be rebuilt for this CPU:\n" + fin.log);
    result.log = std::move(fin.log);
    result.executable = std::move(fin.executable);
    return result;
}

TargetSpec withCpuFrontEnd(TargetSpec target) {
    // Kernels are parsed as spir64 and retargeted to the host after the work-group pass.
    target.triple = "spir64-unknown-unknown";
    target.frontEndArgs.clear();
    target.initialiseTarget = nullptr;
    target.binaryKind = kCpuBinaryKind;
    // SPIR-V: the translator's spir64 modules take the same path as the front end's.
    target.spirv = true;
    return target;
}

std::unique_ptr<Toolchain> makeCpuToolchain(TargetSpec target) {
    initialiseCpuCodegen();
    return std::make_unique<FrontEndToolchain>(withCpuFrontEnd(std::move(target)), &finalizeForCpu,
                                               &loadCpuBinary);
}

} // namespace duet::rt
