// Frame capture: read a framebuffer back into memory and write or read it as PNG.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace duet::engine {

/// 8-bit RGBA pixels, top row first (as in a PNG, not as GL returns them).
struct Image {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> rgba; ///< width * height * 4 bytes, R G B A per pixel

    /// The pixel at column x of row y (y = 0 is the top row).
    std::array<std::uint8_t, 4> at(int x, int y) const {
        const std::uint8_t* p = &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4];
        return {p[0], p[1], p[2], p[3]};
    }
};

/// Reads the colour buffer `readBuffer` (GL_BACK, GL_COLOR_ATTACHMENT0, ...) of framebuffer
/// `framebuffer` with glReadPixels; needs the GL context current. Restores the read binding.
Image readFramebuffer(unsigned framebuffer, unsigned readBuffer, int width, int height);

/// Writes an image as PNG; throws Error naming the path when it cannot.
void writePng(const std::string& path, const Image& image);

/// Reads a PNG (any bit depth and channel count) as 8-bit RGBA; throws Error when it cannot.
Image readPng(const std::string& path);

} // namespace duet::engine
