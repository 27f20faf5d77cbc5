// seed-memset: the smallest complete OpenCL program: each work-item writes its global id into a
// buffer, which the host maps, checks and unmaps.
#include "seed_common.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

using namespace duet::seeds;

static const char* kSource = R"CLC(
__kernel void write_ids(__global uint *out)
{
    size_t i = get_global_id(0);
    out[i] = (uint)i;
}
)CLC";

int main(int argc, char** argv) {
    std::string platformSubstr = "Duet";
    size_t count = 1 << 20;
    CLI::App app{"Writes each work-item's global id into a uint buffer and checks it."};
    app.add_option("--platform", platformSubstr, "platform whose name contains this")
        ->capture_default_str();
    app.add_option("-n,--count", count, "work-items (= buffer elements)")
        ->capture_default_str()
        ->check(CLI::Range(size_t(1), size_t(1) << 30));
    CLI11_PARSE(app, argc, argv);

    return runMain("seed-memset", [&] {
        cl_platform_id platform = findPlatform(platformSubstr);
        cl_device_id device = firstDevice(platform, CL_DEVICE_TYPE_CPU, true);
        Context context = createContext(platform, device);
        Queue queue(createQueue(context, device, 0));
        Program program(buildProgram(context, device, kSource, ""));
        Kernel kernel = createKernel(program, "write_ids");

        cl_int err = CL_SUCCESS;
        Buffer out(clCreateBuffer(context, CL_MEM_WRITE_ONLY | CL_MEM_ALLOC_HOST_PTR,
                                  count * sizeof(cl_uint), nullptr, &err));
        check(err, "clCreateBuffer");
        setArg(kernel, 0, out.get());
        check(
            clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &count, nullptr, 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel");

        // Blocking map: returns once the kernel's writes are visible to the host.
        auto* ids = static_cast<cl_uint*>(clEnqueueMapBuffer(queue, out, CL_TRUE, CL_MAP_READ, 0,
                                                             count * sizeof(cl_uint), 0, nullptr,
                                                             nullptr, &err));
        check(err, "clEnqueueMapBuffer");
        size_t bad = 0, firstBad = 0;
        for (size_t i = 0; i < count; ++i) {
            if (ids[i] != static_cast<cl_uint>(i) && bad++ == 0)
                firstBad = i;
        }
        cl_uint firstBadValue = bad ? ids[firstBad] : 0;
        check(clEnqueueUnmapMemObject(queue, out, ids, 0, nullptr, nullptr),
              "clEnqueueUnmapMemObject");
        check(clFinish(queue), "clFinish");

        std::string where = platformName(platform) + " / " + deviceName(device);
        if (bad) {
            std::printf("seed-memset: FAIL %zu of %zu ids wrong (first at %zu: %u) on %s\n", bad,
                        count, firstBad, firstBadValue, where.c_str());
            return 1;
        }
        std::printf("seed-memset: PASS %zu ids written and mapped back on %s\n", count,
                    where.c_str());
        return 0;
    });
}
