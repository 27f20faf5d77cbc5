// GCN device units: PM4 packets against hand-computed dwords, decode round trips and malformed
// streams; the code-object reader and loader on LLVM's and lld's real output; occupancy maths.
#include "compiler/binary.hpp"
#include "compiler/front_end.hpp"
#include "core/printf_buffer.hpp"
#include "devices/gcn/codegen/gcn_toolchain.hpp"
#include "devices/gcn/amdgpu_queue.hpp"
#include "devices/gcn/amdgpu_target.hpp"
#include "devices/gcn/code_object.hpp"
#include "devices/gcn/pm4.hpp"

#include <catch.hpp>
#include <llvm/TargetParser/TargetParser.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

using namespace duet;
using namespace duet::gcn;

namespace {

std::vector<uint32_t> built(void (*emit)(pm4::Builder&)) {
    pm4::Builder b;
    emit(b);
    return b.dwords();
}

DispatchState sampleState() {
    DispatchState s;
    s.pgmAddress = 0x7f1234567800ull; // 256-byte aligned
    s.pgmRsrc1 = 0x00af0081;
    s.pgmRsrc2 = 0x0000008c | (2u << 15);
    s.pgmRsrc3 = 0;
    for (unsigned i = 0; i < 16; ++i)
        s.userData[i] = 0x1000 + i;
    s.numThread = {64, 2, 1};
    s.start = {0, 0, 0};
    s.tmpringSize = 0x00040100; // 256 waves of 64 KiB
    s.resourceLimits = 0;
    s.dim = {1000, 6, 1};
    s.initiator = pm4::kComputeShaderEn | pm4::kForceStartAt000 | pm4::kUseThreadDimensions;
    return s;
}

rt::TargetSpec gcnTarget() {
    rt::TargetSpec t;
    t.cpuName = "gfx900";
    t.images = false;
    t.clExtensions = {"cl_khr_byte_addressable_store", "cl_khr_global_int32_base_atomics",
                      "cl_khr_local_int32_base_atomics", "__opencl_c_int64"};
    return rt::withGcnFrontEnd(t);
}

/// OpenCL C -> GCN executable, failing the test with the log otherwise.
std::shared_ptr<rt::DeviceExecutable> buildGcn(const std::string& src, const std::string& options,
                                               std::string* log = nullptr) {
    rt::CompileResult c = rt::compileSource(src, options, {}, gcnTarget());
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    rt::FinalizeResult f = rt::finalizeForGcn(c.bitcode, options, src, gcnTarget());
    INFO(f.log);
    REQUIRE(f.status == CL_SUCCESS);
    REQUIRE(f.executable);
    if (log)
        *log = f.log;
    return f.executable;
}

const KernelEntry& entryOf(const rt::DeviceExecutable& exe, const std::string& name) {
    for (size_t i = 0; i < exe.kernels().size(); ++i)
        if (exe.kernels()[i].name == name)
            return *static_cast<const KernelEntry*>(exe.entry(i));
    FAIL("no kernel " << name);
    throw 0;
}

const KernelArgMeta* arg(const KernelInfo& k, const std::string& kind) {
    for (const KernelArgMeta& a : k.args)
        if (a.valueKind == kind)
            return &a;
    return nullptr;
}

std::span<const unsigned char> bytes(const std::string& s) {
    return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

} // namespace

TEST_CASE("PM4 packets have the gfx9 encodings", "[gcn][pm4]") {
    // Type 3, count = body - 1, opcode, shader type (compute) bit 1.
    CHECK(pm4::header(pm4::kSetShReg, 3) == 0xC0027602u);
    CHECK(built([](pm4::Builder& b) {
              const uint32_t v[2] = {0x12345678, 0x9a};
              b.setShRegs(pm4::kComputePgmLo, v);
          }) == std::vector<uint32_t>{0xC0027602u, 0x20Cu, 0x12345678u, 0x9Au});
    CHECK(built([](pm4::Builder& b) { b.setShReg(pm4::kComputeUserData0 + 4 * 3, 7); }) ==
          std::vector<uint32_t>{0xC0017602u, 0x243u, 7u});
    CHECK(built([](pm4::Builder& b) { b.dispatchDirect(1024, 1, 1, 0x25); }) ==
          std::vector<uint32_t>{0xC0031502u, 1024u, 1u, 1u, 0x25u});
    // ACQUIRE_MEM: SH_ICACHE | SH_KCACHE | TC | TCL1 | TC_WB over the whole address space.
    CHECK(built([](pm4::Builder& b) { b.acquireMem(pm4::kCoherAllCaches); }) ==
          std::vector<uint32_t>{0xC0055802u, 0x28C40000u, 0xFFFFFFFFu, 0xFFFFFFu, 0u, 0u, 0xAu});
    // RELEASE_MEM: CACHE_FLUSH_AND_INV_TS_EVENT (0x14), EVENT_INDEX 5, TC_WB|TCL1|TC actions,
    // DATA_SEL 2 (64 bits), no interrupt.
    CHECK(built([](pm4::Builder& b) {
              b.releaseMemFence(0x7fff12345678ull, 0x1122334455667788ull, true);
          }) == std::vector<uint32_t>{0xC0064902u, 0x00038514u, 0x40000000u, 0x12345678u, 0x7fffu,
                                      0x55667788u, 0x11223344u, 0u});
    CHECK(built([](pm4::Builder& b) { b.eventWrite(pm4::kCsPartialFlush, 4); }) ==
          std::vector<uint32_t>{0xC0004602u, 0x407u});
}

TEST_CASE("a dispatch decodes to the register state it was built from", "[gcn][pm4]") {
    DispatchState s = sampleState();
    pm4::Builder b;
    uint64_t fence = 0;
    b.acquireMem(pm4::kCoherAllCaches);
    b.dispatch(s, 6);
    b.releaseMemFence(reinterpret_cast<uint64_t>(&fence), 42, true);
    // PGM_LO/HI, RSRC1/2, RESOURCE_LIMITS, TMPRING, START+NUM_THREAD, USER_DATA, DISPATCH.
    pm4::DecodeResult d = pm4::decode(b.dwords());
    INFO(d.error);
    REQUIRE(d);
    REQUIRE(d.commands.size() == 3);
    CHECK(d.commands[0].kind == pm4::Command::Kind::Acquire);
    CHECK(d.commands[0].value == pm4::kCoherAllCaches);
    REQUIRE(d.commands[1].kind == pm4::Command::Kind::Dispatch);
    const DispatchState& r = d.commands[1].dispatch;
    CHECK(r.pgmAddress == s.pgmAddress);
    CHECK(r.pgmRsrc1 == s.pgmRsrc1);
    CHECK(r.pgmRsrc2 == s.pgmRsrc2);
    CHECK(r.numThread == s.numThread);
    CHECK(r.dim == s.dim);
    CHECK(r.initiator == s.initiator);
    CHECK(r.tmpringSize == s.tmpringSize);
    for (unsigned i = 0; i < 6; ++i)
        CHECK(r.userData[i] == s.userData[i]);
    CHECK(r.userData[6] == 0); // only six were programmed
    REQUIRE(d.commands[2].kind == pm4::Command::Kind::Fence);
    CHECK(d.commands[2].fence.address == reinterpret_cast<uint64_t>(&fence));
    CHECK(d.commands[2].fence.value == 42);
    CHECK(d.commands[2].fence.dataSel == pm4::kDataSel64);

    // Registers persist between dispatches: a second DISPATCH_DIRECT reuses them.
    pm4::Builder two;
    two.dispatch(s, 6);
    two.dispatchDirect(8, 8, 1, pm4::kComputeShaderEn);
    pm4::DecodeResult d2 = pm4::decode(two.dwords());
    REQUIRE(d2);
    REQUIRE(d2.commands.size() == 2);
    CHECK(d2.commands[1].dispatch.pgmAddress == s.pgmAddress);
    CHECK(d2.commands[1].dispatch.dim == std::array<uint32_t, 3>{8, 8, 1});

    // RSRC3 is written only when non-zero (gfx90a+), and then decodes.
    s.pgmRsrc3 = 5;
    pm4::Builder three;
    three.dispatch(s, 0);
    pm4::DecodeResult d3 = pm4::decode(three.dwords());
    REQUIRE(d3);
    CHECK(d3.commands[0].dispatch.pgmRsrc3 == 5);
}

TEST_CASE("malformed PM4 streams are rejected with a reason", "[gcn][pm4]") {
    pm4::Builder b;
    b.dispatch(sampleState(), 4);
    std::vector<uint32_t> good = b.dwords();
    REQUIRE(pm4::decode(good));

    auto rejects = [](std::vector<uint32_t> s, const char* words) {
        pm4::DecodeResult r = pm4::decode(s);
        INFO(r.error);
        CHECK_FALSE(r);
        CHECK(r.error.find(words) != std::string::npos);
    };
    std::vector<uint32_t> truncated(good.begin(), good.end() - 1);
    rejects(truncated, "stream ends");
    rejects({0x00001234u}, "type-0");
    rejects({0x40000000u}, "type-1");
    rejects({pm4::header(0x7f, 1), 0}, "opcode 0x7f");
    rejects({pm4::header(pm4::kSetShReg, 5), 0x3fe, 1, 2, 3, 4}, "past the SH register space");
    rejects({pm4::header(pm4::kDispatchDirect, 4), 1, 1, 1, pm4::kComputeShaderEn},
            "before COMPUTE_PGM_LO/HI");
    rejects({pm4::header(pm4::kDispatchDirect, 3), 1, 1, 1}, "expected 4");
    rejects({pm4::header(pm4::kNop, 1) | 1u, 0}, "predicated");
    rejects({pm4::header(pm4::kReleaseMem, 7), 0, 1u << 29, 0x1002, 0, 1, 0, 0}, "misaligned");
    std::vector<uint32_t> noShader = good;
    noShader.back() = 0; // the initiator without COMPUTE_SHADER_EN
    rejects(noShader, "COMPUTE_SHADER_EN");
    // Type-2 fillers are accepted.
    std::vector<uint32_t> padded = good;
    padded.insert(padded.begin(), 0x80000000u);
    CHECK(pm4::decode(padded));
}

TEST_CASE("amdgpu discovery maps chips to LLVM targets and gates submission", "[gcn][amdgpu]") {
    struct Chip {
        uint32_t family, rev;
        const char* target;
    };
    // family_id and chip_external_rev as amdgpu_query_gpu_info reports them for each part.
    const Chip chips[] = {
        {141, 0x01, "gfx900"}, {141, 0x13, "gfx900"}, // Vega 10 (RX Vega 56/64, MI25)
        {141, 0x14, "gfx904"},                        // Vega 12
        {141, 0x28, "gfx906"}, {141, 0x31, "gfx906"}, // Vega 20 (Radeon VII, MI50/60)
        {141, 0x32, "gfx908"},                        // Arcturus (MI100)
        {141, 0x3c, "gfx90a"},                        // Aldebaran (MI200)
        {142, 0x01, "gfx902"}, {142, 0x80, "gfx902"}, // Raven, Picasso
        {142, 0x81, "gfx909"},                        // Raven2
        {142, 0x91, "gfx90c"},                        // Renoir
    };
    for (const Chip& c : chips) {
        INFO("family " << c.family << " rev " << c.rev);
        const gcn::AmdgpuTargetChoice gated = gcn::chooseAmdgpuTarget(c.family, c.rev, false);
        CHECK(gated.target == c.target);
        CHECK(gated.gfxMajor == 9);
        // LLVM 19 (what the finalizer compiles with) knows the name.
        CHECK(llvm::AMDGPU::parseArchAMDGCN(gated.target) != llvm::AMDGPU::GK_NONE);
        // Without DUET_AMDGPU_SUBMIT=1: listed, unavailable, saying why and how to enable it.
        CHECK_FALSE(gated.available);
        CHECK(gated.reason.find("never been run on real hardware") != std::string::npos);
        CHECK(gated.reason.find("DUET_AMDGPU_SUBMIT=1") != std::string::npos);
        const gcn::AmdgpuTargetChoice enabled = gcn::chooseAmdgpuTarget(c.family, c.rev, true);
        CHECK(enabled.available);
        CHECK(enabled.reason.empty());
        CHECK(enabled.target == c.target);
    }

    // Other families: unavailable even with submission enabled, naming the family.
    struct Other {
        uint32_t family, rev;
        const char* named;
        unsigned major;
    };
    const Other others[] = {
        {110, 0x14, "SI (gfx6)", 6},          {120, 0x28, "CI (gfx7)", 7},
        {130, 0x50, "VI (gfx8)", 8},          {143, 0x28, "NV (gfx10)", 10},
        {145, 0x01, "GC 11.0.0 (gfx11)", 11}, {152, 0x01, "GC 12.0.0 (gfx12)", 12},
        {999, 0x01, "unknown family 999", 0},
    };
    for (const Other& o : others) {
        INFO("family " << o.family);
        const gcn::AmdgpuTargetChoice c = gcn::chooseAmdgpuTarget(o.family, o.rev, true);
        CHECK_FALSE(c.available);
        CHECK(c.target.empty());
        CHECK(c.gfxMajor == o.major);
        CHECK(c.reason.find(o.named) != std::string::npos);
        CHECK(c.reason.find("gfx9 register") != std::string::npos);
    }
    // gfx9 family, but a part this runtime does not target: MI300 (gfx94x), and a revision
    // outside every range.
    const gcn::AmdgpuTargetChoice mi300 = gcn::chooseAmdgpuTarget(141, 0x46, true);
    CHECK_FALSE(mi300.available);
    CHECK(mi300.reason.find("gfx94x") != std::string::npos);
    const gcn::AmdgpuTargetChoice zero = gcn::chooseAmdgpuTarget(141, 0x00, true);
    CHECK_FALSE(zero.available);
    CHECK(zero.target.empty());
    CHECK(zero.reason.find("chip_external_rev 0x0") != std::string::npos);
}

TEST_CASE("the amdgpu queue reports what it cannot open as text", "[gcn][amdgpu]") {
    // No AMD GPU is needed to check the failure paths: a missing node, and a file that is no
    // DRM device at all.
    std::string error;
    CHECK(gcn::AmdgpuQueue::open("/nonexistent/renderD128", error) == nullptr);
    CHECK(error.find("cannot open /nonexistent/renderD128") != std::string::npos);
    CHECK(error.find("No such file") != std::string::npos);
    error.clear();
    CHECK(gcn::AmdgpuQueue::open("/dev/null", error) == nullptr);
    CHECK(error.find("amdgpu_device_initialize failed") != std::string::npos);
    CHECK(error.find("/dev/null") != std::string::npos);
}

TEST_CASE("the code-object reader sees what LLVM and lld produced", "[gcn][code_object]") {
    const std::string src =
        "kernel void vadd(global float* a, global const float* b, float s, local int* l) {\n"
        "  size_t i = get_global_id(0); l[get_local_id(0)] = 1; a[i] += s * b[i]; }\n"
        "__attribute__((reqd_work_group_size(64, 1, 1)))\n"
        "kernel void sum(global int* out) { local int t[256]; t[get_local_id(0)] = 1;\n"
        "  barrier(CLK_LOCAL_MEM_FENCE); out[get_group_id(0)] = t[63 - get_local_id(0)]; }\n"
        "kernel void priv(global int* out, int n) { int t[64];\n"
        "  for (int i = 0; i < 64; ++i) t[i] = i * n; out[get_global_id(0)] = t[out[0] & 63]; }\n";
    std::string log;
    auto exe = buildGcn(src, "", &log);
    CHECK(log.find("kernel vadd:") != std::string::npos);
    CHECK(log.find("waves per SIMD") != std::string::npos);
    REQUIRE(exe->kernels().size() == 3);

    const KernelEntry& v = entryOf(*exe, "vadd");
    const KernelInfo& k = *v.kernel;
    CHECK(v.codeObject->target == "amdgcn-amd-amdhsa--gfx900");
    CHECK(v.codeObject->abiVersion == 3); // ELFABIVERSION_AMDGPU_HSA_V5
    CHECK(k.symbol == "vadd.kd");
    CHECK(k.wavefrontSize == 64);
    CHECK(k.sgprCount > 0);
    CHECK(k.vgprCount > 0);
    REQUIRE(k.args.size() > 4);
    CHECK(k.args[0].valueKind == "global_buffer");
    CHECK(k.args[0].offset == 0);
    CHECK(k.args[0].size == 8);
    CHECK(k.args[1].offset == 8);
    CHECK(k.args[2].valueKind == "by_value");
    CHECK(k.args[2].offset == 16);
    CHECK(k.args[2].size == 4);
    CHECK(k.args[3].valueKind == "dynamic_shared_pointer");
    CHECK(k.args[3].offset == 20);
    CHECK(k.args[3].size == 4);
    // Code object v5 hidden arguments start 8-byte aligned after the explicit ones.
    const KernelArgMeta* blocks = arg(k, "hidden_block_count_x");
    REQUIRE(blocks);
    CHECK(blocks->offset == 24);
    const KernelArgMeta* offsetX = arg(k, "hidden_global_offset_x");
    REQUIRE(offsetX);
    CHECK(offsetX->offset == 24 + 40);
    CHECK(k.descriptor.kernargSize == k.kernargSegmentSize);
    CHECK(k.descriptor.kernelCodeProperties & kEnableSgprKernargSegmentPtr);
    // USER_SGPR in RSRC2 counts exactly the SGPRs the enable bits ask for.
    unsigned user = 0;
    const uint16_t p = k.descriptor.kernelCodeProperties;
    user += (p & kEnableSgprPrivateSegmentBuffer) ? 4 : 0;
    for (uint16_t bit : {kEnableSgprDispatchPtr, kEnableSgprQueuePtr, kEnableSgprKernargSegmentPtr,
                         kEnableSgprDispatchId, kEnableSgprFlatScratchInit})
        user += (p & bit) ? 2 : 0;
    user += (p & kEnableSgprPrivateSegmentSize) ? 1 : 0;
    CHECK(rsrc::rsrc2UserSgprs(k.descriptor.computePgmRsrc2) == user);
    CHECK((v.loadBase + k.codeAddress) % 256 == 0);
    CHECK(k.codeSize > 0);
    // The loaded image holds the code: the last instruction of vadd is s_endpgm (0xBF810000).
    const auto* code = reinterpret_cast<const unsigned char*>(v.loadBase + k.codeAddress);
    bool endpgm = false;
    for (uint64_t i = 0; i + 4 <= k.codeSize; i += 4) {
        uint32_t w;
        std::memcpy(&w, code + i, 4);
        endpgm = endpgm || w == 0xBF810000u;
    }
    CHECK(endpgm);

    const KernelInfo& sum = *entryOf(*exe, "sum").kernel;
    CHECK(sum.reqdWorkgroupSize == std::array<uint32_t, 3>{64, 1, 1});
    CHECK(sum.groupSegmentFixedSize == 256 * 4);
    CHECK(sum.descriptor.groupSegmentFixedSize == 256 * 4);
    CHECK(exe->kernels()[1].staticLocalMemSize == 256 * 4);

    const KernelInfo& priv = *entryOf(*exe, "priv").kernel;
    CHECK(priv.privateSegmentFixedSize >= 256);
    CHECK(rsrc::rsrc2ScratchEn(priv.descriptor.computePgmRsrc2) == 1);
}

TEST_CASE("block kernels of enqueue_kernel get descriptors and runtime handles on GCN",
          "[gcn][code_object][device_enqueue]") {
    // The device half of device-side enqueue (builtins/gcn/device_enqueue.cl) links, and the
    // code object names each block kernel's runtime handle, which the runtime fills in.
    rt::TargetSpec t = gcnTarget();
    t.clStdVersions = {100, 110, 120, 200, 300};
    for (const char* f : {"__opencl_c_device_enqueue", "__opencl_c_generic_address_space",
                          "__opencl_c_program_scope_global_variables"})
        t.clExtensions.push_back(f);
    const std::string src =
        "kernel void parent(global int* out, int n) {\n"
        "  queue_t q = get_default_queue(); clk_event_t ev, m;\n"
        "  enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4), 0, 0, &ev,\n"
        "                 ^{ out[get_global_id(0)] = n; });\n"
        "  enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(64, 64), 1, &ev, 0,\n"
        "                 ^(local void* p){ ((local int*)p)[0] = 1; out[8] = 1; }, 64u);\n"
        "  enqueue_marker(q, 1, &ev, &m); release_event(ev); release_event(m);\n"
        "  out[9] = get_kernel_work_group_size(^{ out[10] = 2; }); }\n";
    rt::CompileResult c = rt::compileSource(src, "-cl-std=CL2.0", {}, t);
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    rt::FinalizeResult f = rt::finalizeForGcn(c.bitcode, "-cl-std=CL2.0", src, t);
    INFO(f.log);
    REQUIRE(f.status == CL_SUCCESS);
    REQUIRE(f.executable);
    const rt::DeviceExecutable& exe = *f.executable;
    REQUIRE(exe.kernels().size() == 4);
    int blocks = 0;
    for (const auto& k : exe.kernels()) {
        const KernelEntry& e = entryOf(exe, k.name);
        if (k.name == "parent") {
            CHECK(e.kernel->runtimeHandle.empty());
            CHECK(arg(*e.kernel, "hidden_default_queue"));
            continue;
        }
        ++blocks;
        CHECK(k.name.find("_block_invoke") != std::string::npos);
        CHECK(e.kernel->descriptorAddress != 0);
        CHECK(e.kernel->runtimeHandle == k.name + ".runtime_handle");
        CHECK(e.kernel->runtimeHandleAddress != 0);
        CHECK(e.kernel->runtimeHandleAddress != e.kernel->descriptorAddress);
    }
    CHECK(blocks == 3);
}

TEST_CASE("GCN program binaries carry the code object and load without recompiling",
          "[gcn][code_object][binary]") {
    const std::string src = "kernel void k(global int* a) { a[get_global_id(0)] = 7; }\n";
    auto exe = buildGcn(src, "-cl-mad-enable");
    const std::string& bin = exe->binary();
    rt::ReadProgramBinaryResult read = rt::readProgramBinary(bytes(bin));
    REQUIRE(read.status == CL_SUCCESS);
    CHECK(read.binary.targetKind == rt::kGcnBinaryKind);
    CHECK(read.binary.machine == 224); // EM_AMDGPU
    CHECK(read.binary.targetName == "gfx900");
    ReadCodeObjectResult co = readCodeObject(bytes(read.binary.text));
    INFO(co.error);
    REQUIRE(co);
    REQUIRE(co.object.kernels.size() == 1);
    CHECK(co.object.kernels[0].name == "k");

    rt::LoadBinaryResult load = rt::loadGcnBinary(bytes(bin), gcnTarget());
    INFO(load.log);
    REQUIRE(load.status == CL_SUCCESS);
    REQUIRE(load.executable);
    CHECK(load.executable->binary() == bin);
    CHECK(load.executable->kernels()[0].name == "k");
    CHECK(static_cast<const KernelEntry*>(load.executable->entry(0))->kernel->sgprCount ==
          co.object.kernels[0].sgprCount);

    // A CPU binary is not a GCN one; garbage is not a code object.
    rt::LoadBinaryResult wrong =
        rt::loadGcnBinary(bytes(rt::makeObjectBinary("BC\xC0\xDE" + std::string(60, '\0'), "",
                                                     CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT)),
                          gcnTarget());
    CHECK(wrong.status == CL_INVALID_BINARY);
    CHECK_FALSE(readCodeObject(bytes(std::string("\x7f"
                                                 "ELF garbage"))));
    std::string truncated = read.binary.text.substr(0, read.binary.text.size() / 2);
    CHECK_FALSE(readCodeObject(bytes(truncated)));
}

TEST_CASE("code objects that crashed the reader before its fixes are rejected with a reason",
          "[gcn][code_object][fuzz]") {
    // Found by tests/fuzz/fuzz_gcn_code_object; each is a mutated gfx900 code object.
    const std::pair<const char*, const char*> cases[] = {
        {"regression-msgpack-map-keys", "msgpack"},                  // map keys that are maps
        {"regression-section-symbol-name", "descriptor"},            // section symbol's header
        {"regression-note-size-wraps", "note section lies outside"}, // sh_offset + sh_size wraps
    };
    for (const auto& [file, reason] : cases) {
        INFO(file);
        std::ifstream f(std::string(DUET_FUZZ_SEEDS "/fuzz_gcn_code_object/") + file,
                        std::ios::binary);
        std::string bytesOf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        REQUIRE(bytesOf.size() > 1000);
        ReadCodeObjectResult r = readCodeObject(bytes(bytesOf));
        REQUIRE_FALSE(r);
        CHECK(r.error.find(reason) != std::string::npos);
        LoadedCodeObject loaded;
        (void)loaded.load(bytes(bytesOf)); // no crash; the image may well load
    }
}

TEST_CASE("what the GCN device cannot compile fails the build with a reason",
          "[gcn][code_object]") {
    auto fails = [](const std::string& src, const char* words) {
        rt::CompileResult c = rt::compileSource(src, "", {}, gcnTarget());
        REQUIRE(c.status == CL_SUCCESS);
        rt::FinalizeResult f = rt::finalizeForGcn(c.bitcode, "", src, gcnTarget());
        INFO(f.log);
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(f.log.find(words) != std::string::npos);
    };
    fails("int helper(int);\nkernel void k(global int* a) { a[0] = helper(a[1]); }\n",
          "undefined function");
}

TEST_CASE("the code-object reader parses amdhsa.printf", "[gcn][code_object][printf]") {
    const std::string src = "kernel void p(global int* a) {\n"
                            "  printf(\"a:%d b=%v3f\\n\", a[0], (float3)(1, 2, 3));\n"
                            "  printf(\"%s %ld%%\", \"xyz12\", (long)a[1]); }\n";
    auto exe = buildGcn(src, "");
    const KernelEntry& e = entryOf(*exe, "p");
    REQUIRE(e.codeObject->printf.size() == 2);
    CHECK(arg(*e.kernel, "hidden_printf_buffer"));
    for (const rt::PrintfFormat& f : e.codeObject->printf) {
        INFO(f.format);
        if (f.format == "a:%d b=%v3f\n") { // ':' and the newline as they are
            CHECK(f.argSizes == std::vector<uint32_t>{4, 16});
            CHECK(f.recordBytes() == 24);
        } else {
            CHECK(f.format == "%s %ld%%");
            CHECK(f.argSizes == std::vector<uint32_t>{4, 8}); // a string: its length word
            CHECK(f.recordBytes() == 16); // the least; "xyz12" adds 8 at run time
        }
    }
    CHECK(e.codeObject->printf[0].id != e.codeObject->printf[1].id);

    rt::PrintfFormat f;
    CHECK(parsePrintfFormat("7:2:4:8:x:%d %ld\n", f).empty());
    CHECK(f.id == 7);
    CHECK(f.format == "x:%d %ld\n");
    CHECK(f.recordBytes() == 16);
    CHECK(printfFormatEntry(f) == "7:2:4:8:x:%d %ld\n");      // what the lowering writes
    CHECK_FALSE(parsePrintfFormat("7:2:4:%d %d", f).empty()); // a size missing
    CHECK_FALSE(parsePrintfFormat("no fields", f).empty());
    CHECK_FALSE(parsePrintfFormat("1:1:0:%d", f).empty()); // a zero size
}

TEST_CASE("the printf buffer drain formats records, reports overflow and resets the buffer",
          "[gcn][printf]") {
    // core/printf_buffer.hpp's layout, as the GCN dispatch keeps it in host memory.
    const std::vector<rt::PrintfFormat> formats{{1, {4, 4}, "%d %s\n"}, {2, {8}, "%.1f|\n"}};
    const uint64_t capacity = 64;
    std::vector<unsigned char> buffer(rt::kPrintfHeaderBytes + capacity, 0);
    rt::initPrintfBuffer(buffer.data(), capacity);
    auto put = [&](size_t at, const void* p, size_t n) {
        std::memcpy(buffer.data() + rt::kPrintfHeaderBytes + at, p, n);
    };
    const uint32_t one = 1, two = 2, three = 3, null = rt::kPrintfNullString;
    const int32_t value = -4;
    const double x = 2.25;
    put(0, &one, 4); // "-4 abc": 4 + 4 + 4 + "abc" padded to 4
    put(4, &value, 4);
    put(8, &three, 4);
    put(12, "abc", 3);
    put(16, &two, 4); // "2.2|" (to even)
    put(20, &x, 8);
    put(28, &one, 4); // "-4 (null)"
    put(32, &value, 4);
    put(36, &null, 4);
    const uint64_t offset = 40 + 48; // then a record of 48 bytes that did not fit
    std::memcpy(buffer.data(), &offset, 8);
    const rt::PrintfOutput out = rt::drainPrintfBuffer(buffer.data(), formats);
    CHECK(out.text == "-4 abc\n2.2|\n-4 (null)\n");
    CHECK(out.records == 3);
    CHECK(out.lostBytes == 48);
    CHECK(out.error.empty());
    const std::vector<std::string> problems = rt::printfProblems(out, capacity);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == "printf output overflowed the 64-byte printf buffer "
                         "(CL_DEVICE_PRINTF_BUFFER_SIZE): 48 bytes of records were dropped after "
                         "3 records");
    // Reset for the next dispatch: offset 0, capacity kept, every data byte zero again.
    uint64_t header[2];
    std::memcpy(header, buffer.data(), sizeof header);
    CHECK(header[0] == 0);
    CHECK(header[1] == capacity);
    CHECK(std::all_of(buffer.begin() + rt::kPrintfHeaderBytes, buffer.end(),
                      [](unsigned char c) { return c == 0; }));
    // An id no format lists stops the decoder with a reason; what came before is kept.
    put(0, &two, 4);
    put(4, &x, 8);
    const uint32_t unknown = 7;
    put(12, &unknown, 4);
    const uint64_t used = 16;
    std::memcpy(buffer.data(), &used, 8);
    const rt::PrintfOutput bad = rt::drainPrintfBuffer(buffer.data(), formats);
    CHECK(bad.text == "2.2|\n");
    CHECK(bad.lostBytes == 0);
    CHECK(bad.error.find("has id 7") != std::string::npos);
}

TEST_CASE("occupancy follows the gfx9 limits", "[gcn][occupancy]") {
    // 256 VGPRs per lane: 128 allow 2 waves per SIMD.
    Occupancy o = computeOccupancy(128, 20, 0, 256);
    CHECK(o.wavesPerSimd == 2);
    CHECK(std::string(o.limit) == "VGPRs");
    // 800 SGPRs per SIMD in granules of 16 (as LLVM counts): 100 take 112, which allow 7.
    o = computeOccupancy(24, 100, 0, 256);
    CHECK(o.wavesPerSimd == 7);
    CHECK(std::string(o.limit) == "SGPRs");
    // 32 KiB of LDS per 256-item group: 2 groups per CU = 8 waves over 4 SIMDs.
    o = computeOccupancy(8, 16, 32768, 256);
    CHECK(o.wavesPerSimd == 2);
    CHECK(std::string(o.limit) == "LDS");
    o = computeOccupancy(8, 16, 0, 64);
    CHECK(o.wavesPerSimd == 10);
    CHECK(std::string(o.limit) == "none");
    // More LDS than a CU has: nothing runs.
    CHECK(computeOccupancy(8, 16, 70000, 64).wavesPerSimd == 0);
}
