// duet-gcn-model-replay: the model benchmark on kernels saved by `duet-gcn-model-bench --dump`,
// without LLVM, so the model's scaling can be measured on hosts that have no LLVM installed.
// Usage: duet-gcn-model-replay DIR [--quick] [--threads 1,2,4,...]
#include "bench_workloads.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

using namespace gcnbench;

namespace {

bool loadSaved(const std::string& path, Kernel& k) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint64_t head[3];
    uint32_t fields[7];
    if (bytes.size() < sizeof head + sizeof fields)
        return false;
    std::memcpy(head, bytes.data(), sizeof head);
    std::memcpy(fields, bytes.data() + sizeof head, sizeof fields);
    if (head[0] != 0x6b6e6367'74657564ull || bytes.size() != sizeof head + sizeof fields + head[1])
        return false;
    Kernel f;
    f.groupSegmentSize = fields[0], f.privateSegmentSize = fields[1], f.kernargSize = fields[2];
    f.rsrc1 = fields[3], f.rsrc2 = fields[4], f.rsrc3 = fields[5];
    f.codeProperties = uint16_t(fields[6]);
    k = loadKernel(reinterpret_cast<const uint8_t*>(bytes.data()) + sizeof head + sizeof fields,
                   head[1], head[2], f);
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DIR [--quick] [--threads 1,2,4,...]\n", argv[0]);
        return 2;
    }
    std::string dir = argv[1];
    bool quick = false;
    const unsigned all = std::max(1u, std::thread::hardware_concurrency());
    std::vector<unsigned> threads = {1};
    if (all > 1)
        threads.push_back(all);
    for (int i = 2; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads.clear();
            std::stringstream list(argv[++i]);
            for (std::string n; std::getline(list, n, ',');)
                if (int v = std::atoi(n.c_str()); v > 0)
                    threads.push_back(unsigned(v));
            if (threads.empty())
                threads.push_back(1);
        } else {
            std::fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    Kernel nbody, triad;
    if (!loadSaved(dir + "/nbody_step.gcnk", nbody) || !loadSaved(dir + "/triad.gcnk", triad)) {
        std::fprintf(stderr, "no saved kernels in %s (duet-gcn-model-bench --dump %s)\n",
                     dir.c_str(), dir.c_str());
        return 1;
    }
    std::printf(
        "Software GCN model (gfx900) speed, replayed code objects. No PoCL comparison: PoCL "
        "has no GCN model.\nHost threads available: %u\n\n",
        all);
    return runWorkloads(nbody, triad, quick, threads);
}
