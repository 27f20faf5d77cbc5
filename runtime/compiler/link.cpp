// linkBitcode: clLinkProgram's module linking, link-time options and unresolved-symbol checks.
#include "compiler/front_end.hpp"
#include "compiler/llvm_util.hpp"
#include "compiler/options.hpp"

#include <llvm/ADT/StringSet.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Operator.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/raw_ostream.h>

namespace duet::rt {
namespace {

/// Applies the link-time -cl-* math options (OpenCL 3.0 §5.8.6.2) to every function of an
/// executable, as fast-math flags on floating-point instructions and function attributes.
void applyLinkMathOptions(llvm::Module& m, const BuildOptions& o) {
    const bool finite = o.effectiveFiniteMathOnly();
    const bool unsafe = o.effectiveUnsafeMath();
    const bool nsz = o.effectiveNoSignedZeros();
    if (!finite && !unsafe && !nsz && !o.denormsAreZero)
        return;
    for (llvm::Function& f : m) {
        if (f.isDeclaration())
            continue;
        if (finite) {
            f.addFnAttr("no-infs-fp-math", "true");
            f.addFnAttr("no-nans-fp-math", "true");
        }
        if (nsz)
            f.addFnAttr("no-signed-zeros-fp-math", "true");
        if (unsafe)
            f.addFnAttr("unsafe-fp-math", "true");
        if (o.denormsAreZero)
            f.addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign");
        for (llvm::BasicBlock& bb : f) {
            for (llvm::Instruction& inst : bb) {
                if (!llvm::isa<llvm::FPMathOperator>(inst))
                    continue;
                llvm::FastMathFlags fmf = inst.getFastMathFlags();
                if (finite) {
                    fmf.setNoNaNs();
                    fmf.setNoInfs();
                }
                if (nsz)
                    fmf.setNoSignedZeros();
                if (unsafe) {
                    fmf.setAllowReassoc();
                    fmf.setAllowReciprocal();
                    fmf.setAllowContract();
                    fmf.setApproxFunc();
                }
                inst.setFastMathFlags(fmf);
            }
        }
    }
}

std::string readableName(llvm::StringRef name) {
    std::string demangled = llvm::demangle(name.str());
    if (demangled == name)
        return "'" + demangled + "'";
    return "'" + demangled + "' (" + name.str() + ")";
}

} // namespace

LinkResult linkBitcode(std::span<const std::string> objects, std::string_view options,
                       bool createLibrary) {
    LinkResult result;
    ParsedOptions parsed = parseBuildOptions(options, OptionsKind::Link);
    if (!parsed.ok) {
        result.status = CL_INVALID_LINKER_OPTIONS;
        result.log = "error: " + parsed.error + "\n";
        return result;
    }
    const BuildOptions& o = parsed.options;
    createLibrary = createLibrary || o.createLibrary;
    // §5.8.6.1: -enable-link-options "must be specified with the -create-library option".
    if (o.enableLinkOptions && !createLibrary) {
        result.status = CL_INVALID_LINKER_OPTIONS;
        result.log = "error: '-enable-link-options' is only valid with '-create-library'\n";
        return result;
    }
    if (objects.empty()) {
        result.status = CL_LINK_PROGRAM_FAILURE;
        result.log = "error: nothing to link\n";
        return result;
    }

    llvm::raw_string_ostream log(result.log);
    llvm::LLVMContext ctx;
    bool linkError = false;
    struct HandlerState {
        llvm::raw_ostream* log;
        bool* error;
    } state{&log, &linkError};
    ctx.setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo* di, void* p) {
            auto* s = static_cast<HandlerState*>(p);
            const char* severity = "note";
            switch (di->getSeverity()) {
            case llvm::DS_Error:
                severity = "error";
                *s->error = true;
                break;
            case llvm::DS_Warning:
                severity = "warning";
                break;
            default:
                break;
            }
            *s->log << severity << ": ";
            llvm::DiagnosticPrinterRawOStream printer(*s->log);
            di->print(printer);
            *s->log << "\n";
        },
        &state);

    auto fail = [&](std::string message) {
        log << "error: " << message << "\n";
        log.flush();
        result.status = CL_LINK_PROGRAM_FAILURE;
        result.bitcode.clear();
        return result;
    };

    std::string error;
    std::unique_ptr<llvm::Module> composite = parseBitcode(objects[0], ctx, &error);
    if (!composite)
        return fail("input 0 is not a compiled program: " + error);
    llvm::Linker linker(*composite);
    for (size_t i = 1; i < objects.size(); ++i) {
        std::unique_ptr<llvm::Module> m = parseBitcode(objects[i], ctx, &error);
        if (!m)
            return fail("input " + std::to_string(i) + " is not a compiled program: " + error);
        if (linker.linkInModule(std::move(m)) || linkError)
            return fail("linking input " + std::to_string(i) + " failed");
    }

    // Functions the user declared but no input defines. Builtins are resolved later, against
    // the builtin library; only user declarations are errors here.
    llvm::StringSet<> stillUndefined;
    if (llvm::NamedMDNode* md = composite->getNamedMetadata(kUserDeclarationsMD)) {
        for (const llvm::MDNode* node : md->operands())
            for (const llvm::MDOperand& op : node->operands())
                if (auto* s = llvm::dyn_cast_or_null<llvm::MDString>(op.get())) {
                    llvm::Function* f = composite->getFunction(s->getString());
                    if (f && f->isDeclaration())
                        stillUndefined.insert(s->getString());
                }
        composite->eraseNamedMetadata(md);
    }
    if (!createLibrary) {
        const llvm::StringSet<>& builtins = cpuBuiltinLibrarySymbols();
        bool missing = false;
        for (const llvm::Function& f : *composite) {
            if (!f.isDeclaration() || f.isIntrinsic() || !stillUndefined.contains(f.getName()) ||
                builtins.contains(f.getName()))
                continue;
            log << "error: undefined function " << readableName(f.getName())
                << " is declared and used but not defined by any linked program\n";
            missing = true;
        }
        if (missing) {
            log.flush();
            result.status = CL_LINK_PROGRAM_FAILURE;
            return result;
        }
        applyLinkMathOptions(*composite, o);
    } else if (!stillUndefined.empty()) {
        // A library may leave them open; the next link must still know they are user functions.
        std::vector<llvm::Metadata*> names;
        for (const auto& entry : stillUndefined)
            names.push_back(llvm::MDString::get(ctx, entry.getKey()));
        composite->getOrInsertNamedMetadata(kUserDeclarationsMD)
            ->addOperand(llvm::MDNode::get(ctx, names));
    }

    log.flush();
    result.bitcode = writeBitcode(*composite);
    return result;
}

} // namespace duet::rt
