# SPDX-License-Identifier: Apache-2.0
# fragd_runbook_urls(BASE SOURCE_DIR OUT_DIR): writes OUT_DIR/fragd-rules.yml (the rules with each
# runbook_url "docs/runbooks.md#runbook-..." prefixed with BASE, an http(s) URL: where the source
# tree's top directory, README.md and docs/, is served) and
# OUT_DIR/fragd-monitoring.yaml (the PrometheusRule and PodMonitor made of them by
# scripts/gen-k8s-monitoring.py). cmake/Install.cmake calls it when FRAGD_RUNBOOK_BASE_URL is
# set; as a script (the `runbook` test):
#   cmake -DBASE=URL -DSOURCE_DIR=DIR -DOUT_DIR=DIR -P cmake/RunbookUrls.cmake
function(fragd_runbook_urls base source_dir out_dir)
  if(NOT base MATCHES "^https?://[^ \"]+$")
    message(FATAL_ERROR "FRAGD_RUNBOOK_BASE_URL '${base}' is not an http(s) URL: set it to where the "
                        "directory of README.md and docs/ is served (e.g. -DFRAGD_RUNBOOK_BASE_URL=https://docs.example.com/fragd/, "
                        "for https://docs.example.com/fragd/docs/runbooks.md), or leave it empty")
  endif()
  if(NOT base MATCHES "/$")
    string(APPEND base "/")
  endif()
  file(READ ${source_dir}/configs/prometheus/fragd-rules.yml rules)
  string(REPLACE "runbook_url: \"docs/runbooks.md#" "runbook_url: \"${base}docs/runbooks.md#" rules "${rules}")
  file(WRITE ${out_dir}/fragd-rules.yml "${rules}")
  # Debian's python3, which python3-yaml serves.
  find_program(FRAGD_PYTHON3 python3 HINTS /usr/bin NO_DEFAULT_PATH)
  find_program(FRAGD_PYTHON3 python3 REQUIRED)
  execute_process(COMMAND ${FRAGD_PYTHON3} ${source_dir}/scripts/gen-k8s-monitoring.py
                          --rules ${out_dir}/fragd-rules.yml --out ${out_dir}/fragd-monitoring.yaml
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scripts/gen-k8s-monitoring.py failed (is python3-yaml installed?): ${err}")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  fragd_runbook_urls("${BASE}" "${SOURCE_DIR}" "${OUT_DIR}")
endif()
