// The GCN device's dispatch builder: kernarg segment, AQL packet, scratch, user SGPRs, PM4.
#include "devices/gcn/dispatch.hpp"

#include "core/device_enqueue.hpp"
#include "core/image.hpp"
#include "core/queue.hpp"
#include "core/svm.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace duet::rt::gcn_device {
namespace {

namespace pm4 = gcn::pm4;
using gcn::KernelArgMeta;
using gcn::KernelEntry;
using gcn::KernelInfo;

constexpr unsigned kLdsGranule = 512; // COMPUTE_PGM_RSRC2.LDS_SIZE unit on gfx7+
constexpr uint64_t kMaxScratchBytes = 512ull << 20;

/// hsa_kernel_dispatch_packet_t, as the HSA runtime's AQL packet lays it out (64 bytes): what
/// the dispatch-pointer user SGPRs point at.
struct DispatchPacket {
    uint16_t header;
    uint16_t setup; ///< dimensions in bits 0..1
    uint16_t workgroupSize[3];
    uint16_t reserved0;
    uint32_t gridSize[3];
    uint32_t privateSegmentSize;
    uint32_t groupSegmentSize;
    uint64_t kernelObject;
    uint64_t kernargAddress;
    uint64_t reserved2;
    uint64_t completionSignal;
};
static_assert(sizeof(DispatchPacket) == 64);

template <class T> void put(unsigned char* base, uint32_t offset, T value) {
    std::memcpy(base + offset, &value, sizeof value);
}

uint32_t alignUp(uint32_t v, uint32_t a) {
    return a ? (v + a - 1) / a * a : v;
}

} // namespace

bool HostBlock::reserve(size_t bytes, size_t align) {
    if (bytes <= m_capacity)
        return true;
    size_t cap = (std::max(bytes, 2 * m_capacity) + align - 1) / align * align;
    void* p = std::aligned_alloc(align, cap);
    if (!p)
        return false;
    m_p.reset(static_cast<unsigned char*>(p));
    m_capacity = cap;
    return true;
}

void HostBlock::Free::operator()(unsigned char* p) const {
    std::free(p);
}

bool DispatchBuilder::wantsDefaultQueue(const KernelLaunch& launch) {
    const auto* entry = static_cast<const KernelEntry*>(launch.entry);
    return entry && entry->kernel && entry->kernel->mayEnqueue;
}

Queue* onDeviceQueueArgument(const ArgValue& v) {
    void* handle = nullptr;
    if (v.bytes.size() != sizeof handle)
        return nullptr;
    std::memcpy(&handle, v.bytes.data(), sizeof handle);
    return onDeviceQueue(handle);
}

uint64_t DispatchBuilder::queueArgument(const ArgValue& v) const {
    const Queue* q = m_defaultQueue ? onDeviceQueueArgument(v) : nullptr;
    return q && q->device() == m_defaultQueue->device ? m_defaultQueue->address : 0;
}

cl_int DispatchBuilder::build(const KernelLaunch& launch, std::string& why, bool listHostRanges,
                              const DefaultQueue* defaultQueue) {
    m_listRanges = m_forHardware || listHostRanges;
    m_defaultQueue = defaultQueue;
    const auto* entry = static_cast<const KernelEntry*>(launch.entry);
    if (!entry || !entry->kernel) {
        why = "no code object entry";
        return CL_INVALID_PROGRAM_EXECUTABLE;
    }
    const KernelInfo& ki = *entry->kernel;
    const gcn::KernelDescriptor& kd = ki.descriptor;
    for (int d = 0; d < 3; ++d) {
        if (launch.global[d] > 0xffffffffu || launch.local[d] > 0xffff) {
            why = "a global size beyond 2^32-1 work-items does not fit a GCN dispatch";
            return CL_OUT_OF_RESOURCES;
        }
        m_groups[d] = uint32_t((launch.global[d] + launch.local[d] - 1) / launch.local[d]);
        m_remainders[d] = uint32_t(launch.global[d] % launch.local[d]);
    }

    // Descriptor addresses go into the kernarg segment as arguments are visited: no later
    // resize may move the earlier ones.
    m_imageDescs.reserve(launch.args.size());
    m_hostRanges.clear();
    if (cl_int err = writeKernargs(launch, ki, why); err != CL_SUCCESS)
        return err;
    // The ring, and for a child what its host launch was given.
    if (m_listRanges && defaultQueue && defaultQueue->range.first)
        m_hostRanges.push_back(defaultQueue->range);
    if (m_listRanges && defaultQueue && defaultQueue->inherited)
        m_hostRanges.insert(m_hostRanges.end(), defaultQueue->inherited->begin(),
                            defaultQueue->inherited->end());
    // SVM the kernel reaches only through pointers in memory (clSetKernelExecInfo).
    if (m_listRanges)
        for (void* p : launch.svmIndirectPointers)
            if (std::optional<SvmAllocation> s = svmFind(p))
                m_hostRanges.emplace_back(s->base, s->size);
    if (m_lds > kLdsPerGroup) {
        why = "the work-group needs " + std::to_string(m_lds) + " bytes of LDS (limit " +
              std::to_string(kLdsPerGroup) + ")";
        return CL_OUT_OF_RESOURCES;
    }
    if (cl_int err = setUpScratch(ki, why); err != CL_SUCCESS)
        return err;
    writePacket(launch, *entry);

    gcn::DispatchState st;
    const unsigned n = putUserSgprs(kd, st);
    const unsigned declared = gcn::rsrc::rsrc2UserSgprs(kd.computePgmRsrc2);
    if (n > 16 || n > declared) {
        why = "the kernel descriptor enables " + std::to_string(n) +
              " user SGPRs but COMPUTE_PGM_RSRC2 declares " + std::to_string(declared);
        return CL_OUT_OF_RESOURCES;
    }
    ++m_dispatchId;

    st.pgmAddress = entry->loadBase + ki.codeAddress;
    if (st.pgmAddress & 0xff) {
        why = "kernel code is not 256-byte aligned";
        return CL_OUT_OF_RESOURCES;
    }
    st.pgmRsrc1 = kd.computePgmRsrc1;
    st.pgmRsrc2 = (kd.computePgmRsrc2 & ~gcn::rsrc::kRsrc2LdsSizeMask) |
                  (((m_lds + kLdsGranule - 1) / kLdsGranule) << gcn::rsrc::kRsrc2LdsSizeShift);
    st.pgmRsrc3 = kd.computePgmRsrc3;
    st.tmpringSize = m_tmpring;
    st.resourceLimits = 0; // no wave or work-group limits per CU
    bool partial = false;
    for (int d = 0; d < 3; ++d) {
        st.numThread[d] = uint32_t(launch.local[d]); // NUM_THREAD_FULL; PARTIAL left 0
        st.start[d] = 0;
        st.dim[d] = uint32_t(launch.global[d]); // work-items: USE_THREAD_DIMENSIONS
        partial = partial || m_remainders[d];
    }
    st.initiator = pm4::kComputeShaderEn | pm4::kForceStartAt000 | pm4::kUseThreadDimensions |
                   (partial ? uint32_t(pm4::kPartialTgEn) : 0u);
    return emitStream(st, declared, *entry);
}

/// The kernarg segment, exactly as the metadata lays it out; __local arguments become LDS
/// offsets after the kernel's static LDS.
cl_int DispatchBuilder::writeKernargs(const KernelLaunch& launch, const KernelInfo& ki,
                                      std::string& why) {
    m_kernargBytes = std::max<uint32_t>(ki.kernargSegmentSize, 16);
    if (!m_kernarg.reserve(m_kernargBytes) || !m_packet.reserve(sizeof(DispatchPacket)) ||
        !m_queue.reserve(256))
        return CL_OUT_OF_HOST_MEMORY;
    std::memset(m_kernarg.data(), 0, m_kernargBytes);
    m_lds = ki.groupSegmentFixedSize;
    const uint32_t staticLds = m_lds;
    size_t explicitIndex = 0;
    m_usesPrintf = false;
    for (const KernelArgMeta& a : ki.args) {
        cl_int err;
        if (a.valueKind.rfind("hidden_", 0) != 0) {
            if (explicitIndex >= launch.args.size()) {
                why = "more arguments in the metadata";
                return CL_INVALID_KERNEL_ARGS;
            }
            err = putExplicitArg(launch, a, explicitIndex++, why);
        } else {
            err = putHiddenArg(launch, ki, a, why);
        }
        if (err != CL_SUCCESS)
            return err;
    }
    for (const KernelArgMeta& a : ki.args)
        if (a.valueKind == "hidden_dynamic_lds_size")
            put<uint32_t>(m_kernarg.data(), a.offset, m_lds - staticLds);
    return CL_SUCCESS;
}

/// Explicit argument `index` (by value, buffer, pipe, image, sampler, __local pointer).
cl_int DispatchBuilder::putExplicitArg(const KernelLaunch& launch, const KernelArgMeta& a,
                                       size_t index, std::string& why) {
    unsigned char* ka = m_kernarg.data();
    const std::string& kind = a.valueKind;
    const ArgValue& v = launch.args[index];
    const KernelArgDesc& ad = launch.kernel->desc().args[index];
    if (kind == "queue" && a.size == 8) {
        // An on-device queue: the launch's ring, as get_default_queue() gives (or null).
        put<uint64_t>(ka, a.offset, queueArgument(v));
    } else if (kind == "by_value") {
        std::memcpy(ka + a.offset, v.bytes.data(), std::min<size_t>(a.size, v.bytes.size()));
    } else if (kind == "global_buffer" || kind == "pipe") {
        if (a.size != 8) {
            why = "a buffer or pipe argument is not 64-bit";
            return CL_INVALID_KERNEL_ARGS;
        }
        // A buffer's storage, a pipe's (core/pipe.hpp; builtins/cpu/pipe.cl works on it) or an
        // SVM pointer: all host addresses, which the model reads directly (its GPU VA space is
        // the process's).
        put<uint64_t>(ka, a.offset, reinterpret_cast<uint64_t>(v.globalPointer()));
        if (m_listRanges && v.mem)
            m_hostRanges.emplace_back(v.mem->data(), v.mem->size());
        if (m_listRanges && v.viaSvm && v.svm)
            if (std::optional<SvmAllocation> s = svmFind(v.svm))
                m_hostRanges.emplace_back(s->base, s->size); // the whole allocation
    } else if (kind == "image" || kind == "sampler") {
        if (!putImageOrSampler(a, v, index)) {
            why = "argument " + std::to_string(index) + " (" + ad.typeName +
                  "): an image or sampler argument is not 64-bit";
            return CL_INVALID_KERNEL_ARGS;
        }
        if (m_listRanges && kind == "image" && v.mem)
            m_hostRanges.emplace_back(v.mem->data(), v.mem->size()); // the texels
    } else if (kind == "dynamic_shared_pointer") {
        const uint32_t align = std::max<uint32_t>(a.pointeeAlign ? a.pointeeAlign : 16, 4);
        m_lds = alignUp(m_lds, align);
        put<uint32_t>(ka, a.offset, m_lds);
        m_lds += uint32_t(v.localSize);
    } else {
        why = "argument " + std::to_string(index) + " (" + ad.typeName + ") of kind " + kind +
              " is not supported on the GCN device yet";
        return CL_INVALID_KERNEL_ARGS;
    }
    return CL_SUCCESS;
}

/// A hidden argument: the grid, the queue, the printf buffer; the services this runtime does
/// not offer stay null.
cl_int DispatchBuilder::putHiddenArg(const KernelLaunch& launch, const KernelInfo& ki,
                                     const KernelArgMeta& a, std::string& why) {
    unsigned char* ka = m_kernarg.data();
    const std::string& kind = a.valueKind;
    auto dim = [&](const char* prefix) -> int {
        for (int d = 0; d < 3; ++d)
            if (kind == std::string(prefix) + char('x' + d))
                return d;
        return -1;
    };
    if (int d = dim("hidden_block_count_"); d >= 0)
        put<uint32_t>(ka, a.offset, m_groups[d]);
    else if (int d2 = dim("hidden_group_size_"); d2 >= 0)
        put<uint16_t>(ka, a.offset, uint16_t(launch.local[d2]));
    else if (int d3 = dim("hidden_remainder_"); d3 >= 0)
        put<uint16_t>(ka, a.offset, uint16_t(m_remainders[d3]));
    else if (int d4 = dim("hidden_global_offset_"); d4 >= 0)
        put<uint64_t>(ka, a.offset, uint64_t(launch.offset[d4]));
    else if (kind == "hidden_grid_dims")
        put<uint16_t>(ka, a.offset, uint16_t(launch.workDim));
    else if (kind == "hidden_queue_ptr")
        put<uint64_t>(ka, a.offset, m_queue.address());
    else if (kind == "hidden_printf_buffer") {
        // __duet_printf_alloc finds it through the implicit-argument pointer (code object v5).
        uint32_t hiddenBase = 0;
        for (const KernelArgMeta& h : ki.args)
            if (h.valueKind == "hidden_block_count_x")
                hiddenBase = h.offset;
        if (a.offset != hiddenBase + gcn::kImplicitPrintfBufferOffset) {
            why = "hidden_printf_buffer is not where code object v5 puts it";
            return CL_OUT_OF_RESOURCES;
        }
        const uint64_t buffer = printfBuffer();
        if (!buffer)
            return CL_OUT_OF_HOST_MEMORY;
        put<uint64_t>(ka, a.offset, buffer);
        m_usesPrintf = true;
    } else if (kind == "hidden_default_queue") {
        // get_default_queue(): the launch's ring (builtins/gcn/device_enqueue.cl), or null.
        put<uint64_t>(ka, a.offset, m_defaultQueue ? m_defaultQueue->address : 0);
    } else if (kind == "hidden_hostcall_buffer" || kind == "hidden_multigrid_sync_arg" ||
               kind == "hidden_heap_v1" || kind == "hidden_completion_action" ||
               kind == "hidden_private_base" || kind == "hidden_shared_base" ||
               kind == "hidden_none") {
        // services this runtime does not offer: left null; gfx9 needs no apertures here
    } else if (kind == "hidden_dynamic_lds_size") {
        // written by writeKernargs, once the dynamic LDS is known
    } else {
        why = "hidden kernel argument " + kind + " is not supported";
        return CL_OUT_OF_RESOURCES;
    }
    return CL_SUCCESS;
}

/// Writes an image argument (the address of its descriptor, m_imageDescs[index]) or a sampler
/// argument (its CLK_* bits) into the kernarg segment; false if the slot is not 64-bit.
/// Kernels read both as plain memory (builtins/cpu/image.cl, shared with the CPU).
bool DispatchBuilder::putImageOrSampler(const KernelArgMeta& a, const ArgValue& v, size_t index) {
    unsigned char* ka = m_kernarg.data();
    if (a.size != 8)
        return false;
    if (a.valueKind == "sampler") {
        put<uint64_t>(ka, a.offset, samplerArgWord(v));
        return true;
    }
    if (m_imageDescs.size() <= index)
        m_imageDescs.resize(index + 1);
    m_imageDescs[index] = imageArgDesc(v);
    put<uint64_t>(ka, a.offset, v.mem ? reinterpret_cast<uint64_t>(&m_imageDescs[index]) : 0);
    return true;
}

/// The printf buffer (allocated once, reset by each drain); 0 when out of memory.
uint64_t DispatchBuilder::printfBuffer() {
    if (!m_printfReady) {
        const size_t bytes = kPrintfHeaderBytes + kPrintfBufferBytes;
        if (!m_printf.reserve(bytes, 4096))
            return 0;
        std::memset(m_printf.data(), 0, bytes);
        initPrintfBuffer(m_printf.data(), kPrintfBufferBytes);
        m_printfReady = true;
    }
    return m_printf.address();
}

PrintfOutput DispatchBuilder::drainPrintf(const gcn::CodeObject& code) {
    return drainPrintfBuffer(m_printf.data(), code.printf);
}

/// Scratch: per-work-item private segment, interleaved per lane within each wave's slot.
cl_int DispatchBuilder::setUpScratch(const KernelInfo& ki, std::string& why) {
    m_privateBytes = ki.descriptor.privateSegmentFixedSize;
    if (ki.dynamicStack)
        m_privateBytes = std::max<uint32_t>(m_privateBytes, 1024) + 1024; // calls of unknown depth
    m_tmpring = 0;
    m_scratchBase = 0;
    m_scratchBytes = 0;
    if (!m_privateBytes)
        return CL_SUCCESS;
    const uint64_t waveBytes = alignUp(m_privateBytes * kWaveSize, 1024);
    uint64_t waves = std::min<uint64_t>(4095, uint64_t(m_computeUnits) * 40);
    waves = std::max<uint64_t>(1, std::min(waves, kMaxScratchBytes / waveBytes));
    if (waveBytes / 1024 > 0x1fff) {
        why = std::to_string(m_privateBytes) +
              " bytes of scratch per work-item exceed COMPUTE_TMPRING_SIZE.WAVESIZE";
        return CL_OUT_OF_RESOURCES;
    }
    m_scratchBytes = waves * waveBytes;
    if (!m_scratch.reserve(m_scratchBytes, 4096))
        return CL_OUT_OF_HOST_MEMORY;
    m_scratchBase = m_scratch.address();
    m_tmpring = uint32_t(waves & 0xfff) | (uint32_t((waveBytes / 1024) & 0x1fff) << 12);
    return CL_SUCCESS;
}

/// The AQL dispatch packet the dispatch pointer refers to, and the queue stand-in.
void DispatchBuilder::writePacket(const KernelLaunch& launch, const KernelEntry& entry) {
    DispatchPacket pkt{};
    // KERNEL_DISPATCH, barrier, system-scope acquire and release fences.
    pkt.header = uint16_t(2 | (1 << 8) | (2 << 9) | (2 << 11));
    pkt.setup = uint16_t(launch.workDim);
    for (int d = 0; d < 3; ++d) {
        pkt.workgroupSize[d] = uint16_t(launch.local[d]);
        pkt.gridSize[d] = uint32_t(launch.global[d]);
    }
    pkt.privateSegmentSize = m_privateBytes;
    pkt.groupSegmentSize = m_lds;
    pkt.kernelObject = entry.loadBase + entry.kernel->descriptorAddress;
    pkt.kernargAddress = m_kernarg.address();
    std::memcpy(m_packet.data(), &pkt, sizeof pkt);
    std::memset(m_queue.data(), 0, 256); // amd_queue_t stand-in: no doorbells, no signals
}

/// User SGPRs in the order AMDGPUUsage fixes, as kernel_code_properties enables them. Returns
/// how many the kernel asks for (only the first st.userData.size() are stored).
unsigned DispatchBuilder::putUserSgprs(const gcn::KernelDescriptor& kd,
                                       gcn::DispatchState& st) const {
    unsigned n = 0;
    auto user = [&](uint32_t v) {
        if (n < st.userData.size())
            st.userData[n] = v;
        ++n;
    };
    auto user64 = [&](uint64_t v) {
        user(uint32_t(v));
        user(uint32_t(v >> 32));
    };
    const uint16_t props = kd.kernelCodeProperties;
    if (props & gcn::kEnableSgprPrivateSegmentBuffer) {
        // Scratch buffer resource (V#, gfx9 layout): swizzled, ADD_TID_ENABLE, index stride
        // 64, 4-byte elements, so each lane's dwords interleave inside its wave's slot.
        user(uint32_t(m_scratchBase));
        user(uint32_t((m_scratchBase >> 32) & 0xffff) | (1u << 31));     // SWIZZLE_ENABLE, stride 0
        user(uint32_t(std::min<uint64_t>(m_scratchBytes, 0xffffffffu))); // NUM_RECORDS
        user(4u | (5u << 3) | (6u << 6) | (7u << 9)                      // DST_SEL X Y Z W
             | (7u << 12)                                                // NUM_FORMAT float
             | (4u << 15)                                                // DATA_FORMAT 32
             | (1u << 19)                                                // ELEMENT_SIZE 4 bytes
             | (3u << 21)                                                // INDEX_STRIDE 64
             | (1u << 23));                                              // ADD_TID_ENABLE
    }
    if (props & gcn::kEnableSgprDispatchPtr)
        user64(m_packet.address());
    if (props & gcn::kEnableSgprQueuePtr)
        user64(m_queue.address());
    if (props & gcn::kEnableSgprKernargSegmentPtr)
        user64(m_kernarg.address());
    if (props & gcn::kEnableSgprDispatchId)
        user64(m_dispatchId);
    if (props & gcn::kEnableSgprFlatScratchInit)
        user64(m_scratchBase); // gfx9: the queue's scratch base; the prologue adds the wave offset
    if (props & gcn::kEnableSgprPrivateSegmentSize)
        user(m_privateBytes);
    return n;
}

/// One command buffer: caches coherent with the host's writes, the dispatch, and the fence
/// that says it finished. On hardware, also the host ranges the GPU must see.
cl_int DispatchBuilder::emitStream(const gcn::DispatchState& st, unsigned userSgprs,
                                   const KernelEntry& entry) {
    m_fenceValue = m_dispatchId;
    m_pm4.clear();
    m_pm4.acquireMem(pm4::kCoherAllCaches);
    m_pm4.dispatch(st, userSgprs);
    m_fence = &m_modelFence;
    if (m_forHardware) {
        // The GPU writes the fence through a userptr mapping: give it a page of its own.
        if (!m_hwFence.reserve(4096, 4096))
            return CL_OUT_OF_HOST_MEMORY;
        m_fence = reinterpret_cast<uint64_t*>(m_hwFence.data());
        *m_fence = 0;
    }
    if (m_listRanges) {
        // The runtime's own blocks the dispatch reads or writes, besides buffers and images.
        m_hostRanges.emplace_back(m_kernarg.data(), m_kernargBytes);
        m_hostRanges.emplace_back(m_packet.data(), sizeof(DispatchPacket));
        m_hostRanges.emplace_back(m_queue.data(), 256);
        m_hostRanges.emplace_back(m_fence, sizeof *m_fence);
        if (m_scratchBytes)
            m_hostRanges.emplace_back(m_scratch.data(), m_scratchBytes);
        if (m_usesPrintf)
            m_hostRanges.emplace_back(m_printf.data(), kPrintfHeaderBytes + kPrintfBufferBytes);
        if (!m_imageDescs.empty())
            m_hostRanges.emplace_back(m_imageDescs.data(),
                                      m_imageDescs.size() * sizeof(KernelImageDesc));
        // The loaded code object: kernel code, descriptors and program-scope variables.
        m_hostRanges.emplace_back(reinterpret_cast<const void*>(entry.loadBase), entry.loadSize);
    }
    m_pm4.releaseMemFence(reinterpret_cast<uint64_t>(m_fence), m_fenceValue, true);
    return CL_SUCCESS;
}

} // namespace duet::rt::gcn_device
