# SPDX-License-Identifier: Apache-2.0
# FRAGD_SANITIZE: AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer
# for every C and C++ target defined after this file is included: fragd_core,
# fragctl_render, fragd, fragctl and the unit tests (not the test tools: see below).
#
#   cmake -S . -B build-asan -DFRAGD_SANITIZE=ON      (or: make sanitize)
#
# Undefined behaviour is fatal (-fno-sanitize-recover=undefined), so a test that
# triggers it fails instead of printing a warning nobody reads. The BPF objects are
# built by custom commands (cmake/BpfObject.cmake, clang -target bpf) and take none
# of these flags: the verifier, not a sanitizer, checks them.
#
# FRAGD_TSAN: ThreadSanitizer instead (make tsan). fragd's threads (the main loop, the
# pageblock scan, civetweb's /metrics workers reading the exporter's last families) share
# state through mutexes and atomics; TSan reports any access to shared memory that no
# lock or atomic orders. It cannot be combined with ASan.
option(FRAGD_SANITIZE "Build with AddressSanitizer, LeakSanitizer and UBSan (tests and CI; not for production)" OFF)
option(FRAGD_TSAN "Build with ThreadSanitizer (tests and CI; not for production)" OFF)

if(FRAGD_SANITIZE AND FRAGD_TSAN)
  message(FATAL_ERROR "FRAGD_SANITIZE and FRAGD_TSAN cannot be on in one build dir: ASan and TSan "
    "exclude each other. Configure two build dirs (make sanitize and make tsan do).")
endif()

if(FRAGD_SANITIZE OR FRAGD_TSAN)
  if(FRAGD_TSAN)
    set(FRAGD_SANITIZE_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
    set(FRAGD_SANITIZE_RUNTIMES -static-libtsan)
    set(FRAGD_SANITIZE_WHAT "thread")
  else()
    set(FRAGD_SANITIZE_FLAGS
      -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    set(FRAGD_SANITIZE_RUNTIMES -static-libasan -static-libubsan)
    set(FRAGD_SANITIZE_WHAT "address,undefined")
  endif()

  # Refuse a compiler or runtime that cannot build and link a sanitized program
  # here, rather than failing later with an obscure link error.
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "${FRAGD_SANITIZE_FLAGS}")
  string(REPLACE ";" " " CMAKE_REQUIRED_FLAGS "${CMAKE_REQUIRED_FLAGS}")
  set(CMAKE_REQUIRED_LINK_OPTIONS ${FRAGD_SANITIZE_FLAGS})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND CMAKE_REQUIRED_LINK_OPTIONS ${FRAGD_SANITIZE_RUNTIMES})
  endif()
  check_cxx_source_compiles("int main() { return 0; }" FRAGD_SANITIZE_LINKS_${FRAGD_SANITIZE_WHAT})
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT FRAGD_SANITIZE_LINKS_${FRAGD_SANITIZE_WHAT})
    message(FATAL_ERROR "${CMAKE_CXX_COMPILER} cannot build and link with "
      "-fsanitize=${FRAGD_SANITIZE_WHAT} (see CMakeFiles/CMakeError.log in the build dir). Install the "
      "sanitizer runtimes (Debian: libgcc-12-dev for gcc, libclang-rt-dev for clang), or configure "
      "without -DFRAGD_SANITIZE=ON / -DFRAGD_TSAN=ON.")
  endif()

  # GCC links ASan and UBSan as two shared runtimes that resolve each other's
  # __sanitizer_set_report_path: UBSan's log_path then never applies and its reports
  # go to stderr, where a test that expects a failure swallows them. Linked
  # statically, each runtime keeps its own report file (ASAN_OPTIONS and
  # UBSAN_OPTIONS log_path both work). Clang has one runtime, static by default.
  # TSan's runtime is linked statically the same way, so a test tool that loads no
  # other sanitizer finds everything in the binary.
  set(FRAGD_SANITIZE_LINK_FLAGS ${FRAGD_SANITIZE_FLAGS})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND FRAGD_SANITIZE_LINK_FLAGS ${FRAGD_SANITIZE_RUNTIMES})
  endif()

  add_compile_options(${FRAGD_SANITIZE_FLAGS})
  add_link_options(${FRAGD_SANITIZE_LINK_FLAGS})
  # -O1 -g1 after the build type's -O2 -g (the later flag wins): line tables are all a
  # sanitizer report needs to name file, line and function, and -O1 is what both
  # sanitizers' documentation recommends. Measured with gcc 12 on two of the heaviest
  # files (daemon/protocol/status.cc, tests/unit/fragd/control_test.cc) under ASan+UBSan:
  # 34 s and 44 s at -O2 -g, 16 s and 16 s at -O1 -g1. Each CI run builds two such trees.
  add_compile_options(-O1 -g1)
  # Unity builds: each target's files compiled in batches of 8, one compiler run per batch, so
  # the headers and the templates the files share (nlohmann/json, CLI11, GoogleTest under the
  # sanitizers' instrumentation) are compiled once a batch, not once a file. CI builds these trees
  # from scratch every run: the ASan+UBSan tree took 466 s on 2 cores file by file and 260 s in
  # batches (cold, no ccache). Not in the normal build, where one edited file would recompile its
  # batch. A file whose anonymous namespace repeats another file's names is left out of the
  # batches (SKIP_UNITY_BUILD_INCLUSION; tests/CMakeLists.txt).
  set(CMAKE_UNITY_BUILD ON)

  # Except the test tools that lay out physical memory for the integration tests
  # (fragmenter, physmap): those tests count the pages, page tables and pageblocks the
  # tools hold, and ASan's shadow memory, its page tables and its allocator would add
  # to them. They are not part of fragd. Taken out once the directory has defined them.
  function(fragd_sanitize_skip)
    foreach(t ${ARGN})
      if(NOT TARGET ${t})
        message(AUTHOR_WARNING "cmake/Sanitize.cmake: no target '${t}' to leave unsanitized")
        continue()
      endif()
      foreach(prop COMPILE_OPTIONS LINK_OPTIONS)
        get_target_property(opts ${t} ${prop})
        if(opts)
          list(REMOVE_ITEM opts ${FRAGD_SANITIZE_LINK_FLAGS})
          set_property(TARGET ${t} PROPERTY ${prop} ${opts})
        endif()
      endforeach()
    endforeach()
  endfunction()
  cmake_language(DEFER CALL fragd_sanitize_skip fragmenter physmap nowait_demand)
  string(REPLACE ";" " " shown "${FRAGD_SANITIZE_FLAGS}")
  message(STATUS "fragd: sanitizers on (${shown}); test tools fragmenter, physmap and nowait_demand left out")
endif()
