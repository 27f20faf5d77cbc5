// seed-tree-search: OpenCL 2.0 shared virtual memory as the AMD guide shows it: a binary search
// tree built on the host with ordinary pointers inside one SVM allocation, searched by a kernel
// that follows those pointers; checked against the host's own search.
#include "seed_common.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using namespace duet::seeds;

static const char* kSource = R"CLC(
typedef struct Node {
    long key;
    long value;
    global struct Node* left;
    global struct Node* right;
} Node;

kernel void search(global const Node* root, global const long* keys, global long* found)
{
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

namespace {

/// The kernel's Node on a 64-bit host.
struct Node {
    int64_t key;
    int64_t value;
    Node* left;
    Node* right;
};

/// Frees an SVM allocation with its context.
struct Svm {
    cl_context context;
    void* p;
    ~Svm() {
        if (p)
            clSVMFree(context, p);
    }
};

void* svmAlloc(cl_context context, size_t bytes) {
    void* p = clSVMAlloc(context, CL_MEM_READ_WRITE, bytes, 0);
    if (!p)
        throw ClError("clSVMAlloc(" + std::to_string(bytes) + " bytes)", CL_OUT_OF_RESOURCES);
    return p;
}

} // namespace

int main(int argc, char** argv) {
    std::string platformSubstr = "Duet";
    size_t nodes = 100000, queries = 1 << 20;
    unsigned seed = 2013;
    CLI::App app{"Searches a host-built binary tree in SVM from a kernel (coarse-grain SVM)."};
    app.add_option("--platform", platformSubstr, "platform whose name contains this")
        ->capture_default_str();
    app.add_option("--nodes", nodes, "keys in the tree")
        ->capture_default_str()
        ->check(CLI::Range(size_t(1), size_t(1) << 24));
    app.add_option("--queries", queries, "keys searched (work-items)")
        ->capture_default_str()
        ->check(CLI::Range(size_t(1), size_t(1) << 26));
    app.add_option("--seed", seed, "random seed")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    return runMain("seed-tree-search", [&] {
        cl_platform_id platform = findPlatform(platformSubstr);
        cl_device_id device = firstDevice(platform, CL_DEVICE_TYPE_CPU, true);
        cl_device_svm_capabilities caps = 0;
        check(clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr),
              "clGetDeviceInfo(CL_DEVICE_SVM_CAPABILITIES)");
        std::string where = platformName(platform) + " / " + deviceName(device);
        if (!(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
            std::printf("seed-tree-search: FAIL %s does not support SVM\n", where.c_str());
            return 1;
        }
        Context context = createContext(platform, device);
        Queue queue(createQueue(context, device, 0));
        Program program(buildProgram(context, device, kSource, "-cl-std=CL2.0"));
        Kernel kernel = createKernel(program, "search");

        Svm pool{context, svmAlloc(context, nodes * sizeof(Node))};
        Svm keys{context, svmAlloc(context, queries * sizeof(int64_t))};
        Svm found{context, svmAlloc(context, queries * sizeof(int64_t))};
        auto* tree = static_cast<Node*>(pool.p);
        auto* key = static_cast<int64_t*>(keys.p);

        // Random distinct keys inserted in random order, with host pointers: coarse-grain SVM
        // is the host's between a map and its unmap.
        std::mt19937_64 rng(seed);
        std::vector<int64_t> order(nodes);
        for (size_t i = 0; i < nodes; ++i)
            order[i] = int64_t(i) * 2 + 1; // odd keys are in the tree
        std::shuffle(order.begin(), order.end(), rng);
        check(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, tree,
                              nodes * sizeof(Node), 0, nullptr, nullptr),
              "clEnqueueSVMMap(tree)");
        size_t depth = 0;
        for (size_t i = 0; i < nodes; ++i) {
            tree[i] = Node{order[i], order[i] * 7, nullptr, nullptr};
            Node* n = tree;
            for (size_t d = 1; i > 0; ++d) {
                Node*& next = order[i] < n->key ? n->left : n->right;
                if (!next) {
                    next = &tree[i];
                    depth = std::max(depth, d);
                    break;
                }
                n = next;
            }
        }
        check(clEnqueueSVMUnmap(queue, tree, 0, nullptr, nullptr), "clEnqueueSVMUnmap(tree)");
        check(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, key,
                              queries * sizeof(int64_t), 0, nullptr, nullptr),
              "clEnqueueSVMMap(keys)");
        for (size_t i = 0; i < queries; ++i)
            key[i] = int64_t(rng() % (2 * nodes + 2));
        check(clEnqueueSVMUnmap(queue, key, 0, nullptr, nullptr), "clEnqueueSVMUnmap(keys)");

        check(clSetKernelArgSVMPointer(kernel, 0, tree), "clSetKernelArgSVMPointer(root)");
        check(clSetKernelArgSVMPointer(kernel, 1, key), "clSetKernelArgSVMPointer(keys)");
        check(clSetKernelArgSVMPointer(kernel, 2, found.p), "clSetKernelArgSVMPointer(found)");
        // Every node below the root is reached through pointers the kernel loads.
        void* indirect[] = {tree};
        check(clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof indirect, indirect),
              "clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS)");
        check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &queries, nullptr, 0, nullptr,
                                     nullptr),
              "clEnqueueNDRangeKernel");

        check(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, found.p, queries * sizeof(int64_t), 0,
                              nullptr, nullptr),
              "clEnqueueSVMMap(found)");
        check(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, key, queries * sizeof(int64_t), 0,
                              nullptr, nullptr),
              "clEnqueueSVMMap(keys, read)");
        const auto* got = static_cast<const int64_t*>(found.p);
        size_t bad = 0, hits = 0, firstBad = 0;
        for (size_t i = 0; i < queries; ++i) {
            const bool present = key[i] % 2 == 1 && key[i] < int64_t(2 * nodes);
            hits += present;
            if (got[i] != (present ? key[i] * 7 : -1) && bad++ == 0)
                firstBad = i;
        }
        check(clEnqueueSVMUnmap(queue, found.p, 0, nullptr, nullptr), "clEnqueueSVMUnmap(found)");
        check(clEnqueueSVMUnmap(queue, key, 0, nullptr, nullptr), "clEnqueueSVMUnmap(keys)");
        check(clFinish(queue), "clFinish");
        if (bad) {
            std::printf("seed-tree-search: FAIL %zu of %zu searches wrong (first: query %zu) on "
                        "%s\n",
                        bad, queries, firstBad, where.c_str());
            return 1;
        }
        std::printf("seed-tree-search: PASS %zu searches (%zu hits) in a tree of %zu nodes, "
                    "depth %zu, on %s\n",
                    queries, hits, nodes, depth, where.c_str());
        return 0;
    });
}
