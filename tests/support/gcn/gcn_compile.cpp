// Test-only helper: OpenCL C to gfx900 code objects through clang's and LLVM's C++ APIs.
#include "gcn_compile.hpp"

#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUAsmParser();
}

namespace gcntest {

namespace {

std::vector<uint8_t> compileToObject(const std::string& source,
                                     const std::vector<std::string>& options) {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeAMDGPUTargetInfo();
        LLVMInitializeAMDGPUTarget();
        LLVMInitializeAMDGPUTargetMC();
        LLVMInitializeAMDGPUAsmPrinter();
        LLVMInitializeAMDGPUAsmParser();
    });
    static std::atomic<unsigned> counter{0};
    std::string base =
        "/tmp/duet-gcn-model-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    std::string input = base + ".cl", output = base + ".o";
    std::ofstream(input) << source;

    std::vector<std::string> args = {
        "-triple",       "amdgcn-amd-amdhsa", "-target-cpu", "gfx900", "-O2",
        "-cl-std=CL2.0", "-emit-obj",         "-o",          output,   input};
    args.insert(args.end(), options.begin(), options.end());
    std::vector<const char*> argv;
    for (auto& a : args)
        argv.push_back(a.c_str());

    std::string log;
    llvm::raw_string_ostream logStream(log);
    auto diagOpts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
    auto* printer = new clang::TextDiagnosticPrinter(logStream, diagOpts.get());
    clang::DiagnosticsEngine diags(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diagOpts,
                                   printer);
    auto invocation = std::make_shared<clang::CompilerInvocation>();
    bool ok = clang::CompilerInvocation::CreateFromArgs(*invocation, argv, diags);
    clang::CompilerInstance ci;
    ci.setInvocation(invocation);
    ci.createDiagnostics(new clang::TextDiagnosticPrinter(logStream, &ci.getDiagnosticOpts()));
    if (ok) {
        clang::EmitObjAction action;
        ok = ci.ExecuteAction(action);
    }
    std::ifstream in(output, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    unlink(input.c_str());
    unlink(output.c_str());
    if (!ok || bytes.empty())
        throw std::runtime_error("OpenCL C build failed:\n" + logStream.str());
    return bytes;
}

} // namespace

Kernel compileKernel(const std::string& source, const std::string& name,
                     const std::vector<std::string>& options) {
    std::vector<std::string> opts = options;
    bool libclc = false;
    for (auto it = opts.begin(); it != opts.end();)
        if (*it == "libclc")
            libclc = true, it = opts.erase(it);
        else
            ++it;
    if (libclc) {
        opts.insert(opts.end(), {"-finclude-default-header", "-resource-dir",
                                 DUET_TEST_CLANG_RESOURCE_DIR, "-mlink-builtin-bitcode",
                                 "/usr/lib/clc/amdgcn--amdhsa.bc", "-Wno-linker-warnings"});
    }
    std::vector<uint8_t> elf = compileToObject(source, opts);
    llvm::MemoryBufferRef ref(
        llvm::StringRef(reinterpret_cast<const char*>(elf.data()), elf.size()), "kernel.o");
    auto objOrErr = llvm::object::ObjectFile::createObjectFile(ref);
    if (!objOrErr)
        throw std::runtime_error("not an object file: " + llvm::toString(objOrErr.takeError()));
    auto* obj = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(objOrErr->get());
    if (!obj)
        throw std::runtime_error("not an ELF64 object");

    // Lay the allocated sections out in one 256-byte aligned block, the way a linker would
    // load them, and apply the PC-relative relocations libclc's constant tables need.
    std::map<uint64_t, uint64_t> sectionOffset; // section index -> offset in the block
    uint64_t size = 0;
    for (const llvm::object::SectionRef& sec : obj->sections()) {
        if (!(llvm::object::ELFSectionRef(sec).getFlags() & llvm::ELF::SHF_ALLOC))
            continue;
        uint64_t align = std::max<uint64_t>(256, sec.getAlignment().value());
        size = (size + align - 1) / align * align;
        sectionOffset[sec.getIndex()] = size;
        size += sec.getSize();
    }
    size_t allocSize = (size + 4096 + 255) / 256 * 256; // the prefetch after s_code_end
    uint8_t* mem = static_cast<uint8_t*>(std::aligned_alloc(256, allocSize));
    memset(mem, 0, allocSize);
    Kernel k;
    k.text = std::shared_ptr<uint8_t>(mem, [](uint8_t* p) { std::free(p); });
    k.textSize = size;
    for (const llvm::object::SectionRef& sec : obj->sections()) {
        auto it = sectionOffset.find(sec.getIndex());
        if (it == sectionOffset.end() || sec.isBSS())
            continue;
        auto contents = sec.getContents();
        if (!contents)
            throw std::runtime_error("section contents");
        memcpy(mem + it->second, contents->data(), contents->size());
    }
    auto symbolAddress = [&](const llvm::object::SymbolRef& sym) -> uint64_t {
        auto sec = sym.getSection();
        auto value = sym.getValue();
        if (!sec || !value || *sec == obj->section_end())
            throw std::runtime_error("relocation against an undefined symbol");
        auto it = sectionOffset.find((*sec)->getIndex());
        if (it == sectionOffset.end())
            throw std::runtime_error("symbol in a non-allocated section");
        return reinterpret_cast<uint64_t>(mem) + it->second + *value;
    };
    for (const llvm::object::SectionRef& sec : obj->sections()) {
        auto target = sec.getRelocatedSection();
        if (!target || *target == obj->section_end())
            continue;
        auto it = sectionOffset.find((*target)->getIndex());
        if (it == sectionOffset.end())
            continue;
        for (const llvm::object::RelocationRef& rel : sec.relocations()) {
            uint64_t place = reinterpret_cast<uint64_t>(mem) + it->second + rel.getOffset();
            int64_t addend = 0;
            if (auto a = llvm::object::ELFRelocationRef(rel).getAddend())
                addend = *a;
            else
                llvm::consumeError(a.takeError());
            uint64_t s = symbolAddress(*rel.getSymbol()) + addend;
            uint64_t pcrel = s - place;
            switch (rel.getType()) {
            case 1: {
                uint32_t v = uint32_t(s);
                memcpy((void*)place, &v, 4);
                break;
            } // ABS32_LO
            case 2: {
                uint32_t v = uint32_t(s >> 32);
                memcpy((void*)place, &v, 4);
                break;
            } // ABS32_HI
            case 3:
                memcpy((void*)place, &s, 8);
                break; // ABS64
            case 10: {
                uint32_t v = uint32_t(pcrel);
                memcpy((void*)place, &v, 4);
                break;
            } // REL32_LO
            case 11: {
                uint32_t v = uint32_t(pcrel >> 32);
                memcpy((void*)place, &v, 4);
                break;
            } // REL32_HI
            case 5:
                memcpy((void*)place, &pcrel, 8);
                break; // REL64
            default:
                throw std::runtime_error("unsupported relocation type " +
                                         std::to_string(rel.getType()));
            }
        }
    }

    bool haveEntry = false, haveKd = false;
    for (const llvm::object::SymbolRef& sym : obj->symbols()) {
        auto symName = sym.getName();
        if (!symName) {
            llvm::consumeError(symName.takeError());
            continue;
        }
        if (*symName != name && *symName != name + ".kd")
            continue;
        uint64_t addr = symbolAddress(sym);
        if (*symName == name) {
            k.entry = addr;
            haveEntry = true;
        } else {
            const uint8_t* d = reinterpret_cast<const uint8_t*>(addr);
            memcpy(&k.groupSegmentSize, d + 0, 4);
            memcpy(&k.privateSegmentSize, d + 4, 4);
            memcpy(&k.kernargSize, d + 8, 4);
            memcpy(&k.rsrc3, d + 44, 4);
            memcpy(&k.rsrc1, d + 48, 4);
            memcpy(&k.rsrc2, d + 52, 4);
            memcpy(&k.codeProperties, d + 56, 2);
            haveKd = true;
        }
    }
    if (!haveEntry || !haveKd)
        throw std::runtime_error("kernel " + name + " not found");
    return k;
}

} // namespace gcntest
