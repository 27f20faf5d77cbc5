// Shared virtual memory through the API: allocation kinds, the clEnqueueSVM* commands, SVM
// kernel arguments and exec info, buffers over SVM, a pointer-chasing tree search, bad inputs.
#include "support/cl_test.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using namespace duet::test;

namespace {

cl_device_svm_capabilities svmCaps(cl_device_id d) {
    cl_device_svm_capabilities caps = 0;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr));
    return caps;
}

/// The fixture's device, which these tests need to support SVM.
struct WithSvm : WithQueue {
    cl_device_svm_capabilities caps = 0;
    WithSvm() {
        caps = svmCaps(device);
        REQUIRE((caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER));
    }
    cl_kernel kernel(const std::string& source, const char* name, const std::string& opts = "") {
        cl_program p = buildProgram(context, device, source, opts);
        REQUIRE(p);
        cl_int err;
        cl_kernel k = clCreateKernel(p, name, &err);
        REQUIRE_CL(err);
        clReleaseProgram(p); // the kernel keeps it
        return k;
    }
    void run(cl_kernel k, size_t global) {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(queue));
    }
};

const char* kAddOne = R"CLC(
kernel void add_one(global int* p) { p[get_global_id(0)] += 1; }
)CLC";

} // namespace

TEST_CASE("SVM capabilities are reported per device", "[api][svm]") {
    cl_platform_id platform = platformUnderTest();
    cl_uint n = 0;
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> devices(n);
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr));
    for (cl_device_id d : devices) {
        cl_device_type type = 0;
        REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr));
        const cl_device_svm_capabilities caps = svmCaps(d);
        INFO(deviceString(d, CL_DEVICE_NAME));
        const std::string name = deviceString(d, CL_DEVICE_NAME);
        if (type & CL_DEVICE_TYPE_CPU) // host memory, host threads: every kind of SVM
            CHECK(caps == (CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                           CL_DEVICE_SVM_FINE_GRAIN_SYSTEM | CL_DEVICE_SVM_ATOMICS));
        else if (name.find("GCN") != std::string::npos) // the model: buffers and atomics
            CHECK(caps == (CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                           CL_DEVICE_SVM_ATOMICS));
        // Fine-grain buffer SVM implies coarse-grain; atomics imply fine-grain (spec table).
        if (caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER)
            CHECK((caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER));
        if (caps & CL_DEVICE_SVM_ATOMICS)
            CHECK((caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER));
    }
}

TEST_CASE("coarse-grain SVM: map, kernel, map back, offsets", "[api][svm]") {
    WithSvm f;
    constexpr size_t n = 1000;
    auto* p = static_cast<int*>(clSVMAlloc(f.context, CL_MEM_READ_WRITE, n * sizeof(int), 0));
    REQUIRE(p);
    CHECK(reinterpret_cast<uintptr_t>(p) % 128 == 0);
    REQUIRE_CL(
        clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_WRITE, p, n * sizeof(int), 0, nullptr, nullptr));
    std::iota(p, p + n, 0);
    REQUIRE_CL(clEnqueueSVMUnmap(f.queue, p, 0, nullptr, nullptr));

    cl_kernel k = f.kernel(kAddOne, "add_one");
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 0, p));
    f.run(k, n);
    // An offset pointer into the allocation: only the second half is incremented again.
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 0, p + n / 2));
    f.run(k, n / 2);

    cl_event mapped = nullptr;
    REQUIRE_CL(
        clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_READ, p, n * sizeof(int), 0, nullptr, &mapped));
    cl_command_type type = 0;
    REQUIRE_CL(clGetEventInfo(mapped, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr));
    CHECK(type == CL_COMMAND_SVM_MAP);
    clReleaseEvent(mapped);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(p[i] == int(i) + (i >= n / 2 ? 2 : 1));
    }
    REQUIRE_CL(clEnqueueSVMUnmap(f.queue, p, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(f.queue));
    clReleaseKernel(k);
    clSVMFree(f.context, p);
}

TEST_CASE("fine-grain SVM: the host and kernels share bytes without maps", "[api][svm]") {
    WithSvm f;
    if (!(f.caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER)) {
        // The spec's failure for a fine-grain request the context cannot serve: NULL.
        CHECK(clSVMAlloc(f.context, CL_MEM_SVM_FINE_GRAIN_BUFFER, 64, 0) == nullptr);
        return;
    }
    constexpr size_t n = 4096;
    auto* p = static_cast<int*>(
        clSVMAlloc(f.context, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, n * 4, 256));
    REQUIRE(p);
    CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
    for (size_t i = 0; i < n; ++i)
        p[i] = int(3 * i);
    cl_kernel k = f.kernel(kAddOne, "add_one");
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 0, p));
    f.run(k, n);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(p[i] == int(3 * i + 1));
    }
    clReleaseKernel(k);
    clSVMFree(f.context, p);
}

TEST_CASE("fine-grain SVM with atomics: kernel and host update one counter", "[api][svm]") {
    WithSvm f;
    if (!(f.caps & CL_DEVICE_SVM_ATOMICS)) {
        CHECK(clSVMAlloc(f.context, CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, 64, 0) ==
              nullptr);
        return;
    }
    auto* counter = static_cast<std::atomic<int>*>(
        clSVMAlloc(f.context, CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, 64, 0));
    REQUIRE(counter);
    counter->store(0);
    // memory_scope_all_svm_devices: the host is one of the agents sharing the counter.
    cl_kernel k = f.kernel(R"CLC(
kernel void bump(global atomic_int* c, global int* tickets) {
    tickets[get_global_id(0)] = atomic_fetch_add_explicit(c, 1, memory_order_relaxed,
                                                          memory_scope_all_svm_devices);
}
)CLC",
                           "bump", "-cl-std=CL3.0");
    constexpr size_t n = 20000;
    auto* tickets =
        static_cast<int*>(clSVMAlloc(f.context, CL_MEM_SVM_FINE_GRAIN_BUFFER, n * 4, 0));
    REQUIRE(tickets);
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 0, counter));
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 1, tickets));
    size_t global = n;
    REQUIRE_CL(
        clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFlush(f.queue));
    int hostAdds = 0;
    for (; hostAdds < 5000; ++hostAdds) // while the kernel may be running
        counter->fetch_add(1);
    REQUIRE_CL(clFinish(f.queue));
    CHECK(counter->load() == int(n) + hostAdds);
    // Every ticket the kernel drew is distinct: no update was lost to the host's.
    std::vector<int> seen(tickets, tickets + n);
    std::sort(seen.begin(), seen.end());
    CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
    clReleaseKernel(k);
    clSVMFree(f.context, tickets);
    clSVMFree(f.context, counter);
}

// A launch of one work-group runs on one thread on the CPU device, where __global atomics may
// become plain memory operations (devices/cpu/jit/local_atomics.hpp): never those of the
// system's scope on CL_MEM_SVM_ATOMICS memory, which the host updates meanwhile, whether the
// kernel gets the allocation's pointer or a buffer made over it.
TEST_CASE("one work-group's system-scope atomics stay atomic with the host's", "[api][svm]") {
    WithSvm f;
    if (!(f.caps & CL_DEVICE_SVM_ATOMICS))
        return;
    auto* counter = static_cast<std::atomic<int>*>(
        clSVMAlloc(f.context, CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, 64, 0));
    REQUIRE(counter);
    cl_kernel k = f.kernel(R"CLC(
kernel void bump(volatile global atomic_int* c, int n) {
    // c[1]: the host's go, once it is adding to c[0]
    while (!atomic_load_explicit(&c[1], memory_order_acquire, memory_scope_all_svm_devices))
        ;
    for (int i = 0; i < n; ++i)
        atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_all_svm_devices);
}
)CLC",
                           "bump", "-cl-std=CL3.0");
    size_t maxGroup = 0;
    REQUIRE_CL(clGetKernelWorkGroupInfo(k, f.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof maxGroup,
                                        &maxGroup, nullptr));
    const size_t items = std::min<size_t>(256, maxGroup);
    const int perItem = 20000;
    cl_int err;
    cl_mem overSvm = clCreateBuffer(f.context, CL_MEM_USE_HOST_PTR, 2 * sizeof(int), counter, &err);
    REQUIRE_CL(err);
    for (bool viaBuffer : {false, true}) {
        INFO((viaBuffer ? "a buffer over the allocation" : "the allocation's pointer"));
        counter[0].store(0);
        counter[1].store(0);
        if (viaBuffer)
            REQUIRE_CL(clSetKernelArg(k, 0, sizeof overSvm, &overSvm));
        else
            REQUIRE_CL(clSetKernelArgSVMPointer(k, 0, counter));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof perItem, &perItem));
        cl_event done = nullptr;
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &items, &items, 0, nullptr, &done));
        REQUIRE_CL(clFlush(f.queue));
        // The host adds while the kernel runs: the kernel starts adding once the host does.
        int hostAdds = 0;
        cl_int status = CL_QUEUED;
        do {
            for (int i = 0; i < 1000; ++i, ++hostAdds)
                counter->fetch_add(1);
            counter[1].store(1);
            REQUIRE_CL(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                      &status, nullptr));
        } while (status > CL_COMPLETE);
        REQUIRE(status == CL_COMPLETE);
        clReleaseEvent(done);
        CHECK(counter[0].load() == int(items) * perItem + hostAdds);
    }
    clReleaseMemObject(overSvm);
    clReleaseKernel(k);
    clSVMFree(f.context, counter);
}

TEST_CASE("clEnqueueSVMMemcpy, MemFill, MigrateMem and Free", "[api][svm]") {
    WithSvm f;
    constexpr size_t bytes = 1024;
    auto* a = static_cast<unsigned char*>(clSVMAlloc(f.context, 0, bytes, 0));
    auto* b = static_cast<unsigned char*>(clSVMAlloc(f.context, 0, bytes, 0));
    REQUIRE(a);
    REQUIRE(b);
    // Fills with each pattern size, then copies into b (SVM to SVM) and out to the host.
    for (size_t patternSize = 1; patternSize <= 128; patternSize *= 2) {
        std::vector<unsigned char> pattern(patternSize);
        for (size_t i = 0; i < patternSize; ++i)
            pattern[i] = static_cast<unsigned char>(i * 7 + patternSize);
        REQUIRE_CL(clEnqueueSVMMemFill(f.queue, a + 256, pattern.data(), patternSize, 512, 0,
                                       nullptr, nullptr));
        REQUIRE_CL(clEnqueueSVMMemFill(f.queue, a, pattern.data(), 1, 256, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueSVMMemcpy(f.queue, CL_FALSE, b, a, bytes, 0, nullptr, nullptr));
        std::vector<unsigned char> host(bytes, 0xEE);
        REQUIRE_CL(clEnqueueSVMMemcpy(f.queue, CL_TRUE, host.data(), b, 768, 0, nullptr, nullptr));
        INFO("pattern size " << patternSize);
        for (size_t i = 0; i < 256; ++i)
            REQUIRE(host[i] == pattern[0]);
        for (size_t i = 256; i < 768; ++i)
            REQUIRE(host[i] == pattern[(i - 256) % patternSize]);
        CHECK(host[768] == 0xEE);
    }
    const void* ptrs[] = {a + 100, b};
    const size_t sizes[] = {28, 0}; // 0: the whole allocation
    REQUIRE_CL(clEnqueueSVMMigrateMem(f.queue, 2, ptrs, sizes, 0, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueSVMMigrateMem(f.queue, 1, ptrs, nullptr, CL_MIGRATE_MEM_OBJECT_HOST, 0,
                                      nullptr, nullptr));

    // With a callback the application frees; the callback sees the queue and the pointers.
    struct Seen {
        cl_command_queue queue = nullptr;
        std::vector<void*> pointers;
    } seen;
    void* both[] = {a, b};
    auto callback = [](cl_command_queue q, cl_uint num, void** p, void* user) {
        auto* s = static_cast<Seen*>(user);
        s->queue = q;
        s->pointers.assign(p, p + num);
    };
    REQUIRE_CL(clEnqueueSVMFree(f.queue, 2, both, callback, &seen, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(f.queue));
    CHECK(seen.queue == f.queue);
    CHECK(seen.pointers == std::vector<void*>{a, b});
    // Without one the runtime frees them.
    cl_event done = nullptr;
    REQUIRE_CL(clEnqueueSVMFree(f.queue, 2, both, nullptr, nullptr, 0, nullptr, &done));
    REQUIRE_CL(clWaitForEvents(1, &done));
    cl_command_type type = 0;
    REQUIRE_CL(clGetEventInfo(done, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr));
    CHECK(type == CL_COMMAND_SVM_FREE);
    clReleaseEvent(done);
    // Freed: a migration of it is now refused.
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMigrateMem(f.queue, 1, ptrs, nullptr, 0, 0, nullptr, nullptr));
}

TEST_CASE("a buffer over an SVM allocation (CL_MEM_USE_HOST_PTR)", "[api][svm]") {
    WithSvm f;
    constexpr size_t n = 256;
    auto* p = static_cast<int*>(clSVMAlloc(f.context, CL_MEM_READ_WRITE, n * 4, 0));
    REQUIRE(p);
    REQUIRE_CL(clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_WRITE, p, n * 4, 0, nullptr, nullptr));
    std::iota(p, p + n, 100);
    REQUIRE_CL(clEnqueueSVMUnmap(f.queue, p, 0, nullptr, nullptr));
    cl_int err;
    // Its tail, as a buffer: the kernel's writes land in the SVM bytes.
    cl_mem m = clCreateBuffer(f.context, CL_MEM_USE_HOST_PTR, n * 2, p + n / 2, &err);
    REQUIRE_CL(err);
    cl_bool uses = CL_FALSE;
    REQUIRE_CL(clGetMemObjectInfo(m, CL_MEM_USES_SVM_POINTER, sizeof uses, &uses, nullptr));
    CHECK(uses == CL_TRUE);
    cl_kernel k = f.kernel(kAddOne, "add_one");
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof m, &m));
    f.run(k, n / 2);
    REQUIRE_CL(clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_READ, p, n * 4, 0, nullptr, nullptr));
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(p[i] == int(100 + i + (i >= n / 2 ? 1 : 0)));
    }
    REQUIRE_CL(clEnqueueSVMUnmap(f.queue, p, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(f.queue));
    // Larger than what is left of the allocation.
    CHECK(clCreateBuffer(f.context, CL_MEM_USE_HOST_PTR, n * 2 + 4, p + n / 2, &err) == nullptr);
    CHECK(err == CL_INVALID_BUFFER_SIZE);
    // A plain host buffer is not an SVM buffer.
    std::vector<int> host(n);
    cl_mem plain = clCreateBuffer(f.context, CL_MEM_USE_HOST_PTR, n * 4, host.data(), &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clGetMemObjectInfo(plain, CL_MEM_USES_SVM_POINTER, sizeof uses, &uses, nullptr));
    CHECK(uses == CL_FALSE);
    clReleaseMemObject(plain);
    clReleaseKernel(k);
    clReleaseMemObject(m);
    clSVMFree(f.context, p);
}

namespace {

/// A node of the search tree, laid out as the kernel's struct (64-bit pointers).
struct Node {
    int64_t key;
    int64_t value;
    Node* left;
    Node* right;
};

const char* kTreeSearch = R"CLC(
typedef struct Node {
    long key;
    long value;
    global struct Node* left;
    global struct Node* right;
} Node;

// Follows the host's pointers down from root: the nodes are reached only through them.
kernel void search(global const Node* root, global const long* keys, global long* found) {
    size_t i = get_global_id(0);
    long k = keys[i];
    long r = -1;
    for (global const Node* n = root; n; n = k < n->key ? n->left : n->right)
        if (n->key == k) {
            r = n->value;
            break;
        }
    found[i] = r;
}
)CLC";

} // namespace

TEST_CASE("tree search: a binary search tree built with host pointers in SVM", "[api][svm]") {
    WithSvm f;
    constexpr size_t nodes = 5000, queries = 8192;
    const bool fine = f.caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
    auto* pool = static_cast<Node*>(
        clSVMAlloc(f.context, fine ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0, nodes * sizeof(Node), 0));
    auto* keys = static_cast<int64_t*>(clSVMAlloc(f.context, 0, queries * 8, 0));
    auto* found = static_cast<int64_t*>(clSVMAlloc(f.context, 0, queries * 8, 0));
    REQUIRE(pool);
    REQUIRE(keys);
    REQUIRE(found);

    // Insert random distinct keys in random order (a tree of uneven depth), on the host.
    std::mt19937_64 rng(16);
    std::vector<int64_t> inserted(nodes);
    for (size_t i = 0; i < nodes; ++i)
        inserted[i] = int64_t(i) * 3 + 1;
    std::shuffle(inserted.begin(), inserted.end(), rng);
    if (!fine)
        REQUIRE_CL(clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_WRITE, pool, nodes * sizeof(Node), 0,
                                   nullptr, nullptr));
    for (size_t i = 0; i < nodes; ++i) {
        pool[i] = Node{inserted[i], inserted[i] * 10, nullptr, nullptr};
        if (i == 0)
            continue;
        Node* n = pool;
        for (;;) {
            Node*& next = inserted[i] < n->key ? n->left : n->right;
            if (!next) {
                next = &pool[i];
                break;
            }
            n = next;
        }
    }
    if (!fine)
        REQUIRE_CL(clEnqueueSVMUnmap(f.queue, pool, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, keys, queries * 8,
                               0, nullptr, nullptr));
    for (size_t i = 0; i < queries; ++i)
        keys[i] = int64_t(rng() % (nodes * 3 + 10)); // about a third are in the tree
    REQUIRE_CL(clEnqueueSVMUnmap(f.queue, keys, 0, nullptr, nullptr));

    cl_kernel k = f.kernel(kTreeSearch, "search");
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 0, pool));
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 1, keys));
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 2, found));
    // The kernel reaches every node but the root only through pointers stored in the pool.
    void* indirect[] = {pool};
    REQUIRE_CL(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof indirect, indirect));
    f.run(k, queries);

    REQUIRE_CL(
        clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_READ, found, queries * 8, 0, nullptr, nullptr));
    size_t hits = 0;
    for (size_t i = 0; i < queries; ++i) {
        const bool present = keys[i] % 3 == 1 && keys[i] < int64_t(nodes * 3);
        INFO("query " << i << " key " << keys[i]);
        REQUIRE(found[i] == (present ? keys[i] * 10 : -1));
        hits += present;
    }
    CHECK(hits > queries / 5);
    REQUIRE_CL(clEnqueueSVMUnmap(f.queue, found, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(f.queue));
    clReleaseKernel(k);
    clSVMFree(f.context, found);
    clSVMFree(f.context, keys);
    clSVMFree(f.context, pool);
}

TEST_CASE("fine-grain system SVM: any host pointer as a kernel argument", "[api][svm]") {
    WithSvm f;
    cl_kernel k = f.kernel(kAddOne, "add_one");
    cl_bool on = CL_TRUE;
    if (!(f.caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM)) {
        CHECK_CL_ERR(
            CL_INVALID_OPERATION,
            clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof on, &on));
        std::vector<int> host(16);
        CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(k, 0, host.data()));
        clReleaseKernel(k);
        return;
    }
    REQUIRE_CL(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof on, &on));
    std::vector<int> host(777);
    std::iota(host.begin(), host.end(), -5);
    REQUIRE_CL(clSetKernelArgSVMPointer(k, 0, host.data()));
    f.run(k, host.size());
    for (size_t i = 0; i < host.size(); ++i)
        REQUIRE(host[i] == int(i) - 4);
    clReleaseKernel(k);
}

TEST_CASE("SVM errors", "[api][svm]") {
    WithSvm f;
    cl_ulong maxAlloc = 0;
    REQUIRE_CL(clGetDeviceInfo(f.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxAlloc, &maxAlloc,
                               nullptr));
    // clSVMAlloc answers NULL for each of the spec's failures.
    CHECK(clSVMAlloc(nullptr, 0, 64, 0) == nullptr);
    CHECK(clSVMAlloc(f.context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, 0) == nullptr);
    CHECK(clSVMAlloc(f.context, CL_MEM_SVM_ATOMICS, 64, 0) == nullptr); // without fine grain
    CHECK(clSVMAlloc(f.context, cl_svm_mem_flags(1) << 40, 64, 0) == nullptr);
    CHECK(clSVMAlloc(f.context, 0, 0, 0) == nullptr);
    CHECK(clSVMAlloc(f.context, 0, size_t(maxAlloc) + 1, 0) == nullptr);
    CHECK(clSVMAlloc(f.context, 0, 64, 3) == nullptr);        // not a power of two
    CHECK(clSVMAlloc(f.context, 0, 64, 1u << 20) == nullptr); // above the largest alignment

    auto* p = static_cast<char*>(clSVMAlloc(f.context, 0, 256, 0));
    REQUIRE(p);
    int pattern = 7;
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemcpy(f.queue, CL_TRUE, nullptr, p, 4, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemcpy(f.queue, CL_TRUE, p, nullptr, 4, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_MEM_COPY_OVERLAP,
                 clEnqueueSVMMemcpy(f.queue, CL_TRUE, p + 8, p, 16, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemFill(f.queue, nullptr, &pattern, 4, 16, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemFill(f.queue, p, nullptr, 4, 16, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemFill(f.queue, p, &pattern, 3, 12, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemFill(f.queue, p + 2, &pattern, 4, 16, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemFill(f.queue, p, &pattern, 4, 10, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_READ, nullptr, 4, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_READ, p, 0, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueSVMMap(f.queue, CL_TRUE, cl_map_flags(1) << 20, p, 4, 0,
                                                   nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_READ, p, 257, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueSVMUnmap(f.queue, nullptr, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueSVMFree(f.queue, 0, reinterpret_cast<void**>(&p),
                                                    nullptr, nullptr, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMFree(f.queue, 1, nullptr, nullptr, nullptr, 0, nullptr, nullptr));
    void* inside[] = {p + 8}; // not what clSVMAlloc returned
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMFree(f.queue, 1, inside, nullptr, nullptr, 0, nullptr, nullptr));
    const void* mig[] = {p + 200};
    const size_t tooLong[] = {100};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMigrateMem(f.queue, 0, mig, nullptr, 0, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMigrateMem(f.queue, 1, mig, tooLong, 0, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMigrateMem(f.queue, 1, mig, nullptr, cl_mem_migration_flags(1) << 10,
                                        0, nullptr, nullptr));
    int notSvm = 0;
    const void* host[] = {&notSvm};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMigrateMem(f.queue, 1, host, nullptr, 0, 0, nullptr, nullptr));

    // clSetKernelArgSVMPointer: a bad index, a non-pointer argument.
    cl_kernel k = f.kernel("kernel void k(global int* p, int v) { *p = v; }", "k");
    CHECK_CL_ERR(CL_INVALID_ARG_INDEX, clSetKernelArgSVMPointer(k, 2, p));
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(k, 1, p));
    CHECK_CL_ERR(CL_INVALID_KERNEL, clSetKernelArgSVMPointer(nullptr, 0, p));
    CHECK_CL_ERR(CL_INVALID_VALUE, clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 3, inside));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof inside, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clSetKernelExecInfo(k, 0x7777, sizeof inside, inside));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, 1, inside));
    // NULL is a valid SVM pointer argument.
    CHECK_CL_ERR(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, nullptr));

    // A pointer from another context: refused wherever it is checked.
    cl_int err;
    cl_context other = clCreateContext(nullptr, 1, &f.device, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    auto* q = static_cast<char*>(clSVMAlloc(other, 0, 64, 0));
    REQUIRE(q);
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(k, 0, q));
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(k, 0, q + 16));
    const void* foreign[] = {q};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMigrateMem(f.queue, 1, foreign, nullptr, 0, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemFill(f.queue, q, &pattern, 4, 16, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMemcpy(f.queue, CL_TRUE, p, q, 16, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueSVMMap(f.queue, CL_TRUE, CL_MAP_READ, q, 16, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueSVMFree(f.queue, 1, reinterpret_cast<void**>(&q),
                                                    nullptr, nullptr, 0, nullptr, nullptr));
    void* foreignList[] = {q};
    CHECK_CL_ERR(CL_INVALID_VALUE, clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS,
                                                       sizeof foreignList, foreignList));
    clSVMFree(f.context, q); // the wrong context: reported, nothing freed
    std::memset(q, 1, 64);   // still allocated
    clSVMFree(other, q);
    clReleaseContext(other);

    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clEnqueueSVMMemcpy(nullptr, CL_TRUE, p, p + 64, 4, 0, nullptr, nullptr));
    clReleaseKernel(k);
    clSVMFree(f.context, p);
    clSVMFree(f.context, nullptr); // a no-op
}

TEST_CASE("SVM on a device that supports none", "[api][svm]") {
    cl_platform_id platform = platformUnderTest();
    cl_uint n = 0;
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> devices(n);
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr));
    auto none = std::find_if(devices.begin(), devices.end(),
                             [](cl_device_id d) { return svmCaps(d) == 0; });
    if (none == devices.end()) {
        WARN("every device of the platform supports SVM: nothing to refuse");
        return;
    }
    cl_device_id d = *none;
    cl_int err;
    cl_context ctx = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, nullptr, &err);
    REQUIRE_CL(err);
    CHECK(clSVMAlloc(ctx, 0, 64, 0) == nullptr);
    int x = 0, y = 0;
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueSVMMemcpy(q, CL_TRUE, &x, &y, 4, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, &x, 4, 0, nullptr, nullptr));
    cl_program p = buildProgram(ctx, d, kAddOne);
    cl_kernel k = clCreateKernel(p, "add_one", &err);
    REQUIRE_CL(err);
    CHECK_CL_ERR(CL_INVALID_OPERATION, clSetKernelArgSVMPointer(k, 0, &x));
    void* list[] = {&x};
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof list, list));
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}
