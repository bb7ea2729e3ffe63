# SPDX-License-Identifier: Apache-2.0
# libFuzzer targets for fragd's parsers of untrusted input (tests/fuzz/).
#
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DFRAGD_FUZZ=ON
#   cmake --build build-fuzz --target fuzz_targets
#
# or `make fuzz`, which also runs them (tests/fuzz/run.sh). The library rooms
# and fragctl's rendering are compiled a second time, into fragd_core_fuzz,
# with the fuzzer's coverage instrumentation, ASan and UBSan; fragd_core and
# everything else are built as usual. OFF (the default) adds nothing.
option(FRAGD_FUZZ "Build the libFuzzer targets of tests/fuzz (needs clang)" OFF)
if(NOT FRAGD_FUZZ)
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "FRAGD_FUZZ needs clang (libFuzzer is part of clang's compiler-rt), but the C++ compiler "
                      "is ${CMAKE_CXX_COMPILER_ID}: configure a fresh build directory with "
                      "CC=clang CXX=clang++ cmake -S . -B build-fuzz -DFRAGD_FUZZ=ON")
endif()

# A UBSan report stops the run (no -fsanitize-recover), so libFuzzer saves the input.
set(FRAGD_FUZZ_SANITIZERS address,undefined)
set(FRAGD_FUZZ_COMPILE_FLAGS -fsanitize=fuzzer-no-link,${FRAGD_FUZZ_SANITIZERS} -fno-sanitize-recover=all
    -fno-omit-frame-pointer -g)

include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,${FRAGD_FUZZ_SANITIZERS}")
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }
]] FRAGD_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT FRAGD_HAVE_LIBFUZZER)
  message(FATAL_ERROR "clang cannot link with -fsanitize=fuzzer,${FRAGD_FUZZ_SANITIZERS}: libFuzzer and the "
                      "sanitizer runtimes are missing (Debian: libclang-rt-dev); run scripts/install-deps.sh")
endif()

add_library(fragd_core_fuzz STATIC ${FRAGD_LIB_SOURCES} ${FRAGCTL_RENDER_SOURCES})
# One compiler run per batch of 8 files (a unity build, as cmake/Sanitize.cmake's trees): 102 s
# instead of 127 s for the fuzz targets from scratch on 2 cores.
set_target_properties(fragd_core_fuzz PROPERTIES UNITY_BUILD ON)
target_include_directories(fragd_core_fuzz PUBLIC
  ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/daemon ${CMAKE_BINARY_DIR}/generated)
# cairo's headers only: fragctl's renderer opens the library when it draws (fragctl/render/cairo_lib.h).
target_include_directories(fragd_core_fuzz SYSTEM PUBLIC ${CAIRO_INCLUDE_DIRS})
target_compile_options(fragd_core_fuzz PUBLIC ${FRAGD_FUZZ_COMPILE_FLAGS})
target_link_libraries(fragd_core_fuzz PUBLIC yaml-cpp nlohmann_json::nlohmann_json Threads::Threads
  stalls_skel compaction_skel pollution_skel ${CMAKE_DL_LIBS})

set(FRAGD_FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(FRAGD_FUZZERS fuzz_policy fuzz_buddyinfo fuzz_pagetypeinfo fuzz_zoneinfo fuzz_vmstat fuzz_iomem
    fuzz_kpageflags fuzz_request fuzz_answer fuzz_labels)
add_custom_target(fuzz_targets)
foreach(f ${FRAGD_FUZZERS})
  add_executable(${f} ${FRAGD_FUZZ_DIR}/${f}.cc)
  target_link_libraries(${f} PRIVATE fragd_core_fuzz)
  target_link_options(${f} PRIVATE -fsanitize=fuzzer,${FRAGD_FUZZ_SANITIZERS})
  add_dependencies(fuzz_targets ${f})
  if(f STREQUAL fuzz_labels)
    # Label values through both expositions of /metrics: the daemon's serializer, compiled here
    # with the fuzzer's flags, on Prometheus' messages and prometheus-cpp's text serializer.
    target_sources(${f} PRIVATE ${CMAKE_SOURCE_DIR}/daemon/fragd/exposition.cc)
    target_link_libraries(${f} PRIVATE fragd_metrics_proto prometheus-cpp::core)
  endif()
  # Every seed runs once, without fuzzing: the corpus must stay clean (ctest -L fuzz).
  file(GLOB seeds CONFIGURE_DEPENDS ${FRAGD_FUZZ_DIR}/corpus/${f}/*)
  if(seeds)
    add_test(NAME fuzz.seeds.${f} COMMAND ${f} -rss_limit_mb=2048 ${seeds})
    set_tests_properties(fuzz.seeds.${f} PROPERTIES LABELS fuzz TIMEOUT 300)
  endif()
endforeach()
