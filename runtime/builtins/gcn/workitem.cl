// Work-item functions for the GCN device on the code object v5 ABI. libclc's amdgcn--amdhsa
// versions read an older implicit-argument layout (work_dim and 32-bit global offsets at the
// start) and ignore partial work-groups; these read the v5 hidden arguments the runtime lays
// out (AMDGPUUsage, "Code Object V5 Metadata"): block counts at 0/4/8, group sizes (u16) at
// 12/14/16, remainders (u16) at 18/20/22, global offsets (u64) at 40/48/56, grid dims (u16)
// at 64. They are linked before libclc, so libclc's definitions are never pulled in.

#define DUET_OVL __attribute__((overloadable))
#define IMPLICIT ((__constant uchar*)__builtin_amdgcn_implicitarg_ptr())

static inline uint blockCount(uint d) { return ((__constant uint*)IMPLICIT)[d]; }
static inline uint groupSize(uint d) { return ((__constant ushort*)(IMPLICIT + 12))[d]; }
static inline uint remainderSize(uint d) { return ((__constant ushort*)(IMPLICIT + 18))[d]; }
static inline ulong globalOffset(uint d) { return ((__constant ulong*)(IMPLICIT + 40))[d]; }

static inline uint groupId(uint d) {
    switch (d) {
    case 0: return __builtin_amdgcn_workgroup_id_x();
    case 1: return __builtin_amdgcn_workgroup_id_y();
    case 2: return __builtin_amdgcn_workgroup_id_z();
    default: return 0;
    }
}

static inline uint localId(uint d) {
    switch (d) {
    case 0: return __builtin_amdgcn_workitem_id_x();
    case 1: return __builtin_amdgcn_workitem_id_y();
    case 2: return __builtin_amdgcn_workitem_id_z();
    default: return 0;
    }
}

DUET_OVL uint get_work_dim(void) { return *(__constant ushort*)(IMPLICIT + 64); }

DUET_OVL size_t get_global_offset(uint d) { return d < 3 ? globalOffset(d) : 0; }

DUET_OVL size_t get_num_groups(uint d) { return d < 3 ? blockCount(d) : 1; }

DUET_OVL size_t get_enqueued_local_size(uint d) { return d < 3 ? groupSize(d) : 1; }

DUET_OVL size_t get_group_id(uint d) { return groupId(d); }

DUET_OVL size_t get_local_id(uint d) { return localId(d); }

DUET_OVL size_t get_local_size(uint d) {
    if (d >= 3)
        return 1;
    uint r = remainderSize(d);
    return (r != 0 && groupId(d) == blockCount(d) - 1) ? r : groupSize(d);
}

DUET_OVL size_t get_global_size(uint d) {
    if (d >= 3)
        return 1;
    uint r = remainderSize(d);
    size_t full = (size_t)blockCount(d) * groupSize(d);
    return r ? full - groupSize(d) + r : full;
}

DUET_OVL size_t get_global_id(uint d) {
    if (d >= 3)
        return 0;
    return (size_t)groupId(d) * groupSize(d) + localId(d) + globalOffset(d);
}

DUET_OVL size_t get_global_linear_id(void) {
    size_t x = get_global_id(0) - globalOffset(0);
    size_t y = get_global_id(1) - globalOffset(1);
    size_t z = get_global_id(2) - globalOffset(2);
    return (z * get_global_size(1) + y) * get_global_size(0) + x;
}

DUET_OVL size_t get_local_linear_id(void) {
    return (localId(2) * get_local_size(1) + localId(1)) * get_local_size(0) + localId(0);
}
