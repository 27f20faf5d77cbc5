// Work-item functions for the NVIDIA device. libclc's nvptx versions know only the CUDA grid
// (ctaid, ntid, nctaid) and have no global offset, global size, work_dim or enqueued local
// size. Duet launches an NDRange as one or more CUDA grids (the uniform part, then the partial
// last work-group of each dimension as grids of their own) and passes what the grid registers
// cannot tell in a hidden last kernel parameter, the launch block below. Linked before libclc,
// so libclc's work-item functions are never pulled in.
//
// __duet_nv_launch() returns that parameter's address; the code generator
// (devices/nvidia/codegen/kernel_abi.cpp) inlines every function that reaches it into the
// kernels and replaces the call with the kernel's own parameter.

#define DUET_OVL __attribute__((overloadable))

/// The launch block: devices/nvidia/codegen/ptx_module.hpp (NvLaunchBlock) is the same layout.
typedef struct {
    ulong globalOffset[3];     ///< get_global_offset
    ulong globalSize[3];       ///< get_global_size
    uint enqueuedLocalSize[3]; ///< get_enqueued_local_size: the block size of the uniform part
    uint groupOffset[3];       ///< group id of this grid's first block (partial-group grids)
    uint numGroups[3];         ///< get_num_groups of the whole NDRange
    uint workDim;              ///< get_work_dim
    ulong printfBuffer;        ///< device address of the printf buffer (0: none)
} DuetNvLaunch;

const DuetNvLaunch* __duet_nv_launch(void);

static inline uint blockId(uint d) {
    switch (d) {
    case 0: return __nvvm_read_ptx_sreg_ctaid_x();
    case 1: return __nvvm_read_ptx_sreg_ctaid_y();
    default: return __nvvm_read_ptx_sreg_ctaid_z();
    }
}

static inline uint blockSize(uint d) {
    switch (d) {
    case 0: return __nvvm_read_ptx_sreg_ntid_x();
    case 1: return __nvvm_read_ptx_sreg_ntid_y();
    default: return __nvvm_read_ptx_sreg_ntid_z();
    }
}

static inline uint threadId(uint d) {
    switch (d) {
    case 0: return __nvvm_read_ptx_sreg_tid_x();
    case 1: return __nvvm_read_ptx_sreg_tid_y();
    default: return __nvvm_read_ptx_sreg_tid_z();
    }
}

static inline uint groupId(uint d) {
    return __duet_nv_launch()->groupOffset[d] + blockId(d);
}

DUET_OVL uint get_work_dim(void) { return __duet_nv_launch()->workDim; }

DUET_OVL size_t get_global_offset(uint d) {
    return d < 3 ? __duet_nv_launch()->globalOffset[d] : 0;
}

DUET_OVL size_t get_global_size(uint d) {
    return d < 3 ? __duet_nv_launch()->globalSize[d] : 1;
}

DUET_OVL size_t get_num_groups(uint d) { return d < 3 ? __duet_nv_launch()->numGroups[d] : 1; }

DUET_OVL size_t get_enqueued_local_size(uint d) {
    return d < 3 ? __duet_nv_launch()->enqueuedLocalSize[d] : 1;
}

DUET_OVL size_t get_local_size(uint d) { return d < 3 ? blockSize(d) : 1; }

DUET_OVL size_t get_local_id(uint d) { return d < 3 ? threadId(d) : 0; }

DUET_OVL size_t get_group_id(uint d) { return d < 3 ? groupId(d) : 0; }

DUET_OVL size_t get_global_id(uint d) {
    if (d >= 3)
        return 0;
    const DuetNvLaunch* l = __duet_nv_launch();
    // 32 x 32 -> 64-bit multiply (mul.wide.u32): ids need not fit in 32 bits.
    return (ulong)groupId(d) * l->enqueuedLocalSize[d] + threadId(d) + l->globalOffset[d];
}

DUET_OVL size_t get_global_linear_id(void) {
    const DuetNvLaunch* l = __duet_nv_launch();
    size_t x = get_global_id(0) - l->globalOffset[0];
    size_t y = get_global_id(1) - l->globalOffset[1];
    size_t z = get_global_id(2) - l->globalOffset[2];
    return (z * l->globalSize[1] + y) * l->globalSize[0] + x;
}

DUET_OVL size_t get_local_linear_id(void) {
    return ((size_t)threadId(2) * blockSize(1) + threadId(1)) * blockSize(0) + threadId(0);
}
