// Shared helpers for the kernel tests: platform choice, program builds and buffer round trips
// through the standard OpenCL API, so the same tests run on Duet, PoCL or any other ICD.
#pragma once

#include <CL/cl.h>
#include <catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace duet::test {

/// One device of the platform whose CL_PLATFORM_NAME contains $DUET_TEST_PLATFORM
/// (default "Duet"), with a context and an in-order queue. Created once per process; a test
/// that finds no such platform fails (it does not skip).
struct KernelEnv {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    std::string platformName;
    std::string deviceVersion; ///< CL_DEVICE_OPENCL_C_VERSION, e.g. "OpenCL C 1.2 ..."
    std::string extensions;
    bool fp64 = false;
    bool int64Atomics = false;
    bool openclC20 = false; ///< C11 atomics usable, with the option in clStd20
    std::string clStd20;    ///< "-cl-std=CL2.0" or "-cl-std=CL3.0"

    static KernelEnv& get();
    bool hasExtension(const std::string& ext) const {
        return (" " + extensions + " ").find(" " + ext + " ") != std::string::npos;
    }
};

/// A built program; FAILs the test with clang's (or the platform's) log when the build fails.
class Program {
public:
    Program(const std::string& source, const std::string& options = "");
    ~Program();
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    cl_kernel kernel(const std::string& name);
    cl_program handle() const { return m_program; }

private:
    cl_program m_program = nullptr;
    std::vector<cl_kernel> m_kernels;
};

/// A device buffer initialised from (and read back into) a host vector.
class Buffer {
public:
    Buffer(size_t bytes, const void* init = nullptr);
    template <class T>
    explicit Buffer(const std::vector<T>& v) : Buffer(v.size() * sizeof(T), v.data()) {}
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    cl_mem handle() const { return m_mem; }
    void read(void* dst, size_t bytes) const;
    template <class T> std::vector<T> read(size_t n) const {
        std::vector<T> v(n);
        read(v.data(), n * sizeof(T));
        return v;
    }

private:
    cl_mem m_mem = nullptr;
};

/// Sets argument i of `k` to a buffer, a value, or (for LocalBytes) a __local block.
struct LocalBytes {
    size_t bytes;
};
void setArg(cl_kernel k, cl_uint i, const Buffer& b);
void setArg(cl_kernel k, cl_uint i, LocalBytes l);
template <class T> void setArg(cl_kernel k, cl_uint i, const T& v) {
    cl_int err = clSetKernelArg(k, i, sizeof(T), &v);
    REQUIRE(err == CL_SUCCESS);
}
template <class... A> void setArgs(cl_kernel k, const A&... a) {
    cl_uint i = 0;
    (setArg(k, i++, a), ...);
}

/// Enqueues a 1D NDRange (local size 0 = let the platform choose) and waits for it.
void run1D(cl_kernel k, size_t global, size_t local = 0);

/// Deterministic pseudo-random numbers (xorshift64*), so failures reproduce.
class Rng {
public:
    explicit Rng(uint64_t seed = 0x9e3779b97f4a7c15ull) : m_s(seed | 1) {}
    uint64_t next() {
        m_s ^= m_s >> 12;
        m_s ^= m_s << 25;
        m_s ^= m_s >> 27;
        return m_s * 0x2545f4914f6cdd1dull;
    }

private:
    uint64_t m_s;
};

} // namespace duet::test
