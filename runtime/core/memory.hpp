// Memory objects: buffers, sub-buffers and images, all in host memory for the CPU device.
#pragma once

#include "core/context.hpp"

#include <mutex>
#include <vector>

namespace duet::rt {

class Mem final : public _cl_mem {
public:
    static constexpr Tag kTag = Tag::Mem;
    /// A buffer over `storage` (owned when `owns`) or a sub-buffer of `parent`.
    Mem(Ref<Context> context, cl_mem_object_type type, cl_mem_flags flags, size_t size,
        void* hostPtr, char* storage, bool owns);
    ~Mem();

    Context* context() const { return m_context.get(); }
    cl_mem_object_type type() const { return m_type; }
    cl_mem_flags flags() const { return m_flags; }
    size_t size() const { return m_size; }
    void* hostPtr() const { return m_hostPtr; }
    /// Start of this object's bytes (a sub-buffer's points into its parent).
    char* data() const { return m_data; }
    bool isImage() const { return m_type != CL_MEM_OBJECT_BUFFER && m_type != CL_MEM_OBJECT_PIPE; }

    // Sub-buffers
    Mem* parent() const { return m_parent.get(); }
    size_t offset() const { return m_offset; }
    void setParent(Ref<Mem> parent, size_t offset) {
        m_parent = std::move(parent);
        m_offset = offset;
    }

    // Images
    cl_image_format format{};
    cl_image_desc desc{};
    size_t elementSize = 0, rowPitch = 0, slicePitch = 0;
    Ref<Mem> bufferRef; ///< image1d_buffer / image2d from buffer: the buffer it lives in

    std::atomic<cl_uint> mapCount{0};
    std::vector<cl_mem_properties> properties;

    using DestructorFn = void(CL_CALLBACK*)(cl_mem, void*);
    void addDestructorCallback(DestructorFn fn, void* userData);

private:
    Ref<Context> m_context;
    cl_mem_object_type m_type;
    cl_mem_flags m_flags;
    size_t m_size;
    void* m_hostPtr;
    char* m_data;
    bool m_owns;
    Ref<Mem> m_parent;
    size_t m_offset = 0;
    std::mutex m_mutex;
    std::vector<std::pair<DestructorFn, void*>> m_destructorCallbacks;
};

/// Aligned host allocation for memory objects (alignment = CL_DEVICE_MEM_BASE_ADDR_ALIGN).
/// Storage of `size` bytes, 128-byte aligned. Release with freeStorage.
char* allocateStorage(size_t size);
void freeStorage(char* p);

class Sampler final : public _cl_sampler {
public:
    static constexpr Tag kTag = Tag::Sampler;
    Sampler(Ref<Context> context, cl_bool normalized, cl_addressing_mode addressing,
            cl_filter_mode filter, std::vector<cl_sampler_properties> props)
        : _cl_sampler(kTag), m_context(std::move(context)), normalizedCoords(normalized),
          addressingMode(addressing), filterMode(filter), properties(std::move(props)) {}
    Context* context() const { return m_context.get(); }

    /// The 32-bit sampler value kernels see (same encoding as a sampler_t literal).
    uint32_t kernelValue() const;

private:
    Ref<Context> m_context;

public:
    const cl_bool normalizedCoords;
    const cl_addressing_mode addressingMode;
    const cl_filter_mode filterMode;
    const std::vector<cl_sampler_properties> properties;
};

} // namespace duet::rt
