// The loop vectoriser's table of glibc's libmvec vector maths functions (libmvec.hpp).
#include "devices/cpu/jit/libmvec.hpp"

#include <llvm/Support/DynamicLibrary.h>

#include <mutex>
#include <set>

using namespace llvm;

namespace duet::rt::cpu {

/// Vector variants of libm functions from glibc's libmvec, for the loop vectoriser. LLVM's own
/// LIBMVEC_X86 table covers six functions at SSE/AVX2 widths; this one covers what libmvec
/// exports at every width the target has. libmvec is accurate to 4 ulp, so functions whose
/// OpenCL limit is tighter (exp*, log*, cbrt: 2-3 ulp) only map under the unsafe-math options.
std::vector<VecDesc> libmvecTable(const std::string& features, bool unsafeMath) {
    static sys::DynamicLibrary libmvec = sys::DynamicLibrary::getPermanentLibrary("libmvec.so.1");
    struct MathFn {
        const char* name;
        unsigned arity;
        bool tightLimit; ///< OpenCL's ulp limit is under libmvec's 4
    };
    static const MathFn fns[] = {
        {"acos", 1, false}, {"acosh", 1, false}, {"asin", 1, false},  {"asinh", 1, false},
        {"atan", 1, false}, {"atanh", 1, false}, {"cos", 1, false},   {"cosh", 1, false},
        {"erf", 1, false},  {"erfc", 1, false},  {"sin", 1, false},   {"sinh", 1, false},
        {"tan", 1, false},  {"tanh", 1, false},  {"atan2", 2, false}, {"hypot", 2, false},
        {"pow", 2, false},  {"exp", 1, true},    {"exp2", 1, true},   {"exp10", 1, true},
        {"expm1", 1, true}, {"log", 1, true},    {"log2", 1, true},   {"log10", 1, true},
        {"log1p", 1, true}, {"cbrt", 1, true},
    };
    struct Isa {
        char letter;
        unsigned floatLanes;
        const char* feature; ///< required target feature, null for the x86-64 baseline
    };
    static const Isa isas[] = {{'b', 4, nullptr}, {'d', 8, "+avx2"}, {'e', 16, "+avx512f"}};
    // The table's strings must outlive the TargetLibraryInfoImpl: keep them all. Never
    // destroyed: the background compile thread may be optimising while the process exits.
    static std::mutex* namesMutex = new std::mutex;
    static std::set<std::string>* names = new std::set<std::string>;
    auto keep = [&](std::string n) -> StringRef {
        std::lock_guard<std::mutex> lock(*namesMutex);
        return *names->insert(std::move(n)).first;
    };
    std::vector<VecDesc> table;
    if (!libmvec.isValid())
        return table;
    for (const Isa& isa : isas) {
        if (isa.feature && features.find(isa.feature) == std::string::npos)
            continue;
        for (const MathFn& fn : fns) {
            if (fn.tightLimit && !unsafeMath)
                continue;
            for (bool isDouble : {false, true}) {
                const unsigned lanes = isDouble ? isa.floatLanes / 2 : isa.floatLanes;
                const std::string params(fn.arity, 'v');
                const std::string scalar = std::string(fn.name) + (isDouble ? "" : "f");
                const std::string vector = std::string("_ZGV") + isa.letter + "N" +
                                           std::to_string(lanes) + params + "_" + scalar;
                if (!libmvec.getAddressOfSymbol(vector.c_str()))
                    continue;
                StringRef abi = keep("_ZGV_LLVM_N" + std::to_string(lanes) + params);
                StringRef vec = keep(vector);
                const std::string intrinsic =
                    std::string("llvm.") + fn.name + (isDouble ? ".f64" : ".f32");
                for (const std::string& key : {scalar, intrinsic})
                    table.emplace_back(keep(key), vec, ElementCount::getFixed(lanes), false, abi);
            }
        }
    }
    return table;
}

} // namespace duet::rt::cpu
