// Programs from source with readable failures (duet/interop/program.hpp).
#include "duet/interop/program.hpp"

#include "duet/interop/gl_devices.hpp"

#include <fstream>
#include <sstream>

namespace duet::interop {

std::string buildLog(cl_program program, cl_device_id device) {
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
        CL_SUCCESS)
        return {};
    std::string log(size, '\0');
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
        CL_SUCCESS)
        return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    return log;
}

cl_program buildProgram(cl_context context, const std::vector<cl_device_id>& devices,
                        const std::string& source, const std::string& options,
                        const std::string& name) {
    const char* text = source.c_str();
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
    check(err, ("clCreateProgramWithSource(" + name + ")").c_str());
    err = clBuildProgram(program, cl_uint(devices.size()), devices.data(), options.c_str(), nullptr,
                         nullptr);
    if (err == CL_SUCCESS)
        return program;
    std::string what =
        "clBuildProgram(" + name + ", \"" + options + "\") failed: " + errorName(err);
    for (cl_device_id device : devices) {
        cl_build_status status = CL_BUILD_NONE;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status,
                              nullptr);
        if (status == CL_BUILD_SUCCESS)
            continue;
        std::string log = buildLog(program, device);
        std::string name = deviceString(device, CL_DEVICE_NAME);
        what += "\non " + (name.empty() ? std::string("a device") : name) + ":" +
                (log.empty() ? " (no build log)" : "\n" + log);
    }
    clReleaseProgram(program);
    throw Error(what, err);
}

std::string readTextFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad())
        throw Error("cannot read " + path);
    return text.str();
}

} // namespace duet::interop
