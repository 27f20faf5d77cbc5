// Types with their pointers' address spaces changed, for module clones (ValueMapper's remapper).
#pragma once

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <string>

namespace duet::rt {

/// Maps every type to the same type with its pointers moved by remapPointer: through vectors,
/// arrays, functions and structs, each type once (cached). A subclass says what a pointer
/// becomes, may check each array and struct before it is rebuilt, and names the copy of a named
/// struct that changes.
class AddressSpaceTypes : public llvm::ValueMapTypeRemapper {
public:
    explicit AddressSpaceTypes(llvm::LLVMContext& c) : m_context(c) {}
    llvm::Type* remapType(llvm::Type* t) final;

protected:
    virtual llvm::Type* remapPointer(llvm::PointerType* p) = 0;
    virtual void checkAggregate(llvm::Type* /*t*/) {}
    /// The name of the copy of named struct `s` whose elements changed (`s` may give its name
    /// up to the copy by renaming itself).
    virtual std::string copyName(llvm::StructType* s) = 0;

    llvm::LLVMContext& m_context;

private:
    llvm::Type* remap(llvm::Type* t);
    llvm::DenseMap<llvm::Type*, llvm::Type*> m_done;
};

} // namespace duet::rt
