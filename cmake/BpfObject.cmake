# SPDX-License-Identifier: Apache-2.0
# bpf_object(name source)
#
# Compiles bpf/<source> with clang -target bpf (CO-RE, BTF), generates a libbpf
# skeleton with bpftool, and defines the INTERFACE target <name>_skel that
# carries the skeleton's include directory, libbpf, libelf and zlib. The
# object is embedded in the skeleton header: nothing is looked up at run time.
find_program(BPF_CLANG NAMES clang clang-16 clang-15 clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64")
  set(BPF_TARGET_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(BPF_TARGET_ARCH arm64)
else()
  message(FATAL_ERROR "fragd: no BPF target arch for ${CMAKE_SYSTEM_PROCESSOR}")
endif()
set(BPF_MULTIARCH_INCLUDE /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})

function(bpf_object name source)
  set(src ${CMAKE_SOURCE_DIR}/${source})
  set(out ${CMAKE_BINARY_DIR}/bpf)
  set(obj ${out}/${name}.bpf.o)
  set(skel ${out}/${name}.skel.h)
  file(GLOB deps ${CMAKE_SOURCE_DIR}/bpf/*.h ${CMAKE_SOURCE_DIR}/include/*.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_${BPF_TARGET_ARCH} ${FRAGD_PREFIX_MAP}
            -Wall -Werror -I${CMAKE_SOURCE_DIR}/include -I${CMAKE_SOURCE_DIR}/bpf
            -I${BPF_MULTIARCH_INCLUDE} -c ${src} -o ${obj}
    DEPENDS ${src} ${deps}
    COMMENT "BPF ${source}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${name}.skel.h"
    VERBATIM)
  # One custom target owns the outputs, so two consumers never race on them.
  add_custom_target(${name}_skel_gen DEPENDS ${skel})
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_skel_gen)
  target_include_directories(${name}_skel INTERFACE ${out})
  target_link_libraries(${name}_skel INTERFACE PkgConfig::LIBBPF PkgConfig::LIBELF PkgConfig::ZLIB)
endfunction()
