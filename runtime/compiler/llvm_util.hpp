// Small LLVM helpers shared by the compiler's translation units (bitcode I/O, builtin library).
// Private to runtime/compiler and the devices' code generators: includes LLVM headers.
#pragma once

#include "compiler/binary.hpp"
#include "core/toolchain.hpp"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace duet::rt {

/// The start that the GPU devices' binary loaders share: reads the container, checks that its
/// bitcode targets `arch` (a triple prefix; `device` names the device in the reason) and answers
/// a compiled object or library with its bitcode. Returns that answer (or the failure); nullopt
/// for an executable, whose parts are then in `executable` for the device to load.
std::optional<LoadBinaryResult> startGpuBinaryLoad(std::span<const unsigned char> bytes,
                                                   std::string_view arch, std::string_view device,
                                                   ProgramBinary& executable);

/// Named metadata listing functions the user declared in OpenCL C source (not builtins) that
/// the compiled object leaves undefined; the linker reports them if nothing defines them.
inline constexpr const char* kUserDeclarationsMD = "duet.user.undefined";

/// Parses bitcode; on failure returns null and sets `error` (when given).
std::unique_ptr<llvm::Module> parseBitcode(std::string_view bitcode, llvm::LLVMContext& ctx,
                                           std::string* error = nullptr);

/// Serialises a module to bitcode.
std::string writeBitcode(const llvm::Module& module);

/// True when the bytes start like LLVM bitcode (raw or wrapper magic). Defined in binary.cpp,
/// which the fuzz targets build without the rest of the compiler.
bool looksLikeBitcode(std::string_view bytes);

struct BuildOptions;

/// A bitcode library read once per process and kept (libclc: ~10 MB; modules are materialised
/// lazily from it, so a build reads only what it links): `relative` beside the runtime (a
/// relocatable bundle carries it, core/data_files.hpp), else `installed`. Null with `error` set
/// when it cannot be read. Thread-safe.
const llvm::MemoryBuffer* libraryBitcode(const std::string& relative, const std::string& installed,
                                         std::string& error);

/// Links into `m` only what `m` still needs of the library `bitcode`, whose bytes live as long
/// as the process (an embedded library, or libraryBitcode's): the closure of `m`'s calls,
/// copied out of the library parsed once per process (library_closure.hpp). False with an
/// "error:" line in `error` (naming `what`) on failure.
bool linkLazily(llvm::Module& m, llvm::MemoryBufferRef bitcode, const std::string& what,
                std::string& error);

/// LLVM's default reaction to an error diagnostic (from the linker, say) is exit(1): collects
/// them for the build log instead, as "error: ..." lines in the string returned (which must
/// outlive `ctx`'s use).
std::shared_ptr<std::string> collectDiagnostics(llvm::LLVMContext& ctx);

/// Puts the fast-math flags the build options allow (-cl-fast-relaxed-math, -cl-mad-enable,
/// ...) on every floating-point operation of `m`, and the matching function attributes.
void applyFastMath(llvm::Module& m, const BuildOptions& options);

/// One "error:" line for each used declaration nothing defines (a user prototype without a
/// body, or a builtin the device's library lacks); `device` names the device in the message.
/// `claim` sees each undefined function first: returning true skips it (it may append its own
/// message to the report).
std::string undefinedSymbolReport(llvm::Module& m, std::string_view device,
                                  llvm::function_ref<bool(llvm::StringRef, std::string&)> claim);

/// Defines the image library's accessors for devices whose images are plain memory (GCN,
/// NVIDIA): an image value is the device address of its descriptor (core/image.hpp
/// KernelImageDesc, written per launch by the device), a sampler value its CLK_* bits. clang
/// types both as pointers (an image in the target's global or constant space, a sampler in its
/// constant space); the library (builtins/cpu/image.cl) reaches them through declaration-only
/// accessors, defined here as always-inline functions: `__duet_image_ptr` the descriptor pointer
/// as a global pointer, `__duet_sampler_bits` the pointer's low 32 bits, and
/// `__translate_sampler_initializer` (sampler literals) the bits as a pointer value, so that a
/// literal and a sampler argument look alike. A declaration of another shape is left alone (and
/// reported as undefined).
void defineImageAccessors(llvm::Module& m);

/// Defines the pipe library's accessors (builtins/cpu/pipe.cl) for devices where clang types a
/// pipe and a reserve_id_t as plain pointers (amdgcn: global pointers): `__duet_pipe_ptr_ro/wo`
/// the pipe as a global pointer to its storage, `__duet_make_reserve_id` the reservation bits as
/// a pointer value and `__duet_reserve_id_bits` back. Always-inline, like defineImageAccessors;
/// a declaration of another shape is left alone (and reported as undefined).
void definePipeAccessors(llvm::Module& m);

/// The bitcode of the CPU builtin library, embedded at build time.
std::string_view cpuBuiltinLibraryBitcode();

/// Names of the functions the CPU builtin library defines. Parsed once; thread-safe.
const llvm::StringSet<>& cpuBuiltinLibrarySymbols();

/// Whether `name` is the CPU builtin library's marker of system-scope atomics
/// (`__duet_scope_all`, builtins/cpu/atomics_as.cl): an identity on the atomic's pointer,
/// declared, never defined, removed by the CPU code generator once it has looked
/// (devices/cpu/jit/local_atomics.hpp). Passes that trace a pointer to its root look through it.
bool isAtomicScopeMarker(llvm::StringRef name);

} // namespace duet::rt
