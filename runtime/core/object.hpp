// Handle base for every OpenCL object: ICD dispatch pointer, type tag, intrusive refcount.
#pragma once

#include <CL/cl_icd.h>

#include <atomic>
#include <cstdint>
#include <utility>

namespace duet::rt {

/// Type tag stored in every handle so the API can tell a live object of the right type from a
/// foreign, released or wrongly-typed handle.
enum class Tag : uint32_t {
    Platform = 0x44504c54,
    Device = 0x44444556,
    Context = 0x44435458,
    Queue = 0x44515545,
    Event = 0x44455654,
    Mem = 0x444d454d,
    Sampler = 0x44534d50,
    Program = 0x44505247,
    Kernel = 0x444b524e,
    Dead = 0xdeadbeef,
};

extern const cl_icd_dispatch g_dispatch;

/// Common header of all handles. Must stay non-polymorphic: the ICD loader reads `dispatch`
/// at offset 0 of every handle.
struct Object {
    const cl_icd_dispatch* dispatch = &g_dispatch;
    std::atomic<Tag> tag;
    std::atomic<uint32_t> refCount{1};
    void (*destroyFn)(Object*) = nullptr;

    explicit Object(Tag t) : tag(t) {}
    Object(const Object&) = delete;
    Object& operator=(const Object&) = delete;

    void retain() { refCount.fetch_add(1, std::memory_order_relaxed); }
    /// Adds a reference unless the count already reached zero (the object is being destroyed);
    /// for weak references (WeakMemRef), which must not bring an object back.
    bool tryRetain() {
        uint32_t n = refCount.load(std::memory_order_relaxed);
        while (n != 0)
            if (refCount.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel))
                return true;
        return false;
    }
    /// Drops `n` references (one by default); the last one destroys the object.
    void release(uint32_t n = 1) {
        if (refCount.fetch_sub(n, std::memory_order_acq_rel) == n)
            destroyFn(this);
    }
    bool alive(Tag t) const { return tag.load(std::memory_order_relaxed) == t; }
};

/// Keeps freed handle memory around for a while so that a released handle still reads as
/// Tag::Dead (CL_INVALID_*) instead of touching reused memory.
void quarantine(void* memory);

/// Destroys a T created with `new` and quarantines its storage.
template <class T> void destroyObject(Object* o) {
    T* t = static_cast<T*>(o);
    t->~T();
    static_cast<Object*>(t)->tag.store(Tag::Dead, std::memory_order_relaxed);
    quarantine(t);
}

/// Creates a T with refcount 1 and its destroy hook set. Storage comes from ::operator new
/// and goes back through quarantine().
template <class T, class... A> T* makeObject(A&&... a) {
    void* mem = ::operator new(sizeof(T));
    T* t;
    try {
        t = new (mem) T(std::forward<A>(a)...);
    } catch (...) {
        ::operator delete(mem);
        throw;
    }
    t->destroyFn = &destroyObject<T>;
    return t;
}

/// Owning reference for internal holders (queue -> context, kernel -> program, ...).
template <class T> class Ref {
public:
    Ref() = default;
    /// Adopts or retains `p` (retain = true adds a reference).
    Ref(T* p, bool retain) : m_p(p) {
        if (m_p && retain)
            m_p->retain();
    }
    Ref(const Ref& o) : m_p(o.m_p) {
        if (m_p)
            m_p->retain();
    }
    Ref(Ref&& o) noexcept : m_p(std::exchange(o.m_p, nullptr)) {}
    ~Ref() { reset(); }
    Ref& operator=(Ref o) noexcept {
        std::swap(m_p, o.m_p);
        return *this;
    }
    void reset() {
        if (m_p)
            std::exchange(m_p, nullptr)->release();
    }
    T* get() const { return m_p; }
    T* operator->() const { return m_p; }
    T& operator*() const { return *m_p; }
    explicit operator bool() const { return m_p != nullptr; }
    /// Gives up ownership without releasing.
    T* detach() { return std::exchange(m_p, nullptr); }

private:
    T* m_p = nullptr;
};

template <class T> Ref<T> retainRef(T* p) {
    return Ref<T>(p, true);
}
template <class T> Ref<T> adoptRef(T* p) {
    return Ref<T>(p, false);
}

} // namespace duet::rt

// The OpenCL handle types are these structs; our classes derive from them.
struct _cl_platform_id : duet::rt::Object {
    using Object::Object;
};
struct _cl_device_id : duet::rt::Object {
    using Object::Object;
};
struct _cl_context : duet::rt::Object {
    using Object::Object;
};
struct _cl_command_queue : duet::rt::Object {
    using Object::Object;
};
struct _cl_event : duet::rt::Object {
    using Object::Object;
};
struct _cl_mem : duet::rt::Object {
    using Object::Object;
};
struct _cl_sampler : duet::rt::Object {
    using Object::Object;
};
struct _cl_program : duet::rt::Object {
    using Object::Object;
};
struct _cl_kernel : duet::rt::Object {
    using Object::Object;
};
