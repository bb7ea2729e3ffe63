// SPDX-License-Identifier: Apache-2.0
#include "concerns/pollution/object.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <string>

#include "base/log.h"
#include "kernel/bpf_memory.h"
#include "concerns/pollution/maps.h"
#include "pollution.h"
#include "pollution.skel.h"

namespace fragd {

PollutionObject::~PollutionObject() {
  if (skel_) pollution_bpf::destroy(skel_);
}

Result<void> PollutionObject::open() {
  skel_ = pollution_bpf::open();
  if (!skel_) return sys_error("open BPF object pollution");
  return {};
}

Result<void> PollutionObject::configure(bool track, unsigned pageblock_order, uint64_t max_pfn) {
  track_ = track;
  pageblock_order_ = pageblock_order ? pageblock_order : kernel_pageblock_order();
  if (pageblock_order_ > 20)
    return make_error("pageblock order " + std::to_string(pageblock_order_) + " is out of range 1..20", EINVAL);
  skel_->rodata->pageblock_order = pageblock_order_;
  // One record per block of RAM at most; a ledger that is off still needs a map to load.
  uint32_t record_entries = 1;
  if (track_) {
    if (!max_pfn) max_pfn = zoneinfo_max_pfn();
    const LedgerSize size = pollution_ledger_size(max_pfn, pageblock_order_, FRAGD_POLLUTION_BLOCK_ENTRIES);
    if (max_pfn == 0)
      log_warn("cannot read the zone spans from /proc/zoneinfo: sizing the pollution ledger for " +
               std::to_string(FRAGD_POLLUTION_BLOCK_ENTRIES) + " pageblocks");
    if (size.capped)
      log_warn("memory spans " + std::to_string(size.blocks) + " pageblocks; the pollution ledger holds " +
               std::to_string(FRAGD_POLLUTION_BLOCK_ENTRIES) +
               " at most (fallbacks into more count in fragd's untracked pollution events)");
    record_entries = static_cast<uint32_t>(size.entries);
  }
  if (bpf_map__set_max_entries(skel_->maps.polluted_blocks, record_entries))
    return sys_error("size the pollution ledger of BPF object pollution");
  return {};
}

Result<void> PollutionObject::load() {
  if (int err = pollution_bpf::load(skel_)) return load_error("pollution", -err);
  return {};
}

void PollutionObject::attach(ProgramSet& set) {
  set.attach({skel_->progs.page_alloc_extfrag, "kmem", "mm_page_alloc_extfrag"});
}

void PollutionObject::turn_on(const ProgramSet& set) {
  if (!track_) return;
  const ProgramState* ps = set.find("page_alloc_extfrag");
  if (!ps || !ps->attached) {
    log_warn("the pollution ledger is off: page_alloc_extfrag did not attach, see above");
    return;
  }
  skel_->bss->pollution_on = 1;
  on_ = true;
}

const bpf_object* PollutionObject::obj() const { return skel_->obj; }
int PollutionObject::fallback_stats_fd() const { return bpf_map__fd(skel_->maps.fallback_stats); }
int PollutionObject::pollution_stats_fd() const { return bpf_map__fd(skel_->maps.pollution_stats); }
int PollutionObject::polluted_blocks_fd() const { return bpf_map__fd(skel_->maps.polluted_blocks); }

}  // namespace fragd
