# SPDX-License-Identifier: Apache-2.0
# Installation layout, the systemd unit and the Debian package (CPack).
#
#   cmake --install build          (DESTDIR=... to stage)     cd build && cpack -G DEB
#
# fragd is a system daemon, so unless CMAKE_INSTALL_PREFIX is given the prefix is
# /usr and the layout a distribution's: /usr/bin/fragd, /etc/fragd/fragd.yaml,
# /usr/lib/systemd/system/fragd.service, /usr/share/fragd/{dashboards,prometheus,
# kubernetes}, /usr/share/doc/fragd, man pages and fragctl's bash completion. The
# .deb installs to the same prefix, so the paths written into the unit are the
# paths in the package.

# A build dir configured before this default existed holds /usr/local from
# CMake's own default; it moves to /usr once (FRAGD_PREFIX_CHOSEN marks it). To
# install under /usr/local after all, set CMAKE_INSTALL_PREFIX again.
if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT OR
   (NOT DEFINED CACHE{FRAGD_PREFIX_CHOSEN} AND CMAKE_INSTALL_PREFIX STREQUAL "/usr/local"))
  set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "Install path prefix, prepended onto install directories." FORCE)
endif()
set(FRAGD_PREFIX_CHOSEN ON CACHE INTERNAL "CMAKE_INSTALL_PREFIX was defaulted to /usr once")
include(GNUInstallDirs)  # with prefix /usr, SYSCONFDIR is /etc

set(FRAGD_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "Where the systemd unit goes, relative to the prefix (or absolute)")
set(FRAGD_CONFIG_DIR "${CMAKE_INSTALL_FULL_SYSCONFDIR}/fragd")
set(FRAGD_CONFIG_FILE "${FRAGD_CONFIG_DIR}/fragd.yaml")
set(FRAGD_DATA_DIR "${CMAKE_INSTALL_DATADIR}/fragd")

# The unit: Type=notify and a watchdog only when fragd can tell systemd it is
# ready and alive (a fragd that cannot ping would be killed every WatchdogSec).
if(SYSTEMD_FOUND)
  set(FRAGD_SERVICE_TYPE notify)
  set(FRAGD_WATCHDOG_SEC 30s)
else()
  set(FRAGD_SERVICE_TYPE simple)
  set(FRAGD_WATCHDOG_SEC 0)
  message(STATUS "fragd: libsystemd not found, fragd.service gets Type=simple (no READY=1) and no watchdog")
endif()
# Act mode's writable paths: a drop-in the operator installs when the policy says mode: act.
set(FRAGD_ACT_DROPIN "${CMAKE_INSTALL_FULL_DATADIR}/fragd/systemd/act.conf")
configure_file(${CMAKE_SOURCE_DIR}/configs/fragd.service.in ${CMAKE_BINARY_DIR}/fragd.service @ONLY)
configure_file(${CMAKE_SOURCE_DIR}/configs/fragd-act.conf.in ${CMAKE_BINARY_DIR}/fragd-act.conf @ONLY)

install(TARGETS fragd fragctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/configs/fragd.yaml DESTINATION ${FRAGD_CONFIG_DIR})
install(FILES ${CMAKE_BINARY_DIR}/fragd.service DESTINATION ${FRAGD_SYSTEMD_UNIT_DIR})
install(FILES ${CMAKE_BINARY_DIR}/fragd-act.conf DESTINATION ${FRAGD_DATA_DIR}/systemd RENAME act.conf)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/BENCHMARKS.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Debian's place for the licenses (machine-readable, README "License").
install(FILES ${CMAKE_SOURCE_DIR}/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# fragd_install_glob(SRC_DIR PATTERN DEST [RENAME NAME]): installs SRC_DIR/PATTERN
# into DEST (relative to the prefix), globbing at install time: files added to the
# source tree after cmake ran are installed too, and a missing SRC_DIR installs
# nothing. RENAME names the one file matched.
function(fragd_install_glob src_dir pattern dest)
  cmake_parse_arguments(arg "" "RENAME" "" ${ARGN})
  set(rename "")
  if(arg_RENAME)
    set(rename "RENAME ${arg_RENAME}")
  endif()
  install(CODE "
    file(GLOB _fragd_files \"${src_dir}/${pattern}\")
    if(_fragd_files)
      file(INSTALL \${_fragd_files} DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${dest}\" ${rename})
    endif()")
endfunction()
# docs/ as docs/ beside the README, so that the README's links and the alerts' runbook_url
# (docs/runbooks.md#...) lead where they do in the source tree.
fragd_install_glob(${CMAKE_SOURCE_DIR}/docs "*.md" ${CMAKE_INSTALL_DOCDIR}/docs)
fragd_install_glob(${CMAKE_SOURCE_DIR}/docs "*.png" ${CMAKE_INSTALL_DOCDIR}/docs)
# Man pages and the changelog, compressed as Debian ships them (gzip -9n: no name or time stamp,
# so the same page gives the same bytes).
file(GLOB FRAGD_MAN_PAGES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/*.[18])
set(FRAGD_GZIPPED "")
foreach(src ${FRAGD_MAN_PAGES} ${CMAKE_SOURCE_DIR}/debian/changelog)
  get_filename_component(name ${src} NAME)
  set(out ${CMAKE_BINARY_DIR}/gz/${name}.gz)
  add_custom_command(OUTPUT ${out}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/gz
                     COMMAND sh -c "gzip -9n < '${src}' > '${out}'"
                     DEPENDS ${src} VERBATIM)
  list(APPEND FRAGD_GZIPPED ${out})
  if(name MATCHES "\\.([18])$")
    install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${CMAKE_MATCH_1})
  endif()
endforeach()
add_custom_target(fragd_gzipped ALL DEPENDS ${FRAGD_GZIPPED})
# A native package's changelog: debian/changelog, as /usr/share/doc/fragd/changelog.gz.
install(FILES ${CMAKE_BINARY_DIR}/gz/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
fragd_install_glob(${CMAKE_SOURCE_DIR}/configs/completion "fragctl.bash"
                   ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME fragctl)
fragd_install_glob(${CMAKE_SOURCE_DIR}/dashboards "*.json" ${FRAGD_DATA_DIR}/dashboards)
# Runbook links: each alert's runbook_url is docs/runbooks.md#runbook-<alert>, relative to the top of
# the source tree (and of the installed doc directory). FRAGD_RUNBOOK_BASE_URL, where the fleet serves
# that directory, makes them absolute in the rules and the PrometheusRule the build installs (and so
# in the .deb and the image).
set(FRAGD_RUNBOOK_BASE_URL "" CACHE STRING
    "URL prefixed to the alerts' runbook_url (docs/runbooks.md#runbook-...) in the installed rules; empty: relative")
set(FRAGD_RULES ${CMAKE_SOURCE_DIR}/configs/prometheus/fragd-rules.yml)
set(FRAGD_MONITORING ${CMAKE_SOURCE_DIR}/configs/kubernetes/fragd-monitoring.yaml)
if(FRAGD_RUNBOOK_BASE_URL)
  include(${CMAKE_SOURCE_DIR}/cmake/RunbookUrls.cmake)
  fragd_runbook_urls("${FRAGD_RUNBOOK_BASE_URL}" ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/prometheus)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FRAGD_RULES})
  set(FRAGD_RULES ${CMAKE_BINARY_DIR}/prometheus/fragd-rules.yml)
  set(FRAGD_MONITORING ${CMAKE_BINARY_DIR}/prometheus/fragd-monitoring.yaml)
endif()
# The rules alone: their promtool test file beside them would be loaded by a rule_files glob.
install(FILES ${FRAGD_RULES} DESTINATION ${FRAGD_DATA_DIR}/prometheus)
install(FILES ${FRAGD_MONITORING} DESTINATION ${FRAGD_DATA_DIR}/kubernetes)
fragd_install_glob(${CMAKE_SOURCE_DIR}/configs/kubernetes/base "*.yaml" ${FRAGD_DATA_DIR}/kubernetes/base)
fragd_install_glob(${CMAKE_SOURCE_DIR}/configs/kubernetes/act "*.yaml" ${FRAGD_DATA_DIR}/kubernetes/act)

# --- Debian package ---------------------------------------------------------------
set(FRAGD_DEB_MAINTAINER "fragd maintainers <maintainers@users.noreply.a-seed-5c33cf52.example>"
    CACHE STRING "Maintainer field of the .deb")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fragd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${FRAGD_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "memory fragmentation observability and control daemon (eBPF)")
# Lines of at most 80 characters: CPack copies them as they are.
set(CPACK_PACKAGE_DESCRIPTION
    "fragd traces high-order allocation stalls, compaction and migratetype
fallbacks with BPF on kernel tracepoints, scores memory fragmentation per
node, classifies pageblocks, and exports it all as Prometheus metrics. In
act mode it compacts memory ahead of demand and keeps hugetlb pools filled.
fragctl shows live histograms, status and a physical memory map (as a
PNG when libcairo2 is installed).")
# One source built once per Debian release (scripts/build-deb.sh, make deb) gives one package per
# release, told apart by a suffix of the version: +deb12 on bookworm, +deb13 on trixie, as Debian
# marks what it builds for one stable release (+debNuM). 0.1.1 < 0.1.1+deb12 < 0.1.1+deb13 <
# 0.1.2: an upgrade from bookworm to trixie replaces the bookworm build, and the next release
# supersedes both. Empty (the default): the plain project version, as a host `cpack` gives it;
# and then `cpack -D CPACK_PACKAGE_VERSION=...` still sets the package's version.
set(FRAGD_DEB_VERSION_SUFFIX "" CACHE STRING
    "Appended to the .deb's version and file name (make deb: +deb12, +deb13); empty: the plain version")
if(FRAGD_DEB_VERSION_SUFFIX)
  if(NOT FRAGD_DEB_VERSION_SUFFIX MATCHES "^[+~][A-Za-z0-9.+~]+$")
    message(FATAL_ERROR "FRAGD_DEB_VERSION_SUFFIX '${FRAGD_DEB_VERSION_SUFFIX}' is not a Debian version suffix "
                        "(+ or ~, then letters, digits, '.', '+', '~'; e.g. +deb12)")
  endif()
  set(CPACK_DEBIAN_PACKAGE_VERSION "${PROJECT_VERSION}${FRAGD_DEB_VERSION_SUFFIX}")
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # fragd_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # libbpf1, libyaml-cpp0.7 (0.8 on trixie), ... from dpkg-shlibdeps
# fragctl opens libcairo only to draw `fragctl map --png` (fragctl/render/cairo_lib.h): a
# recommendation, so that the container image (make image) carries no graphics stack.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS libcairo2)
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)

# Maintainer scripts, and the policy file as a conffile (an upgrade keeps the
# operator's edits; `dpkg --purge` removes it). The unit is enabled for the next
# boot as Debian's own packages do (deb-systemd-helper, which needs no running
# systemd) and started, stopped or reloaded only when systemd is PID 1: on a host
# or in a container without it every script still succeeds.
set(FRAGD_DEB_POSTINST [=[#!/bin/sh
set -e
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
  # deb-systemd-helper comes with init-system-helpers, an essential package.
  deb-systemd-helper unmask fragd.service >/dev/null || true
  # was-enabled is true for a unit it has never seen: a first install enables it.
  if deb-systemd-helper --quiet was-enabled fragd.service; then
    deb-systemd-helper enable fragd.service >/dev/null || true
  else
    deb-systemd-helper update-state fragd.service >/dev/null || true
  fi
  if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
    if [ -n "$2" ]; then action=restart; else action=start; fi
    deb-systemd-invoke "$action" fragd.service >/dev/null ||
      echo "fragd: the service did not start; see: journalctl -u fragd" >&2
  fi
fi
exit 0
]=])
set(FRAGD_DEB_PRERM [=[#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
  deb-systemd-invoke stop fragd.service >/dev/null || true
fi
exit 0
]=])
set(FRAGD_DEB_POSTRM [=[#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = purge ]; then
  deb-systemd-helper purge fragd.service >/dev/null || true
  deb-systemd-helper unmask fragd.service >/dev/null || true
  # RuntimeDirectoryPreserve=yes keeps it across stops; a purge leaves nothing.
  rm -rf /run/fragd
fi
exit 0
]=])
set(FRAGD_DEB_DIR ${CMAKE_BINARY_DIR}/deb)
file(WRITE ${FRAGD_DEB_DIR}/conffiles "${FRAGD_CONFIG_FILE}\n")
foreach(script postinst prerm postrm)
  string(TOUPPER ${script} upper)
  file(CONFIGURE OUTPUT ${FRAGD_DEB_DIR}/${script} CONTENT "${FRAGD_DEB_${upper}}" @ONLY)
  file(CHMOD ${FRAGD_DEB_DIR}/${script}
       PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${FRAGD_DEB_DIR}/conffiles ${FRAGD_DEB_DIR}/postinst ${FRAGD_DEB_DIR}/prerm ${FRAGD_DEB_DIR}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

include(CPack)
