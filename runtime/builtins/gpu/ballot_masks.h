// cl_khr_subgroup_ballot's functions that only do arithmetic on a ballot's bits and the lane's
// number, shared by every device's sub-group library: the GPU devices' (gpu/sub_group_ext.h, a
// sub-group being the wave or warp) and the CPU device's (cpu/sub_group.cl, a sub-group being
// the vector width). The includer defines DUET_BALLOT_OVL (its overload attribute) and provides
// get_sub_group_local_id and get_max_sub_group_size.
//
// A uint4 holds 128 lanes' bits; a sub-group uses at most the first 64.

static inline uint4 duet_ballot_of(ulong m) {
    return (uint4)((uint)m, (uint)(m >> 32), 0, 0);
}
static inline ulong duet_ballot_bits(uint4 v) {
    return (ulong)v.x | (ulong)v.y << 32;
}
/// The bits of lanes below the largest sub-group's size (a partial last sub-group counts the
/// bits of the lanes it lacks too, as the CTS does).
static inline ulong duet_ballot_size_mask(void) {
    const uint n = get_max_sub_group_size();
    return n >= 64 ? ~0ul : (1ul << n) - 1;
}

DUET_BALLOT_OVL int sub_group_inverse_ballot(uint4 value) {
    return (duet_ballot_bits(value) >> get_sub_group_local_id()) & 1;
}

DUET_BALLOT_OVL int sub_group_ballot_bit_extract(uint4 value, uint index) {
    const uint w = index < 128 ? ((uint*)&value)[index >> 5] : 0;
    return (w >> (index & 31)) & 1;
}

DUET_BALLOT_OVL uint sub_group_ballot_bit_count(uint4 value) {
    return (uint)__builtin_popcountl(duet_ballot_bits(value) & duet_ballot_size_mask());
}

// (2ul << 63) is 0: lane 63's "up to and including" mask, 0 - 1, is every lane.
DUET_BALLOT_OVL uint sub_group_ballot_inclusive_scan(uint4 value) {
    const ulong upTo = (2ul << get_sub_group_local_id()) - 1;
    return (uint)__builtin_popcountl(duet_ballot_bits(value) & upTo);
}

DUET_BALLOT_OVL uint sub_group_ballot_exclusive_scan(uint4 value) {
    const ulong below = (1ul << get_sub_group_local_id()) - 1;
    return (uint)__builtin_popcountl(duet_ballot_bits(value) & below);
}

DUET_BALLOT_OVL uint sub_group_ballot_find_lsb(uint4 value) {
    return (uint)__builtin_ctzl(duet_ballot_bits(value) & duet_ballot_size_mask());
}

DUET_BALLOT_OVL uint sub_group_ballot_find_msb(uint4 value) {
    return 63u - (uint)__builtin_clzl(duet_ballot_bits(value) & duet_ballot_size_mask());
}

DUET_BALLOT_OVL uint4 get_sub_group_eq_mask(void) {
    return duet_ballot_of(1ul << get_sub_group_local_id());
}
DUET_BALLOT_OVL uint4 get_sub_group_ge_mask(void) {
    return duet_ballot_of(duet_ballot_size_mask() & ~((1ul << get_sub_group_local_id()) - 1));
}
DUET_BALLOT_OVL uint4 get_sub_group_gt_mask(void) {
    return duet_ballot_of(duet_ballot_size_mask() & ~((2ul << get_sub_group_local_id()) - 1));
}
DUET_BALLOT_OVL uint4 get_sub_group_le_mask(void) {
    return duet_ballot_of((2ul << get_sub_group_local_id()) - 1);
}
DUET_BALLOT_OVL uint4 get_sub_group_lt_mask(void) {
    return duet_ballot_of((1ul << get_sub_group_local_id()) - 1);
}
