# Catch2 v2 is one 18,000-line header: parsing it costs about 2 s of CPU in
# each of the ~90 files that include it, more than many of those files' own
# code. Each build tree compiles it once into a precompiled header that the
# test targets reuse.
#
# strata_catch_pch(target...) makes every C++ source of the targets that
# includes <catch2/catch.hpp> use that header. Sources that define
# CATCH_CONFIG_MAIN or CATCH_CONFIG_RUNNER (they must see the define before
# the header) and sources that do not use Catch2 compile as before.
#
# Debug builds only (the sanitizer pass of scripts/test, developers' Debug
# trees): with optimisation, gcc 12 reports false positives inside <string>
# when the standard headers come from a precompiled header that it does not
# report otherwise (-Warray-bounds and -Wstringop-overflow at -O3, seen in
# sdk/conformance), and STRATA_WERROR makes them errors.
include_guard(GLOBAL)

if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  function(strata_catch_pch)
  endfunction()
  function(strata_catch_pch_tree dir)
  endfunction()
  return()
endif()

# gcc refuses a header precompiled with -fPIC in a -fPIE compile and the
# reverse, so libraries and executables each get an owner of their own.
set(owner_source ${CMAKE_CURRENT_LIST_DIR}/catch_pch_owner.cpp)
add_executable(strata_catch_pch_exe ${owner_source})
add_library(strata_catch_pch_lib OBJECT ${owner_source})
set_target_properties(strata_catch_pch_exe PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/catch_pch)
foreach(owner strata_catch_pch_exe strata_catch_pch_lib)
  target_link_libraries(${owner} PRIVATE Catch2::Catch2)
  target_precompile_headers(${owner} PRIVATE <catch2/catch.hpp>)
endforeach()

# ccache caches compiles that use a precompiled header only when told that
# the header's defines and time macros may be ignored, and needs
# -fpch-preprocess to hash it on a direct-mode miss. Set for these targets
# only: the user's ccache configuration stays as it is.
function(strata_catch_pch_ccache target)
  if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
      "env;CCACHE_SLOPPINESS=pch_defines,time_macros;${CMAKE_CXX_COMPILER_LAUNCHER}")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fpch-preprocess>)
  endif()
endfunction()
strata_catch_pch_ccache(strata_catch_pch_exe)
strata_catch_pch_ccache(strata_catch_pch_lib)

function(strata_catch_pch)
  foreach(target IN LISTS ARGN)
    # A target optimised on its own (placement_tests: -O2 even in Debug)
    # cannot use the tree's header: gcc refuses it (__OPTIMIZE__ differs).
    get_target_property(options ${target} COMPILE_OPTIONS)
    if(options MATCHES "(^|;)-O")
      continue()
    endif()
    get_target_property(dir ${target} SOURCE_DIR)
    get_target_property(sources ${target} SOURCES)
    # Headers beside the target that include Catch2 count as including it.
    set(catch_includes "<catch2/catch\\.hpp>")
    file(GLOB headers ${dir}/*.h)
    foreach(header IN LISTS headers)
      file(STRINGS ${header} lines REGEX "^#include <catch2/catch\\.hpp>")
      if(lines)
        cmake_path(GET header FILENAME name)
        string(REPLACE "." "\\." name ${name})
        string(APPEND catch_includes "|\"${name}\"")
      endif()
    endforeach()
    set(uses_catch FALSE)
    foreach(src IN LISTS sources)
      if(src MATCHES "^\\$<" OR NOT src MATCHES "\\.(cpp|cc|cxx)$")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${dir} OUTPUT_VARIABLE path)
      file(STRINGS ${path} includes REGEX "^#include (${catch_includes})")
      file(STRINGS ${path} mains REGEX "^#define CATCH_CONFIG_(MAIN|RUNNER)")
      if(includes AND NOT mains)
        set(uses_catch TRUE)
      else()
        set_source_files_properties(${path} TARGET_DIRECTORY ${target}
          PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
    if(NOT uses_catch)
      continue()
    endif()
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_precompile_headers(${target} REUSE_FROM strata_catch_pch_exe)
    else()
      target_precompile_headers(${target} REUSE_FROM strata_catch_pch_lib)
    endif()
    strata_catch_pch_ccache(${target})
  endforeach()
endfunction()

# strata_catch_pch_tree(dir): strata_catch_pch on every compiled target
# defined in dir and the directories below it.
function(strata_catch_pch_tree dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY)$")
      strata_catch_pch(${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    strata_catch_pch_tree(${sub})
  endforeach()
endfunction()
