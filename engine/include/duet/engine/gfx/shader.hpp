// GLSL programs from shaders/: compile and link with the driver's log, offending lines quoted.
#pragma once

#include "duet/engine/gfx/gl_objects.hpp"

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace duet::engine::gl {

/// The folder loadProgram reads relative names from: $DUET_SHADER_DIR if set, else
/// share/duet/shaders beside the running executable's folder (an installed Duet's samples, the
/// bundle), else the shaders/ of the Duet source tree the engine was built from.
std::string shaderDirectory();

/// Compiles one stage. On failure throws Error whose what() names `name` and the stage and holds
/// the driver's log with each line it points at quoted after it (see annotateShaderLog).
Shader compileShader(GLenum stage, std::string_view source, std::string_view name);

/// Links the given compiled stages; on failure throws Error with the link log.
Program linkProgram(const std::vector<const Shader*>& shaders, std::string_view name);

/// Reads, compiles and links shader files given relative to shaderDirectory() (or absolute).
/// The stage comes from the name: *.vert(.glsl), *.frag(.glsl), *.geom(.glsl).
Program loadProgram(const std::vector<std::string>& files);

/// Adds, after each log line that names a source line ("0:12(3): error" from Mesa,
/// "0(12) : error" from NVIDIA), that source line: "    12 | <text>".
std::string annotateShaderLog(std::string_view log, std::string_view source);

/// Uniform setters by name for `program`, which need not be bound (a setter binds it for the call
/// and restores the previous program); a name the program lacks (or the linker removed) is
/// ignored.
void setUniform(GLuint program, const char* name, float value);
void setUniform(GLuint program, const char* name, int value);
void setUniform(GLuint program, const char* name, const glm::vec3& value);
void setUniform(GLuint program, const char* name, const glm::vec4& value);
void setUniform(GLuint program, const char* name, const glm::mat4& value);

} // namespace duet::engine::gl
