/* Duet's OpenCL extensions, for applications (C and C++). Find the functions with
 * clGetExtensionFunctionAddressForPlatform on a Duet platform. */
#ifndef DUET_CL_EXT_DUET_H
#define DUET_CL_EXT_DUET_H

#include <CL/cl_gl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cl_duet_gl_device_memory: listed by devices that run the application's GL context themselves
 * (the NVIDIA device under NVIDIA's GL). clCreateFromGLBufferInDeviceMemoryDUET is
 * clCreateFromGLBuffer, except that it first moves GL buffer `bufobj`'s data store into that
 * device's memory, which GL imports (GL_EXT_memory_object_fd): the buffer keeps its name, size,
 * contents and bindings (vertex arrays), and acquire and release move no byte from then on. The
 * buffer's storage becomes immutable: GL can draw from it, copy into and out of it and write it
 * from shaders, but not respecify it (glBufferData), update it with glBufferSubData or map it.
 * The GL context of `context` must be current on the calling thread and the buffer must have
 * mutable storage (glBufferData). Errors: those of clCreateFromGLBuffer; CL_INVALID_GL_OBJECT also
 * for immutable storage; CL_INVALID_OPERATION when no device of the context can hold the store,
 * GL imports none of its memory, or the GL context is not current. On error the GL buffer is
 * unchanged. The memory lives as long as the GL buffer, also after the CL object is released.
 * Seen on NVIDIA's GL (H200, driver of Nov 2026): glGetBufferSubData of a moved buffer goes on
 * returning its contents from before the move, while draws and GL copies see the device's writes;
 * read it back through a GL copy into another buffer. */
#define CL_DUET_GL_DEVICE_MEMORY_EXTENSION_NAME "cl_duet_gl_device_memory"

typedef cl_mem(CL_API_CALL* clCreateFromGLBufferInDeviceMemoryDUET_fn)(cl_context context,
                                                                       cl_mem_flags flags,
                                                                       cl_GLuint bufobj,
                                                                       cl_int* errcode_ret);

#ifdef __cplusplus
}
#endif

#endif
