# The Debian package: `cpack -G DEB` in the build folder makes duet_<version>_amd64.deb with
# everything `cmake --install` installs, under /usr, and the ICD file in /etc/OpenCL/vendors
# (a conffile), so the system's OpenCL loader and clinfo list Duet with no environment variables.
# Depends: what dpkg-shlibdeps finds for the libraries and programs, plus what the runtime reads
# at run time rather than links (clang's OpenCL headers, libclc's bitcode); the ICD loader comes
# from dpkg-shlibdeps (every program links libOpenCL.so.1).
# Recommends: the -dev packages find_package(Duet) and the pkg-config files need to build an
# application, and llvm-spirv-15, the SPIR-V translator clCreateProgramWithIL runs (without it the
# devices report no IL). tests/install/deb_test.sh checks the result.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME duet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "CL/GL interop framework with its own OpenCL runtime (the \"Duet\" ICD)")
set(CPACK_PACKAGE_DESCRIPTION
    "Duet pairs OpenGL with OpenCL: an engine (GLFW window or headless EGL, ImGui overlay), an \
interop library that shares GL buffers and textures with OpenCL kernels, an OpenCL FFT library, \
and its own OpenCL runtime (OpenCL C compiled in-process by clang/LLVM 19; CPU, GCN and NVIDIA \
devices), registered with the system's ICD loader. Includes the headers, static libraries, CMake \
package and pkg-config files to build applications, and the N-body, SimpleGL, ocean and gas \
dynamics samples.")
set(DUET_PACKAGE_MAINTAINER "Duet developers <duet@example.org>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${DUET_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # duet_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# Files land in /usr; DESTDIR staging keeps CMAKE_INSTALL_PREFIX=/usr during the package's install,
# so the ICD file goes to /etc/OpenCL/vendors and names /usr/... (runtime/CMakeLists.txt).
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libclang-common-19-dev, libclc-19")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "clinfo, pkg-config, ocl-icd-opencl-dev, opencl-c-headers, libglfw3-dev, libglm-dev, \
libimgui-dev, libx11-dev, libgl-dev, libegl-dev, libdrm-dev, llvm-spirv-15")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/debian/conffiles
               ${PROJECT_BINARY_DIR}/cmake/debian/conffiles COPYONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/debian/triggers
               ${PROJECT_BINARY_DIR}/cmake/debian/triggers COPYONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/cmake/debian/conffiles
                                       ${PROJECT_BINARY_DIR}/cmake/debian/triggers)
include(CPack)
