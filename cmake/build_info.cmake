# Run at every build (src/CMakeLists.txt, target skyfabric_build_info): writes OUTPUT, a header with
# the source tree's git commit and whether tracked files had uncommitted changes, only when that
# changes, so that a build recompiles only src/output/provenance.cpp when the commit moves.
# cmake -DSOURCE_DIR=... -DOUTPUT=... -P build_info.cmake
set(commit "unknown")
set(dirty "false")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE head_status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(head_status EQUAL 0)
    set(commit "${head}")
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT changes STREQUAL "")
      set(dirty "true")
    endif()
  endif()
endif()
set(text "#pragma once\n// Generated at build time by cmake/build_info.cmake: do not edit.\nnamespace skyfabric::build_info {\ninline constexpr const char* git_commit = \"${commit}\";\ninline constexpr bool git_dirty = ${dirty};\n}  // namespace skyfabric::build_info\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
