// Kernel code made visible to Linux perf (profiling.hpp): a JITLink plugin writing perf's
// jitdump format (the Linux kernel's tools/perf/Documentation/jitdump-specification.txt).
#include "devices/cpu/jit/profiling.hpp"

#include "core/environment.hpp"

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <elf.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace duet::rt::cpu {

using namespace llvm;

namespace {

uint64_t monotonicNs() { // perf record -k 1 orders the records by this clock
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

/// The process's dump file: its header written once, one code-load record per function.
class PerfDump {
public:
    static PerfDump* open() {
        static PerfDump* dump = [] {
            auto* d = new PerfDump(); // never destroyed: kernels may be linked during exit
            return d->m_file ? d : nullptr;
        }();
        return dump;
    }

    void codeLoad(const std::string& name, uint64_t address, const char* code, uint64_t size) {
        std::lock_guard<std::mutex> lock(m_mutex);
        struct {
            uint32_t id, totalSize;
            uint64_t timestamp;
            uint32_t pid, tid;
            uint64_t vma, codeAddress, codeSize, codeIndex;
        } record{0,       0,       monotonicNs(), uint32_t(getpid()), uint32_t(syscall(SYS_gettid)),
                 address, address, size,          m_index++};
        record.totalSize = uint32_t(sizeof record + name.size() + 1 + size);
        std::fwrite(&record, sizeof record, 1, m_file);
        std::fwrite(name.c_str(), name.size() + 1, 1, m_file);
        std::fwrite(code, 1, size, m_file);
        std::fflush(m_file);
    }

private:
    PerfDump() {
        const char* dir = std::getenv("JITDUMPDIR");
        const std::string path =
            std::string(dir && *dir ? dir : ".") + "/jit-" + std::to_string(getpid()) + ".dump";
        m_file = std::fopen(path.c_str(), "w+");
        if (!m_file) {
            std::fprintf(stderr, "duet: cpu: DUET_CPU_PERF: cannot write %s\n", path.c_str());
            return;
        }
        // perf finds the file by this mapping of it (an executable one) in its record.
        if (mmap(nullptr, size_t(sysconf(_SC_PAGESIZE)), PROT_READ | PROT_EXEC, MAP_PRIVATE,
                 fileno(m_file), 0) == MAP_FAILED)
            std::fprintf(stderr, "duet: cpu: DUET_CPU_PERF: cannot map %s\n", path.c_str());
        struct {
            uint32_t magic, version, totalSize, elfMachine, pad, pid;
            uint64_t timestamp, flags;
        } header{0x4A695444u, 1, 0, EM_X86_64, 0, uint32_t(getpid()), monotonicNs(), 0};
        header.totalSize = sizeof header;
        std::fwrite(&header, sizeof header, 1, m_file);
        std::fflush(m_file);
    }

    std::FILE* m_file = nullptr;
    std::mutex m_mutex;
    uint64_t m_index = 0;
};

/// A function of an object: its section, offset in it, size and name (local ones too, which
/// JITLink's graph leaves anonymous).
struct Function {
    std::string section, name;
    uint64_t offset, size;
};

/// Writes each linked object's functions once their code is fixed up (in place: the JIT runs
/// in this process), named from the object's symbol table.
class PerfDumpPlugin : public orc::ObjectLinkingLayer::Plugin {
public:
    explicit PerfDumpPlugin(PerfDump& dump) : m_dump(dump) {}

    void notifyMaterializing(orc::MaterializationResponsibility&, jitlink::LinkGraph& g,
                             jitlink::JITLinkContext&, MemoryBufferRef object) override {
        auto file = object::ObjectFile::createObjectFile(object);
        if (!file) {
            consumeError(file.takeError());
            return;
        }
        std::vector<Function> functions;
        for (const object::SymbolRef& sym : (*file)->symbols()) {
            auto type = sym.getType();
            auto name = sym.getName();
            auto section = sym.getSection();
            auto value = sym.getValue();
            if (!type || !name || !section || !value || *type != object::SymbolRef::ST_Function ||
                *section == (*file)->section_end()) {
                consumeError(type.takeError());
                consumeError(name.takeError());
                consumeError(section.takeError());
                consumeError(value.takeError());
                continue;
            }
            auto sectionName = (*section)->getName();
            if (!sectionName) {
                consumeError(sectionName.takeError());
                continue;
            }
            functions.push_back(
                {sectionName->str(), name->str(), *value, object::ELFSymbolRef(sym).getSize()});
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        m_pending[&g] = std::move(functions);
    }

    void modifyPassConfig(orc::MaterializationResponsibility&, jitlink::LinkGraph& g,
                          jitlink::PassConfiguration& config) override {
        std::vector<Function> functions;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            auto it = m_pending.find(&g);
            if (it == m_pending.end())
                return;
            functions = std::move(it->second);
            m_pending.erase(it);
        }
        config.PostFixupPasses.push_back([this, functions](jitlink::LinkGraph& g) {
            for (const Function& f : functions) {
                jitlink::Section* section = g.findSectionByName(f.section);
                if (!section || section->blocks_size() != 1 || f.size == 0)
                    continue;
                const jitlink::Block& b = **section->blocks().begin();
                if (b.isZeroFill() || f.offset + f.size > b.getSize())
                    continue;
                m_dump.codeLoad(f.name, b.getAddress().getValue() + f.offset,
                                b.getContent().data() + f.offset, f.size);
            }
            return Error::success();
        });
    }
    Error notifyFailed(orc::MaterializationResponsibility&) override { return Error::success(); }
    Error notifyRemovingResources(orc::JITDylib&, orc::ResourceKey) override {
        return Error::success();
    }
    void notifyTransferringResources(orc::JITDylib&, orc::ResourceKey, orc::ResourceKey) override {}

private:
    PerfDump& m_dump;
    std::mutex m_mutex;
    std::map<const jitlink::LinkGraph*, std::vector<Function>> m_pending;
};

} // namespace

bool attachPerfDump(orc::LLJIT& jit) {
    if (!envSwitchSet("DUET_CPU_PERF"))
        return false;
    auto* layer = dyn_cast<orc::ObjectLinkingLayer>(&jit.getObjLinkingLayer());
    PerfDump* dump = layer ? PerfDump::open() : nullptr;
    if (!dump)
        return false;
    layer->addPlugin(std::make_shared<PerfDumpPlugin>(*dump));
    return true;
}

} // namespace duet::rt::cpu
