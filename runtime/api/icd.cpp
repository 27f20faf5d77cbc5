// The ICD dispatch table: every handle points at it, so the system loader can route calls.
#include "core/object.hpp"

#include <CL/cl.h>
#include <CL/cl_gl.h>
#include <CL/cl_icd.h>

namespace duet::rt {

namespace {
cl_icd_dispatch makeDispatch() {
    cl_icd_dispatch d{};
    d.clGetPlatformIDs = &::clGetPlatformIDs;
    d.clGetPlatformInfo = &::clGetPlatformInfo;
    d.clGetDeviceIDs = &::clGetDeviceIDs;
    d.clGetDeviceInfo = &::clGetDeviceInfo;
    d.clCreateContext = &::clCreateContext;
    d.clCreateContextFromType = &::clCreateContextFromType;
    d.clRetainContext = &::clRetainContext;
    d.clReleaseContext = &::clReleaseContext;
    d.clGetContextInfo = &::clGetContextInfo;
    d.clCreateCommandQueue = &::clCreateCommandQueue;
    d.clRetainCommandQueue = &::clRetainCommandQueue;
    d.clReleaseCommandQueue = &::clReleaseCommandQueue;
    d.clGetCommandQueueInfo = &::clGetCommandQueueInfo;
    d.clSetCommandQueueProperty = &::clSetCommandQueueProperty;
    d.clCreateBuffer = &::clCreateBuffer;
    d.clCreateImage2D = &::clCreateImage2D;
    d.clCreateImage3D = &::clCreateImage3D;
    d.clRetainMemObject = &::clRetainMemObject;
    d.clReleaseMemObject = &::clReleaseMemObject;
    d.clGetSupportedImageFormats = &::clGetSupportedImageFormats;
    d.clGetMemObjectInfo = &::clGetMemObjectInfo;
    d.clGetImageInfo = &::clGetImageInfo;
    d.clCreateSampler = &::clCreateSampler;
    d.clRetainSampler = &::clRetainSampler;
    d.clReleaseSampler = &::clReleaseSampler;
    d.clGetSamplerInfo = &::clGetSamplerInfo;
    d.clCreateProgramWithSource = &::clCreateProgramWithSource;
    d.clCreateProgramWithBinary = &::clCreateProgramWithBinary;
    d.clRetainProgram = &::clRetainProgram;
    d.clReleaseProgram = &::clReleaseProgram;
    d.clBuildProgram = &::clBuildProgram;
    d.clUnloadCompiler = &::clUnloadCompiler;
    d.clGetProgramInfo = &::clGetProgramInfo;
    d.clGetProgramBuildInfo = &::clGetProgramBuildInfo;
    d.clCreateKernel = &::clCreateKernel;
    d.clCreateKernelsInProgram = &::clCreateKernelsInProgram;
    d.clRetainKernel = &::clRetainKernel;
    d.clReleaseKernel = &::clReleaseKernel;
    d.clSetKernelArg = &::clSetKernelArg;
    d.clGetKernelInfo = &::clGetKernelInfo;
    d.clGetKernelWorkGroupInfo = &::clGetKernelWorkGroupInfo;
    d.clWaitForEvents = &::clWaitForEvents;
    d.clGetEventInfo = &::clGetEventInfo;
    d.clRetainEvent = &::clRetainEvent;
    d.clReleaseEvent = &::clReleaseEvent;
    d.clGetEventProfilingInfo = &::clGetEventProfilingInfo;
    d.clFlush = &::clFlush;
    d.clFinish = &::clFinish;
    d.clEnqueueReadBuffer = &::clEnqueueReadBuffer;
    d.clEnqueueWriteBuffer = &::clEnqueueWriteBuffer;
    d.clEnqueueCopyBuffer = &::clEnqueueCopyBuffer;
    d.clEnqueueReadImage = &::clEnqueueReadImage;
    d.clEnqueueWriteImage = &::clEnqueueWriteImage;
    d.clEnqueueCopyImage = &::clEnqueueCopyImage;
    d.clEnqueueCopyImageToBuffer = &::clEnqueueCopyImageToBuffer;
    d.clEnqueueCopyBufferToImage = &::clEnqueueCopyBufferToImage;
    d.clEnqueueMapBuffer = &::clEnqueueMapBuffer;
    d.clEnqueueMapImage = &::clEnqueueMapImage;
    d.clEnqueueUnmapMemObject = &::clEnqueueUnmapMemObject;
    d.clEnqueueNDRangeKernel = &::clEnqueueNDRangeKernel;
    d.clEnqueueTask = &::clEnqueueTask;
    d.clEnqueueNativeKernel = &::clEnqueueNativeKernel;
    d.clEnqueueMarker = &::clEnqueueMarker;
    d.clEnqueueWaitForEvents = &::clEnqueueWaitForEvents;
    d.clEnqueueBarrier = &::clEnqueueBarrier;
    d.clGetExtensionFunctionAddress = &::clGetExtensionFunctionAddress;
    d.clGetExtensionFunctionAddressForPlatform = &::clGetExtensionFunctionAddressForPlatform;
    d.clSetEventCallback = &::clSetEventCallback;
    d.clCreateSubBuffer = &::clCreateSubBuffer;
    d.clSetMemObjectDestructorCallback = &::clSetMemObjectDestructorCallback;
    d.clCreateUserEvent = &::clCreateUserEvent;
    d.clSetUserEventStatus = &::clSetUserEventStatus;
    d.clEnqueueReadBufferRect = &::clEnqueueReadBufferRect;
    d.clEnqueueWriteBufferRect = &::clEnqueueWriteBufferRect;
    d.clEnqueueCopyBufferRect = &::clEnqueueCopyBufferRect;
    d.clCreateSubDevices = &::clCreateSubDevices;
    d.clRetainDevice = &::clRetainDevice;
    d.clReleaseDevice = &::clReleaseDevice;
    d.clCreateImage = &::clCreateImage;
    d.clCreateProgramWithBuiltInKernels = &::clCreateProgramWithBuiltInKernels;
    d.clCompileProgram = &::clCompileProgram;
    d.clLinkProgram = &::clLinkProgram;
    d.clUnloadPlatformCompiler = &::clUnloadPlatformCompiler;
    d.clGetKernelArgInfo = &::clGetKernelArgInfo;
    d.clEnqueueFillBuffer = &::clEnqueueFillBuffer;
    d.clEnqueueFillImage = &::clEnqueueFillImage;
    d.clEnqueueMigrateMemObjects = &::clEnqueueMigrateMemObjects;
    d.clEnqueueMarkerWithWaitList = &::clEnqueueMarkerWithWaitList;
    d.clEnqueueBarrierWithWaitList = &::clEnqueueBarrierWithWaitList;
    d.clCreateCommandQueueWithProperties = &::clCreateCommandQueueWithProperties;
    d.clCreatePipe = &::clCreatePipe;
    d.clGetPipeInfo = &::clGetPipeInfo;
    d.clSVMAlloc = &::clSVMAlloc;
    d.clSVMFree = &::clSVMFree;
    d.clEnqueueSVMFree = &::clEnqueueSVMFree;
    d.clEnqueueSVMMemcpy = &::clEnqueueSVMMemcpy;
    d.clEnqueueSVMMemFill = &::clEnqueueSVMMemFill;
    d.clEnqueueSVMMap = &::clEnqueueSVMMap;
    d.clEnqueueSVMUnmap = &::clEnqueueSVMUnmap;
    d.clCreateSamplerWithProperties = &::clCreateSamplerWithProperties;
    d.clSetKernelArgSVMPointer = &::clSetKernelArgSVMPointer;
    d.clSetKernelExecInfo = &::clSetKernelExecInfo;
    d.clCloneKernel = &::clCloneKernel;
    d.clCreateProgramWithIL = &::clCreateProgramWithIL;
    d.clEnqueueSVMMigrateMem = &::clEnqueueSVMMigrateMem;
    d.clGetDeviceAndHostTimer = &::clGetDeviceAndHostTimer;
    d.clGetHostTimer = &::clGetHostTimer;
    d.clGetKernelSubGroupInfo = &::clGetKernelSubGroupInfo;
    d.clGetKernelSubGroupInfoKHR = &::clGetKernelSubGroupInfoKHR;
    d.clSetDefaultDeviceCommandQueue = &::clSetDefaultDeviceCommandQueue;
    // Deprecated in OpenCL 3.0, still an ICD dispatch slot.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    d.clSetProgramReleaseCallback = &::clSetProgramReleaseCallback;
#pragma GCC diagnostic pop
    d.clSetProgramSpecializationConstant = &::clSetProgramSpecializationConstant;
    d.clCreateBufferWithProperties = &::clCreateBufferWithProperties;
    d.clCreateImageWithProperties = &::clCreateImageWithProperties;
    d.clSetContextDestructorCallback = &::clSetContextDestructorCallback;
    // cl_khr_gl_sharing, cl_khr_gl_event: the loader routes these through the table too.
    d.clCreateFromGLBuffer = &::clCreateFromGLBuffer;
    d.clCreateFromGLTexture = &::clCreateFromGLTexture;
    d.clCreateFromGLTexture2D = &::clCreateFromGLTexture2D;
    d.clCreateFromGLTexture3D = &::clCreateFromGLTexture3D;
    d.clCreateFromGLRenderbuffer = &::clCreateFromGLRenderbuffer;
    d.clGetGLObjectInfo = &::clGetGLObjectInfo;
    d.clGetGLTextureInfo = &::clGetGLTextureInfo;
    d.clEnqueueAcquireGLObjects = &::clEnqueueAcquireGLObjects;
    d.clEnqueueReleaseGLObjects = &::clEnqueueReleaseGLObjects;
    d.clGetGLContextInfoKHR = &::clGetGLContextInfoKHR;
    d.clCreateEventFromGLsyncKHR = &::clCreateEventFromGLsyncKHR;
    return d;
}
} // namespace

const cl_icd_dispatch g_dispatch = makeDispatch();

} // namespace duet::rt
