// SPDX-License-Identifier: Apache-2.0
// /proc/buddyinfo: parse_buddyinfo() on any text. When it accepts the text,
// every zone has the same number of orders (1..kMaxOrders) and appears once.
#include <set>
#include <utility>

#include "kernel/procfs.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> warnings;
  auto zones = fragd::parse_buddyinfo(fragd_fuzz::as_text(data, size), "buddyinfo", &warnings);
  if (!zones) {
    FUZZ_CHECK(zones.error().message.rfind("buddyinfo:", 0) == 0, "an error names the file and line");
    return 0;
  }
  FUZZ_CHECK(!zones->empty(), "an accepted file has a zone");
  std::set<std::pair<int, std::string>> seen;
  for (const auto& z : *zones) {
    FUZZ_CHECK(z.node >= 0, "node ids are not negative");
    FUZZ_CHECK(!z.zone.empty(), "zones have a name");
    FUZZ_CHECK(!z.free_blocks.empty() && z.free_blocks.size() <= fragd::kMaxOrders, "1..kMaxOrders orders");
    FUZZ_CHECK(z.free_blocks.size() == zones->front().free_blocks.size(), "every zone has the same orders");
    FUZZ_CHECK(seen.emplace(z.node, z.zone).second, "a zone appears once");
  }
  for (const auto& w : warnings) FUZZ_CHECK(w.rfind("buddyinfo:", 0) == 0, "a warning names the file");
  return 0;
}
