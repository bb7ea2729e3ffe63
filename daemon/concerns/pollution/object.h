// SPDX-License-Identifier: Apache-2.0
// The pollution BPF object (bpf/pollution.bpf.c, its embedded skeleton): fallbacks by
// migratetype and the pollution ledger, sized to the pageblocks of RAM and switched on once
// its program attached.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "kernel/bpf_object.h"

struct pollution_bpf;

namespace fragd {

class PollutionObject {
 public:
  PollutionObject() = default;
  ~PollutionObject();
  PollutionObject(const PollutionObject&) = delete;
  PollutionObject& operator=(const PollutionObject&) = delete;

  Result<void> open();
  // The pageblock order (`pageblock_order` 0: the kernel's) and the ledger's size: one record
  // per pageblock below `max_pfn` (0: read from /proc/zoneinfo) with `track`, else one entry.
  Result<void> configure(bool track, unsigned pageblock_order, uint64_t max_pfn);
  Result<void> load();
  // The extfrag program (mm_page_alloc_extfrag).
  void attach(ProgramSet& set);
  // With tracking on, turns the ledger on if the extfrag program attached (a warning if not).
  void turn_on(const ProgramSet& set);

  // The pollution ledger: the extfrag program is attached and recording.
  bool enabled() const { return on_; }
  unsigned pageblock_order() const { return pageblock_order_; }

  const bpf_object* obj() const;
  int fallback_stats_fd() const;
  int pollution_stats_fd() const;
  int polluted_blocks_fd() const;   // HASH block -> struct pollution_block

 private:
  pollution_bpf* skel_ = nullptr;
  unsigned pageblock_order_ = 9;
  bool track_ = false;
  bool on_ = false;
};

}  // namespace fragd
