// Moving data between GL objects and the CL objects made from them: copies both ways and
// in-place mapping of buffers. Everything here runs on the GL thread (Share::run/post).
#pragma once

#include <CL/cl.h>

#include <cstddef>

namespace duet::rt {
class Mem;
} // namespace duet::rt

namespace duet::rt::gl {

class GlObject;

/// The target a texture of `target` binds to (the cube map for its faces).
unsigned bindTarget(unsigned target);

/// Bytes of `m`'s texels tightly packed, as GL packs and unpacks them.
size_t packedSize(const Mem& m);
/// GL -> tightly packed texels of image `m`'s object `o` at `dst`: a host pointer, or an
/// offset into the buffer bound to GL_PIXEL_PACK_BUFFER. Not for buffers or buffer textures.
void readPacked(const Mem& m, const GlObject& o, void* dst);
/// Tightly packed texels at `src` (host pointer, or offset into the GL_PIXEL_UNPACK_BUFFER)
/// -> image `m`'s GL object `o`. Not for buffers or buffer textures.
void writePacked(const Mem& m, const GlObject& o, const void* src);

/// GL -> CL copy at acquire into `m`'s storage. CL_OUT_OF_RESOURCES when GL fails.
cl_int copyFromGl(Mem& m, const GlObject& o);
/// CL -> GL copy at release from `m`'s storage. CL_OUT_OF_RESOURCES when GL refuses it (a
/// buffer of immutable storage goes through a scratch buffer first).
cl_int copyToGl(Mem& m, const GlObject& o);

/// Acquire of a buffer shared in place: maps it and points `m`'s storage at the mapping
/// (`o.mapped`). False when GL does not map it (the acquire then copies).
bool mapInPlace(Mem& m, GlObject& o, bool clReads, bool clWrites);
/// Release of a buffer acquired in place: `m`'s storage goes back to the host copy and GL gets
/// its buffer back.
void unmapInPlace(Mem& m, GlObject& o);
/// Unmaps GL buffer `name` (a buffer whose CL object died while acquired in place).
void unmapBuffer(unsigned name);

} // namespace duet::rt::gl
