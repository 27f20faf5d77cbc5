# What `cmake --install` puts where (GNUInstallDirs), and how others consume it: the CMake package
# (DuetConfig.cmake exporting Duet::interop, Duet::engine, Duet::fft, ...), pkg-config files and
# the Debian package (CPack, `cpack -G DEB` in the build folder). The runtime installs itself and
# its ICD file (runtime/CMakeLists.txt). Everything installed is relocatable: `--prefix` at install
# time works, and the package files find the libraries relative to themselves.
include(CMakePackageConfigHelpers)

set(DUET_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Duet)
set(DUET_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/duet)

# ---- Libraries and headers: one include root, <duet/interop/...>, <duet/engine/...>, <duet/fft/...>
set_target_properties(duet-glad PROPERTIES EXPORT_NAME glad)
set_target_properties(duet-interop PROPERTIES EXPORT_NAME interop)
set_target_properties(duet-interop-displays PROPERTIES EXPORT_NAME interop-displays)
set_target_properties(duet-engine PROPERTIES EXPORT_NAME engine)
set_target_properties(duet-engine-main PROPERTIES EXPORT_NAME engine-main)
set_target_properties(duet-fft PROPERTIES EXPORT_NAME fft)
install(TARGETS duet-glad duet-interop duet-interop-displays duet-engine duet-engine-main duet-fft
        EXPORT DuetTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/interop/include/ ${PROJECT_SOURCE_DIR}/engine/include/
                  ${PROJECT_SOURCE_DIR}/kernels/fft/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${DUET_VERSION_INCLUDE_DIR}/duet/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/duet)
# glad's generated loader headers (glad/gl.h, and its own KHR/ and EGL/ copies) in a folder of
# their own, so that they never shadow the system's KHR/ and EGL/ headers.
install(DIRECTORY ${PROJECT_BINARY_DIR}/engine/glad/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/duet/glad)

# ---- The CMake package: find_package(Duet) -> Duet::interop, Duet::engine, Duet::fft, ...
install(EXPORT DuetTargets NAMESPACE Duet:: DESTINATION ${DUET_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/install/DuetConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/DuetConfig.cmake
                              INSTALL_DESTINATION ${DUET_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR DUET_INSTALL_DATADIR)
# 0.x: a minor release may change the API, so only the same MAJOR.MINOR satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/DuetConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/DuetConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/DuetConfigVersion.cmake
        DESTINATION ${DUET_INSTALL_CMAKEDIR})

# ---- pkg-config: duet-interop.pc, duet-engine.pc (prefix relative to the .pc file: relocatable)
set(DUET_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH DUET_PC_PREFIX_FROM_PCDIR /${DUET_PKGCONFIG_DIR} /)
string(REGEX REPLACE "/$" "" DUET_PC_PREFIX_FROM_PCDIR "${DUET_PC_PREFIX_FROM_PCDIR}")
foreach(pc duet-interop duet-engine)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/install/${pc}.pc.in ${PROJECT_BINARY_DIR}/cmake/${pc}.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/${pc}.pc DESTINATION ${DUET_PKGCONFIG_DIR})
endforeach()

# ---- Samples and the data they read at run time: bin/ (duet_add_sample installs each sample;
# the engine's demo here) and share/duet/{kernels,shaders}, where duet/data_paths.hpp looks beside
# the executable's folder (so no source tree is needed).
install(TARGETS duet-engine-demo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/ DESTINATION ${DUET_INSTALL_DATADIR}/kernels
        FILES_MATCHING PATTERN "*.cl" PATTERN include EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/shaders/ DESTINATION ${DUET_INSTALL_DATADIR}/shaders)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/starter
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

include(DuetPackage) # the Debian package
