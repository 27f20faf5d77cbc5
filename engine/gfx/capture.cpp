// glReadPixels into an Image, and PNG files through stb_image_write / stb_image (libstb).
#include "duet/engine/gfx/capture.hpp"

#include "duet/engine/error.hpp"
#include "duet/engine/gfx/gl.hpp"

#include <stb_image.h>
#include <stb_image_write.h>

#include <cerrno>
#include <cstring>

namespace duet::engine {

Image readFramebuffer(unsigned framebuffer, unsigned readBuffer, int width, int height) {
    Image image{width, height, std::vector<std::uint8_t>(size_t(width) * size_t(height) * 4)};
    GLint previousFramebuffer = 0, previousPack = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &previousFramebuffer);
    glGetIntegerv(GL_PACK_ALIGNMENT, &previousPack);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer);
    glReadBuffer(readBuffer);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, image.rgba.data());
    glPixelStorei(GL_PACK_ALIGNMENT, previousPack);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(previousFramebuffer));
    // GL's first row is the bottom one.
    size_t stride = size_t(width) * 4;
    std::vector<std::uint8_t> row(stride);
    for (int y = 0; y < height / 2; ++y) {
        std::uint8_t* a = &image.rgba[size_t(y) * stride];
        std::uint8_t* b = &image.rgba[size_t(height - 1 - y) * stride];
        std::memcpy(row.data(), a, stride);
        std::memcpy(a, b, stride);
        std::memcpy(b, row.data(), stride);
    }
    return image;
}

void writePng(const std::string& path, const Image& image) {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgba.size() != size_t(image.width) * size_t(image.height) * 4)
        throw Error("PNG '" + path + "': empty or inconsistent image");
    errno = 0;
    if (!stbi_write_png(path.c_str(), image.width, image.height, 4, image.rgba.data(),
                        image.width * 4))
        throw Error("PNG '" + path + "': cannot write" +
                    (errno ? std::string(": ") + std::strerror(errno) : std::string()));
}

Image readPng(const std::string& path) {
    int width = 0, height = 0, channels = 0;
    stbi_uc* pixels = stbi_load(path.c_str(), &width, &height, &channels, 4);
    if (!pixels)
        throw Error("PNG '" + path + "': cannot read: " + stbi_failure_reason());
    Image image{width, height,
                std::vector<std::uint8_t>(pixels, pixels + size_t(width) * height * 4)};
    stbi_image_free(pixels);
    return image;
}

} // namespace duet::engine
