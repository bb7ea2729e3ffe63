// SPDX-License-Identifier: Apache-2.0
#include "concerns/stalls/counting.h"

#include "base/format.h"

namespace fragd {

std::optional<CountingSwitch> CountingSteer::stalled(unsigned order, uint64_t now, bool counting) {
  last_stall_ns_ = now;
  if (s_.mode != "adaptive" || counting) return std::nullopt;
  return CountingSwitch{true, "an allocation of order " + std::to_string(order) + " stalled"};
}

void CountingSteer::account(uint64_t now, bool counting) {
  if (counting && now > counted_until_ns_) stats_.counting_seconds += (now - counted_until_ns_) / 1e9;
  counted_until_ns_ = now;
  stats_.counting = counting;
}

void CountingSteer::switched(bool on, uint64_t now, bool was_counting) {
  account(now, was_counting);
  stats_.counting_switches[on ? "on" : "off"]++;
  stats_.counting = on;
}

std::optional<CountingSwitch> CountingSteer::tick(uint64_t now, uint64_t entries,
                                                       const std::map<int, uint64_t>* free_blocks, bool counting,
                                                       const std::string& wanted) {
  if (entries != last_entries_) last_stall_ns_ = now;
  last_entries_ = entries;
  account(now, counting);
  if (s_.mode != "adaptive") return std::nullopt;
  const std::string hold = format_duration(static_cast<double>(s_.hold_ns), DurationStyle::Exact);
  std::string why;
  if (last_stall_ns_ && now - last_stall_ns_ < s_.hold_ns) why = "stalls in the last " + hold;
  if (why.empty() && s_.free_blocks > 0 && free_blocks)
    for (const auto& [node, n] : *free_blocks)
      if (n < s_.free_blocks) {
        why = "node " + std::to_string(node) + " has " + std::to_string(n) +
              " free pageblocks (< bpf.adaptive_free_blocks " + std::to_string(s_.free_blocks) + ")";
        break;
      }
  if (why.empty()) why = wanted;
  const bool want = !why.empty();
  if (want == counting) return std::nullopt;
  return CountingSwitch{want, want ? why : "no stall for " + hold + ", memory healthy"};
}

}  // namespace fragd
