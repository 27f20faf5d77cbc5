// In-process memo of JIT-compiled kernels: a kernel module compiled once is not compiled again.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace duet::rt::cpu {

/// What compiling one kernel module gave: its object file and the vectoriser's report lines.
struct JitMemoEntry {
    std::string object;
    std::vector<std::string> report;
};

/// False when DUET_CPU_JIT_MEMO=0 (for comparisons): every kernel is compiled.
bool jitMemoEnabled();

/// The entry stored under `key` (a digest of everything the compilation reads), or null.
/// Thread-safe.
std::shared_ptr<const JitMemoEntry> findJitMemo(const std::string& key);

/// How many lookups found an entry in this process (for tests and DUET_LOG).
size_t jitMemoHits();

/// Stores `entry` under `key`; past the memo's bound (64 MiB) older entries are dropped.
/// Thread-safe.
void storeJitMemo(const std::string& key, JitMemoEntry entry);

} // namespace duet::rt::cpu
