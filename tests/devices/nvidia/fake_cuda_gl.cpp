// The fake libcuda's CUDA-GL interop (fake_cuda.cpp has the rest): GL objects registered by name,
// mapped into host memory (the fake "GPU" is the host) by reading them with GL on the calling
// thread, which is the runtime's GL thread with its GL context current, and written back with GL
// at unmap unless registered read-only. Arrays (cuGraphicsSubResourceGetMappedArray) are host
// copies of one texture level; cuMemcpy2D/3D move bytes between arrays and addresses. Every call
// is counted (duetFakeCalls), so tests see register-once / map-per-acquire / unmap-per-release.
#include "fake_cuda.hpp"

#define GL_GLEXT_PROTOTYPES
#include <GL/glcorearb.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <vector>

extern "C" int duetFakeEnter(const char* name); // fake_cuda.cpp: counts, injected failures

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kNotMapped = 211, kAlreadyMapped = 208,
              kInvalidHandle = 400, kNotSupported = 801;

/// A texture level as an array: tightly packed rows, `layers` 2D layers or 3D slices.
struct FakeArray {
    size_t width = 0, height = 0, depth = 0; ///< depth 0: a 2D array
    size_t texelBytes = 0;
    bool layered = false;
    std::vector<unsigned char> bytes;
    size_t rowPitch() const { return width * texelBytes; }
    size_t slicePitch() const { return rowPitch() * height; }
};

struct FakeResource {
    bool image = false;
    unsigned name = 0, target = 0, flags = 0;
    bool mapped = false;
    void* buffer = nullptr; ///< mapped buffer's bytes
    size_t size = 0;
    std::map<std::pair<unsigned, unsigned>, std::unique_ptr<FakeArray>> arrays;
};

struct Format {
    GLenum format, type;
    size_t bytes;
};

/// The formats the fake registers, as CUDA would (colour, 1/2/4 channels); none for depth/sRGB.
bool formatOf(GLint internal, Format& out) {
    switch (internal) {
    case GL_RGBA8:
    case GL_RGBA:
        out = {GL_RGBA, GL_UNSIGNED_BYTE, 4};
        return true;
    case GL_RGBA32F:
        out = {GL_RGBA, GL_FLOAT, 16};
        return true;
    case GL_RGBA16F:
        out = {GL_RGBA, GL_HALF_FLOAT, 8};
        return true;
    case GL_R32F:
        out = {GL_RED, GL_FLOAT, 4};
        return true;
    case GL_RG32F:
        out = {GL_RG, GL_FLOAT, 8};
        return true;
    case GL_R8:
        out = {GL_RED, GL_UNSIGNED_BYTE, 1};
        return true;
    case GL_RGBA32UI:
        out = {GL_RGBA_INTEGER, GL_UNSIGNED_INT, 16};
        return true;
    case GL_R32UI:
        out = {GL_RED_INTEGER, GL_UNSIGNED_INT, 4};
        return true;
    default:
        return false;
    }
}

/// DUET_FAKE_CUDA_GL_DEVICE sets the first answer (for runs by hand: another GPU is 1).
int firstGlDevice() {
    const char* env = std::getenv("DUET_FAKE_CUDA_GL_DEVICE");
    return env && *env ? std::atoi(env) : 0;
}

std::mutex mutex;
std::set<FakeArray*> madeArrays;  ///< cuArray3DCreate_v2's, until cuArrayDestroy
int glDevice = firstGlDevice();   ///< what cuGLGetDevices answers (-1: an error)
uint64_t lastMappedPointer = 0;   ///< the latest cuGraphicsResourceGetMappedPointer answer
std::vector<unsigned> registered; ///< GL names registered, in order

GLint levelParameter(GLenum target, unsigned level, GLenum what) {
    GLint v = 0;
    glGetTexLevelParameteriv(target, GLint(level), what, &v);
    return v;
}

/// Reads (or writes back) renderbuffer `name` through a framebuffer.
void renderbufferPixels(unsigned name, FakeArray& a, const Format& f, bool write) {
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    if (!write) {
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glFramebufferRenderbuffer(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, name);
        glReadPixels(0, 0, GLsizei(a.width), GLsizei(a.height), f.format, f.type, a.bytes.data());
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    } else {
        // A scratch texture blitted into the renderbuffer.
        GLint internal = 0;
        glBindRenderbuffer(GL_RENDERBUFFER, name);
        glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT, &internal);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        GLuint tex = 0, src = 0;
        glGenTextures(1, &tex);
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexImage2D(GL_TEXTURE_2D, 0, internal, GLsizei(a.width), GLsizei(a.height), 0, f.format,
                     f.type, a.bytes.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        glGenFramebuffers(1, &src);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, src);
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo);
        glFramebufferRenderbuffer(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, name);
        glBlitFramebuffer(0, 0, GLint(a.width), GLint(a.height), 0, 0, GLint(a.width),
                          GLint(a.height), GL_COLOR_BUFFER_BIT, GL_NEAREST);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
        glDeleteFramebuffers(1, &src);
        glDeleteTextures(1, &tex);
    }
    glDeleteFramebuffers(1, &fbo);
}

/// Reads subresource (`index`, `level`) of image resource `r` into a fresh array.
std::unique_ptr<FakeArray> readArray(const FakeResource& r, unsigned index, unsigned level) {
    auto a = std::make_unique<FakeArray>();
    Format f{};
    if (r.target == GL_RENDERBUFFER) {
        GLint w = 0, h = 0, internal = 0;
        glBindRenderbuffer(GL_RENDERBUFFER, r.name);
        glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_WIDTH, &w);
        glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_HEIGHT, &h);
        glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT, &internal);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        if (!formatOf(internal, f) || index || level)
            return nullptr;
        a->width = size_t(w);
        a->height = size_t(h);
        a->texelBytes = f.bytes;
        a->bytes.resize(a->slicePitch());
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        renderbufferPixels(r.name, *a, f, false);
        return a;
    }
    const GLenum face =
        r.target == GL_TEXTURE_CUBE_MAP ? GL_TEXTURE_CUBE_MAP_POSITIVE_X + index : r.target;
    if ((r.target == GL_TEXTURE_CUBE_MAP && index > 5) ||
        (r.target != GL_TEXTURE_CUBE_MAP && index != 0))
        return nullptr; // a 2D array texture maps as one layered array
    glBindTexture(r.target, r.name);
    const GLint internal = levelParameter(face, level, GL_TEXTURE_INTERNAL_FORMAT);
    a->width = size_t(levelParameter(face, level, GL_TEXTURE_WIDTH));
    a->height = size_t(levelParameter(face, level, GL_TEXTURE_HEIGHT));
    const size_t layers = size_t(levelParameter(face, level, GL_TEXTURE_DEPTH));
    if (!formatOf(internal, f) || !a->width) {
        glBindTexture(r.target, 0);
        return nullptr;
    }
    const bool three = r.target == GL_TEXTURE_3D || r.target == GL_TEXTURE_2D_ARRAY;
    a->depth = three ? layers : 0;
    a->layered = r.target == GL_TEXTURE_2D_ARRAY;
    a->texelBytes = f.bytes;
    a->bytes.resize(a->slicePitch() * (three ? layers : 1));
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(face, GLint(level), f.format, f.type, a->bytes.data());
    glBindTexture(r.target, 0);
    return a;
}

/// Writes array (`index`, `level`) back into image resource `r`.
void writeArray(const FakeResource& r, unsigned index, unsigned level, FakeArray& a) {
    Format f{};
    if (r.target == GL_RENDERBUFFER) {
        GLint internal = 0;
        glBindRenderbuffer(GL_RENDERBUFFER, r.name);
        glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT, &internal);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        if (formatOf(internal, f)) {
            glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
            renderbufferPixels(r.name, a, f, true);
        }
        return;
    }
    const GLenum face =
        r.target == GL_TEXTURE_CUBE_MAP ? GL_TEXTURE_CUBE_MAP_POSITIVE_X + index : r.target;
    glBindTexture(r.target, r.name);
    if (formatOf(levelParameter(face, level, GL_TEXTURE_INTERNAL_FORMAT), f)) {
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        if (a.depth)
            glTexSubImage3D(face, GLint(level), 0, 0, 0, GLsizei(a.width), GLsizei(a.height),
                            GLsizei(a.depth), f.format, f.type, a.bytes.data());
        else
            glTexSubImage2D(face, GLint(level), 0, 0, GLsizei(a.width), GLsizei(a.height), f.format,
                            f.type, a.bytes.data());
    }
    glBindTexture(r.target, 0);
}

/// Byte `x` of row `y` of slice `z` of one side of a copy.
unsigned char* at(int memoryType, const void* host, uint64_t device, void* array, size_t pitch,
                  size_t height, size_t x, size_t y, size_t z) {
    if (memoryType == 3) {
        auto* a = static_cast<FakeArray*>(array);
        return a->bytes.data() + z * a->slicePitch() + y * a->rowPitch() + x;
    }
    auto* base = static_cast<unsigned char*>(
        memoryType == 1 ? const_cast<void*>(host) : reinterpret_cast<void*>(uintptr_t(device)));
    return base + z * pitch * height + y * pitch + x;
}

} // namespace

extern "C" {

int cuDeviceGetUuid_v2(unsigned char* uuid, int d) {
    if (int e = duetFakeEnter("cuDeviceGetUuid_v2"))
        return e;
    for (int i = 0; i < 16; ++i)
        uuid[i] = static_cast<unsigned char>(0xd0 + i + 16 * d);
    return kSuccess;
}

int cuGLGetDevices_v2(unsigned* count, int* devices, unsigned capacity, int list) {
    if (int e = duetFakeEnter("cuGLGetDevices_v2"))
        return e;
    std::lock_guard lock(mutex);
    if (list != 1 || glDevice < 0)
        return glDevice < 0 ? 999 /* CUDA_ERROR_UNKNOWN: no NVIDIA GL context */ : kInvalidValue;
    *count = 1;
    if (capacity)
        devices[0] = glDevice;
    return kSuccess;
}

int cuGraphicsGLRegisterBuffer(void** resource, unsigned buffer, unsigned flags) {
    if (int e = duetFakeEnter("cuGraphicsGLRegisterBuffer"))
        return e;
    if (!glIsBuffer(buffer))
        return kInvalidValue;
    auto* r = new FakeResource{};
    r->name = buffer;
    r->flags = flags;
    std::lock_guard lock(mutex);
    registered.push_back(buffer);
    *resource = r;
    return kSuccess;
}

int cuGraphicsGLRegisterImage(void** resource, unsigned image, unsigned target, unsigned flags) {
    if (int e = duetFakeEnter("cuGraphicsGLRegisterImage"))
        return e;
    FakeResource probe{true, image, target, flags};
    if (target == GL_RENDERBUFFER ? !glIsRenderbuffer(image) : !glIsTexture(image))
        return kInvalidValue;
    // As CUDA: formats it cannot map are refused here (depth, sRGB, ...).
    if (!readArray(probe, 0, 0))
        return kNotSupported;
    auto* r = new FakeResource{true, image, target, flags};
    std::lock_guard lock(mutex);
    registered.push_back(image);
    *resource = r;
    return kSuccess;
}

int cuGraphicsUnregisterResource(void* resource) {
    if (int e = duetFakeEnter("cuGraphicsUnregisterResource"))
        return e;
    auto* r = static_cast<FakeResource*>(resource);
    if (!r)
        return kInvalidHandle;
    std::free(r->buffer);
    delete r;
    return kSuccess;
}

int cuGraphicsMapResources(unsigned count, void** resources, void*) {
    if (int e = duetFakeEnter("cuGraphicsMapResources"))
        return e;
    for (unsigned i = 0; i < count; ++i)
        if (static_cast<FakeResource*>(resources[i])->mapped)
            return kAlreadyMapped;
    for (unsigned i = 0; i < count; ++i) {
        auto* r = static_cast<FakeResource*>(resources[i]);
        r->mapped = true;
        if (r->image)
            continue; // arrays are read when asked for
        GLint size = 0;
        glBindBuffer(GL_COPY_READ_BUFFER, r->name);
        glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size);
        r->size = size_t(size);
        r->buffer = std::aligned_alloc(256, (r->size + 255) / 256 * 256);
        std::memset(r->buffer, 0xCD, r->size);
        if (!(r->flags & 2)) // not WRITE_DISCARD: the "GPU" sees GL's bytes
            glGetBufferSubData(GL_COPY_READ_BUFFER, 0, GLsizeiptr(r->size), r->buffer);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
    }
    return kSuccess;
}

int cuGraphicsUnmapResources(unsigned count, void** resources, void*) {
    if (int e = duetFakeEnter("cuGraphicsUnmapResources"))
        return e;
    for (unsigned i = 0; i < count; ++i)
        if (!static_cast<FakeResource*>(resources[i])->mapped)
            return kNotMapped;
    for (unsigned i = 0; i < count; ++i) {
        auto* r = static_cast<FakeResource*>(resources[i]);
        r->mapped = false;
        const bool writeBack = !(r->flags & 1); // not READ_ONLY
        if (r->image) {
            if (writeBack)
                for (auto& [key, array] : r->arrays)
                    writeArray(*r, key.first, key.second, *array);
            r->arrays.clear();
            continue;
        }
        if (writeBack) {
            glBindBuffer(GL_COPY_WRITE_BUFFER, r->name);
            glBufferSubData(GL_COPY_WRITE_BUFFER, 0, GLsizeiptr(r->size), r->buffer);
            glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        }
        std::free(r->buffer);
        r->buffer = nullptr;
    }
    return kSuccess;
}

int cuGraphicsResourceGetMappedPointer_v2(uint64_t* pointer, size_t* size, void* resource) {
    if (int e = duetFakeEnter("cuGraphicsResourceGetMappedPointer_v2"))
        return e;
    auto* r = static_cast<FakeResource*>(resource);
    if (!r->mapped)
        return kNotMapped;
    if (r->image)
        return kInvalidValue;
    *pointer = uint64_t(reinterpret_cast<uintptr_t>(r->buffer));
    *size = r->size;
    std::lock_guard lock(mutex);
    lastMappedPointer = *pointer;
    return kSuccess;
}

int cuGraphicsSubResourceGetMappedArray(void** array, void* resource, unsigned index,
                                        unsigned level) {
    if (int e = duetFakeEnter("cuGraphicsSubResourceGetMappedArray"))
        return e;
    auto* r = static_cast<FakeResource*>(resource);
    if (!r->mapped)
        return kNotMapped;
    if (!r->image)
        return kInvalidValue;
    auto& slot = r->arrays[{index, level}];
    if (!slot)
        slot = readArray(*r, index, level);
    if (!slot) {
        r->arrays.erase({index, level});
        return kInvalidValue;
    }
    *array = slot.get();
    return kSuccess;
}

int cuArray3DGetDescriptor_v2(FakeArrayDescriptor* d, void* array) {
    if (int e = duetFakeEnter("cuArray3DGetDescriptor_v2"))
        return e;
    auto* a = static_cast<FakeArray*>(array);
    *d = {a->width, a->height, a->depth, 0, unsigned(a->texelBytes), a->layered ? 1u : 0u};
    return kSuccess;
}

// CUDA arrays the runtime makes itself (image copies for textures): zero-filled host memory.
int cuArray3DCreate_v2(void** array, const FakeArrayDescriptor* d) {
    if (int e = duetFakeEnter("cuArray3DCreate_v2"))
        return e;
    size_t channelBytes = 0; // CUarray_format: 8-, 16- (and half) and 32-bit (and float)
    switch (d->format) {
    case 0x01:
    case 0x08:
        channelBytes = 1;
        break;
    case 0x02:
    case 0x09:
    case 0x10:
        channelBytes = 2;
        break;
    case 0x03:
    case 0x0a:
    case 0x20:
        channelBytes = 4;
        break;
    default:
        return kInvalidValue;
    }
    if (!d->width || (d->numChannels != 1 && d->numChannels != 2 && d->numChannels != 4) ||
        (d->flags & ~1u) || (!d->flags && (!d->height || !d->depth)))
        return kInvalidValue;
    auto a = std::make_unique<FakeArray>();
    a->width = d->width;
    a->height = std::max<size_t>(d->height, 1); // 1D layers: one row each
    a->depth = std::max<size_t>(d->depth, 1);
    a->texelBytes = channelBytes * d->numChannels;
    a->layered = d->flags & 1;
    a->bytes.assign(a->slicePitch() * a->depth, 0);
    *array = a.get();
    std::lock_guard lock(mutex);
    madeArrays.insert(a.release());
    return kSuccess;
}

int cuArrayDestroy(void* array) {
    if (int e = duetFakeEnter("cuArrayDestroy"))
        return e;
    std::lock_guard lock(mutex);
    auto* a = static_cast<FakeArray*>(array);
    if (!madeArrays.erase(a))
        return kInvalidValue;
    delete a;
    return kSuccess;
}

int duetFakeIsArray(const void* array) {
    std::lock_guard lock(mutex);
    return madeArrays.count(static_cast<FakeArray*>(const_cast<void*>(array))) ? 1 : 0;
}

int duetFakeLiveArrays() {
    std::lock_guard lock(mutex);
    return int(madeArrays.size());
}

const unsigned char* duetFakeArrayBytes(const void* array, size_t* bytes) {
    std::lock_guard lock(mutex);
    auto* a = static_cast<FakeArray*>(const_cast<void*>(array));
    if (!madeArrays.count(a))
        return nullptr;
    *bytes = a->bytes.size();
    return a->bytes.data();
}

int cuMemcpy2DAsync_v2(const FakeMemcpy2D* c, void*) {
    if (int e = duetFakeEnter("cuMemcpy2DAsync_v2"))
        return e;
    for (size_t y = 0; y < c->height; ++y)
        std::memmove(at(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstPitch, 0,
                        c->dstXInBytes, c->dstY + y, 0),
                     at(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcPitch, 0,
                        c->srcXInBytes, c->srcY + y, 0),
                     c->widthInBytes);
    return kSuccess;
}

int cuMemcpy3DAsync_v2(const FakeMemcpy3D* c, void*) {
    if (int e = duetFakeEnter("cuMemcpy3DAsync_v2"))
        return e;
    for (size_t z = 0; z < c->depth; ++z)
        for (size_t y = 0; y < c->height; ++y)
            std::memmove(at(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstPitch,
                            c->dstHeight, c->dstXInBytes, c->dstY + y, c->dstZ + z),
                         at(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcPitch,
                            c->srcHeight, c->srcXInBytes, c->srcY + y, c->srcZ + z),
                         c->widthInBytes);
    return kSuccess;
}

// What fake_cuda.hpp declares for the tests.
void duetFakeSetGlDevice(int device) {
    std::lock_guard lock(mutex);
    glDevice = device;
}
uint64_t duetFakeLastMappedPointer() {
    std::lock_guard lock(mutex);
    return lastMappedPointer;
}
int duetFakeRegisteredCount() {
    std::lock_guard lock(mutex);
    return int(registered.size());
}
}
