// The memo of JIT-compiled kernels: a kernel module compiled once is not compiled again, in this
// process (in memory) and, for optimised code, in later processes (the persistent code cache).
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

/// How far a lookup or a store reaches: this process's memory only (quick code, cheap to make
/// again), or also the persistent code cache on disk (optimised code), which follows the
/// program cache's settings (DUET_CACHE, DUET_CACHE_DIR, DUET_CACHE_MAX_MB).
enum class MemoReach { Process, Disk };

/// False when DUET_CPU_JIT_MEMO=0 (for comparisons): every kernel is compiled.
bool jitMemoEnabled();

/// Whether MemoReach::Disk reaches the disk: the memo and the program cache are both on.
bool codeCacheOn();

/// The entry stored under `key` (a digest of everything the compilation reads), or null. With
/// MemoReach::Disk an entry only an earlier process stored is read from the code cache (and
/// kept in memory from then on); `fromDisk` tells which. Thread-safe.
std::shared_ptr<const JitMemoEntry>
findJitMemo(const std::string& key, MemoReach reach = MemoReach::Process, bool* fromDisk = nullptr);

/// How many lookups found an entry in this process (for tests and DUET_LOG).
size_t jitMemoHits();

/// Stores `entry` under `key`; past the memo's bound (64 MiB) older entries are dropped. With
/// MemoReach::Disk it is also written to the code cache (a file write: call it without locks
/// that launches take). Thread-safe.
void storeJitMemo(const std::string& key, JitMemoEntry entry, MemoReach reach = MemoReach::Process);

/// The entry under `key`, read from the code cache (`fromDisk`) or from memory, did not load
/// into the JIT (`reason`): forgotten in memory and, if read from disk, removed from the code
/// cache (DUET_LOG says why), so the kernel is compiled again.
void rejectJitMemo(const std::string& key, bool fromDisk, const std::string& reason);

} // namespace duet::rt::cpu
