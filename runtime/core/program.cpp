// Program builds: compile (clang), link, finalise per device; logs and status per device.
#include "core/program.hpp"
#include "core/program_cache.hpp"

#include <chrono>
#include <cstdio>

namespace duet::rt {

Program::Program(Ref<Context> context, Origin origin, std::string source)
    : _cl_program(kTag), m_context(std::move(context)), m_origin(origin),
      m_source(std::move(source)), m_devices(m_context->devices()) {}

Program::~Program() = default;

bool Program::Build::allowsNonUniformWorkGroups() const {
    if (options.find("-cl-uniform-work-group-size") != std::string::npos)
        return false;
    return options.find("-cl-std=CL2") != std::string::npos ||
           options.find("-cl-std=CL3") != std::string::npos;
}

Program::Build Program::build(const Device* d) const {
    std::lock_guard lock(m_mutex);
    auto it = m_builds.find(d);
    return it == m_builds.end() ? Build{} : it->second;
}

void Program::setBuild(const Device* d, Build b) {
    std::lock_guard lock(m_mutex);
    m_builds[d] = std::move(b);
}

void Program::setSpecConstant(uint32_t id, std::string value) {
    std::lock_guard lock(m_mutex);
    m_specValues[id] = std::move(value);
}

CompileResult Program::compileOn(const Device* d, std::string_view options,
                                 std::span<const HeaderSource> headers) const {
    const Toolchain& t = d->backend().toolchain();
    if (m_origin != Origin::IL)
        return t.compile(m_source, options, headers);
    SpecConstantValues values;
    {
        std::lock_guard lock(m_mutex);
        values = m_specValues;
    }
    return t.compileIL({reinterpret_cast<const unsigned char*>(m_il.data()), m_il.size()}, values,
                       options);
}

std::string Program::binary(const Device* d) const {
    Build b = build(d);
    // An executable makes its machine code only when asked (the CPU device JITs lazily).
    return b.executable ? b.executable->binary() : b.binary;
}

std::shared_ptr<DeviceExecutable> Program::executable(const Device* d) const {
    std::lock_guard lock(m_mutex);
    auto it = m_builds.find(d);
    return it == m_builds.end() ? nullptr : it->second.executable;
}

bool Program::hasExecutable() const {
    std::lock_guard lock(m_mutex);
    for (auto& [d, b] : m_builds)
        if (b.executable)
            return true;
    return false;
}

std::vector<KernelDesc> Program::kernels() const {
    std::lock_guard lock(m_mutex);
    for (Device* d : m_devices) {
        auto it = m_builds.find(d);
        if (it != m_builds.end() && it->second.executable)
            return it->second.executable->kernels();
    }
    return {};
}

namespace {

double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

} // namespace

bool Program::buildFromCache(Device* d, const std::string& key,
                             const program_cache::Settings& settings, Build& b) {
    std::optional<program_cache::Entry> entry = program_cache::load(settings, key);
    if (!entry)
        return false;
    const auto start = std::chrono::steady_clock::now();
    LoadBinaryResult r = d->backend().toolchain().loadBinary(std::span(
        reinterpret_cast<const unsigned char*>(entry->binary.data()), entry->binary.size()));
    if (r.status != CL_SUCCESS || !r.executable ||
        r.binaryType != CL_PROGRAM_BINARY_TYPE_EXECUTABLE) {
        program_cache::reject(settings, key,
                              "its binary does not load: " + (r.log.empty() ? "?" : r.log));
        return false;
    }
    if (program_cache::logEnabled())
        std::fprintf(stderr, "duet: clBuildProgram: %s: from the program cache in %.1f ms\n",
                     d->info().name.c_str(), millisecondsSince(start));
    b.log = std::move(entry->log);
    b.executable = std::move(r.executable);
    b.binaryType = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    b.status = CL_BUILD_SUCCESS;
    return true;
}

Status Program::buildFor(std::span<Device* const> devices, std::string_view options) {
    Status result;
    const bool timing = program_cache::logEnabled();
    const program_cache::Settings cache =
        m_origin == Origin::Source ? program_cache::settings() : program_cache::Settings{};
    for (Device* d : devices) {
        Build b;
        b.options = std::string(options);
        b.status = CL_BUILD_IN_PROGRESS;
        Build old = build(d);
        std::string bitcode;
        std::string cacheKey;
        if (cache.enabled && m_origin == Origin::Source) { // IL: no key yet
            cacheKey = d->backend().toolchain().cacheKey(m_source, options);
            if (cacheKey.empty() && timing)
                std::fprintf(stderr, "duet: program cache: not used for this build (it reads "
                                     "files, writes -save-temps files or has no key)\n");
        }
        if (!cacheKey.empty() && buildFromCache(d, cacheKey, cache, b)) {
            setBuild(d, std::move(b));
            continue;
        }
        auto start = std::chrono::steady_clock::now();
        double frontEndMs = 0;
        if (m_origin == Origin::Source || m_origin == Origin::IL) {
            CompileResult c = compileOn(d, options, {});
            frontEndMs = millisecondsSince(start);
            start = std::chrono::steady_clock::now();
            b.log = std::move(c.log);
            if (c.status != CL_SUCCESS) {
                b.status = CL_BUILD_ERROR;
                setBuild(d, b);
                // clBuildProgram's own codes (OpenCL 3.0 §5.8.3): CL_INVALID_BUILD_OPTIONS,
                // CL_BUILD_PROGRAM_FAILURE, where the front end speaks of compiling.
                cl_int code = c.status == CL_COMPILE_PROGRAM_FAILURE    ? CL_BUILD_PROGRAM_FAILURE
                              : c.status == CL_INVALID_COMPILER_OPTIONS ? CL_INVALID_BUILD_OPTIONS
                                                                        : c.status;
                result = makeError(code, "clBuildProgram: compiling for " + d->info().name +
                                             " failed; see CL_PROGRAM_BUILD_LOG");
                continue;
            }
            bitcode = std::move(c.bitcode);
        } else {
            // From a binary: executables are ready; objects and libraries are finalised now.
            if (old.executable) {
                old.status = CL_BUILD_SUCCESS;
                old.options = b.options;
                setBuild(d, old);
                continue;
            }
            bitcode = old.bitcode;
        }
        FinalizeResult f = d->backend().toolchain().finalize(bitcode, options, m_source);
        if (!f.log.empty()) {
            if (!b.log.empty() && b.log.back() != '\n')
                b.log += '\n';
            b.log += f.log;
        }
        if (f.status != CL_SUCCESS) {
            b.status = CL_BUILD_ERROR;
            setBuild(d, b);
            result =
                makeError(f.status == CL_LINK_PROGRAM_FAILURE ? CL_BUILD_PROGRAM_FAILURE : f.status,
                          "clBuildProgram: building for " + d->info().name +
                              " failed; see CL_PROGRAM_BUILD_LOG");
            continue;
        }
        if (timing)
            std::fprintf(stderr,
                         "duet: clBuildProgram: %s: front end %.1f ms, code generation %.1f ms\n",
                         d->info().name.c_str(), frontEndMs, millisecondsSince(start));
        b.executable = std::move(f.executable);
        b.binaryType = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
        b.status = CL_BUILD_SUCCESS;
        if (!cacheKey.empty())
            program_cache::store(cache, cacheKey, b.executable->cacheBinary(), b.log);
        setBuild(d, std::move(b));
    }
    return result;
}

Status Program::compileFor(std::span<Device* const> devices, std::string_view options,
                           std::span<const HeaderSource> headers) {
    Status result;
    for (Device* d : devices) {
        Build b;
        b.options = std::string(options);
        CompileResult c = compileOn(d, options, headers);
        b.log = std::move(c.log);
        if (c.status != CL_SUCCESS) {
            b.status = CL_BUILD_ERROR;
            setBuild(d, b);
            result = makeError(c.status, "clCompileProgram: compiling for " + d->info().name +
                                             " failed; see CL_PROGRAM_BUILD_LOG");
            continue;
        }
        b.bitcode = std::move(c.bitcode);
        b.binaryType = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
        b.binary = d->backend().toolchain().objectBinary(b.bitcode, m_source, b.binaryType);
        b.status = CL_BUILD_SUCCESS;
        setBuild(d, std::move(b));
    }
    return result;
}

Status Program::linkFrom(std::span<Device* const> devices, std::string_view options,
                         std::span<Program* const> inputs) {
    bool library = options.find("-create-library") != std::string_view::npos;
    Status result;
    for (Device* d : devices) {
        Build b;
        b.options = std::string(options);
        std::vector<std::string> objects;
        for (Program* p : inputs)
            objects.push_back(p->build(d).bitcode);
        LinkResult l = d->backend().toolchain().link(objects, options, library);
        b.log = std::move(l.log);
        if (l.status != CL_SUCCESS) {
            b.status = CL_BUILD_ERROR;
            setBuild(d, b);
            result = makeError(l.status, "clLinkProgram: linking for " + d->info().name +
                                             " failed; see CL_PROGRAM_BUILD_LOG");
            continue;
        }
        if (library) {
            b.bitcode = std::move(l.bitcode);
            b.binaryType = CL_PROGRAM_BINARY_TYPE_LIBRARY;
            b.binary = d->backend().toolchain().objectBinary(b.bitcode, "", b.binaryType);
            b.status = CL_BUILD_SUCCESS;
            setBuild(d, std::move(b));
            continue;
        }
        FinalizeResult f = d->backend().toolchain().finalize(l.bitcode, options, "");
        if (!f.log.empty())
            b.log += f.log;
        if (f.status != CL_SUCCESS) {
            b.status = CL_BUILD_ERROR;
            setBuild(d, b);
            result = makeError(CL_LINK_PROGRAM_FAILURE, "clLinkProgram: finalising for " +
                                                            d->info().name +
                                                            " failed; see "
                                                            "CL_PROGRAM_BUILD_LOG");
            continue;
        }
        b.executable = std::move(f.executable);
        b.binaryType = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
        b.status = CL_BUILD_SUCCESS;
        setBuild(d, std::move(b));
    }
    return result;
}

} // namespace duet::rt
