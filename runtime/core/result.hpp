// Result<T>: an OpenCL error code plus a readable reason, threaded up from core to the API shim.
#pragma once

#include <CL/cl.h>

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace duet::rt {

struct Error {
    cl_int code = CL_SUCCESS;
    std::string message;
};

/// Either a T or an Error. Errors never carry CL_SUCCESS.
template <class T> class [[nodiscard]] Result {
public:
    Result(T value) : m_value(std::move(value)) {}
    Result(Error e) : m_error(std::move(e)) {
        assert(m_error.code != CL_SUCCESS && "error without code");
    }

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }
    T& value() { return *m_value; }
    T& operator*() { return *m_value; }
    T* operator->() { return &*m_value; }
    const Error& error() const { return m_error; }
    Error takeError() { return std::move(m_error); }

private:
    std::optional<T> m_value;
    Error m_error;
};

/// Result of an operation with no value.
class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Error e) : m_error(std::move(e)) {}
    static Status success() { return {}; }
    bool ok() const { return m_error.code == CL_SUCCESS; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return m_error; }
    cl_int code() const { return m_error.code; }

private:
    Error m_error;
};

inline Error makeError(cl_int code, std::string message) {
    return Error{code, std::move(message)};
}

} // namespace duet::rt
