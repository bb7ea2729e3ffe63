// SPDX-License-Identifier: Apache-2.0
// /proc/vmstat and /proc/meminfo: both "name value" files, so one input feeds
// parse_vmstat() and parse_meminfo().
#include "kernel/procfs.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fragd_fuzz::as_text(data, size);
  std::vector<std::string> warnings;
  auto vm = fragd::parse_vmstat(text, "vmstat", &warnings);
  if (vm) {
    FUZZ_CHECK(!vm->empty(), "an accepted vmstat has a counter");
    for (const auto& [k, v] : *vm) FUZZ_CHECK(!k.empty() && k.size() <= 128, "counter names are identifiers");
  } else {
    FUZZ_CHECK(vm.error().message.rfind("vmstat:", 0) == 0, "an error names the file");
  }

  fragd::MemSnapshot snap;
  snap.warnings.push_back("earlier");
  auto mi = fragd::parse_meminfo(text, "meminfo", snap);
  FUZZ_CHECK(!snap.warnings.empty() && snap.warnings.front() == "earlier", "earlier warnings are kept");
  if (!mi) {
    FUZZ_CHECK(mi.error().message.rfind("meminfo:", 0) == 0, "an error names the file");
    FUZZ_CHECK(snap.warnings.size() == 1, "a refused file adds no warning");
  }
  return 0;
}
