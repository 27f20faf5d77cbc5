// glibc's libmvec vector maths for the CPU JIT: the vectoriser's table, one variant per function
// and type, and the other calls rewritten to it (libmvec.hpp).
#include "devices/cpu/jit/libmvec.hpp"

#include "core/environment.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Support/DynamicLibrary.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string_view>

using namespace llvm;

namespace duet::rt::cpu {
namespace {

/// Which of libmvec's variants of a function give the same bits on every input: SSE's and
/// AVX2's (kSseAvx2), AVX2's and AVX-512's (kAvx2Avx512). Measured with glibc 2.36 (Debian 12)
/// by a program comparing the three variants lane by lane: one-argument float functions over
/// every fifth group of 16 float bit patterns (859 million inputs; sin and cos also over all
/// 2^32), double and two-argument functions over 32 million random bit patterns (a third of
/// them near the first argument's magnitude for pairs). A flag is set only where no input
/// differed; results in runtime/devices/cpu/README.md ("One implementation ...").
enum Agree : uint8_t { kNone = 0, kSseAvx2 = 1, kAvx2Avx512 = 2, kAll = 3 };

struct MathFn {
    const char* name;
    unsigned arity;
    bool tightLimit; ///< OpenCL's ulp limit is under libmvec's 4
    uint8_t agreeFloat;
    uint8_t agreeDouble;
};

// clang-format off
const MathFn kFns[] = {
    {"acos", 1, false, kNone, kNone},        {"acosh", 1, false, kNone, kNone},
    {"asin", 1, false, kNone, kNone},        {"asinh", 1, false, kNone, kNone},
    {"atan", 1, false, kNone, kNone},        {"atanh", 1, false, kNone, kNone},
    {"cos", 1, false, kAvx2Avx512, kAvx2Avx512},
    {"cosh", 1, false, kNone, kNone},
    {"erf", 1, false, kNone, kAll},          {"erfc", 1, false, kAvx2Avx512, kAvx2Avx512},
    {"sin", 1, false, kAvx2Avx512, kAvx2Avx512},
    {"sinh", 1, false, kAvx2Avx512, kAvx2Avx512},
    {"tan", 1, false, kNone, kNone},         {"tanh", 1, false, kSseAvx2, kNone},
    {"atan2", 2, false, kNone, kNone},       {"hypot", 2, false, kNone, kNone},
    {"pow", 2, false, kNone, kNone},
    {"exp", 1, true, kAvx2Avx512, kAvx2Avx512},
    {"exp2", 1, true, kNone, kNone},         {"exp10", 1, true, kNone, kNone},
    {"expm1", 1, true, kNone, kNone},        {"log", 1, true, kNone, kNone},
    {"log2", 1, true, kNone, kNone},         {"log10", 1, true, kNone, kNone},
    {"log1p", 1, true, kNone, kNone},        {"cbrt", 1, true, kNone, kNone},
};
// clang-format on

/// A libmvec ISA: its name letter and its float lanes.
struct Isa {
    char letter;
    unsigned floatLanes;
};
constexpr Isa kSse{'b', 4}, kAvx2{'d', 8}, kAvx512{'e', 16};

sys::DynamicLibrary& libmvec() {
    static sys::DynamicLibrary lib = sys::DynamicLibrary::getPermanentLibrary("libmvec.so.1");
    return lib;
}

/// The table's strings must outlive the TargetLibraryInfoImpl: keep them all. Never destroyed:
/// the background compile thread may be optimising while the process exits.
StringRef keep(std::string n) {
    static std::mutex* namesMutex = new std::mutex;
    static std::set<std::string>* names = new std::set<std::string>;
    std::lock_guard<std::mutex> lock(*namesMutex);
    return *names->insert(std::move(n)).first;
}

std::string vectorName(const Isa& isa, const MathFn& fn, bool isDouble) {
    const unsigned lanes = isDouble ? isa.floatLanes / 2 : isa.floatLanes;
    return std::string("_ZGV") + isa.letter + "N" + std::to_string(lanes) +
           std::string(fn.arity, 'v') + "_" + fn.name + (isDouble ? "" : "f");
}

/// The function's own variant on `t`: the widest the vector width and the ISA allow.
const Isa& ownIsa(const LibmvecTarget& t) {
    if (t.avx512 && t.vectorBits >= 512)
        return kAvx512;
    if (t.avx2 && t.vectorBits >= 256)
        return kAvx2;
    return kSse;
}

/// Whether `isa`'s variant gives the own variant's bits.
bool agrees(const Isa& isa, const Isa& own, const MathFn& fn, bool isDouble) {
    if (isa.letter == own.letter)
        return true;
    const uint8_t agree = isDouble ? fn.agreeDouble : fn.agreeFloat;
    const bool sse = isa.letter == 'b' || own.letter == 'b';
    const bool avx512 = isa.letter == 'e' || own.letter == 'e';
    // SSE and AVX-512: through AVX2.
    return (!sse || (agree & kSseAvx2)) && (!avx512 || (agree & kAvx2Avx512));
}

bool available(const Isa& isa, const LibmvecTarget& t) {
    return isa.letter == 'b' || (isa.letter == 'd' && t.avx2) || (isa.letter == 'e' && t.avx512);
}

/// The function `callee` computes, if the table maps it: a libm name (`sinf`, `sin`) or an LLVM
/// intrinsic (`llvm.sin.f32`, `llvm.sin.v4f32`), its element type float or double.
const MathFn* mappedFunction(const Function& callee, bool unsafeMath, bool& isDouble) {
    StringRef name = callee.getName();
    Type* ret = callee.getReturnType();
    Type* elem = ret->getScalarType();
    if (!elem->isFloatTy() && !elem->isDoubleTy())
        return nullptr;
    isDouble = elem->isDoubleTy();
    const bool intrinsic = name.consume_front("llvm.");
    if (intrinsic)
        name = name.take_until([](char c) { return c == '.'; });
    else if (!callee.isDeclaration() || ret->isVectorTy() || (!isDouble && !name.consume_back("f")))
        return nullptr; // libm's scalar functions only
    for (const MathFn& fn : kFns) {
        if (name != fn.name || (fn.tightLimit && !unsafeMath))
            continue;
        if (callee.arg_size() != fn.arity)
            return nullptr;
        for (const Argument& a : callee.args())
            if (a.getType() != ret)
                return nullptr;
        return &fn;
    }
    return nullptr;
}

/// An argument of `fn` inside its fast path: what fills the lanes a rewritten call does not use.
/// A scalar broadcast into every lane would take libmvec's slow path (a scalar call per lane)
/// in every lane wherever it takes it in one (sin of a large argument: 10x the time).
double fillValue(const MathFn& fn) {
    return std::string_view(fn.name) == "acosh" ? 1.5 : 0.5;
}

/// Replaces `call` (scalar or vector) of `fn` with calls of `variant`, whose vectors hold
/// `lanes`. libmvec computes each lane on its own (the bits of a lane do not depend on the
/// others: the checks above compare lanes of different neighbours), so lane 0 of a scalar's
/// call is the function's value.
void rewriteCall(CallInst& call, const MathFn& fn, FunctionCallee variant, unsigned lanes) {
    IRBuilder<> b(&call);
    Type* ret = call.getType();
    Type* elem = ret->getScalarType();
    const auto* vt = dyn_cast<FixedVectorType>(ret);
    const unsigned n = vt ? vt->getNumElements() : 1;
    Constant* fill = ConstantFP::get(elem, fillValue(fn));
    Value* result = vt ? PoisonValue::get(ret) : nullptr;
    for (unsigned start = 0; start < n; start += lanes) {
        SmallVector<Value*, 2> args;
        for (Value* a : call.args()) {
            if (!vt) {
                args.push_back(b.CreateInsertElement(
                    ConstantVector::getSplat(ElementCount::getFixed(lanes), fill), a, uint64_t(0)));
                continue;
            }
            // The piece's elements, the fill value in the lanes past the end.
            SmallVector<int, 16> mask;
            for (unsigned i = 0; i < lanes; ++i)
                mask.push_back(int(start + i < n ? start + i : n));
            args.push_back(
                n == lanes ? a
                           : b.CreateShuffleVector(
                                 a, ConstantVector::getSplat(vt->getElementCount(), fill), mask));
        }
        CallInst* piece = b.CreateCall(variant, args);
        if (isa<FPMathOperator>(piece))
            piece->setFastMathFlags(call.getFastMathFlags());
        if (!vt) {
            result = b.CreateExtractElement(piece, uint64_t(0));
            break;
        }
        if (n == lanes) {
            result = piece;
            break;
        }
        for (unsigned i = 0; start + i < n && i < lanes; ++i)
            result = b.CreateInsertElement(result, b.CreateExtractElement(piece, uint64_t(i)),
                                           uint64_t(start + i));
    }
    call.replaceAllUsesWith(result);
    call.eraseFromParent();
}

} // namespace

bool sameMathEnabled() {
    return envSwitchOn("DUET_CPU_SAME_MATH");
}

std::string libmvecMemoKey() {
    return sameMathEnabled() ? "|samemath1" : "|libmvec-any";
}

LibmvecTarget libmvecTarget(const TargetMachine& tm, const Module& m) {
    LibmvecTarget t;
    const MCSubtargetInfo& sti = *tm.getMCSubtargetInfo();
    t.avx2 = sti.checkFeatures("+avx2");
    t.avx512 = sti.checkFeatures("+avx512f");
    t.vectorBits = t.avx512 ? 512 : t.avx2 ? 256 : 128;
    for (const Function& f : m) {
        unsigned bits = 0;
        if (!f.isDeclaration() &&
            !f.getFnAttribute("prefer-vector-width").getValueAsString().getAsInteger(10, bits)) {
            t.vectorBits = bits;
            break;
        }
    }
    return t;
}

std::vector<VecDesc> libmvecTable(const LibmvecTarget& target, bool unsafeMath) {
    std::vector<VecDesc> table;
    if (!libmvec().isValid())
        return table;
    const bool same = sameMathEnabled();
    const Isa& own = ownIsa(target);
    for (const Isa& isa : {kSse, kAvx2, kAvx512}) {
        if (!available(isa, target))
            continue;
        for (const MathFn& fn : kFns) {
            if (fn.tightLimit && !unsafeMath)
                continue;
            for (bool isDouble : {false, true}) {
                if (same && !agrees(isa, own, fn, isDouble))
                    continue;
                const unsigned lanes = isDouble ? isa.floatLanes / 2 : isa.floatLanes;
                const std::string params(fn.arity, 'v');
                const std::string vector = vectorName(isa, fn, isDouble);
                if (!libmvec().getAddressOfSymbol(vector.c_str()))
                    continue;
                StringRef abi = keep("_ZGV_LLVM_N" + std::to_string(lanes) + params);
                StringRef vec = keep(vector);
                const std::string scalar = std::string(fn.name) + (isDouble ? "" : "f");
                const std::string intrinsic =
                    std::string("llvm.") + fn.name + (isDouble ? ".f64" : ".f32");
                for (const std::string& key : {scalar, intrinsic})
                    table.emplace_back(keep(key), vec, ElementCount::getFixed(lanes), false, abi);
            }
        }
    }
    return table;
}

unsigned sameLibmvecVariant(Module& m, const LibmvecTarget& target, bool unsafeMath) {
    if (!sameMathEnabled() || !libmvec().isValid())
        return 0;
    const Isa& own = ownIsa(target);
    SmallVector<std::pair<CallInst*, const MathFn*>, 16> calls;
    SmallVector<bool, 16> doubles;
    for (Function& f : m) {
        if (f.isDeclaration())
            continue;
        for (BasicBlock& bb : f)
            for (Instruction& i : bb) {
                auto* call = dyn_cast<CallInst>(&i);
                Function* callee = call ? call->getCalledFunction() : nullptr;
                bool isDouble = false;
                const MathFn* fn = callee ? mappedFunction(*callee, unsafeMath, isDouble) : nullptr;
                if (!fn || !libmvec().getAddressOfSymbol(vectorName(own, *fn, isDouble).c_str()))
                    continue;
                calls.push_back({call, fn});
                doubles.push_back(isDouble);
            }
    }
    for (size_t k = 0; k < calls.size(); ++k) {
        auto [call, fn] = calls[k];
        const bool isDouble = doubles[k];
        // The narrowest variant that gives the own one's bits and holds the call's elements
        // (the own one where none does): a scalar in SSE's or AVX2's registers costs less than
        // in AVX-512's.
        const auto* callType = dyn_cast<FixedVectorType>(call->getType());
        const unsigned elements = callType ? callType->getNumElements() : 1;
        const Isa* isa = &own;
        for (const Isa* narrower : {&kSse, &kAvx2}) {
            const unsigned lanes = isDouble ? narrower->floatLanes / 2 : narrower->floatLanes;
            if (narrower->floatLanes < own.floatLanes && lanes >= elements &&
                available(*narrower, target) && agrees(*narrower, own, *fn, isDouble) &&
                libmvec().getAddressOfSymbol(vectorName(*narrower, *fn, isDouble).c_str())) {
                isa = narrower;
                break;
            }
        }
        const unsigned lanes = isDouble ? isa->floatLanes / 2 : isa->floatLanes;
        Type* elem = call->getType()->getScalarType();
        auto* vec = FixedVectorType::get(elem, lanes);
        SmallVector<Type*, 2> params(fn->arity, vec);
        FunctionCallee variant = m.getOrInsertFunction(vectorName(*isa, *fn, isDouble),
                                                       FunctionType::get(vec, params, false));
        if (auto* decl = dyn_cast<Function>(variant.getCallee())) {
            decl->setDoesNotThrow();
            decl->setDoesNotAccessMemory();
            decl->setWillReturn();
        }
        // A 512-bit argument goes in one zmm register only where the caller's 512-bit vectors
        // are legal (the x86 back end splits them under prefer-vector-width=256 otherwise).
        Function& caller = *call->getFunction();
        const unsigned bits = lanes * elem->getScalarSizeInBits();
        unsigned legal = 0;
        Attribute a = caller.getFnAttribute("min-legal-vector-width");
        if (a.isValid() && !a.getValueAsString().getAsInteger(10, legal) && legal < bits)
            caller.addFnAttr("min-legal-vector-width", std::to_string(bits));
        rewriteCall(*call, *fn, variant, lanes);
    }
    return unsigned(calls.size());
}

} // namespace duet::rt::cpu
