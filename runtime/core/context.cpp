// Context object: devices, properties, error notification, destructor callbacks.
#include "core/context.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"
#include "core/svm.hpp"

#include <algorithm>

namespace duet::rt {

Context::Context(std::vector<Device*> devices, std::vector<cl_context_properties> properties,
                 ContextNotifyFn notify, void* userData)
    : _cl_context(kTag), m_devices(std::move(devices)), m_properties(std::move(properties)),
      m_notify(notify), m_userData(userData) {
    for (Device* d : m_devices)
        if ((m_allocator = d->backend().storageAllocator()))
            break;
    m_allocatorOnly =
        m_allocator && std::all_of(m_devices.begin(), m_devices.end(), [&](Device* d) {
            return d->backend().storageAllocator() == m_allocator;
        });
}

Context::~Context() {
    // Spec: destructor callbacks run in reverse order of registration.
    for (auto it = m_destructorCallbacks.rbegin(); it != m_destructorCallbacks.rend(); ++it)
        it->first(this, it->second);
    // SVM allocations the application did not free go with their context.
    svmFreeAll(*this);
}

bool Context::hasDevice(const Device* d) const {
    return std::find(m_devices.begin(), m_devices.end(), d) != m_devices.end();
}

size_t Context::imageRowAlignment() const {
    size_t a = 1;
    for (const Device* d : m_devices)
        a = std::max(a, d->info().imageRowAlignment);
    return a;
}

char* Context::allocateStorage(size_t size, bool hostFills) const {
    return m_allocator ? m_allocator->allocate(size, m_allocatorOnly && !hostFills)
                       : rt::allocateStorage(size);
}

void Context::hostFilled(char* p, size_t size) const {
    if (m_allocatorOnly)
        m_allocator->hostWrote(p, size);
}

void Context::freeStorage(char* p) const {
    if (m_allocator)
        m_allocator->release(p);
    else
        rt::freeStorage(p);
}

bool Context::registerHostMemory(void* p, size_t size, std::string& why) const {
    return !m_allocator || m_allocator->registerHost(p, size, why);
}

void Context::unregisterHostMemory(void* p) const {
    if (m_allocator)
        m_allocator->unregisterHost(p);
}

void Context::notify(const std::string& message) const {
    if (m_notify)
        m_notify(message.c_str(), nullptr, 0, m_userData);
}

void Context::addDestructorCallback(DestructorFn fn, void* userData) {
    std::lock_guard lock(m_mutex);
    m_destructorCallbacks.emplace_back(fn, userData);
}

} // namespace duet::rt

namespace duet::rt {

Context::DeviceQueues& Context::deviceQueues(const Device* device) {
    for (DeviceQueues& q : m_deviceQueues)
        if (q.device == device)
            return q;
    return m_deviceQueues.emplace_back(DeviceQueues{device});
}

bool Context::addDeviceQueue(const Device* device, cl_uint max) {
    std::lock_guard lock(m_mutex);
    DeviceQueues& q = deviceQueues(device);
    if (q.counted >= max)
        return false;
    ++q.counted;
    return true;
}

void Context::removeDeviceQueue(Queue* q, bool counted) {
    std::lock_guard lock(m_mutex);
    DeviceQueues& d = deviceQueues(q->device());
    if (counted && d.counted)
        --d.counted;
    if (d.defaultQueue == q)
        d.defaultQueue = nullptr;
}

Queue* Context::defaultDeviceQueue(const Device* device) const {
    std::lock_guard lock(m_mutex);
    for (const DeviceQueues& q : m_deviceQueues)
        if (q.device == device)
            return q.defaultQueue;
    return nullptr;
}

void Context::setDefaultDeviceQueue(Queue* q) {
    std::lock_guard lock(m_mutex);
    deviceQueues(q->device()).defaultQueue = q;
}

} // namespace duet::rt
