// Device-side enqueue for the GCN device, the GPU half (OpenCL C 2.0 §6.13.17): enqueue_kernel,
// enqueue_marker, device events and the get_kernel_* queries, writing launch records into a
// ring in memory both sides see. The runtime half (devices/gcn/device_enqueue_ring.*, the
// dispatcher) allocates the ring per host launch, passes it as the kernel's hidden_default_queue
// argument, fills each block kernel's runtime handle (the `<kernel>.runtime_handle` symbol that
// LLVM's AMDGPU backend names in `.device_enqueue_symbol`) when the code object is loaded, and
// drains the ring after each dispatch's fence. Compiled in the OpenCL C 2.0 pass only.
#if __OPENCL_C_VERSION__ >= 200

// clang's enqueue_kernel return codes (opencl-c-base.h spells only some of them).
#define DUET_CLK_ENQUEUE_FAILURE (-101)
#define DUET_CLK_INVALID_QUEUE (-102)
#define DUET_CLK_INVALID_NDRANGE (-160)
#define DUET_CLK_INVALID_EVENT_WAIT_LIST (-57)
#define DUET_CLK_DEVICE_QUEUE_FULL (-161)
#define DUET_CLK_EVENT_ALLOCATION_FAILURE (-100)
#define DUET_CLK_INVALID_ARG_SIZE (-51)

/// The ring's header, at the address get_default_queue() returns (duet_queue is a global pointer on
/// amdgcn). Events and records follow it; the runtime sets every field but the atomics' start.
typedef struct {
    uint magic;           ///< DUET_RING_MAGIC: what is_valid_queue-like checks compare
    uint recordBytes;     ///< bytes for records (CL_QUEUE_SIZE)
    atomic_uint head;     ///< bytes of records reserved so far (device scope)
    atomic_uint full;     ///< calls refused with CLK_DEVICE_QUEUE_FULL
    uint eventCount;      ///< slots in the event pool (CL_DEVICE_MAX_ON_DEVICE_EVENTS)
    atomic_uint eventNext; ///< slots handed out so far
    ulong eventsOffset;   ///< from the header to the first event slot
    ulong recordsOffset;  ///< from the header to the first record
    uint freeCount;       ///< slots the runtime found free again before this dispatch
    atomic_uint freeNext; ///< of those, handed out so far
    ulong freeOffset;     ///< from the header to their indices (uint each)
} duet_ring;
#define DUET_RING_MAGIC 0x44524e47u /* "DRNG" */

/// One duet_event: a slot of the pool; the runtime completes kernel and marker events, and
/// before each dispatch writes the status and times of those that completed.
typedef struct {
    atomic_int refs;   ///< the kernels' references; 0: free or released
    atomic_int status; ///< CL_SUBMITTED .. CL_COMPLETE, or negative
    uint user;         ///< 1 for create_user_event
    uint pad;
    ulong profileOut;  ///< capture_event_profiling_info's destination (global address) or 0
    ulong execTime;    ///< CLK_PROFILING_COMMAND_EXEC_TIME's two values, once complete
    ulong completeTime;
} duet_ring_event;

/// What the runtime writes into a block kernel's runtime handle (16 bytes) after loading.
typedef struct {
    uint kernelIndex;        ///< the block kernel's index in the code object
    uint workGroupSize;      ///< get_kernel_work_group_size
    uint preferredMultiple;  ///< get_kernel_preferred_work_group_size_multiple (the wave)
    uint pad;
} duet_block_handle;

/// One record: this header, then `waitCount` event slot indices (uint), `localCount` __local
/// sizes (uint), then the block literal (`blockBytes`, 8-aligned). `bytes` is written last,
/// with release order, so the drain never reads a half-written record.
typedef struct {
    atomic_uint bytes; ///< 0 until complete
    uint kind;         ///< 1 kernel, 2 marker, 0 nothing (an event allocation failed)
    ulong handle;      ///< the block kernel's runtime handle (global address); 0 for a marker
    int flags;         ///< CLK_ENQUEUE_FLAGS_*
    uint workDim;
    ulong offsets[3], globals[3], locals[3];
    uint waitCount, localCount, blockBytes;
    int event;         ///< the returned event's slot, -1 if none
} duet_ring_record;

/// queue_t and clk_event_t as they are on amdgcn (global pointers), typed: OpenCL C cannot cast
/// its opaque types, so the definitions below take these and carry the mangled names of the
/// builtins they define in asm labels.
typedef global duet_ring* duet_queue;
typedef global duet_ring_event* duet_event;

#define DUET_KIND_NONE 0u
#define DUET_KIND_KERNEL 1u
#define DUET_KIND_MARKER 2u

static global duet_ring* duet_ring_of(duet_queue q) {
    global duet_ring* r = q;
    return r && r->magic == DUET_RING_MAGIC ? r : 0;
}

static global duet_ring_event* duet_events(global duet_ring* r) {
    return (global duet_ring_event*)((global char*)r + r->eventsOffset);
}

/// The slot of a kernel-held event of `r`, or -1.
static int duet_event_slot(global duet_ring* r, duet_event e) {
    global duet_ring_event* base = duet_events(r);
    global duet_ring_event* p = e;
    if (p < base || p >= base + r->eventCount)
        return -1;
    if (((global char*)p - (global char*)base) % sizeof(duet_ring_event))
        return -1;
    return atomic_load_explicit(&p->refs, memory_order_acquire, memory_scope_device) > 0
               ? (int)(p - base)
               : -1;
}

static int duet_new_event(global duet_ring* r, uint user) {
    // Slots released and completed before this dispatch first, then fresh ones.
    uint i = r->eventCount;
    if (r->freeCount) {
        uint f = atomic_fetch_add_explicit(&r->freeNext, 1u, memory_order_relaxed,
                                          memory_scope_device);
        if (f < r->freeCount)
            i = ((const global uint*)((const global char*)r + r->freeOffset))[f];
    }
    if (i >= r->eventCount)
        i = atomic_fetch_add_explicit(&r->eventNext, 1u, memory_order_relaxed,
                                      memory_scope_device);
    if (i >= r->eventCount)
        return -1;
    global duet_ring_event* e = duet_events(r) + i;
    e->user = user;
    e->profileOut = 0;
    atomic_store_explicit(&e->status, user ? CL_SUBMITTED : CL_QUEUED, memory_order_relaxed,
                          memory_scope_device);
    atomic_store_explicit(&e->refs, 1, memory_order_release, memory_scope_device);
    return (int)i;
}

/// Work-items per group of a launch of `nd` for a kernel of at most `limit` per group, as the
/// runtime resolves it (core/device_enqueue.cpp, resolveDeviceNDRange): the local size as
/// given, or the largest divisor of the global size in dimension 0 up to 64; 0 when `nd` is
/// not valid (no work-items, a local size of 0 beside given ones, more than `limit`). A global
/// size need not be a multiple of the local one: OpenCL C 2.0's non-uniform work-groups, which
/// the dispatch runs as partial groups.
static size_t duet_group_items(const private ndrange_t* nd, uint limit) {
    if (nd->workDimension < 1 || nd->workDimension > 3)
        return 0;
    bool given = false;
    for (uint d = 0; d < nd->workDimension; ++d) {
        if (nd->globalWorkSize[d] == 0)
            return 0;
        given = given || nd->localWorkSize[d] != 0;
    }
    size_t items = 1;
    if (given) {
        for (uint d = 0; d < nd->workDimension; ++d) {
            if (nd->localWorkSize[d] == 0)
                return 0;
            items *= nd->localWorkSize[d];
            if (items > limit)
                return 0;
        }
        return items;
    }
    size_t g = nd->globalWorkSize[0];
    for (size_t c = min(min((size_t)64, (size_t)limit), g); c >= 1; --c)
        if (g % c == 0)
            return c;
    return 0;
}

static int duet_enqueue(duet_queue q, uint kind, int flags, const private ndrange_t* nd, uint nwait,
                        const duet_event* wait, duet_event* ret, const void* handle,
                        const void* block, uint nlocal, const private size_t* sizes) {
    global duet_ring* r = duet_ring_of(q);
    if (!r)
        return DUET_CLK_INVALID_QUEUE;
    if ((nwait == 0) != (wait == 0))
        return DUET_CLK_INVALID_EVENT_WAIT_LIST;
    if (kind == DUET_KIND_KERNEL) {
        if (flags < CLK_ENQUEUE_FLAGS_NO_WAIT || flags > CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP)
            return DUET_CLK_ENQUEUE_FAILURE;
        // The block kernel's work-group size limit, from its handle (the runtime's).
        const uint limit = ((const global duet_block_handle*)handle)->workGroupSize;
        if (!duet_group_items(nd, limit))
            return DUET_CLK_INVALID_NDRANGE;
        for (uint i = 0; i < nlocal; ++i)
            if (sizes[i] == 0)
                return DUET_CLK_INVALID_ARG_SIZE;
    }
    int slots[64];
    if (nwait > 64)
        return DUET_CLK_INVALID_EVENT_WAIT_LIST;
    for (uint i = 0; i < nwait; ++i)
        if ((slots[i] = duet_event_slot(r, wait[i])) < 0)
            return DUET_CLK_INVALID_EVENT_WAIT_LIST;
    // The block literal starts with its size (clang's generic block layout).
    uint blockBytes = block ? *(const int*)block : 0;
    uint bytes = (uint)sizeof(duet_ring_record) + 4u * (nwait + nlocal);
    bytes = (bytes + 7u) & ~7u;
    bytes += (blockBytes + 7u) & ~7u;
    uint at = atomic_fetch_add_explicit(&r->head, bytes, memory_order_relaxed,
                                        memory_scope_device);
    if (at > r->recordBytes || r->recordBytes - at < bytes) {
        atomic_fetch_add_explicit(&r->full, 1u, memory_order_relaxed, memory_scope_device);
        return DUET_CLK_DEVICE_QUEUE_FULL;
    }
    global char* base = (global char*)r + r->recordsOffset + at;
    global duet_ring_record* rec = (global duet_ring_record*)base;
    int ev = -1;
    if (ret && (ev = duet_new_event(r, 0)) < 0) {
        // The space is reserved: publish it as a record that asks for nothing, so the drain
        // can step over it.
        rec->kind = DUET_KIND_NONE;
        atomic_store_explicit(&rec->bytes, bytes, memory_order_release, memory_scope_device);
        return DUET_CLK_EVENT_ALLOCATION_FAILURE;
    }
    rec->kind = kind;
    rec->handle = (ulong)handle;
    rec->flags = flags;
    rec->workDim = kind == DUET_KIND_KERNEL ? nd->workDimension : 0;
    for (uint d = 0; d < 3; ++d) {
        rec->offsets[d] = kind == DUET_KIND_KERNEL ? nd->globalWorkOffset[d] : 0;
        rec->globals[d] = kind == DUET_KIND_KERNEL ? nd->globalWorkSize[d] : 1;
        rec->locals[d] = kind == DUET_KIND_KERNEL ? nd->localWorkSize[d] : 0;
    }
    rec->waitCount = nwait;
    rec->localCount = nlocal;
    rec->blockBytes = blockBytes;
    rec->event = ev;
    global uint* tail = (global uint*)(rec + 1);
    for (uint i = 0; i < nwait; ++i)
        tail[i] = (uint)slots[i];
    for (uint i = 0; i < nlocal; ++i)
        tail[nwait + i] = (uint)sizes[i];
    global char* lit = base + (((uint)sizeof(duet_ring_record) + 4u * (nwait + nlocal) + 7u) & ~7u);
    for (uint i = 0; i < blockBytes; ++i)
        lit[i] = ((const char*)block)[i];
    if (ret)
        *ret = duet_events(r) + ev;
    atomic_store_explicit(&rec->bytes, bytes, memory_order_release, memory_scope_device);
    return CLK_SUCCESS;
}

// How clang calls these (CGBuiltin, amdgcn): the ndrange and the __local sizes by private
// pointer (the caller's temporaries; __enqueue_kernel_basic's ndrange `byval`, which
// devices/gcn/codegen/finalize.cpp drops so that the call passes the pointer), handle, block,
// wait list and returned event by generic pointer.
int __enqueue_kernel_basic(duet_queue q, int flags, private ndrange_t* nd, void* handle, void* block) {
    return duet_enqueue(q, DUET_KIND_KERNEL, flags, nd, 0, 0, 0, handle, block, 0, 0);
}

int __enqueue_kernel_basic_events(duet_queue q, int flags, private ndrange_t* nd, uint nwait,
                                  const duet_event* wait, duet_event* ret, void* handle,
                                  void* block) {
    return duet_enqueue(q, DUET_KIND_KERNEL, flags, nd, nwait, wait, ret, handle, block, 0, 0);
}

int __enqueue_kernel_varargs(duet_queue q, int flags, private ndrange_t* nd, void* handle,
                             void* block, uint nlocal, private size_t* sizes) {
    return duet_enqueue(q, DUET_KIND_KERNEL, flags, nd, 0, 0, 0, handle, block, nlocal, sizes);
}

int __enqueue_kernel_events_varargs(duet_queue q, int flags, private ndrange_t* nd, uint nwait,
                                    const duet_event* wait, duet_event* ret, void* handle,
                                    void* block, uint nlocal, private size_t* sizes) {
    return duet_enqueue(q, DUET_KIND_KERNEL, flags, nd, nwait, wait, ret, handle, block, nlocal,
                        sizes);
}

int duet_enqueue_marker(duet_queue q, uint nwait, const duet_event* wait,
                                                 duet_event* ret) __asm__("_Z14enqueue_marker9ocl_queuejPU3AS0K12ocl_clkeventPU3AS0S0_");
int duet_enqueue_marker(duet_queue q, uint nwait, const duet_event* wait,
                                                 duet_event* ret) {
    if (!nwait || !wait || !ret)
        return DUET_CLK_INVALID_EVENT_WAIT_LIST;
    return duet_enqueue(q, DUET_KIND_MARKER, 0, 0, nwait, wait, ret, 0, 0, 0, 0);
}

uint __get_kernel_work_group_size_impl(void* handle, void* block) {
    (void)block;
    return ((const global duet_block_handle*)handle)->workGroupSize;
}

uint __get_kernel_preferred_work_group_size_multiple_impl(void* handle, void* block) {
    (void)block;
    return ((const global duet_block_handle*)handle)->preferredMultiple;
}

/// The sub-group queries: a sub-group is the wave (64 work-items).
uint __get_kernel_max_sub_group_size_for_ndrange_impl(const private ndrange_t* nd, void* handle,
                                                      void* block) {
    (void)block;
    size_t items = duet_group_items(nd, ((const global duet_block_handle*)handle)->workGroupSize);
    return (uint)min(items, (size_t)64);
}

uint __get_kernel_sub_group_count_for_ndrange_impl(const private ndrange_t* nd, void* handle,
                                                   void* block) {
    (void)block;
    size_t items = duet_group_items(nd, ((const global duet_block_handle*)handle)->workGroupSize);
    return (uint)((items + 63) / 64);
}

/// The ring of the host launch now running; the runtime writes it into hidden_default_queue.
duet_queue duet_get_default_queue(void) __asm__("_Z17get_default_queuev");
duet_queue duet_get_default_queue(void) {
    // Code object v5's implicit arguments: hidden_default_queue at offset 104.
    const constant char* implicit = (const constant char*)__builtin_amdgcn_implicitarg_ptr();
    return (duet_queue)(*(const constant ulong*)(implicit + 104));
}

static global duet_ring_event* duet_event_ptr(duet_event e) {
    return e;
}

duet_event duet_create_user_event(void) __asm__("_Z17create_user_eventv");
duet_event duet_create_user_event(void) {
    global duet_ring* r = duet_ring_of(duet_get_default_queue());
    int i = r ? duet_new_event(r, 1) : -1;
    return i < 0 ? 0 : duet_events(r) + i;
}

bool duet_is_valid_event(duet_event e) __asm__("_Z14is_valid_event12ocl_clkevent");
bool duet_is_valid_event(duet_event e) {
    global duet_ring* r = duet_ring_of(duet_get_default_queue());
    return r && duet_event_slot(r, e) >= 0;
}

void duet_retain_event(duet_event e) __asm__("_Z12retain_event12ocl_clkevent");
void duet_retain_event(duet_event e) {
    if (duet_is_valid_event(e))
        atomic_fetch_add_explicit(&duet_event_ptr(e)->refs, 1, memory_order_relaxed,
                                  memory_scope_device);
}

void duet_release_event(duet_event e) __asm__("_Z13release_event12ocl_clkevent");
void duet_release_event(duet_event e) {
    if (duet_is_valid_event(e))
        atomic_fetch_sub_explicit(&duet_event_ptr(e)->refs, 1, memory_order_release,
                                  memory_scope_device);
}

void duet_set_user_event_status(duet_event e, int status) __asm__("_Z21set_user_event_status12ocl_clkeventi");
void duet_set_user_event_status(duet_event e, int status) {
    if (!duet_is_valid_event(e) || !duet_event_ptr(e)->user)
        return;
    if (status != CL_COMPLETE && status >= 0)
        return;
    atomic_store_explicit(&duet_event_ptr(e)->status, status, memory_order_release,
                          memory_scope_device);
}

void duet_capture_event_profiling_info(duet_event e, clk_profiling_info name, global void* value)
    __asm__("_Z28capture_event_profiling_info12ocl_clkeventiPU3AS1v");
void duet_capture_event_profiling_info(duet_event e, clk_profiling_info name, global void* value) {
    // Nothing to capture: a name OpenCL C does not define, no destination (NULL is ignored, as
    // OpenCL's NULL destinations are), a user event or no event of this launch.
    if (name != CLK_PROFILING_COMMAND_EXEC_TIME || !value || !duet_is_valid_event(e))
        return;
    global duet_ring_event* p = duet_event_ptr(e);
    if (p->user)
        return;
    global ulong* out = (global ulong*)value;
    if (atomic_load_explicit(&p->status, memory_order_acquire, memory_scope_device) ==
        CL_COMPLETE) {
        // Completed before this dispatch: the runtime left its times in the slot.
        vstore2((ulong2)(p->execTime, p->completeTime), 0, out);
        return;
    }
    // The runtime writes the times when the event completes, after this dispatch, where no check
    // sees it: the destination is written here, one 16-byte store, so that a checked dispatch
    // (DUET_KERNEL_CHECKS) stops at a destination outside its memory, naming this kernel.
    vstore2((ulong2)(0, 0), 0, out);
    p->profileOut = (ulong)value;
}

#endif
