// Context: the devices it spans, its properties and the error-notify callback.
#pragma once

#include "core/device.hpp"
#include "core/object.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace duet::rt {

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

    /// Reports an error reason through the application's callback (any thread, no locks held).
    void notify(const std::string& message) const;

    using DestructorFn = void(CL_CALLBACK*)(cl_context, void*);
    void addDestructorCallback(DestructorFn fn, void* userData);

private:
    std::vector<Device*> m_devices;
    std::vector<cl_context_properties> m_properties;
    ContextNotifyFn m_notify;
    void* m_userData;
    std::mutex m_mutex;
    std::vector<std::pair<DestructorFn, void*>> m_destructorCallbacks;
};

} // namespace duet::rt
