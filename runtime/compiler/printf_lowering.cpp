// printf for the GPU devices: each call becomes a record in the printf buffer (see
// printf_lowering.hpp, and core/printf_buffer.hpp for the layout the host decoder reads); the
// device's hooks say where the buffer is and how to reserve space in it.
#include "compiler/printf_lowering.hpp"

#include "core/printf_buffer.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

namespace duet::rt {
namespace {

using namespace llvm;

Function* internalFunction(Module& m, StringRef name, FunctionType* type) {
    Function* f = Function::Create(type, GlobalValue::InternalLinkage, name, m);
    f->addFnAttr(Attribute::AlwaysInline);
    f->addFnAttr(Attribute::NoUnwind);
    return f;
}

/// One argument of a record: a value stored as it is, or a string measured and copied.
struct Slot {
    Value* value;            ///< the value, or the string's generic pointer
    uint32_t size;           ///< bytes in the record (4 for a string: its length word)
    Value* length = nullptr; ///< a string's length word (kPrintfNullString for null)
    Value* copied = nullptr; ///< a string's characters to copy (0 for null)
};

/// Lowers printf calls one by one, defining the helpers on first use and numbering formats.
class Lowering {
public:
    Lowering(Module& m, const PrintfLoweringTarget& target)
        : m_module(m), m_dl(m.getDataLayout()), m_target(target) {}

    std::string lower(CallInst* call);
    void formats(std::vector<PrintfFormat>& out) const;

private:
    Function* strlenFn() { return m_strlen ? m_strlen : (m_strlen = defineStrlen()); }
    Function* copyFn() { return m_copy ? m_copy : (m_copy = defineCopy()); }
    Function* allocFn() { return m_alloc ? m_alloc : (m_alloc = defineAlloc()); }
    Function* defineStrlen();
    Function* defineCopy();
    Function* defineAlloc();
    PointerType* generic() const {
        return PointerType::get(m_module.getContext(), m_target.genericAddressSpace);
    }
    PointerType* global() const {
        return PointerType::get(m_module.getContext(), m_target.globalAddressSpace);
    }

    Module& m_module;
    const DataLayout& m_dl;
    const PrintfLoweringTarget& m_target;
    Function *m_strlen = nullptr, *m_copy = nullptr, *m_alloc = nullptr;
    /// (argument sizes, format) -> id (from 1)
    std::map<std::pair<std::vector<uint32_t>, std::string>, uint32_t> m_ids;
};

/// `i32 __duet_printf_strlen(ptr s)`: the length of the string at generic address `s`, at
/// most kPrintfMaxString (a string with no terminator is cut there), kPrintfNullString for null.
Function* Lowering::defineStrlen() {
    LLVMContext& c = m_module.getContext();
    IRBuilder<> b(c);
    Function* f = internalFunction(m_module, "__duet_printf_strlen",
                                   FunctionType::get(b.getInt32Ty(), {generic()}, false));
    Value* s = f->getArg(0);
    BasicBlock* entry = BasicBlock::Create(c, "entry", f);
    BasicBlock* loop = BasicBlock::Create(c, "loop", f);
    BasicBlock* done = BasicBlock::Create(c, "done", f);
    BasicBlock* null = BasicBlock::Create(c, "null", f);
    b.SetInsertPoint(entry);
    b.CreateCondBr(b.CreateIsNull(s), null, loop);

    b.SetInsertPoint(loop);
    PHINode* i = b.CreatePHI(b.getInt32Ty(), 2, "i");
    i->addIncoming(b.getInt32(0), entry);
    Value* ch =
        b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), s, b.CreateZExt(i, b.getInt64Ty())));
    Value* end = b.CreateICmpEQ(ch, b.getInt8(0));
    Value* next = b.CreateAdd(i, b.getInt32(1));
    i->addIncoming(next, loop);
    b.CreateCondBr(b.CreateOr(end, b.CreateICmpEQ(next, b.getInt32(kPrintfMaxString))), done, loop);

    b.SetInsertPoint(done);
    b.CreateRet(b.CreateSelect(end, i, next));
    b.SetInsertPoint(null);
    b.CreateRet(b.getInt32(kPrintfNullString));
    return f;
}

/// `void __duet_printf_copy(ptr addrspace(global) dst, ptr src, i32 n)`: copies `n` bytes.
Function* Lowering::defineCopy() {
    LLVMContext& c = m_module.getContext();
    IRBuilder<> b(c);
    Function* f = internalFunction(
        m_module, "__duet_printf_copy",
        FunctionType::get(b.getVoidTy(), {global(), generic(), b.getInt32Ty()}, false));
    Value *dst = f->getArg(0), *src = f->getArg(1), *n = f->getArg(2);
    BasicBlock* entry = BasicBlock::Create(c, "entry", f);
    BasicBlock* loop = BasicBlock::Create(c, "loop", f);
    BasicBlock* done = BasicBlock::Create(c, "done", f);
    b.SetInsertPoint(entry);
    b.CreateCondBr(b.CreateICmpEQ(n, b.getInt32(0)), done, loop);
    b.SetInsertPoint(loop);
    PHINode* i = b.CreatePHI(b.getInt32Ty(), 2, "i");
    i->addIncoming(b.getInt32(0), entry);
    Value* at = b.CreateZExt(i, b.getInt64Ty());
    b.CreateStore(b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), src, at)),
                  b.CreateGEP(b.getInt8Ty(), dst, at));
    Value* next = b.CreateAdd(i, b.getInt32(1));
    i->addIncoming(next, loop);
    b.CreateCondBr(b.CreateICmpEQ(next, n), done, loop);
    b.SetInsertPoint(done);
    b.CreateRetVoid();
    return f;
}

/// `ptr addrspace(global) __duet_printf_alloc(i32 bytes)`: reserves `bytes` in the launch's
/// printf buffer; null when they do not fit or there is no buffer. The offset advances even
/// then, so the runtime sees how much output was lost.
Function* Lowering::defineAlloc() {
    LLVMContext& c = m_module.getContext();
    IRBuilder<> b(c);
    Function* f = internalFunction(m_module, "__duet_printf_alloc",
                                   FunctionType::get(global(), {b.getInt32Ty()}, false));
    BasicBlock* entry = BasicBlock::Create(c, "entry", f);
    BasicBlock* have = BasicBlock::Create(c, "have.buffer", f);
    BasicBlock* none = BasicBlock::Create(c, "no.buffer", f);
    b.SetInsertPoint(entry);
    Value* buffer = m_target.bufferAddress(b);
    assert(buffer->getType() == global() && "the device's printf buffer is not a global pointer");
    b.CreateCondBr(b.CreateIsNull(buffer), none, have);

    b.SetInsertPoint(have);
    Value* bytes = b.CreateZExt(f->getArg(0), b.getInt64Ty());
    Value* old = m_target.reserve(b, buffer, bytes);
    Value* capacity = b.CreateAlignedLoad(
        b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), buffer, 8), Align(8));
    Value* fits = b.CreateICmpULE(b.CreateAdd(old, bytes), capacity);
    Value* record = b.CreateInBoundsGEP(b.getInt8Ty(), buffer,
                                        b.CreateAdd(old, b.getInt64(kPrintfHeaderBytes)));
    b.CreateRet(b.CreateSelect(fits, record, ConstantPointerNull::get(global())));

    b.SetInsertPoint(none);
    b.CreateRet(ConstantPointerNull::get(global()));
    return f;
}

void Lowering::formats(std::vector<PrintfFormat>& out) const {
    std::vector<PrintfFormat> byId(m_ids.size());
    for (const auto& [key, id] : m_ids)
        byId[id - 1] = {id, key.first, key.second};
    out.insert(out.end(), byId.begin(), byId.end());
}

std::string Lowering::lower(CallInst* call) {
    StringRef format;
    if (call->arg_size() == 0 || !getConstantStringInfo(call->getArgOperand(0), format))
        return std::string("error: printf: the format is not a constant string (OpenCL C 3.0 "
                           "§6.15.14.2: it must be a literal), which the ") +
               m_target.deviceName + " device cannot print\n";
    const std::vector<PrintfConversion> convs = printfConversions(format);
    // Arguments beyond the conversions are evaluated and ignored, as in C; fewer arguments than
    // conversions are stored as they are, and the decoder reports the mismatch.
    const size_t count = std::min(convs.size(), size_t(call->arg_size() - 1));

    IRBuilder<> b(call);
    std::vector<Slot> slots;
    std::vector<uint32_t> sizes;
    uint32_t fixed = 4; // the id
    for (size_t i = 0; i < count; ++i) {
        Value* v = call->getArgOperand(unsigned(i + 1));
        Type* t = v->getType();
        Slot slot{v, 0};
        if (convs[i].letter == 's' && convs[i].vector == 1) {
            if (!t->isPointerTy())
                return "error: printf(\"" + format.str() + "\"): argument " +
                       std::to_string(i + 1) + " is for %s but is not a pointer\n";
            slot.value = b.CreateAddrSpaceCast(v, generic());
            slot.length = b.CreateCall(strlenFn(), {slot.value});
            slot.copied = b.CreateSelect(b.CreateICmpEQ(slot.length, b.getInt32(kPrintfNullString)),
                                         b.getInt32(0), slot.length);
            slot.size = 4;
        } else {
            if (t->isPointerTy()) // %p (or any pointer): its generic address
                slot.value = b.CreatePtrToInt(b.CreateAddrSpaceCast(v, generic()), b.getInt64Ty());
            const uint64_t size = m_dl.getTypeAllocSize(slot.value->getType());
            if (size == 0 || size > 4096)
                return "error: printf(\"" + format.str() + "\"): argument " +
                       std::to_string(i + 1) + " has a type printf cannot record\n";
            slot.size = uint32_t(size);
        }
        fixed += slot.size;
        sizes.push_back(slot.size);
        slots.push_back(slot);
    }
    const uint32_t id =
        m_ids.emplace(std::make_pair(sizes, format.str()), uint32_t(m_ids.size() + 1))
            .first->second;

    // Bytes: the fixed part, each string padded to 4, the whole rounded up to 4.
    auto padded = [&](Value* n) { // n rounded up to a multiple of 4
        return b.CreateAnd(b.CreateAdd(n, b.getInt32(3)), b.getInt32(~3u));
    };
    Value* bytes = b.getInt32(fixed);
    for (const Slot& s : slots)
        if (s.length)
            bytes = b.CreateAdd(bytes, padded(s.copied));
    bytes = padded(bytes);
    Value* record = b.CreateCall(allocFn(), {bytes}, "printf.record");
    Value* ok = b.CreateIsNotNull(record);

    Instruction* then = SplitBlockAndInsertIfThen(ok, call, false);
    b.SetInsertPoint(then);
    b.CreateAlignedStore(b.getInt32(id), record, Align(4));
    Value* at = b.getInt32(4); // where the next argument goes
    uint32_t staticAt = 4;     // its value modulo 4 (strings keep it)
    for (const Slot& s : slots) {
        Value* ptr = b.CreateGEP(b.getInt8Ty(), record, b.CreateZExt(at, b.getInt64Ty()));
        const Align align = commonAlignment(Align(4), staticAt);
        if (!s.length) {
            b.CreateAlignedStore(s.value, ptr, align);
        } else {
            b.CreateAlignedStore(s.length, ptr, align);
            b.CreateCall(copyFn(),
                         {b.CreateConstGEP1_32(b.getInt8Ty(), ptr, 4), s.value, s.copied});
            at = b.CreateAdd(at, padded(s.copied));
        }
        at = b.CreateAdd(at, b.getInt32(s.size));
        staticAt += s.size;
    }

    // printf returns 0, or -1 when the record did not fit (OpenCL C 3.0 §6.15.14.3).
    b.SetInsertPoint(call);
    if (!call->use_empty())
        call->replaceAllUsesWith(b.CreateSelect(ok, b.getInt32(0), b.getInt32(-1)));
    call->eraseFromParent();
    return {};
}

} // namespace

std::string lowerPrintf(Module& m, const PrintfLoweringTarget& target,
                        std::vector<PrintfFormat>& formats) {
    assert(target.bufferAddress && target.reserve && "a printf target needs both hooks");
    Function* printf = m.getFunction("printf");
    if (!printf)
        return {};
    std::vector<CallInst*> calls;
    for (User* u : printf->users())
        if (auto* call = dyn_cast<CallInst>(u); call && call->getCalledOperand() == printf)
            calls.push_back(call);
    Lowering lowering(m, target);
    std::string errors;
    for (CallInst* call : calls)
        errors += lowering.lower(call);
    lowering.formats(formats);
    if (printf->use_empty())
        printf->eraseFromParent();
    else if (errors.empty())
        errors = std::string("error: printf is used other than by calling it, which the ") +
                 target.deviceName + " device cannot do\n";
    return errors;
}

} // namespace duet::rt
