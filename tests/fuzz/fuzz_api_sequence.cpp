// Fuzzes sequences of OpenCL API calls on live objects of Duet's CPU device: the input is decoded
// into buffers, sub-buffers, kernels and their arguments, transfers, fills, maps, events and
// user events, finishes and releases in any order. Every call must return CL_SUCCESS or an error
// the specification lists for it (CL_SUCCESS where the model says the call is valid, the named
// error where it says it is not), and nothing may crash, hang or trip a sanitizer.
#include "fuzz_check.hpp"
#include "fuzz_runtime.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace {

using duet::fuzz::bumpFeature;

cl_command_queue g_queues[2]; // in order, out of order
cl_program g_program;
cl_uint g_baseAlign = 1; // CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes
cl_ulong g_maxAlloc = 0; // CL_DEVICE_MAX_MEM_ALLOC_SIZE

// Every kernel bounds its accesses by arguments the harness sets from its model, so a kernel
// never touches memory outside its buffers: what the runtime does with the calls is under test.
const char* kSource = R"(
__kernel void fill(__global uint *p, uint n, uint v) {
    size_t i = get_global_id(0);
    if (p && i < n) p[i] = v + (uint)i;
}
__kernel void copy(__global const uint *a, __global uint *b, uint n) {
    size_t i = get_global_id(0);
    if (a && b && i < n) b[i] = a[i];
}
__kernel void rot(__global uint *p, uint n, __local uint *t, uint tn) {
    size_t l = get_local_id(0), i = get_global_id(0);
    if (l < tn) t[l] = (uint)i;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint m = min((uint)get_local_size(0), tn);
    if (p && i < n && l < tn) p[i] = t[(l + 1) % m];
}
)";

struct KernelInfo {
    const char* name;
    // Per argument: 'b' buffer, 'n' element count (set by the harness), 'u' uint, 'l' local,
    // 't' local element count (set by the harness).
    const char* args;
};
const KernelInfo kKernels[] = {{"fill", "bnu"}, {"copy", "bbn"}, {"rot", "bnlt"}};

struct Mem {
    cl_mem mem;
    size_t size;
    bool sub;
    int refs;          // handles this harness holds
    bool hostNoAccess; // CL_MEM_HOST_NO_ACCESS (sub-buffers inherit it)
    cl_mem root;       // the buffer itself, or a sub-buffer's parent
    size_t origin;     // in root
};

struct Kernel {
    cl_kernel kernel;
    const KernelInfo* info;
    std::vector<size_t> bufferBytes; // per argument: bytes of the buffer set (0: none/NULL)
    std::vector<bool> set;
    size_t localBytes = 0;
};

struct Mapping {
    cl_mem mem;
    void* ptr;
    cl_command_queue queue;
};

bool oneOf(cl_int err, std::initializer_list<cl_int> allowed) {
    return err == CL_SUCCESS || std::find(allowed.begin(), allowed.end(), err) != allowed.end();
}

// The errors the specification lists for each call (besides CL_SUCCESS), less the handle errors
// that live handles cannot give.
#define RES CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY
#define CHECK_LISTED(call, err, ...)                                                               \
    do {                                                                                           \
        bumpFeature(std::hash<std::string>{}(call) + size_t(-(err)) * 131);                        \
        if (!oneOf(err, {__VA_ARGS__})) {                                                          \
            std::fprintf(stderr, "%s returned %d, not an error the spec lists for it\n", call,     \
                         err);                                                                     \
            FUZZ_CHECK(false, call);                                                               \
        }                                                                                          \
    } while (0)
/// `err` must be CL_SUCCESS when `applicable` (the errors whose conditions the model sees hold)
/// is empty, else one of them: where several conditions hold the spec lets the runtime pick.
#define EXPECT(call, err, applicable)                                                              \
    do {                                                                                           \
        const std::vector<cl_int>& app_ = (applicable);                                            \
        bool ok_ = app_.empty() ? (err) == CL_SUCCESS                                              \
                                : std::find(app_.begin(), app_.end(), (err)) != app_.end();        \
        if (!ok_) {                                                                                \
            std::fprintf(stderr, "%s returned %d; the model expected %s (%s)\n", call, err,        \
                         app_.empty() ? "CL_SUCCESS" : "one of its listed errors", m_ctx);         \
            FUZZ_CHECK(false, call);                                                               \
        }                                                                                          \
    } while (0)
#define CHECK_IS(call, err, expected)                                                              \
    do {                                                                                           \
        if ((err) != (expected)) {                                                                 \
            std::fprintf(stderr, "%s returned %d, expected %d\n", call, err, expected);            \
            FUZZ_CHECK(false, call);                                                               \
        }                                                                                          \
    } while (0)

class Session {
public:
    explicit Session(FuzzedDataProvider& in) : m_in(in) {}
    ~Session() { teardown(); }

    void step() {
        switch (m_in.ConsumeIntegralInRange<int>(0, 20)) {
        case 0:
            createBuffer();
            break;
        case 1:
            createSubBuffer();
            break;
        case 2:
            releaseMem();
            break;
        case 3:
            retainMem();
            break;
        case 4:
            createKernel();
            break;
        case 5:
            releaseKernel();
            break;
        case 6:
        case 7:
            setArg();
            break;
        case 8:
            enqueueKernel();
            break;
        case 9:
            readWrite(true);
            break;
        case 10:
            readWrite(false);
            break;
        case 11:
            copy();
            break;
        case 12:
            fill();
            break;
        case 13:
            map();
            break;
        case 14:
            unmap();
            break;
        case 15:
            userEvent();
            break;
        case 16:
            setUserStatus();
            break;
        case 17:
            releaseEvent();
            break;
        case 18:
            finish();
            break;
        case 19:
            waitEvents();
            break;
        default:
            markerOrCallback();
            break;
        }
    }

private:
    FuzzedDataProvider& m_in;
    char m_ctx[256] = {}; // the arguments of the call being checked, for failure messages
    std::vector<Mem> m_mems;
    std::vector<Kernel> m_kernels;
    std::vector<cl_event> m_events;
    std::vector<cl_event> m_userEvents; // not yet given a status (also in m_events)
    // A user event was failed: commands after it (an in-order queue's, or waiting on it) may
    // fail, and a blocking call may say so with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    // even with an empty wait list (what follows a failed command is the implementation's).
    bool m_failed = false;
    std::vector<Mapping> m_mappings;
    std::vector<std::unique_ptr<uint8_t[]>> m_host; // host memory outliving every command

    template <typename T> T* pick(std::vector<T>& v) {
        if (v.empty())
            return nullptr;
        return &v[m_in.ConsumeIntegralInRange<size_t>(0, v.size() - 1)];
    }
    cl_command_queue queue() { return g_queues[m_in.ConsumeBool()]; }
    uint8_t* host(size_t bytes) {
        m_host.emplace_back(new uint8_t[std::max<size_t>(bytes, 1)]);
        std::memset(m_host.back().get(), 0x5a, std::max<size_t>(bytes, 1));
        return m_host.back().get();
    }
    /// A size or offset: mostly small, sometimes at or past the edges.
    size_t amount(size_t around) {
        switch (m_in.ConsumeIntegralInRange<int>(0, 5)) {
        case 0:
            return 0;
        case 1:
            return around;
        case 2:
            return around + m_in.ConsumeIntegralInRange<size_t>(1, 64);
        case 3:
            return m_in.ConsumeIntegralInRange<size_t>(0, around);
        case 4:
            return m_in.ConsumeIntegralInRange<size_t>(0, around) & ~size_t(3);
        default:
            return SIZE_MAX - m_in.ConsumeIntegralInRange<size_t>(0, 8);
        }
    }
    /// Up to three events of this session (any state, user events too) as a wait list.
    std::vector<cl_event> waitList() {
        std::vector<cl_event> w;
        int n = m_in.ConsumeIntegralInRange<int>(0, 3);
        for (int i = 0; i < n && !m_events.empty(); ++i)
            w.push_back(*pick(m_events));
        return w;
    }
    /// Keeps the command's event or drops it at once.
    cl_event* eventOut(cl_event& slot) { return m_in.ConsumeBool() ? &slot : nullptr; }
    void keep(cl_event e) {
        if (e)
            m_events.push_back(e);
    }
    /// A blocking call would wait forever on a user event nobody completes: this harness is the
    /// only thread, so complete (or fail) every pending user event first.
    void settleUserEvents() {
        for (cl_event e : m_userEvents) {
            cl_int status = m_in.ConsumeBool() ? CL_COMPLETE : -1;
            m_failed = m_failed || status < 0;
            CHECK_IS("clSetUserEventStatus", clSetUserEventStatus(e, status), CL_SUCCESS);
        }
        m_userEvents.clear();
    }

    void createBuffer() {
        static const cl_mem_flags kFlags[] = {
            CL_MEM_READ_WRITE,
            CL_MEM_READ_ONLY,
            CL_MEM_WRITE_ONLY,
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS,
            CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,           // invalid
            CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,    // invalid
            CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY, // invalid
            cl_mem_flags(1) << 40,                          // invalid
        };
        size_t fi = m_in.ConsumeIntegralInRange<size_t>(0, std::size(kFlags) - 1);
        cl_mem_flags flags = kFlags[fi];
        size_t size =
            m_in.ConsumeBool() ? m_in.ConsumeIntegralInRange<size_t>(1, 4096) : amount(65536);
        bool withPtr = flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR);
        bool nullPtr = withPtr && m_in.ConsumeIntegralInRange<int>(0, 7) == 0;
        void* ptr = withPtr && !nullPtr && size < (1u << 20) ? host(size) : nullptr;
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBuffer(duet::fuzz::runtime().context, flags, size, ptr, &err);
        CHECK_LISTED("clCreateBuffer", err, CL_INVALID_VALUE, CL_INVALID_BUFFER_SIZE,
                     CL_INVALID_HOST_PTR, CL_MEM_OBJECT_ALLOCATION_FAILURE, RES);
        std::snprintf(m_ctx, sizeof m_ctx, "flags %#llx, size %zu, host ptr %p",
                      (unsigned long long)flags, size, ptr);
        std::vector<cl_int> applicable;
        if (fi >= 7)
            applicable.push_back(CL_INVALID_VALUE);
        if (size == 0 || size > g_maxAlloc)
            applicable.push_back(CL_INVALID_BUFFER_SIZE);
        if (withPtr && !ptr)
            applicable.push_back(CL_INVALID_HOST_PTR);
        EXPECT("clCreateBuffer", err, applicable);
        FUZZ_CHECK((err == CL_SUCCESS) == (m != nullptr), "clCreateBuffer's handle and code");
        if (m)
            m_mems.push_back({m, size, false, 1, (flags & CL_MEM_HOST_NO_ACCESS) != 0, m, 0});
    }

    void createSubBuffer() {
        Mem* parent = pick(m_mems);
        if (!parent)
            return;
        cl_buffer_region region{};
        region.origin = m_in.ConsumeBool() ? amount(parent->size) & ~size_t(g_baseAlign - 1)
                                           : amount(parent->size);
        region.size = amount(parent->size);
        cl_int err = CL_SUCCESS;
        // Flags 0: the parent's, so access flags never conflict (not what is fuzzed here).
        cl_mem m = clCreateSubBuffer(parent->mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        CHECK_LISTED("clCreateSubBuffer", err, CL_INVALID_MEM_OBJECT, CL_INVALID_VALUE,
                     CL_INVALID_BUFFER_SIZE, CL_MISALIGNED_SUB_BUFFER_OFFSET,
                     CL_MEM_OBJECT_ALLOCATION_FAILURE, RES);
        const bool inside = region.size > 0 && region.origin <= parent->size &&
                            region.size <= parent->size - region.origin;
        std::snprintf(m_ctx, sizeof m_ctx, "origin %zu, size %zu, parent %zu bytes%s",
                      region.origin, region.size, parent->size,
                      parent->sub ? " (a sub-buffer)" : "");
        std::vector<cl_int> applicable;
        if (parent->sub)
            applicable.push_back(CL_INVALID_MEM_OBJECT);
        if (region.size == 0)
            applicable.push_back(CL_INVALID_BUFFER_SIZE);
        if (!inside && region.size != 0)
            applicable.push_back(CL_INVALID_VALUE);
        if (region.origin % g_baseAlign)
            applicable.push_back(CL_MISALIGNED_SUB_BUFFER_OFFSET);
        EXPECT("clCreateSubBuffer", err, applicable);
        if (m)
            m_mems.push_back(
                {m, region.size, true, 1, parent->hostNoAccess, parent->mem, region.origin});
    }

    /// Drops one handle; the object itself lives on while sub-buffers or commands use it.
    void releaseMem() {
        if (m_mems.empty())
            return;
        size_t i = m_in.ConsumeIntegralInRange<size_t>(0, m_mems.size() - 1);
        // A mapping keeps its object: unmapping a released object is the application's bug.
        for (const Mapping& mp : m_mappings)
            if (mp.mem == m_mems[i].mem && m_mems[i].refs == 1)
                return;
        CHECK_IS("clReleaseMemObject", clReleaseMemObject(m_mems[i].mem), CL_SUCCESS);
        if (--m_mems[i].refs == 0) {
            // Kernel arguments naming it are stale now: the model stops trusting them.
            for (Kernel& k : m_kernels)
                for (size_t a = 0; a < k.set.size(); ++a)
                    if (k.info->args[a] == 'b' && k.bufferBytes[a] && k.set[a])
                        k.bufferBytes[a] = SIZE_MAX; // "was set, object may be gone"
            m_mems.erase(m_mems.begin() + long(i));
        }
    }

    void retainMem() {
        if (Mem* m = pick(m_mems)) {
            CHECK_IS("clRetainMemObject", clRetainMemObject(m->mem), CL_SUCCESS);
            ++m->refs;
        }
    }

    void createKernel() {
        int which = m_in.ConsumeIntegralInRange<int>(0, 3);
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(g_program, which < 3 ? kKernels[which].name : "nope", &err);
        if (which == 3) {
            CHECK_IS("clCreateKernel (no such kernel)", err, CL_INVALID_KERNEL_NAME);
            return;
        }
        CHECK_IS("clCreateKernel", err, CL_SUCCESS);
        size_t n = std::strlen(kKernels[which].args);
        m_kernels.push_back(
            {k, &kKernels[which], std::vector<size_t>(n, 0), std::vector<bool>(n, false)});
    }

    void releaseKernel() {
        if (m_kernels.empty())
            return;
        size_t i = m_in.ConsumeIntegralInRange<size_t>(0, m_kernels.size() - 1);
        CHECK_IS("clReleaseKernel", clReleaseKernel(m_kernels[i].kernel), CL_SUCCESS);
        m_kernels.erase(m_kernels.begin() + long(i));
    }

    void setArg() {
        Kernel* k = pick(m_kernels);
        if (!k)
            return;
        const cl_uint nargs = cl_uint(k->set.size());
        cl_uint a = m_in.ConsumeIntegralInRange<cl_uint>(0, nargs); // nargs: out of range
        cl_int err = CL_SUCCESS;
        if (a == nargs) {
            cl_uint v = 0;
            err = clSetKernelArg(k->kernel, a, sizeof v, &v);
            CHECK_IS("clSetKernelArg (index past the last)", err, CL_INVALID_ARG_INDEX);
            return;
        }
        const char kind = k->info->args[a];
        if (kind == 'b') {
            int how = m_in.ConsumeIntegralInRange<int>(0, 3);
            if (how <= 1 && !m_mems.empty()) { // a live buffer or sub-buffer
                Mem* m = pick(m_mems);
                err = clSetKernelArg(k->kernel, a, sizeof(cl_mem), &m->mem);
                CHECK_IS("clSetKernelArg (buffer)", err, CL_SUCCESS);
                k->bufferBytes[a] = m->size;
                k->set[a] = true;
            } else if (how == 2) { // NULL: the kernel sees a null pointer
                err = clSetKernelArg(k->kernel, a, sizeof(cl_mem), nullptr);
                CHECK_IS("clSetKernelArg (NULL buffer)", err, CL_SUCCESS);
                k->bufferBytes[a] = 0;
                k->set[a] = true;
            } else { // wrong size
                cl_mem m = nullptr;
                err = clSetKernelArg(k->kernel, a, sizeof(cl_mem) / 2, &m);
                CHECK_IS("clSetKernelArg (buffer, wrong size)", err, CL_INVALID_ARG_SIZE);
            }
        } else if (kind == 'l') {
            size_t bytes =
                m_in.ConsumeBool() ? m_in.ConsumeIntegralInRange<size_t>(0, 4096) : amount(1 << 20);
            err = clSetKernelArg(k->kernel, a, bytes, nullptr);
            CHECK_LISTED("clSetKernelArg (local)", err, CL_INVALID_ARG_SIZE, CL_INVALID_ARG_VALUE,
                         CL_MAX_SIZE_RESTRICTION_EXCEEDED, RES);
            if (bytes == 0)
                CHECK_IS("clSetKernelArg (local, 0 bytes)", err, CL_INVALID_ARG_SIZE);
            if (err == CL_SUCCESS) {
                k->localBytes = bytes;
                k->set[a] = true;
            }
        } else if (kind == 'u') {
            cl_uint v = m_in.ConsumeIntegral<cl_uint>();
            bool wrong = m_in.ConsumeIntegralInRange<int>(0, 7) == 0;
            err = clSetKernelArg(k->kernel, a, wrong ? 2 : sizeof v, &v);
            CHECK_IS("clSetKernelArg (uint)", err, wrong ? CL_INVALID_ARG_SIZE : CL_SUCCESS);
            if (!wrong)
                k->set[a] = true;
            if (m_in.ConsumeIntegralInRange<int>(0, 7) == 0) {
                err = clSetKernelArg(k->kernel, a, sizeof v, nullptr);
                CHECK_IS("clSetKernelArg (uint, NULL value)", err, CL_INVALID_ARG_VALUE);
            }
        }
        // 'n' and 't' are set at launch from the model.
    }

    void enqueueKernel() {
        Kernel* k = pick(m_kernels);
        if (!k)
            return;
        // Element counts from what the model knows; a stale buffer argument gives 0 elements
        // (so even a runtime that launched it would not touch the object).
        size_t elems = SIZE_MAX;
        bool stale = false, unset = false;
        for (size_t a = 0; a < k->set.size(); ++a) {
            char kind = k->info->args[a];
            if (kind == 'b' && k->set[a]) {
                if (k->bufferBytes[a] == SIZE_MAX)
                    stale = true;
                else if (k->bufferBytes[a])
                    elems = std::min(elems, k->bufferBytes[a] / 4);
            }
            if ((kind == 'b' || kind == 'l' || kind == 'u') && !k->set[a])
                unset = true;
        }
        if (elems == SIZE_MAX || stale)
            elems = 0;
        for (size_t a = 0; a < k->set.size(); ++a) {
            cl_uint v = 0;
            if (k->info->args[a] == 'n')
                v = cl_uint(std::min<size_t>(elems, m_in.ConsumeIntegral<cl_uint>()));
            else if (k->info->args[a] == 't')
                v = cl_uint(k->localBytes / 4);
            else
                continue;
            CHECK_IS("clSetKernelArg (count)", clSetKernelArg(k->kernel, cl_uint(a), sizeof v, &v),
                     CL_SUCCESS);
            k->set[a] = true;
        }
        size_t global = m_in.ConsumeIntegralInRange<size_t>(0, 2048);
        size_t local = m_in.ConsumeIntegralInRange<size_t>(0, 300);
        size_t offset = m_in.ConsumeBool() ? 0 : m_in.ConsumeIntegralInRange<size_t>(0, 64);
        bool withLocal = local > 0;
        std::vector<cl_event> wait = waitList();
        cl_event ev = nullptr;
        cl_command_queue q = queue();
        cl_int err = clEnqueueNDRangeKernel(q, k->kernel, 1, offset ? &offset : nullptr, &global,
                                            withLocal ? &local : nullptr, cl_uint(wait.size()),
                                            wait.empty() ? nullptr : wait.data(), eventOut(ev));
        CHECK_LISTED("clEnqueueNDRangeKernel", err, CL_INVALID_KERNEL_ARGS,
                     CL_INVALID_GLOBAL_WORK_SIZE, CL_INVALID_GLOBAL_OFFSET,
                     CL_INVALID_WORK_GROUP_SIZE, CL_INVALID_WORK_ITEM_SIZE,
                     CL_MISALIGNED_SUB_BUFFER_OFFSET, CL_MEM_OBJECT_ALLOCATION_FAILURE,
                     CL_INVALID_EVENT_WAIT_LIST, CL_INVALID_OPERATION, RES);
        // Where the model sees nothing wrong the launch must be accepted; arguments not set
        // must give CL_INVALID_KERNEL_ARGS whatever else is wrong. A stale buffer argument (its
        // object released) may be refused or run (the kernel then touches nothing).
        std::snprintf(m_ctx, sizeof m_ctx,
                      "%s: global %zu, local %zu, offset %zu, unset %d, stale %d, local bytes %zu",
                      k->info->name, global, local, offset, unset, stale, k->localBytes);
        const bool plainSizes = global > 0 && (!withLocal || (local <= 64 && global % local == 0));
        if (unset)
            CHECK_LISTED("clEnqueueNDRangeKernel (arguments not set)", err, CL_INVALID_KERNEL_ARGS);
        if (unset && plainSizes)
            CHECK_IS("clEnqueueNDRangeKernel (arguments not set)", err, CL_INVALID_KERNEL_ARGS);
        if (!unset && !stale && plainSizes && k->localBytes <= 4096)
            CHECK_IS("clEnqueueNDRangeKernel (valid)", err, CL_SUCCESS);
        keep(ev);
    }

    void readWrite(bool read) {
        Mem* m = pick(m_mems);
        if (!m)
            return;
        size_t offset = amount(m->size), size = amount(m->size);
        bool blocking = m_in.ConsumeBool();
        std::vector<cl_event> wait = waitList();
        if (blocking)
            settleUserEvents();
        bool nullPtr = m_in.ConsumeIntegralInRange<int>(0, 15) == 0;
        bool fits = size > 0 && offset <= m->size && size <= m->size - offset;
        uint8_t* ptr = nullPtr || !fits ? nullptr : host(size);
        if (!ptr && !nullPtr)
            ptr = host(16); // out of range: the runtime must not touch it
        cl_event ev = nullptr;
        cl_command_queue q = queue();
        const char* name = read ? "clEnqueueReadBuffer" : "clEnqueueWriteBuffer";
        cl_int err =
            read
                ? clEnqueueReadBuffer(q, m->mem, blocking, offset, size, ptr, cl_uint(wait.size()),
                                      wait.empty() ? nullptr : wait.data(), eventOut(ev))
                : clEnqueueWriteBuffer(q, m->mem, blocking, offset, size, ptr, cl_uint(wait.size()),
                                       wait.empty() ? nullptr : wait.data(), eventOut(ev));
        CHECK_LISTED(name, err, CL_INVALID_VALUE, CL_INVALID_EVENT_WAIT_LIST,
                     CL_MISALIGNED_SUB_BUFFER_OFFSET, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                     CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_INVALID_OPERATION, RES);
        std::snprintf(m_ctx, sizeof m_ctx,
                      "offset %zu, size %zu, buffer %zu bytes, null ptr %d, blocking %d, waits %zu",
                      offset, size, m->size, nullPtr, blocking, wait.size());
        std::vector<cl_int> applicable;
        if (!fits || nullPtr)
            applicable.push_back(CL_INVALID_VALUE);
        if (m->hostNoAccess)
            applicable.push_back(CL_INVALID_OPERATION);
        if (applicable.empty() && blocking && m_failed)
            applicable = {CL_SUCCESS, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST};
        // Size 0 inside the buffer: the spec lists no error for it (unlike maps); a runtime may
        // treat it as a no-op or refuse it.
        if (size == 0 && offset <= m->size && !nullPtr && !m->hostNoAccess)
            applicable = {CL_SUCCESS, CL_INVALID_VALUE,
                          CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST};
        EXPECT(name, err, applicable);
        keep(ev);
    }

    void copy() {
        Mem* a = pick(m_mems);
        Mem* b = pick(m_mems);
        if (!a || !b)
            return;
        size_t so = amount(a->size), dof = amount(b->size), size = amount(a->size);
        std::vector<cl_event> wait = waitList();
        cl_event ev = nullptr;
        cl_int err =
            clEnqueueCopyBuffer(queue(), a->mem, b->mem, so, dof, size, cl_uint(wait.size()),
                                wait.empty() ? nullptr : wait.data(), eventOut(ev));
        CHECK_LISTED("clEnqueueCopyBuffer", err, CL_INVALID_VALUE, CL_INVALID_EVENT_WAIT_LIST,
                     CL_MISALIGNED_SUB_BUFFER_OFFSET, CL_MEM_COPY_OVERLAP,
                     CL_MEM_OBJECT_ALLOCATION_FAILURE, RES);
        bool fits = size > 0 && so <= a->size && size <= a->size - so && dof <= b->size &&
                    size <= b->size - dof;
        // Overlap in the root buffer: required to fail for one object or two sub-buffers of one
        // buffer; between a buffer and its own sub-buffer the spec names no error, so either.
        size_t ra = a->origin + so, rb = b->origin + dof;
        bool overlap = fits && a->root == b->root && ra < rb + size && rb < ra + size;
        std::snprintf(m_ctx, sizeof m_ctx, "src %zu+%zu of %zu, dst %zu+%zu of %zu, same root %d",
                      so, size, a->size, dof, size, b->size, a->root == b->root);
        std::vector<cl_int> applicable;
        if (!fits)
            applicable.push_back(CL_INVALID_VALUE);
        if (overlap)
            applicable.push_back(CL_MEM_COPY_OVERLAP);
        if (overlap && a->mem != b->mem && a->sub != b->sub)
            applicable.push_back(CL_SUCCESS);
        if (size == 0 && so <= a->size && dof <= b->size)
            applicable = {CL_SUCCESS, CL_INVALID_VALUE}; // as for reads: no error listed
        EXPECT("clEnqueueCopyBuffer", err, applicable);
        keep(ev);
    }

    void fill() {
        Mem* m = pick(m_mems);
        if (!m)
            return;
        static const size_t kPatterns[] = {1, 2, 4, 8, 16, 32, 64, 128, 3, 256};
        size_t pattern = kPatterns[m_in.ConsumeIntegralInRange<size_t>(0, 9)];
        uint8_t bytes[256];
        std::memset(bytes, m_in.ConsumeIntegral<uint8_t>(), sizeof bytes);
        size_t offset = amount(m->size), size = amount(m->size);
        std::vector<cl_event> wait = waitList();
        cl_event ev = nullptr;
        cl_int err =
            clEnqueueFillBuffer(queue(), m->mem, bytes, pattern, offset, size, cl_uint(wait.size()),
                                wait.empty() ? nullptr : wait.data(), eventOut(ev));
        CHECK_LISTED("clEnqueueFillBuffer", err, CL_INVALID_VALUE, CL_INVALID_EVENT_WAIT_LIST,
                     CL_MISALIGNED_SUB_BUFFER_OFFSET, CL_MEM_OBJECT_ALLOCATION_FAILURE, RES);
        std::snprintf(m_ctx, sizeof m_ctx, "pattern %zu, offset %zu, size %zu, buffer %zu bytes",
                      pattern, offset, size, m->size);
        bool valid = pattern <= 128 && pattern != 3 && size > 0 && offset % pattern == 0 &&
                     size % pattern == 0 && offset <= m->size && size <= m->size - offset;
        std::vector<cl_int> applicable;
        if (!valid)
            applicable.push_back(CL_INVALID_VALUE);
        if (size == 0 && pattern <= 128 && pattern != 3 && offset % pattern == 0 &&
            offset <= m->size)
            applicable = {CL_SUCCESS, CL_INVALID_VALUE}; // the spec lists no error for size 0
        EXPECT("clEnqueueFillBuffer", err, applicable);
        keep(ev);
    }

    void map() {
        Mem* m = pick(m_mems);
        if (!m)
            return;
        static const cl_map_flags kFlags[] = {CL_MAP_READ, CL_MAP_WRITE, CL_MAP_READ | CL_MAP_WRITE,
                                              CL_MAP_WRITE_INVALIDATE_REGION,
                                              CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION};
        size_t fi = m_in.ConsumeIntegralInRange<size_t>(0, 4);
        size_t offset = amount(m->size), size = amount(m->size);
        bool blocking = m_in.ConsumeBool();
        std::vector<cl_event> wait = waitList();
        if (blocking)
            settleUserEvents();
        cl_event ev = nullptr;
        cl_int err = CL_SUCCESS;
        cl_command_queue q = queue();
        void* p =
            clEnqueueMapBuffer(q, m->mem, blocking, kFlags[fi], offset, size, cl_uint(wait.size()),
                               wait.empty() ? nullptr : wait.data(), eventOut(ev), &err);
        CHECK_LISTED("clEnqueueMapBuffer", err, CL_INVALID_VALUE, CL_INVALID_EVENT_WAIT_LIST,
                     CL_MISALIGNED_SUB_BUFFER_OFFSET, CL_MAP_FAILURE,
                     CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_MEM_OBJECT_ALLOCATION_FAILURE,
                     CL_INVALID_OPERATION, RES);
        bool fits = size > 0 && offset <= m->size && size <= m->size - offset;
        std::snprintf(m_ctx, sizeof m_ctx,
                      "flags %#llx, offset %zu, size %zu, buffer %zu bytes, blocking %d",
                      (unsigned long long)kFlags[fi], offset, size, m->size, blocking);
        std::vector<cl_int> applicable;
        if (!fits || fi == 4)
            applicable.push_back(CL_INVALID_VALUE);
        if (m->hostNoAccess)
            applicable.push_back(CL_INVALID_OPERATION);
        if (applicable.empty() && blocking && m_failed)
            applicable = {CL_SUCCESS, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST};
        EXPECT("clEnqueueMapBuffer", err, applicable);
        FUZZ_CHECK((err == CL_SUCCESS) == (p != nullptr), "clEnqueueMapBuffer's pointer and code");
        keep(ev);
        if (!p)
            return;
        // A completed map's whole region is the application's: touching all of it lets ASan
        // see a mapping shorter than asked for.
        if (blocking) {
            volatile uint8_t* bytes = static_cast<uint8_t*>(p);
            if (kFlags[fi] & CL_MAP_READ)
                (void)bytes[size - 1];
            std::memset(p, 0xa5, size);
        }
        m_mappings.push_back({m->mem, p, q});
    }

    void unmap() {
        if (m_mappings.empty())
            return;
        size_t i = m_in.ConsumeIntegralInRange<size_t>(0, m_mappings.size() - 1);
        Mapping mp = m_mappings[i];
        m_mappings.erase(m_mappings.begin() + long(i));
        std::vector<cl_event> wait = waitList();
        cl_event ev = nullptr;
        cl_int err = clEnqueueUnmapMemObject(queue(), mp.mem, mp.ptr, cl_uint(wait.size()),
                                             wait.empty() ? nullptr : wait.data(), eventOut(ev));
        CHECK_IS("clEnqueueUnmapMemObject", err, CL_SUCCESS);
        keep(ev);
        // A pointer that is no mapping: CL_INVALID_VALUE.
        uint8_t other[4];
        err = clEnqueueUnmapMemObject(queue(), mp.mem, other, 0, nullptr, nullptr);
        CHECK_IS("clEnqueueUnmapMemObject (not a mapped pointer)", err, CL_INVALID_VALUE);
    }

    void userEvent() {
        cl_int err = CL_SUCCESS;
        cl_event e = clCreateUserEvent(duet::fuzz::runtime().context, &err);
        CHECK_IS("clCreateUserEvent", err, CL_SUCCESS);
        m_events.push_back(e);
        m_userEvents.push_back(e);
    }

    void setUserStatus() {
        if (m_userEvents.empty())
            return;
        size_t i = m_in.ConsumeIntegralInRange<size_t>(0, m_userEvents.size() - 1);
        cl_event e = m_userEvents[i];
        cl_int status = m_in.ConsumeBool() ? CL_COMPLETE : -m_in.ConsumeIntegralInRange<int>(1, 99);
        m_failed = m_failed || status < 0;
        if (m_in.ConsumeIntegralInRange<int>(0, 7) == 0) { // neither complete nor negative
            CHECK_IS("clSetUserEventStatus (CL_RUNNING)", clSetUserEventStatus(e, CL_RUNNING),
                     CL_INVALID_VALUE);
        }
        CHECK_IS("clSetUserEventStatus", clSetUserEventStatus(e, status), CL_SUCCESS);
        CHECK_IS("clSetUserEventStatus (twice)", clSetUserEventStatus(e, CL_COMPLETE),
                 CL_INVALID_OPERATION);
        m_userEvents.erase(m_userEvents.begin() + long(i));
    }

    void releaseEvent() {
        if (m_events.empty())
            return;
        size_t i = m_in.ConsumeIntegralInRange<size_t>(0, m_events.size() - 1);
        cl_event e = m_events[i];
        // A released user event can no longer be completed by this harness: complete it first.
        auto u = std::find(m_userEvents.begin(), m_userEvents.end(), e);
        if (u != m_userEvents.end()) {
            CHECK_IS("clSetUserEventStatus", clSetUserEventStatus(e, CL_COMPLETE), CL_SUCCESS);
            m_userEvents.erase(u);
        }
        CHECK_IS("clReleaseEvent", clReleaseEvent(e), CL_SUCCESS);
        m_events.erase(m_events.begin() + long(i));
    }

    void finish() {
        settleUserEvents();
        cl_command_queue q = queue();
        if (m_in.ConsumeBool())
            CHECK_IS("clFlush", clFlush(q), CL_SUCCESS);
        else
            CHECK_IS("clFinish", clFinish(q), CL_SUCCESS);
    }

    void waitEvents() {
        std::vector<cl_event> wait = waitList();
        settleUserEvents();
        cl_int err = clWaitForEvents(cl_uint(wait.size()), wait.empty() ? nullptr : wait.data());
        CHECK_LISTED("clWaitForEvents", err, CL_INVALID_VALUE,
                     CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, RES);
        if (wait.empty())
            CHECK_IS("clWaitForEvents (no events)", err, CL_INVALID_VALUE);
        for (cl_event e : wait) {
            cl_int status = 1;
            CHECK_IS("clGetEventInfo",
                     clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                    nullptr),
                     CL_SUCCESS);
            FUZZ_CHECK(status <= CL_COMPLETE, "an event waited for is not complete");
            bumpFeature(1000 + size_t(status < 0));
        }
    }

    static void CL_CALLBACK onEvent(cl_event, cl_int status, void*) {
        bumpFeature(2000 + size_t(status < 0));
    }

    void markerOrCallback() {
        int what = m_in.ConsumeIntegralInRange<int>(0, 2);
        if (what == 2) {
            if (m_events.empty())
                return;
            cl_event e = *pick(m_events);
            cl_int type = m_in.ConsumeBool() ? CL_COMPLETE : CL_SUBMITTED;
            CHECK_IS("clSetEventCallback", clSetEventCallback(e, type, onEvent, nullptr),
                     CL_SUCCESS);
            CHECK_IS("clSetEventCallback (CL_QUEUED)",
                     clSetEventCallback(e, CL_QUEUED, onEvent, nullptr), CL_INVALID_VALUE);
            return;
        }
        std::vector<cl_event> wait = waitList();
        cl_event ev = nullptr;
        cl_command_queue q = queue();
        cl_int err =
            what ? clEnqueueBarrierWithWaitList(q, cl_uint(wait.size()),
                                                wait.empty() ? nullptr : wait.data(), eventOut(ev))
                 : clEnqueueMarkerWithWaitList(q, cl_uint(wait.size()),
                                               wait.empty() ? nullptr : wait.data(), eventOut(ev));
        CHECK_IS(what ? "clEnqueueBarrierWithWaitList" : "clEnqueueMarkerWithWaitList", err,
                 CL_SUCCESS);
        keep(ev);
    }

    /// Everything back: user events completed, queues drained, mappings undone, then every
    /// handle released in the order the input left them (sub-buffers before or after parents).
    void teardown() {
        settleUserEvents();
        for (cl_command_queue q : g_queues)
            CHECK_IS("clFinish", clFinish(q), CL_SUCCESS);
        for (cl_event e : m_events) {
            cl_int status = 1;
            CHECK_IS("clGetEventInfo",
                     clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                    nullptr),
                     CL_SUCCESS);
            FUZZ_CHECK(status <= CL_COMPLETE, "an event is not complete after clFinish");
        }
        for (const Mapping& mp : m_mappings)
            CHECK_IS("clEnqueueUnmapMemObject",
                     clEnqueueUnmapMemObject(mp.queue, mp.mem, mp.ptr, 0, nullptr, nullptr),
                     CL_SUCCESS);
        for (cl_command_queue q : g_queues)
            CHECK_IS("clFinish", clFinish(q), CL_SUCCESS);
        for (cl_event e : m_events)
            CHECK_IS("clReleaseEvent", clReleaseEvent(e), CL_SUCCESS);
        for (const Kernel& k : m_kernels)
            CHECK_IS("clReleaseKernel", clReleaseKernel(k.kernel), CL_SUCCESS);
        for (const Mem& m : m_mems)
            for (int r = 0; r < m.refs; ++r)
                CHECK_IS("clReleaseMemObject", clReleaseMemObject(m.mem), CL_SUCCESS);
        // Memory objects go when their last command completes: drain before the host memory
        // (USE_HOST_PTR storage, transfer sources and targets) is freed.
        for (cl_command_queue q : g_queues)
            CHECK_IS("clFinish", clFinish(q), CL_SUCCESS);
    }
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    duet::fuzz::openCpuDevice();
    const duet::fuzz::Runtime& rt = duet::fuzz::runtime();
    cl_int err = CL_SUCCESS;
    g_queues[0] = clCreateCommandQueueWithProperties(rt.context, rt.device, nullptr, &err);
    FUZZ_CHECK(err == CL_SUCCESS, "in-order queue");
    cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    g_queues[1] = clCreateCommandQueueWithProperties(rt.context, rt.device, ooo, &err);
    FUZZ_CHECK(err == CL_SUCCESS, "out-of-order queue");
    g_program = clCreateProgramWithSource(rt.context, 1, &kSource, nullptr, &err);
    FUZZ_CHECK(err == CL_SUCCESS, "clCreateProgramWithSource");
    err = clBuildProgram(g_program, 1, &rt.device, "", nullptr, nullptr);
    if (err != CL_SUCCESS)
        std::fprintf(stderr, "%s\n", duet::fuzz::buildLog(g_program, rt.device).c_str());
    FUZZ_CHECK(err == CL_SUCCESS, "clBuildProgram of the harness's kernels");
    cl_uint bits = 8;
    clGetDeviceInfo(rt.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, nullptr);
    clGetDeviceInfo(rt.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof g_maxAlloc, &g_maxAlloc,
                    nullptr);
    g_baseAlign = std::max<cl_uint>(bits / 8, 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    Session session(in);
    for (int steps = 0; steps < 64 && in.remaining_bytes() > 0; ++steps)
        session.step();
    return 0;
}
