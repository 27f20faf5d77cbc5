// Building OpenCL programs from source, with failures a user can read: the error, the options
// and each failing device's build log in one interop::Error. For applications' own kernels (the
// samples use it for theirs).
#pragma once

#include "duet/interop/interop.hpp"

#include <string>
#include <vector>

namespace duet::interop {

/// The build log of `program` for `device`, without trailing newlines and NULs ("" if the
/// platform gives none).
std::string buildLog(cl_program program, cl_device_id device);

/// Creates a program from `source` and builds it for `devices` with `options`; the caller owns
/// the program. `name` says which source it is in messages (a file name: "nbody.cl"). Throws
/// Error, with the OpenCL error as its code, when the program cannot be created or built; a
/// failed build's message names `name`, the options, the error and, for each device whose build
/// did not succeed, the device and its build log. The program is released before the throw.
cl_program buildProgram(cl_context context, const std::vector<cl_device_id>& devices,
                        const std::string& source, const std::string& options,
                        const std::string& name);

/// The whole text of the file at `path`. Throws Error naming the path when it cannot be read.
std::string readTextFile(const std::string& path);

} // namespace duet::interop
