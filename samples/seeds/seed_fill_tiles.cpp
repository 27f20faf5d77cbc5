// seed-fill-tiles: a 2D NDRange of 16x16 work-groups fills each tile of an image-sized buffer
// with its group id; the kernel is timed by event profiling and every element is checked.
#include "seed_common.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

using namespace duet::seeds;

static const char* kSource = R"CLC(
#if !defined(TILE_DIM_X) || !defined(TILE_DIM_Y)
#error "build with -D TILE_DIM_X=<n> -D TILE_DIM_Y=<n>"
#endif

// The tile shape is fixed at build time, so the kernel can promise it to the compiler.
__kernel __attribute__((reqd_work_group_size(TILE_DIM_X, TILE_DIM_Y, 1)))
void fill_tiles(__global uint *image, uint width)
{
    uint x = (uint)get_global_id(0);
    uint y = (uint)get_global_id(1);
    uint tile = (uint)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    image[y * width + x] = tile;
}
)CLC";

static constexpr size_t kTileX = 16, kTileY = 16;

int main(int argc, char** argv) {
    std::string platformSubstr = "Duet";
    size_t width = 2048, height = 1536;
    CLI::App app{"Fills the 16x16 tiles of a 2D buffer with their work-group id."};
    app.add_option("--platform", platformSubstr, "platform whose name contains this")
        ->capture_default_str();
    app.add_option("--width", width, "columns (a multiple of 16)")
        ->capture_default_str()
        ->check(CLI::Range(size_t(kTileX), size_t(1) << 15));
    app.add_option("--height", height, "rows (a multiple of 16)")
        ->capture_default_str()
        ->check(CLI::Range(size_t(kTileY), size_t(1) << 15));
    CLI11_PARSE(app, argc, argv);
    if (width % kTileX || height % kTileY) {
        std::fprintf(stderr, "seed-fill-tiles: --width and --height must be multiples of 16\n");
        return 2;
    }

    return runMain("seed-fill-tiles", [&] {
        cl_platform_id platform = findPlatform(platformSubstr);
        cl_device_id device = firstDevice(platform, CL_DEVICE_TYPE_CPU, true);
        Context context = createContext(platform, device);
        Queue queue(createQueue(context, device, CL_QUEUE_PROFILING_ENABLE));
        Program program(buildProgram(context, device, kSource,
                                     "-D TILE_DIM_X=" + std::to_string(kTileX) +
                                         " -D TILE_DIM_Y=" + std::to_string(kTileY)));
        Kernel kernel = createKernel(program, "fill_tiles");

        const size_t count = width * height;
        cl_int err = CL_SUCCESS;
        Buffer image(
            clCreateBuffer(context, CL_MEM_WRITE_ONLY, count * sizeof(cl_uint), nullptr, &err));
        check(err, "clCreateBuffer");
        // A value no tile can have, so an element the kernel skipped shows up in the check.
        const cl_uint poison = 0xdeadbeefu;
        check(clEnqueueFillBuffer(queue, image, &poison, sizeof poison, 0, count * sizeof(cl_uint),
                                  0, nullptr, nullptr),
              "clEnqueueFillBuffer");
        setArg(kernel, 0, image.get());
        setArg(kernel, 1, cl_uint(width));

        const size_t global[2] = {width, height};
        const size_t local[2] = {kTileX, kTileY};
        cl_event raw = nullptr;
        check(clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, local, 0, nullptr, &raw),
              "clEnqueueNDRangeKernel");
        Event done(raw);
        check(clWaitForEvents(1, &raw), "clWaitForEvents");
        cl_ulong start = 0, end = 0;
        check(clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                      nullptr),
              "clGetEventProfilingInfo(CL_PROFILING_COMMAND_START)");
        check(clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
              "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)");

        std::vector<cl_uint> out(count);
        check(clEnqueueReadBuffer(queue, image, CL_TRUE, 0, count * sizeof(cl_uint), out.data(), 0,
                                  nullptr, nullptr),
              "clEnqueueReadBuffer");

        const size_t tilesX = width / kTileX;
        size_t bad = 0, badX = 0, badY = 0;
        for (size_t y = 0; y < height; ++y) {
            for (size_t x = 0; x < width; ++x) {
                cl_uint want = cl_uint((y / kTileY) * tilesX + x / kTileX);
                if (out[y * width + x] != want && bad++ == 0) {
                    badX = x;
                    badY = y;
                }
            }
        }
        std::string where = platformName(platform) + " / " + deviceName(device);
        if (bad) {
            std::printf("seed-fill-tiles: FAIL %zu of %zu elements wrong (first at %zu,%zu: %u, "
                        "want %u) on %s\n",
                        bad, count, badX, badY, out[badY * width + badX],
                        cl_uint((badY / kTileY) * tilesX + badX / kTileX), where.c_str());
            return 1;
        }
        if (end < start) {
            std::printf("seed-fill-tiles: FAIL profiling END %llu precedes START %llu on %s\n",
                        (unsigned long long)end, (unsigned long long)start, where.c_str());
            return 1;
        }
        std::printf("seed-fill-tiles: PASS %zux%zu, %zu tiles of 16x16 filled, kernel %.3f ms "
                    "(profiling) on %s\n",
                    width, height, tilesX * (height / kTileY), double(end - start) * 1e-6,
                    where.c_str());
        return 0;
    });
}
