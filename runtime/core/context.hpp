// Context: the devices it spans, its properties and the error-notify callback.
#pragma once

#include "core/device.hpp"
#include "core/object.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace duet::rt {

class Queue;

using ContextNotifyFn = void(CL_CALLBACK*)(const char*, const void*, size_t, void*);

class Context final : public _cl_context {
public:
    static constexpr Tag kTag = Tag::Context;
    Context(std::vector<Device*> devices, std::vector<cl_context_properties> properties,
            ContextNotifyFn notify, void* userData);
    ~Context();

    const std::vector<Device*>& devices() const { return m_devices; }
    bool hasDevice(const Device* d) const;
    /// Properties as given, terminated by 0 (empty when none were given).
    const std::vector<cl_context_properties>& properties() const { return m_properties; }

    /// Storage for a memory object of this context: from the allocator of the first device that
    /// has one (memory every device of the context addresses), else host memory
    /// (core/memory.hpp). Null when out of memory. Release with freeStorage. `hostFills`: the
    /// caller writes the storage on the host first (CL_MEM_COPY_HOST_PTR) and then calls
    /// hostFilled. In a context of one GPU whose memory migrates (managed memory), storage
    /// starts out in the GPU's memory, or moves there once filled, so that a first launch does
    /// not fault it over page by page.
    char* allocateStorage(size_t size, bool hostFills = false) const;
    void hostFilled(char* p, size_t size) const;
    void freeStorage(char* p) const;
    /// The row alignment of images this context allocates: the largest its devices ask for
    /// (DeviceInfo::imageRowAlignment).
    size_t imageRowAlignment() const;
    /// True when any host memory serves as storage for every device of the context (no device
    /// allocator): GL's own mappings of buffers may then be used in place.
    bool hostMemoryIsStorage() const { return m_allocator == nullptr; }
    /// CL_MEM_USE_HOST_PTR memory made addressable by the context's devices (a no-op without
    /// a device allocator). False with `why` when a device cannot address it.
    bool registerHostMemory(void* p, size_t size, std::string& why) const;
    void unregisterHostMemory(void* p) const;

    /// Reports an error reason through the application's callback (any thread, no locks held).
    void notify(const std::string& message) const;

    /// On-device queues (CL_QUEUE_ON_DEVICE), per device: how many exist, and the default one
    /// (CL_QUEUE_ON_DEVICE_DEFAULT, clSetDefaultDeviceCommandQueue), which get_default_queue()
    /// returns to that device's kernels. The default is not a reference: ~Queue forgets it.
    /// The queue made with CL_QUEUE_ON_DEVICE_DEFAULT is not counted against
    /// CL_DEVICE_MAX_ON_DEVICE_QUEUES (the CTS's device_queue creates that many besides it).
    /// addDeviceQueue returns false when `max` counted on-device queues of `device` exist.
    bool addDeviceQueue(const Device* device, cl_uint max);
    void removeDeviceQueue(Queue* q, bool counted);
    Queue* defaultDeviceQueue(const Device* device) const;
    /// Makes `q` its device's default on-device queue.
    void setDefaultDeviceQueue(Queue* q);

    using DestructorFn = void(CL_CALLBACK*)(cl_context, void*);
    void addDestructorCallback(DestructorFn fn, void* userData);

private:
    std::vector<Device*> m_devices;
    StorageAllocator* m_allocator = nullptr; ///< the first device's that has one, or null
    /// Every device of the context is the allocator's (storage may be placed on it).
    bool m_allocatorOnly = false;
    std::vector<cl_context_properties> m_properties;
    ContextNotifyFn m_notify;
    void* m_userData;
    mutable std::mutex m_mutex;
    struct DeviceQueues {
        const Device* device;
        cl_uint counted = 0;
        Queue* defaultQueue = nullptr;
    };
    std::vector<DeviceQueues> m_deviceQueues; ///< guarded by m_mutex; one per device that has any
    DeviceQueues& deviceQueues(const Device* device); ///< under m_mutex
    std::vector<std::pair<DestructorFn, void*>> m_destructorCallbacks;
};

} // namespace duet::rt
