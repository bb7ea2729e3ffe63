# SPDX-License-Identifier: Apache-2.0
# Debian's hardening flags for the user-space code, as a Debian package build would set them:
# `dpkg-buildflags` with DEB_BUILD_MAINT_OPTIONS=hardening=+all (fortified functions, stack
# protector, format checks, full RELRO with immediate binding). The BPF objects are built by
# clang apart (cmake/BpfObject.cmake) and take none of them. Off in sanitizer and fuzz
# builds, whose instrumentation replaces the fortified functions; off without dpkg-buildflags.
option(FRAGD_HARDENING "Compile and link the user-space code with dpkg-buildflags' hardening flags" ON)
set(FRAGD_HARDENING_FLAGS "" CACHE INTERNAL "")
if(FRAGD_HARDENING AND NOT FRAGD_SANITIZE AND NOT FRAGD_TSAN AND NOT FRAGD_FUZZ)
  find_program(DPKG_BUILDFLAGS dpkg-buildflags)
  if(DPKG_BUILDFLAGS)
    foreach(kind CPPFLAGS CFLAGS CXXFLAGS LDFLAGS)
      execute_process(COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all
                              ${DPKG_BUILDFLAGS} --get ${kind}
                      OUTPUT_VARIABLE _flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
      if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "dpkg-buildflags --get ${kind} failed (${_rc}); configure with -DFRAGD_HARDENING=OFF to build without")
      endif()
      # -g -O2 come from CMAKE_BUILD_TYPE; dpkg-buildflags' file-prefix map names the directory
      # cmake ran in: CMakeLists.txt maps the source and build directories itself.
      string(REGEX REPLACE "(^| )(-g|-O[0-9s]|-ffile-prefix-map=[^ ]*)( |$)" " " _flags " ${_flags} ")
      string(REGEX REPLACE "(^| )(-g|-O[0-9s]|-ffile-prefix-map=[^ ]*)( |$)" " " _flags " ${_flags} ")
      separate_arguments(_list UNIX_COMMAND "${_flags}")
      set(FRAGD_DEB_${kind} ${_list})
    endforeach()
    add_compile_options(${FRAGD_DEB_CPPFLAGS} "$<$<COMPILE_LANGUAGE:C>:${FRAGD_DEB_CFLAGS}>"
                        "$<$<COMPILE_LANGUAGE:CXX>:${FRAGD_DEB_CXXFLAGS}>")
    add_link_options(${FRAGD_DEB_LDFLAGS})
    set(FRAGD_HARDENING_FLAGS "${FRAGD_DEB_CPPFLAGS};${FRAGD_DEB_CXXFLAGS};${FRAGD_DEB_LDFLAGS}" CACHE INTERNAL "")
    message(STATUS "fragd: hardening flags from dpkg-buildflags: ${FRAGD_HARDENING_FLAGS}")
  else()
    message(STATUS "fragd: dpkg-buildflags not found, built without Debian's hardening flags")
  endif()
endif()
