// Memory objects: buffers, sub-buffers, images and pipes, all in host memory for the CPU device.
#pragma once

#include "core/context.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
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
    /// Start of this object's bytes, as of now: a view (sub-buffer, image over a buffer)
    /// points into the storage of the object it views, and a GL buffer shared in place points
    /// into GL's mapping while it is acquired. Commands read it when they execute, never when
    /// they are enqueued; one load through the owner's storage slot, no lock.
    char* data() const { return m_base->load(std::memory_order_relaxed) + m_viewOffset; }
    /// Makes this object a view of `owner`'s storage at byte `offset` (sub-buffers, images
    /// created from buffers): it follows the owner when the owner's storage moves.
    void viewOf(const Mem& owner, size_t offset) {
        m_base = owner.m_base;
        m_owner = owner.m_owner;
        m_viewOffset = owner.m_viewOffset + offset;
    }
    /// Points this object's storage at `p`, or back at the storage it was created with when
    /// `p` is null (GL buffers mapped in place between acquire and release). `onDevice`: `p` is
    /// device memory the host cannot touch (a GL buffer mapped through CUDA–GL interop); see
    /// hostData(). Only the commands that acquire and release call it; the queue's ordering
    /// makes it visible to the commands after them.
    void setStorage(char* p, bool onDevice = false) {
        m_storageOnDevice.store(p && onDevice, std::memory_order_relaxed);
        m_storage.store(p ? p : m_home, std::memory_order_relaxed);
    }
    /// True while this object's storage (or its owner's) is device memory the host cannot
    /// touch: the device that put it there does the host-side work of commands (rects, fills,
    /// maps), staging through hostData().
    bool storageOnDevice() const {
        return m_owner->m_storageOnDevice.load(std::memory_order_relaxed);
    }
    /// Where the host reads and writes this object's bytes: data(), or while the storage is on
    /// the device, the storage the object was created with (host-visible), which the device's
    /// map and unmap keep current for the mapped region. Maps hand out pointers into it.
    char* hostData() const { return storageOnDevice() ? m_owner->m_home + m_viewOffset : data(); }
    /// CL_MEM_USE_HOST_PTR memory that Context::registerHostMemory registered: unregistered
    /// when the object goes.
    void markHostRegistered() { m_hostRegistered = true; }
    /// The storage the object was created with (a GL object's host copy).
    char* homeStorage() const { return m_home; }
    bool isImage() const { return m_type != CL_MEM_OBJECT_BUFFER && m_type != CL_MEM_OBJECT_PIPE; }

    // Sub-buffers
    Mem* parent() const { return m_parent.get(); }
    size_t offset() const { return m_offset; }
    void setParent(Ref<Mem> parent, size_t offset) {
        viewOf(*parent, offset);
        m_parent = std::move(parent);
        m_offset = offset;
    }

    /// cl_khr_gl_sharing: None for ordinary objects; for objects made from GL objects, whether
    /// CL holds them as of the latest enqueued acquire or release.
    enum class GlState : uint8_t { None, Released, Acquired };
    std::atomic<GlState> glState{GlState::None};
    /// True when this object, or an object whose storage it views, was made from a GL object
    /// that is not acquired: commands using it then fail with CL_INVALID_OPERATION.
    bool glUnacquired() const {
        for (const Mem* m = this; m; m = m->m_parent ? m->m_parent.get() : m->bufferRef.get())
            if (m->glState.load(std::memory_order_relaxed) == GlState::Released)
                return true;
        return false;
    }

    /// State an extension keeps on a memory object (cl_khr_gl_sharing: the GL object it was
    /// made from, runtime/gl). Core owns it and knows nothing else of it: it is destroyed with
    /// the object, after the destructor callbacks and before the storage is freed.
    class Attachment {
    public:
        virtual ~Attachment() = default;
        /// Waits until the commands enqueued so far that move the object's storage (setStorage)
        /// have run. Any thread; called without locks held.
        virtual void settleStorage() const {}
    };
    /// Attaches `a`, once, while the object is being created: before its handle is handed out
    /// (the slot is not synchronised; it is read-only from then on).
    void attach(std::unique_ptr<Attachment> a) { m_attachment = std::move(a); }
    /// The extension state, null for an ordinary object.
    Attachment* attachment() const { return m_attachment.get(); }
    /// For commands that hand out a pointer when enqueued (maps): waits until data() of this
    /// object, or of the object whose storage it views, is what the commands enqueued before
    /// will have left it (a GL buffer shared in place: its latest acquire has run). Returns at
    /// once for objects without an attachment.
    void settleStorage() const;

    // Images
    cl_image_format format{};
    cl_image_desc desc{};
    size_t elementSize = 0, rowPitch = 0, slicePitch = 0;
    Ref<Mem> bufferRef; ///< image1d_buffer / image2d from buffer: the buffer it lives in

    // Pipes (core/pipe.hpp lays out their storage)
    uint32_t pipePacketSize = 0; ///< CL_PIPE_PACKET_SIZE
    uint32_t pipeMaxPackets = 0; ///< CL_PIPE_MAX_PACKETS

    std::atomic<cl_uint> mapCount{0};
    std::vector<cl_mem_properties> properties;
    /// CL_MEM_USES_SVM_POINTER: a CL_MEM_USE_HOST_PTR buffer over an SVM allocation of its
    /// context (set at creation).
    bool usesSvmPointer = false;

    using DestructorFn = void(CL_CALLBACK*)(cl_mem, void*);
    void addDestructorCallback(DestructorFn fn, void* userData);

    /// What a WeakMemRef shares with the object: the object until its destruction begins.
    struct Anchor {
        std::mutex mutex; ///< a leaf: held only to read or clear `mem` and to try a retain
        Mem* mem = nullptr;
    };

private:
    friend class WeakMemRef;
    Ref<Context> m_context;
    cl_mem_object_type m_type;
    cl_mem_flags m_flags;
    size_t m_size;
    void* m_hostPtr;
    char* m_home;                                  ///< storage given at creation (freed when owned)
    std::atomic<char*> m_storage;                  ///< current storage of an owner (not of a view)
    const std::atomic<char*>* m_base = &m_storage; ///< the owner's storage slot
    const Mem* m_owner = this;                     ///< the object whose storage this is
    std::atomic<bool> m_storageOnDevice{false};    ///< m_storage is device memory (setStorage)
    size_t m_viewOffset = 0; ///< bytes from the owner's storage to this object's
    bool m_owns;
    bool m_hostRegistered = false; ///< m_hostPtr registered with the context's devices
    Ref<Mem> m_parent;
    size_t m_offset = 0;
    std::mutex m_mutex;
    std::vector<std::pair<DestructorFn, void*>> m_destructorCallbacks;
    std::unique_ptr<Attachment> m_attachment;
    std::shared_ptr<Anchor> m_anchor;
};

/// A reference that does not keep a memory object alive: what a kernel holds for a buffer or
/// image argument. OpenCL counts only the application's references and the commands in flight:
/// "After the memobj reference count becomes zero and commands queued for execution on a
/// command-queue(s) that use memobj have finished, the memory object is deleted"
/// (clReleaseMemObject); a kernel argument is neither, so releasing the last handle destroys
/// the object (and runs its destructor callbacks) even while a kernel names it. Enqueueing
/// takes strong references (lock()) for the commands. Copyable; any thread.
class WeakMemRef {
public:
    WeakMemRef() = default;
    explicit WeakMemRef(Mem& mem) : m_anchor(mem.m_anchor) {}
    /// True when no object was given (a NULL buffer argument).
    bool empty() const { return !m_anchor; }
    /// A strong reference while the object is alive, else null (also when empty()).
    Ref<Mem> lock() const;

private:
    std::shared_ptr<Mem::Anchor> m_anchor;
};

/// Aligned host allocation for memory objects (alignment = CL_DEVICE_MEM_BASE_ADDR_ALIGN).
/// Storage of `size` bytes, 128-byte aligned. Release with freeStorage. Memory objects get
/// theirs through Context::allocateStorage, which may use a device's allocator instead.
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
