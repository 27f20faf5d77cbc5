// Shader compilation, linking, log annotation and file loading.
#include "duet/engine/gfx/shader.hpp"

#include "duet/data_paths.hpp"
#include "duet/engine/error.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace duet::engine::gl {
namespace {

const char* stageName(GLenum stage) {
    switch (stage) {
    case GL_VERTEX_SHADER:
        return "vertex";
    case GL_FRAGMENT_SHADER:
        return "fragment";
    case GL_GEOMETRY_SHADER:
        return "geometry";
    default:
        return "unknown-stage";
    }
}

GLenum stageFromName(const std::string& file) {
    std::string base = file;
    if (base.size() > 5 && base.ends_with(".glsl"))
        base.resize(base.size() - 5);
    if (base.ends_with(".vert") || base.ends_with(".vs"))
        return GL_VERTEX_SHADER;
    if (base.ends_with(".frag") || base.ends_with(".fs"))
        return GL_FRAGMENT_SHADER;
    if (base.ends_with(".geom") || base.ends_with(".gs"))
        return GL_GEOMETRY_SHADER;
    throw Error("shader '" + file +
                "': cannot tell the stage from the name (want .vert/.frag/"
                ".geom, optionally followed by .glsl)");
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("shader '" + path + "': cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

std::string shaderDirectory() {
    return duet::dataDirectory("DUET_SHADER_DIR", "shaders", DUET_SHADER_SOURCE_DIR);
}

std::string annotateShaderLog(std::string_view log, std::string_view source) {
    std::vector<std::string_view> lines;
    for (size_t start = 0; start <= source.size();) {
        size_t end = source.find('\n', start);
        if (end == std::string_view::npos)
            end = source.size();
        lines.push_back(source.substr(start, end - start));
        start = end + 1;
    }
    // Mesa: "0:12(3): error: ..."; NVIDIA: "0(12) : error ..."; both: source string 0, line 12.
    static const std::regex reference(R"(^\s*(?:ERROR: )?\d+(?::(\d+)\(\d+\)|\((\d+)\)))");
    std::string out;
    std::istringstream in{std::string(log)};
    for (std::string line; std::getline(in, line);) {
        out += line;
        out += '\n';
        std::smatch m;
        if (!std::regex_search(line, m, reference))
            continue;
        long number = std::stol(m[1].matched ? m[1].str() : m[2].str());
        if (number >= 1 && size_t(number) <= lines.size())
            out += "    " + std::to_string(number) + " | " + std::string(lines[number - 1]) + "\n";
    }
    return out;
}

Shader compileShader(GLenum stage, std::string_view source, std::string_view name) {
    Shader shader = Shader::create(stage);
    if (!shader)
        throw Error("shader '" + std::string(name) + "': glCreateShader failed");
    const char* text = source.data();
    GLint length = GLint(source.size());
    glShaderSource(shader.id(), 1, &text, &length);
    glCompileShader(shader.id());
    GLint ok = GL_FALSE;
    glGetShaderiv(shader.id(), GL_COMPILE_STATUS, &ok);
    if (!ok) {
        GLint logLength = 0;
        glGetShaderiv(shader.id(), GL_INFO_LOG_LENGTH, &logLength);
        std::string log(size_t(std::max(logLength, 1)), '\0');
        glGetShaderInfoLog(shader.id(), GLsizei(log.size()), nullptr, log.data());
        log.resize(std::strlen(log.c_str()));
        throw Error("shader '" + std::string(name) + "': " + stageName(stage) +
                    " stage does not compile:\n" + annotateShaderLog(log, source));
    }
    return shader;
}

Program linkProgram(const std::vector<const Shader*>& shaders, std::string_view name) {
    Program program = Program::create();
    for (const Shader* s : shaders)
        glAttachShader(program.id(), s->id());
    glLinkProgram(program.id());
    for (const Shader* s : shaders)
        glDetachShader(program.id(), s->id());
    GLint ok = GL_FALSE;
    glGetProgramiv(program.id(), GL_LINK_STATUS, &ok);
    if (!ok) {
        GLint logLength = 0;
        glGetProgramiv(program.id(), GL_INFO_LOG_LENGTH, &logLength);
        std::string log(size_t(std::max(logLength, 1)), '\0');
        glGetProgramInfoLog(program.id(), GLsizei(log.size()), nullptr, log.data());
        log.resize(std::strlen(log.c_str()));
        throw Error("program '" + std::string(name) + "' does not link:\n" + log);
    }
    return program;
}

Program loadProgram(const std::vector<std::string>& files) {
    std::vector<Shader> shaders;
    std::string names;
    for (const std::string& file : files) {
        GLenum stage = stageFromName(file);
        std::string path = file.starts_with('/') ? file : shaderDirectory() + "/" + file;
        shaders.push_back(compileShader(stage, readFile(path), path));
        names += (names.empty() ? "" : " + ") + file;
    }
    std::vector<const Shader*> pointers;
    for (const Shader& s : shaders)
        pointers.push_back(&s);
    return linkProgram(pointers, names);
}

namespace {
// glProgramUniform* is GL 4.1; on 3.3 bind the program for the call and put the old one back.
template <typename F> void withUniform(GLuint program, const char* name, F set) {
    GLint location = glGetUniformLocation(program, name);
    if (location < 0)
        return;
    GLint previous = 0;
    glGetIntegerv(GL_CURRENT_PROGRAM, &previous);
    if (GLuint(previous) != program)
        glUseProgram(program);
    set(location);
    if (GLuint(previous) != program)
        glUseProgram(GLuint(previous));
}
} // namespace

void setUniform(GLuint program, const char* name, float value) {
    withUniform(program, name, [&](GLint l) { glUniform1f(l, value); });
}
void setUniform(GLuint program, const char* name, int value) {
    withUniform(program, name, [&](GLint l) { glUniform1i(l, value); });
}
void setUniform(GLuint program, const char* name, const glm::vec3& value) {
    withUniform(program, name, [&](GLint l) { glUniform3fv(l, 1, glm::value_ptr(value)); });
}
void setUniform(GLuint program, const char* name, const glm::vec4& value) {
    withUniform(program, name, [&](GLint l) { glUniform4fv(l, 1, glm::value_ptr(value)); });
}
void setUniform(GLuint program, const char* name, const glm::mat4& value) {
    withUniform(program, name,
                [&](GLint l) { glUniformMatrix4fv(l, 1, GL_FALSE, glm::value_ptr(value)); });
}

} // namespace duet::engine::gl
