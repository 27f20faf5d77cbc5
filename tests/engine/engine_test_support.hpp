// Helpers shared by the engine tests: checking pictures (running a command is tests/support's).
#pragma once

#include "duet/data_paths.hpp"
#include "duet/engine/gfx/capture.hpp"
#include "duet/engine/gfx/shader.hpp"
#include "support/process.hpp"

#include <catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace duet::engine::test {

using duet::test::CommandResult;
using duet::test::runCommand;

/// True when the pixel is within `tolerance` of (r, g, b) in every channel.
inline bool near(const std::array<std::uint8_t, 4>& p, int r, int g, int b, int tolerance = 8) {
    return std::abs(p[0] - r) <= tolerance && std::abs(p[1] - g) <= tolerance &&
           std::abs(p[2] - b) <= tolerance;
}

/// Counts pixels in a rectangle where one channel dominates: red > 150 and the others < 80, etc.
inline int countDominant(const Image& image, int channel, int x0, int y0, int x1, int y1) {
    int count = 0;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
            auto p = image.at(x, y);
            bool dominant = p[channel] > 150;
            for (int c = 0; c < 3; ++c)
                if (c != channel && p[c] >= 80)
                    dominant = false;
            count += dominant;
        }
    return count;
}

/// Counts near-white pixels (the overlay's text) in a rectangle.
inline int countBright(const Image& image, int x0, int y0, int x1, int y1) {
    int count = 0;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
            auto p = image.at(x, y);
            count += p[0] > 180 && p[1] > 180 && p[2] > 180;
        }
    return count;
}

/// Checks a duet-engine-demo picture (800x600 or larger, so the overlay panel leaves the triangle
/// visible): the triangle's red corner bottom left, green corner bottom right, blue corner on top,
/// the dark background in the bottom-right corner, and the overlay's text top left, where the
/// triangle never reaches (or no text there when `overlay` is false).
inline void checkDemoPicture(const Image& image, int width, int height, bool overlay) {
    REQUIRE(image.width == width);
    REQUIRE(image.height == height);
    int w = width, h = height, enough = w * h / 1000;
    CHECK(near(image.at(w - 3, h - 3), 20, 20, 26));
    CHECK(countDominant(image, 0, 0, h / 2, w / 2, h) > enough);
    CHECK(countDominant(image, 1, w / 2, h / 2, w, h) > enough);
    CHECK(countDominant(image, 2, 0, 0, w, h / 2) > enough);
    CHECK(countDominant(image, 0, w / 2, 0, w, h) == 0);
    CHECK(countDominant(image, 1, 0, 0, w / 2, h) == 0);
    int text = countBright(image, 10, 10, std::min(300, w), std::min(100, h));
    if (overlay)
        CHECK(text > 200);
    else
        CHECK(text == 0);
}

/// Draws the test scene into the bound framebuffer of size w x h: cleared to blue, the left half
/// covered by a red quad through a real shader program.
inline void drawTestScene(int w, int h) {
    static const char* vs = "#version 330 core\n"
                            "void main() {\n"
                            "    vec2 p = vec2((gl_VertexID & 1) == 0 ? -1.0 : 0.0,\n"
                            "                  (gl_VertexID & 2) == 0 ? -1.0 : 1.0);\n"
                            "    gl_Position = vec4(p, 0.0, 1.0);\n"
                            "}\n";
    static const char* fs = "#version 330 core\n"
                            "uniform vec4 color;\n"
                            "out vec4 fragColor;\n"
                            "void main() { fragColor = color; }\n";
    gl::Shader v = gl::compileShader(GL_VERTEX_SHADER, vs, "test.vert");
    gl::Shader f = gl::compileShader(GL_FRAGMENT_SHADER, fs, "test.frag");
    gl::Program program = gl::linkProgram({&v, &f}, "test");
    gl::VertexArray vao = gl::VertexArray::create();
    glViewport(0, 0, w, h);
    glClearColor(0.0f, 0.0f, 1.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glUseProgram(program.id());
    gl::setUniform(program.id(), "color", glm::vec4(1.0f, 0.0f, 0.0f, 1.0f));
    glBindVertexArray(vao.id());
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glBindVertexArray(0);
    glUseProgram(0);
    REQUIRE(glGetError() == GL_NO_ERROR);
}

/// Checks what drawTestScene drew, read back with glReadPixels.
inline void checkTestScene(const Image& image, int w, int h) {
    REQUIRE(image.width == w);
    REQUIRE(image.height == h);
    for (int y : {0, h / 3, h - 1}) {
        CHECK(near(image.at(1, y), 255, 0, 0, 0));
        CHECK(near(image.at(w / 2 - 2, y), 255, 0, 0, 0));
        CHECK(near(image.at(w / 2 + 2, y), 0, 0, 255, 0));
        CHECK(near(image.at(w - 1, y), 0, 0, 255, 0));
    }
}

} // namespace duet::engine::test
