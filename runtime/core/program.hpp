// Programs: source or binary, per-device builds (compile, link, finalise) and their logs.
#pragma once

#include "core/context.hpp"
#include "core/result.hpp"

#include <atomic>
#include <map>
#include <mutex>

namespace duet::rt {

namespace program_cache {
struct Settings;
}

class Program final : public _cl_program {
public:
    static constexpr Tag kTag = Tag::Program;
    enum class Origin { Source, Binary, Linked, BuiltIn, IL };

    Program(Ref<Context> context, Origin origin, std::string source);
    ~Program();

    Context* context() const { return m_context.get(); }
    Origin origin() const { return m_origin; }
    const std::string& source() const { return m_source; }

    /// An IL program (clCreateProgramWithIL): the module as given, and the size in bytes of
    /// each specialisation constant it declares (SpecId -> size), as checked at creation.
    void setIL(std::string il, std::map<uint32_t, uint32_t> specConstantSizes) {
        m_il = std::move(il);
        m_specConstantSizes = std::move(specConstantSizes);
    }
    const std::string& il() const { return m_il; }
    const std::map<uint32_t, uint32_t>& specConstantSizes() const { return m_specConstantSizes; }
    /// clSetProgramSpecializationConstant (id and size already checked): used by later builds.
    void setSpecConstant(uint32_t id, std::string value);

    /// Per-device build state.
    struct Build {
        cl_build_status status = CL_BUILD_NONE;
        std::string options, log;
        cl_program_binary_type binaryType = CL_PROGRAM_BINARY_TYPE_NONE;
        std::string bitcode;                          ///< compiled object / library
        std::shared_ptr<DeviceExecutable> executable; ///< set once built or linked
        std::string binary; ///< CL_PROGRAM_BINARIES bytes, unless executable makes them
        /// Whether the build's OpenCL C version allows non-uniform work-groups: 2.0 and later,
        /// unless -cl-uniform-work-group-size.
        bool allowsNonUniformWorkGroups() const;
    };
    /// Devices the program is associated with (the context's, or the ones given).
    const std::vector<Device*>& devices() const { return m_devices; }
    void setDevices(std::vector<Device*> d) { m_devices = std::move(d); }

    /// Snapshot of one device's build (copy: builds may run concurrently).
    Build build(const Device* d) const;
    void setBuild(const Device* d, Build b);

    /// clBuildProgram for each device: from the persistent program cache when it holds this
    /// build (core/program_cache.hpp), else compile and finalise (and store the result).
    Status buildFor(std::span<Device* const> devices, std::string_view options);
    Status compileFor(std::span<Device* const> devices, std::string_view options,
                      std::span<const HeaderSource> headers);
    /// Links `inputs` into this (new) program.
    Status linkFrom(std::span<Device* const> devices, std::string_view options,
                    std::span<Program* const> inputs);

    /// Kernels of the program (from the first device with an executable).
    std::vector<KernelDesc> kernels() const;
    bool hasExecutable() const;
    std::shared_ptr<DeviceExecutable> executable(const Device* d) const;
    /// CL_PROGRAM_BINARIES bytes for `d` (empty when there is nothing to give).
    std::string binary(const Device* d) const;

    std::atomic<int> attachedKernels{0};
    std::atomic<bool> building{false};

private:
    /// Source or IL -> bitcode for `d` (the first half of a build, or clCompileProgram).
    CompileResult compileOn(const Device* d, std::string_view options,
                            std::span<const HeaderSource> headers) const;
    /// Fills `b` from the cache entry under `key` if there is one and its binary loads.
    bool buildFromCache(Device* d, const std::string& key, const program_cache::Settings& settings,
                        Build& b);

    Ref<Context> m_context;
    Origin m_origin;
    std::string m_source;
    std::string m_il;
    std::map<uint32_t, uint32_t> m_specConstantSizes;
    SpecConstantValues m_specValues; ///< guarded by m_mutex
    std::vector<Device*> m_devices;
    mutable std::mutex m_mutex;
    std::map<const Device*, Build> m_builds;
};

} // namespace duet::rt
