# collide_version: an INTERFACE target with the generated header collide/version.h (the project
# version, the git commit the build was configured from and the build type), for --version.
# The commit is captured at configure time: re-run CMake after a commit to refresh it.
find_package(Git QUIET)
set(COLLIDE_GIT_COMMIT "")
if(GIT_FOUND)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --show-toplevel
    OUTPUT_VARIABLE collide_git_toplevel OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE collide_git_result ERROR_QUIET)
  # Only when the source tree itself is the checkout (not a tarball unpacked inside another one).
  if(collide_git_result EQUAL 0)
    file(REAL_PATH "${collide_git_toplevel}" collide_git_toplevel)
    file(REAL_PATH "${PROJECT_SOURCE_DIR}" collide_source_dir)
  endif()
  if(collide_git_result EQUAL 0 AND collide_git_toplevel STREQUAL collide_source_dir)
    execute_process(
      COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --short=12 HEAD
      OUTPUT_VARIABLE COLLIDE_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(
      COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} status --porcelain --untracked-files=no
      OUTPUT_VARIABLE collide_git_changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(COLLIDE_GIT_COMMIT AND NOT collide_git_changes STREQUAL "")
      string(APPEND COLLIDE_GIT_COMMIT "-modified")
    endif()
  endif()
endif()

if(CMAKE_CONFIGURATION_TYPES)
  set(COLLIDE_BUILD_TYPE "multi-config")
elseif(CMAKE_BUILD_TYPE)
  set(COLLIDE_BUILD_TYPE "${CMAKE_BUILD_TYPE}")
else()
  set(COLLIDE_BUILD_TYPE "no build type")
endif()
if(COLLIDE_GIT_COMMIT)
  set(COLLIDE_VERSION_LINE
      "${PROJECT_VERSION} (commit ${COLLIDE_GIT_COMMIT}, ${COLLIDE_BUILD_TYPE} build)")
else()
  set(COLLIDE_VERSION_LINE "${PROJECT_VERSION} (not built from git, ${COLLIDE_BUILD_TYPE} build)")
endif()

configure_file(${CMAKE_CURRENT_LIST_DIR}/version.h.in
               ${PROJECT_BINARY_DIR}/generated/collide/version.h @ONLY)
add_library(collide_version INTERFACE)
target_include_directories(collide_version INTERFACE ${PROJECT_BINARY_DIR}/generated)
