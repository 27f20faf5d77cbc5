// Context object: devices, properties, error notification, destructor callbacks.
#include "core/context.hpp"

#include <algorithm>

namespace duet::rt {

Context::Context(std::vector<Device*> devices, std::vector<cl_context_properties> properties,
                 ContextNotifyFn notify, void* userData)
    : _cl_context(kTag), m_devices(std::move(devices)), m_properties(std::move(properties)),
      m_notify(notify), m_userData(userData) {}

Context::~Context() {
    // Spec: destructor callbacks run in reverse order of registration.
    for (auto it = m_destructorCallbacks.rbegin(); it != m_destructorCallbacks.rend(); ++it)
        it->first(this, it->second);
}

bool Context::hasDevice(const Device* d) const {
    return std::find(m_devices.begin(), m_devices.end(), d) != m_devices.end();
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
