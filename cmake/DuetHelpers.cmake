# CMake helpers every folder uses: the project's warning set and the sample shape.

# duet_warnings(TARGET...): the warnings every Duet target builds with.
function(duet_warnings)
  foreach(t ${ARGN})
    target_compile_options(${t} PRIVATE -Wall -Wextra)
  endforeach()
endfunction()

# duet_add_sample(NAME SOURCES src... [LINK lib...]
#                 [LIBRARY lib LIBRARY_SOURCES src... LIBRARY_LINK lib...])
# A sample executable NAME; with LIBRARY, the sample's simulation as a static library that the
# executable, the tests and the benchmarks link (its folder is on its public include path).
# Both see DUET_KERNEL_SOURCE_DIR, the kernels/ folder of the source tree, and duet-common's
# duet/data_paths.hpp, which finds kernels/ in a relocatable bundle too. `cmake --install` puts the
# executable in bin/ (its kernels and shaders go to share/duet/, cmake/DuetInstall.cmake).
function(duet_add_sample name)
  cmake_parse_arguments(S "" "LIBRARY" "SOURCES;LINK;LIBRARY_SOURCES;LIBRARY_LINK" ${ARGN})
  set(kernel_dir DUET_KERNEL_SOURCE_DIR="${PROJECT_SOURCE_DIR}/kernels")
  if(S_LIBRARY)
    add_library(${S_LIBRARY} STATIC ${S_LIBRARY_SOURCES})
    target_include_directories(${S_LIBRARY} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${S_LIBRARY} PUBLIC ${S_LIBRARY_LINK} PRIVATE duet-common)
    target_compile_definitions(${S_LIBRARY} PRIVATE ${kernel_dir})
    duet_warnings(${S_LIBRARY})
  endif()
  add_executable(${name} ${S_SOURCES})
  target_link_libraries(${name} PRIVATE ${S_LIBRARY} ${S_LINK} duet-common)
  target_compile_definitions(${name} PRIVATE ${kernel_dir})
  duet_warnings(${name})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
