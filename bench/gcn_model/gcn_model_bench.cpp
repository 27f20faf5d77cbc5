// duet-gcn-model-bench: how fast the software GCN model runs LLVM-compiled gfx900 code, in
// wave-instructions/s and VALU lane-ops/s, on one host thread and on all of them.
#include "bench_workloads.hpp"
#include "isa.hpp"

#include <cstring>
#include <fstream>
#include <thread>

using namespace gcnbench;

namespace {

const char* const kSource = R"(
typedef unsigned int uint;
typedef float float4 __attribute__((ext_vector_type(4)));
typedef float float3 __attribute__((ext_vector_type(3)));
#define LID (__builtin_amdgcn_workitem_id_x())
#define GRP (__builtin_amdgcn_workgroup_id_x())

// The N-body step of bench/runtime, with the tile size fixed at the work-group size (256).
__kernel void nbody_step(__global const float4* pos, __global const float4* vel,
                         __global float4* posOut, __global float4* velOut,
                         uint bodies, float dt, float eps2) {
    __local float4 tile[256];
    uint lid = LID;
    uint i = GRP * 256 + lid;
    float4 me = pos[i];
    float3 acc = (float3)(0.0f);
    for (uint base = 0; base < bodies; base += 256) {
        tile[lid] = pos[base + lid];
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
        __builtin_amdgcn_s_barrier();
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
        for (uint j = 0; j < 256; ++j) {
            float4 other = tile[j];
            float3 d = other.xyz - me.xyz;
            float invR = __builtin_amdgcn_rsqf(d.x * d.x + d.y * d.y + d.z * d.z + eps2);
            acc += (other.w * invR * invR * invR) * d;
        }
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
        __builtin_amdgcn_s_barrier();
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    }
    float4 v = vel[i];
    v.xyz += acc * dt;
    me.xyz += v.xyz * dt;
    posOut[i] = me;
    velOut[i] = v;
}

__kernel void triad(__global float* a, __global const float* b, __global const float* c, float s) {
    uint i = GRP * 256 + LID;
    a[i] = b[i] + s * c[i];
}
)";

/// Saves a kernel for duet-gcn-model-replay: a header of descriptor fields, then the code.
bool saveKernel(const std::string& path, const Kernel& k) {
    std::ofstream out(path, std::ios::binary);
    uint64_t head[3] = {0x6b6e6367'74657564ull, k.textSize,
                        k.entry - reinterpret_cast<uint64_t>(k.text.get())};
    uint32_t fields[7] = {
        k.groupSegmentSize, k.privateSegmentSize, k.kernargSize, k.rsrc1, k.rsrc2, k.rsrc3,
        k.codeProperties};
    out.write(reinterpret_cast<const char*>(head), sizeof head);
    out.write(reinterpret_cast<const char*>(fields), sizeof fields);
    out.write(reinterpret_cast<const char*>(k.text.get()), std::streamsize(k.textSize));
    return bool(out);
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string dump;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!std::strcmp(argv[i], "--dump") && i + 1 < argc) {
            dump = argv[++i];
        } else if (!std::strcmp(argv[i], "--list-opcodes")) {
            // Which gfx900 mnemonics the model implements, per encoding.
            const char* enc = "";
            unsigned done = 0, total = 0;
            std::string missing;
            auto flush = [&] {
                if (*enc)
                    std::printf("%-8s %3u/%3u implemented; not: %s\n", enc, done, total,
                                missing.empty() ? "-" : missing.c_str());
            };
            for (const auto& c : duet::gcn::model::opcodeCoverage()) {
                if (std::strcmp(c.encoding, enc)) {
                    flush();
                    enc = c.encoding, done = total = 0, missing.clear();
                }
                ++total;
                if (c.implemented)
                    ++done;
                else
                    missing += std::string(missing.empty() ? "" : " ") + c.mnemonic;
            }
            flush();
            return 0;
        } else {
            std::fprintf(stderr, "usage: %s [--quick] [--list-opcodes] [--dump DIR]\n", argv[0]);
            return 2;
        }
    }
    const unsigned all = std::max(1u, std::thread::hardware_concurrency());
    std::printf("Software GCN model (gfx900) speed. No PoCL comparison: PoCL has no GCN model to "
                "run these code objects on.\nHost threads available: %u\n\n",
                all);
    Kernel nbody = compileKernel(kSource, "nbody_step", {"-cl-fast-relaxed-math"});
    Kernel triad = compileKernel(kSource, "triad");
    if (!dump.empty()) {
        if (!saveKernel(dump + "/nbody_step.gcnk", nbody) ||
            !saveKernel(dump + "/triad.gcnk", triad)) {
            std::fprintf(stderr, "cannot write kernels to %s\n", dump.c_str());
            return 1;
        }
        std::printf("kernels saved to %s (run duet-gcn-model-replay %s)\n\n", dump.c_str(),
                    dump.c_str());
    }
    std::vector<unsigned> threads = {1};
    if (all > 1)
        threads.push_back(all);
    return runWorkloads(nbody, triad, quick, threads);
}
