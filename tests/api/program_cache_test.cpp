// The persistent program cache (DUET_CACHE*): hits, misses, corrupt entries, off, size bound,
// concurrent processes; each case in its own temporary cache folder, seen through DUET_LOG.
#include "support/capture.hpp"
#include "support/cl_test.hpp"
#include "support/process.hpp"

#include <catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <stdlib.h>

using namespace duet::test;
namespace fs = std::filesystem;

namespace {

/// A fresh cache folder for one test case, the cache on and DUET_LOG set while it lives.
struct TempCache {
    fs::path dir;
    TempCache() {
        char tmpl[] = "/tmp/duet-cache-test-XXXXXX";
        REQUIRE(mkdtemp(tmpl));
        dir = fs::path(tmpl) / "cache"; // not there yet: the runtime makes it
        setenv("DUET_CACHE_DIR", dir.c_str(), 1);
        setenv("DUET_LOG", "1", 1);
        unsetenv("DUET_CACHE");
        unsetenv("DUET_CACHE_MAX_MB");
    }
    ~TempCache() {
        setenv("DUET_CACHE", "0", 1);
        unsetenv("DUET_CACHE_DIR");
        unsetenv("DUET_LOG");
        std::error_code ec;
        fs::remove_all(dir.parent_path(), ec);
    }
    /// The folder's files but the CPU device's code entries (codeEntries()).
    std::vector<fs::path> entries() const { return files(false); }
    /// The code cache's entries (a kernel's optimised machine code each).
    std::vector<fs::path> codeEntries() const { return files(true); }
    std::vector<fs::path> files(bool code) const {
        std::vector<fs::path> out;
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            if ((it->path().extension() == ".duetcode") == code)
                out.push_back(it->path());
        return out;
    }
};

const char* kSource = "#warning a line for the build log\n"
                      "__kernel void scale(__global int* out) {\n"
                      "    size_t i = get_global_id(0);\n"
                      "    out[i] = (int)i * FACTOR;\n"
                      "}\n";

struct Built {
    cl_int status = CL_SUCCESS;
    std::string log;    ///< CL_PROGRAM_BUILD_LOG
    std::string stderr; ///< what the runtime wrote under DUET_LOG
    std::vector<int> result;
};

/// Builds `source` with `options` in a new program and runs kernel "scale" over 64 items.
Built buildAndRun(WithQueue& cl, const std::string& source, const std::string& options) {
    Built b;
    cl_int err = CL_SUCCESS;
    const char* text = source.c_str();
    cl_program p = clCreateProgramWithSource(cl.context, 1, &text, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    b.stderr = captureFd(
        2, [&] { b.status = clBuildProgram(p, 1, &cl.device, options.c_str(), nullptr, nullptr); });
    b.log = buildLog(p, cl.device);
    if (b.status == CL_SUCCESS) {
        cl_kernel k = clCreateKernel(p, "scale", &err);
        REQUIRE(err == CL_SUCCESS);
        const size_t n = 64;
        cl_mem out = cl.buffer(n * sizeof(int));
        REQUIRE(clSetKernelArg(k, 0, sizeof out, &out) == CL_SUCCESS);
        REQUIRE(clEnqueueNDRangeKernel(cl.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr) ==
                CL_SUCCESS);
        b.result = cl.read<int>(out, n);
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
    return b;
}

bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

void checkScaled(const std::vector<int>& result, int factor) {
    REQUIRE(result.size() == 64);
    for (size_t i = 0; i < result.size(); ++i)
        REQUIRE(result[i] == static_cast<int>(i) * factor);
}

void overwrite(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
}

} // namespace

TEST_CASE("A second build of the same program comes from the cache, with its log", "[cache]") {
    TempCache cache;
    WithQueue cl;
    Built first = buildAndRun(cl, kSource, "-D FACTOR=3");
    REQUIRE(first.status == CL_SUCCESS);
    INFO(first.stderr);
    CHECK(has(first.stderr, "program cache: miss"));
    CHECK(has(first.stderr, "program cache: stored"));
    CHECK(has(first.log, "a line for the build log"));
    checkScaled(first.result, 3);
    REQUIRE(cache.entries().size() == 1);

    Built second = buildAndRun(cl, kSource, "-D FACTOR=3");
    REQUIRE(second.status == CL_SUCCESS);
    INFO(second.stderr);
    CHECK(has(second.stderr, "program cache: hit"));
    CHECK_FALSE(has(second.stderr, "program cache: miss"));
    CHECK(second.log == first.log);
    checkScaled(second.result, 3);
    CHECK(cache.entries().size() == 1);
}

TEST_CASE("Other options or another source miss the cache", "[cache]") {
    TempCache cache;
    WithQueue cl;
    REQUIRE(buildAndRun(cl, kSource, "-D FACTOR=3").status == CL_SUCCESS);

    Built otherMacro = buildAndRun(cl, kSource, "-D FACTOR=5");
    INFO(otherMacro.stderr);
    CHECK(has(otherMacro.stderr, "program cache: miss"));
    checkScaled(otherMacro.result, 5);

    Built otherOption = buildAndRun(cl, kSource, "-D FACTOR=3 -cl-opt-disable");
    CHECK(has(otherOption.stderr, "program cache: miss"));
    checkScaled(otherOption.result, 3);

    std::string changed = kSource;
    changed.replace(changed.find("* FACTOR"), 8, "* FACTOR + 1");
    Built otherSource = buildAndRun(cl, changed, "-D FACTOR=3");
    CHECK(has(otherSource.stderr, "program cache: miss"));
    for (size_t i = 0; i < otherSource.result.size(); ++i)
        REQUIRE(otherSource.result[i] == static_cast<int>(i) * 3 + 1);

    // A variable that changes generated code is part of the key too.
    setenv("DUET_CPU_LOOP_BARRIERS", "0", 1);
    Built otherEnv = buildAndRun(cl, kSource, "-D FACTOR=3");
    unsetenv("DUET_CPU_LOOP_BARRIERS");
    CHECK(has(otherEnv.stderr, "program cache: miss"));
    checkScaled(otherEnv.result, 3);

    // One that only says when code is optimised is not.
    setenv("DUET_CPU_TIER_UP_MS", "0", 1);
    Built tiering = buildAndRun(cl, kSource, "-D FACTOR=3");
    unsetenv("DUET_CPU_TIER_UP_MS");
    CHECK(has(tiering.stderr, "program cache: hit"));
    checkScaled(tiering.result, 3);
    CHECK(cache.entries().size() == 5);
    // So is DUET_KERNEL_CHECKS: checked code never comes from an unchecked build's entry.
    setenv("DUET_KERNEL_CHECKS", "1", 1);
    Built checked = buildAndRun(cl, kSource, "-D FACTOR=3");
    unsetenv("DUET_KERNEL_CHECKS");
    CHECK(has(checked.stderr, "program cache: miss"));
    checkScaled(checked.result, 3);
    CHECK(cache.entries().size() == 6);

    // Bad options are not cached: the build reports them as ever.
    Built bad = buildAndRun(cl, kSource, "-D FACTOR=3 -no-such-option");
    CHECK(bad.status == CL_INVALID_BUILD_OPTIONS);
    CHECK(cache.entries().size() == 6);
}

TEST_CASE("A corrupt, truncated or foreign cache entry is rebuilt", "[cache]") {
    TempCache cache;
    WithQueue cl;
    REQUIRE(buildAndRun(cl, kSource, "-D FACTOR=7").status == CL_SUCCESS);
    REQUIRE(cache.entries().size() == 1);
    const fs::path entry = cache.entries()[0];
    const std::string good = readFile(entry.string());
    REQUIRE(good.size() > 100);

    std::string flipped = good;
    flipped[flipped.size() / 2] ^= 0x40;
    const std::vector<std::string> bad = {flipped, good.substr(0, good.size() / 3),
                                          std::string(good.size(), 'x'), ""};
    for (const std::string& bytes : bad) {
        overwrite(entry, bytes);
        Built b = buildAndRun(cl, kSource, "-D FACTOR=7");
        INFO(b.stderr);
        REQUIRE(b.status == CL_SUCCESS);
        CHECK_FALSE(has(b.stderr, "program cache: hit"));
        CHECK(has(b.stderr, "program cache: stored"));
        checkScaled(b.result, 7);
        CHECK(readFile(entry.string()) == good); // written again
    }
    Built again = buildAndRun(cl, kSource, "-D FACTOR=7");
    CHECK(has(again.stderr, "program cache: hit"));
    checkScaled(again.result, 7);

    // An entry larger than the bound is not even read.
    setenv("DUET_CACHE_MAX_MB", "1", 1);
    overwrite(entry, good + std::string(2 << 20, 'x'));
    Built large = buildAndRun(cl, kSource, "-D FACTOR=7");
    INFO(large.stderr);
    CHECK(has(large.stderr, "larger than DUET_CACHE_MAX_MB"));
    checkScaled(large.result, 7);
    CHECK(readFile(entry.string()) == good);
}

TEST_CASE("DUET_CACHE=0 writes nothing", "[cache]") {
    TempCache cache;
    setenv("DUET_CACHE", "0", 1);
    WithQueue cl;
    Built b = buildAndRun(cl, kSource, "-D FACTOR=2");
    REQUIRE(b.status == CL_SUCCESS);
    checkScaled(b.result, 2);
    CHECK_FALSE(has(b.stderr, "program cache"));
    CHECK_FALSE(fs::exists(cache.dir));
}

TEST_CASE("Builds that read files or write -save-temps files are not cached", "[cache]") {
    TempCache cache;
    WithQueue cl;
    const fs::path headers = cache.dir.parent_path() / "headers";
    fs::create_directories(headers);
    overwrite(headers / "factor.h", "#define FACTOR 4\n");
    const std::string source = "#include \"factor.h\"\n"
                               "__kernel void scale(__global int* out) {\n"
                               "    out[get_global_id(0)] = (int)get_global_id(0) * FACTOR;\n"
                               "}\n";
    const std::string options = "-I " + headers.string();
    Built first = buildAndRun(cl, source, options);
    REQUIRE(first.status == CL_SUCCESS);
    checkScaled(first.result, 4);
    overwrite(headers / "factor.h", "#define FACTOR 6\n");
    Built second = buildAndRun(cl, source, options);
    REQUIRE(second.status == CL_SUCCESS);
    checkScaled(second.result, 6); // the new header, never a stale entry
    CHECK(has(second.stderr, "program cache: not used"));

    // The words in comments read nothing: such a source is cached; spliced into a directive
    // by a backslash-newline, they may, and it is not.
    const std::string commented =
        std::string("// every column included\n/* #include? */\n") + kSource;
    Built plain = buildAndRun(cl, commented, "-D FACTOR=3");
    CHECK(has(plain.stderr, "program cache: stored"));
    const std::string spliced = "#inc\\\nlude \"factor.h\"\n"
                                "__kernel void scale(__global int* out) {\n"
                                "    out[get_global_id(0)] = (int)get_global_id(0) * FACTOR;\n"
                                "}\n";
    Built splicedBuild = buildAndRun(cl, spliced, options);
    REQUIRE(splicedBuild.status == CL_SUCCESS);
    checkScaled(splicedBuild.result, 6);
    CHECK(has(splicedBuild.stderr, "program cache: not used"));
    REQUIRE(cache.entries().size() == 1);
    fs::remove(cache.entries()[0]);

    const fs::path temps = cache.dir.parent_path() / "temps";
    fs::create_directories(temps);
    Built saved = buildAndRun(cl, kSource, "-D FACTOR=3 -save-temps=" + (temps / "p").string());
    REQUIRE(saved.status == CL_SUCCESS);
    CHECK(has(saved.stderr, "program cache: not used"));
    CHECK(cache.entries().empty());
}

TEST_CASE("The cache folder stays within DUET_CACHE_MAX_MB, oldest entries going first",
          "[cache]") {
    TempCache cache;
    fs::create_directories(cache.dir);
    // An old 2 MiB entry (the name of one, the content of none: it is evicted unread).
    const fs::path old = cache.dir / (std::string(64, 'a') + ".duetpc");
    overwrite(old, std::string(2 << 20, 'o'));
    fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(48));
    setenv("DUET_CACHE_MAX_MB", "1", 1);
    WithQueue cl;
    Built b = buildAndRun(cl, kSource, "-D FACTOR=9");
    REQUIRE(b.status == CL_SUCCESS);
    INFO(b.stderr);
    CHECK(has(b.stderr, "program cache: evicted"));
    CHECK_FALSE(fs::exists(old));
    REQUIRE(cache.entries().size() == 1);
    Built again = buildAndRun(cl, kSource, "-D FACTOR=9");
    CHECK(has(again.stderr, "program cache: hit"));
}

TEST_CASE("Concurrent processes share one cache folder", "[cache]") {
    TempCache cache;
    const std::string dir = cache.dir.parent_path().string();
    // Four processes build the same program into an empty cache at once, then four more find
    // it; a process on another device misses.
    const std::string child = DUET_PROGRAM_CACHE_CHILD;
    const std::string env = "DUET_CACHE_DIR=" + cache.dir.string() + " DUET_LOG=1 ";
    std::string script = "cd " + dir + " && for i in 1 2 3 4; do (" + env + child +
                         " 11 > first$i.txt 2>&1; echo $? > first$i.rc) & done; wait";
    REQUIRE(runCommand(script).exitCode == 0);
    for (int i = 1; i <= 4; ++i) {
        const std::string out = readFile(dir + "/first" + std::to_string(i) + ".txt");
        INFO(out);
        CHECK(readFile(dir + "/first" + std::to_string(i) + ".rc") == "0\n");
        CHECK(has(out, "ok"));
    }
    std::vector<fs::path> entries = cache.entries();
    REQUIRE(entries.size() == 1); // one entry, no temporary file left
    CHECK(entries[0].extension() == ".duetpc");

    script = "cd " + dir + " && for i in 1 2 3 4; do (" + env + child +
             " 11 > second$i.txt 2>&1; echo $? > second$i.rc) & done; wait";
    REQUIRE(runCommand(script).exitCode == 0);
    for (int i = 1; i <= 4; ++i) {
        const std::string out = readFile(dir + "/second" + std::to_string(i) + ".txt");
        INFO(out);
        CHECK(readFile(dir + "/second" + std::to_string(i) + ".rc") == "0\n");
        CHECK(has(out, "program cache: hit"));
    }

    CommandResult gcn = runCommand(env + "DUET_DEVICES=gcn " + child + " 11");
    INFO(gcn.output);
    CHECK(gcn.exitCode == 0);
    CHECK(has(gcn.output, "program cache: miss"));
    CHECK(cache.entries().size() == 2);
}

namespace {

/// The cache's entry container around `binary` under `key` (the entry file's name less its
/// extension), checksum right: what a bad object that the container cannot catch looks like.
std::string entryFile(const std::string& key, const std::string& binary) {
    std::string data = "DUETPC01";
    auto u64 = [&data](uint64_t v) {
        for (int i = 0; i < 8; ++i)
            data.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    };
    u64(key.size());
    u64(0);
    u64(binary.size());
    data += key + binary;
    uint64_t h = 1469598103934665603ull;
    for (char c : data) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    u64(h);
    return data;
}

/// program_cache_child with FACTOR `factor` on the CPU device, the cache in `cache`, DUET_LOG
/// and `env` (compiles ahead of need off: no background compile stores code behind a case's
/// back); its output, after checking it computed the right values.
std::string runChild(const TempCache& cache, const std::string& env, int factor) {
    const std::string command = "DUET_DEVICES=cpu DUET_CPU_TIER_UP_EAGER=0 DUET_LOG=1 "
                                "DUET_CACHE_DIR=" +
                                cache.dir.string() + " " + env + " " + DUET_PROGRAM_CACHE_CHILD +
                                " " + std::to_string(factor);
    CommandResult r = runCommand(command);
    INFO(command);
    INFO(r.output);
    CHECK(r.exitCode == 0); // "ok": the kernel computed the right values
    return r.output;
}

} // namespace

TEST_CASE("The CPU device's optimised code is kept for the next process", "[cache][code]") {
    TempCache cache;
    const std::string optimisedAtOnce = "DUET_CPU_TIER_UP_MS=0";

    // The first process optimises at clCreateKernel (tiering off) and stores the code.
    const std::string first = runChild(cache, optimisedAtOnce, 13);
    CHECK(has(first, "code cache: miss"));
    CHECK(has(first, "code cache: stored"));
    REQUIRE(cache.codeEntries().size() == 1);

    // The next one loads it instead of compiling, whatever its tiering settings: with the
    // default ones it has no quick code at all.
    const std::string again = runChild(cache, optimisedAtOnce, 13);
    CHECK(has(again, "code cache: hit"));
    CHECK(has(again, "optimised code from the code cache"));
    CHECK_FALSE(has(again, "machine code in"));
    const std::string tiered = runChild(cache, "", 13);
    CHECK(has(tiered, "optimised code from the code cache"));
    CHECK(has(tiered, "no quick code"));
    CHECK_FALSE(has(tiered, "quick code in"));

    // Another kernel (another FACTOR) is not served by that entry.
    CHECK(has(runChild(cache, optimisedAtOnce, 14), "code cache: miss"));
    CHECK(cache.codeEntries().size() == 2);
}

TEST_CASE("A damaged code cache entry is compiled again, the kernel right", "[cache][code]") {
    TempCache cache;
    runChild(cache, "DUET_CPU_TIER_UP_MS=0", 15);
    REQUIRE(cache.codeEntries().size() == 1);
    const fs::path entry = cache.codeEntries()[0];
    const std::string key = entry.stem().string();

    // Bytes that are no entry: the container says so.
    overwrite(entry, "not a cache entry at all");
    const std::string garbage = runChild(cache, "DUET_CPU_TIER_UP_MS=0", 15);
    CHECK(has(garbage, "code cache: ignored"));
    CHECK(has(garbage, "code cache: stored"));

    // A sound entry holding no object file: the JIT refuses it, the entry goes, quick code
    // runs (default tiering), and the results are right.
    overwrite(entry, entryFile(key, std::string(4096, '\x7f')));
    const std::string bad = runChild(cache, "", 15);
    CHECK(has(bad, "stored optimised code not used"));
    CHECK(has(bad, "code cache: ignored"));
    CHECK(has(bad, "quick code in"));
    CHECK_FALSE(fs::exists(entry));

    // DUET_CACHE=0: neither read nor written.
    const std::string off = runChild(cache, "DUET_CACHE=0 DUET_CPU_TIER_UP_MS=0", 15);
    CHECK_FALSE(has(off, "code cache:"));
    CHECK(cache.codeEntries().empty());
}
