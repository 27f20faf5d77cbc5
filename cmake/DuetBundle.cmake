# The relocatable bundle's build configuration (scripts/bundle.sh; README "Relocatable bundle").
#
# DUET_BUNDLE=ON configures a build (build-bundle/) whose outputs scripts/bundle.sh copies, as
# built, into one tarball that runs on hosts with nothing of ours installed and no LLVM: glibc
# 2.36 or newer is all libduet-opencl.so needs. Off by default: the default build links the shared
# LLVM and the system's libraries, which is what a developer on 2 cores wants.
#
# DUET_TEST_BUNDLE=ON adds the ctest entry `bundle` (label bundle): scripts/bundle.sh --check,
# which builds build-bundle/, makes the tarball, unpacks it into a temporary folder and runs it
# there. Off by default: the static-LLVM build takes long on 2 cores, and CI must stay short.

option(DUET_BUNDLE "Build for the relocatable bundle (static LLVM and C++ runtime, $ORIGIN rpaths)"
       OFF)
option(DUET_TEST_BUNDLE "Add the slow ctest entry 'bundle' (scripts/bundle.sh --check)" OFF)

if(DUET_BUNDLE)
  # LLVM, clang and lld linked into libduet-opencl (the block at the end of runtime/CMakeLists.txt).
  set(DUET_STATIC_LLVM ON CACHE BOOL "Link LLVM, clang and lld statically into libduet-opencl"
      FORCE)
  # One section per function and object, so that --gc-sections drops what nothing reaches; the
  # C++ runtime linked in, so that executables and the library need only glibc's libraries.
  add_compile_options(-ffunction-sections -fdata-sections)
  add_link_options(-static-libstdc++ -static-libgcc LINKER:--gc-sections)
  # Executables (bundle bin/ and tests/) find the shared libraries the bundle carries in lib/.
  set(CMAKE_BUILD_RPATH "\$ORIGIN/../lib")
  # Static archives where Debian has them (libdrm, stb, ...), shared objects otherwise (GLFW, the
  # ICD loader, GLVND). Not Xlib: GLFW links the shared libX11, and two copies of Xlib in one
  # process cannot share a Display.
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a .so)
  find_library(X11_X11_LIB NAMES libX11.so.6 libX11.so REQUIRED)

  # Sets `out` to whether target `t` links LLVM itself (LLVM, clang-cpp or the runtime's
  # internals), directly or through the libraries it links.
  function(duet_bundle_links_llvm t out)
    get_target_property(libs ${t} LINK_LIBRARIES)
    set(seen "")
    while(libs)
      list(POP_FRONT libs lib)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      if(lib MATCHES "^(LLVM|clang-cpp|duet-runtime-internals)$")
        set(${out} TRUE PARENT_SCOPE)
        return()
      endif()
      if(TARGET "${lib}" AND NOT lib IN_LIST seen)
        list(APPEND seen ${lib})
        get_target_property(more ${lib} INTERFACE_LINK_LIBRARIES)
        if(more)
          list(APPEND libs ${more})
        endif()
      endif()
    endwhile()
    set(${out} FALSE PARENT_SCOPE)
  endfunction()

  # bundle-targets.tsv, written once the whole project is configured: every executable with the
  # bundle folder it goes to (bin/, tests/ for those defined under tests/, or none for those that
  # link LLVM themselves: white-box tests would each carry another copy of LLVM) and its file.
  function(duet_bundle_targets)
    set(lines "")
    set(dirs ${PROJECT_SOURCE_DIR})
    while(dirs)
      list(POP_FRONT dirs dir)
      get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
      list(APPEND dirs ${subdirs})
      get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
      foreach(t ${targets})
        get_target_property(type ${t} TYPE)
        if(NOT type STREQUAL "EXECUTABLE")
          continue()
        endif()
        duet_bundle_links_llvm(${t} llvm)
        if(llvm)
          set(place none)
        elseif(dir MATCHES "^${PROJECT_SOURCE_DIR}/tests(/|$)")
          set(place tests)
        else()
          set(place bin)
        endif()
        string(APPEND lines "${t}\t${place}\t$<TARGET_FILE:${t}>\n")
      endforeach()
    endwhile()
    file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/bundle-targets.tsv CONTENT "${lines}")
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL duet_bundle_targets)
endif()

if(DUET_TEST_BUNDLE)
  enable_testing()
  add_test(NAME bundle COMMAND ${PROJECT_SOURCE_DIR}/scripts/bundle.sh --check)
  set_tests_properties(bundle PROPERTIES LABELS bundle TIMEOUT 7200)
endif()
