// Shared by both surfaces: loads glad's GL entry points and checks the context is GL 3.3+ core.
#include "duet/engine/platform/surface.hpp"

#include "duet/engine/error.hpp"

#include <glad/gl.h>

namespace duet::engine {

void loadGL(void* (*getProcAddress)(const char*), const std::string& what) {
    int version = gladLoadGL(reinterpret_cast<GLADloadfunc>(getProcAddress));
    if (version == 0)
        throw Error(what + ": cannot load OpenGL entry points");
    int major = GLAD_VERSION_MAJOR(version), minor = GLAD_VERSION_MINOR(version);
    if (major < 3 || (major == 3 && minor < 3))
        throw Error(what + ": OpenGL " + std::to_string(major) + "." + std::to_string(minor) +
                    " is too old, the engine needs 3.3 core");
}

} // namespace duet::engine
