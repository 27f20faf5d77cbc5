// The persistent program cache: clBuildProgram results stored on disk by key, between processes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace duet::rt::program_cache {

/// What an entry holds: a program build (clBuildProgram's binary and log), or one kernel's
/// machine code from a device's own compiler (the CPU device's optimised code, so that a later
/// process skips that compile). Both live in one folder under one bound; DUET_LOG names them
/// "program cache" and "code cache", and each has its own Stats.
enum class Shelf { Programs, Code };

/// Where and whether the cache works, read from the environment at every call:
/// DUET_CACHE=0 turns it off; the folder is $DUET_CACHE_DIR, else $XDG_CACHE_HOME/duet, else
/// $HOME/.cache/duet (no folder: off); DUET_CACHE_MAX_MB bounds its size (default 256).
struct Settings {
    bool enabled = false;
    std::filesystem::path directory;
    uint64_t maxBytes = 256ull << 20;
    Shelf shelf = Shelf::Programs;
};
Settings settings(Shelf shelf = Shelf::Programs);

/// A stored build: the program binary (to be checked by the device's loadBinary, as any
/// untrusted binary) and the build log of the build that made it.
struct Entry {
    std::string binary;
    std::string log;
};

/// The entry stored under `key` (hex digits), or none: absent, unreadable, truncated, with a
/// wrong checksum or written for another key (each of these is a miss, never an error).
/// A hit marks the entry as recently used.
std::optional<Entry> load(const Settings& s, const std::string& key);

/// Stores an entry under `key`: written to a temporary file in the folder and renamed over the
/// entry's name, so readers in other processes see the old entry, the new one or none; then the
/// oldest entries go while the folder is larger than `s.maxBytes`. Failures (read-only folder,
/// full disk) leave the build as it is; DUET_LOG says why.
void store(const Settings& s, const std::string& key, const std::string& binary,
           const std::string& log);

/// Removes the entry under `key` (its binary did not load), with `reason` under DUET_LOG.
void reject(const Settings& s, const std::string& key, const std::string& reason);

/// What this process did with the cache, for tests (counts, no timing).
struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t stores = 0;
    uint64_t rejected = 0; ///< entries found but not trusted (bad container or binary)
};
Stats stats(Shelf shelf = Shelf::Programs);

/// DUET_LOG is set (not "0"): the cache and clBuildProgram's phase timings write to stderr.
bool logEnabled();

} // namespace duet::rt::program_cache
