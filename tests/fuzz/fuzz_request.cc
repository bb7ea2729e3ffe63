// SPDX-License-Identifier: Apache-2.0
// Control-socket requests: parse_request() (the typed from_json) on any line.
// An accepted request names a known command, has the access that command
// needs (Act exactly for compact, pool and reload), and only fields of that
// command, in range; written back with to_json it parses to the same request.
#include <cstring>

#include <nlohmann/json.hpp>

#include "protocol/request.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = fragd::parse_request(fragd_fuzz::as_text(data, size));
  if (!r) {
    FUZZ_CHECK(!r.error().message.empty(), "an error says what is wrong");
    return 0;
  }
  FUZZ_CHECK(size <= fragd::kMaxRequestBytes, "longer lines are refused");
  const std::string c(fragd::command_name(r->cmd));
  static const char* const kKnown[] = {"hist", "status", "trace", "top", "map", "action", "compact", "pool", "reload"};
  bool known = false;
  for (const char* k : kKnown) known = known || c == k;
  FUZZ_CHECK(known, "the command is known");
  const bool act = c == "compact" || c == "pool" || c == "reload";
  FUZZ_CHECK((r->access == fragd::Access::Act) == act, "Act exactly for compact, pool and reload");
  FUZZ_CHECK(!r->node || c == "compact" || c == "pool", "node only for compact and pool");
  FUZZ_CHECK(!r->node || (*r->node >= 0 && *r->node <= 4095), "node in 0..4095");
  FUZZ_CHECK(r->size_kib.has_value() == (c == "pool") && r->count.has_value() == (c == "pool"),
             "pool has size_kib and count, nothing else has");
  FUZZ_CHECK(!r->size_kib || (*r->size_kib >= 4 && *r->size_kib <= (uint64_t{1} << 40)), "size_kib in range");
  FUZZ_CHECK(!r->count || *r->count <= (uint64_t{1} << 40), "count in range");
  FUZZ_CHECK(r->id.has_value() == (c == "action"), "action has an id, nothing else has");
  FUZZ_CHECK(!r->max_age_ns || (c == "map" && *r->max_age_ns >= 0), "max_age_ns only for map, not negative");
  // What fragctl would send for it (to_json) is accepted as the same request.
  const nlohmann::json sent = *r;
  auto again = fragd::parse_request(sent.dump());
  FUZZ_CHECK(again.ok(), "a request written back parses");
  FUZZ_CHECK(nlohmann::json(*again) == sent && again->access == r->access, "to the same request");
  return 0;
}
