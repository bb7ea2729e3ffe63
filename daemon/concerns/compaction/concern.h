// SPDX-License-Identifier: Apache-2.0
// Compaction: the zone compaction runs bpf/compaction.bpf.c records (by trigger and status,
// their durations and pages moved) and the CMA allocations, read from its maps at each tick
// (the others get them in their Tick: `compaction`), as the fragd_compaction_* and fragd_cma_*
// families and the status answer's compaction part.
#pragma once

#include <functional>

#include "concerns/compaction/maps.h"
#include "concerns/concern.h"

namespace fragd {

// Its maps, and how they are read (concerns/compaction/maps.cc; a stub in unit tests).
struct CompactionPort {
  CompactionMapFds maps;
  std::function<Result<void>(const CompactionMapFds&, CompactionSnapshot&, HistWatch&)> read = read_compaction;
};

class CompactionConcern : public Concern {
 public:
  CompactionConcern(Shared& sh, CompactionPort bpf) : sh_(sh), bpf_(std::move(bpf)) {}
  // Ticks after stalls, before the concerns that read its snapshot (Daemon::tick).
  void tick(const Tick& t) override;
  void status(StatusReply& s, const Tick& last) const override;
  void metrics(const SeriesPlan& plan, const Tick& last, Families& out) override;
  // Its families of its maps (null: unread).
  static void families(const SeriesPlan& plan, const CompactionSnapshot* maps, Families& out);
  // The last tick's read (null until one read whole) and the reads that failed.
  const CompactionSnapshot* snapshot() const { return read_.get(); }
  uint64_t read_errors() const { return read_.errors(); }

 private:
  Shared& sh_;
  CompactionPort bpf_;
  MapsRead<CompactionSnapshot> read_{"compaction"};
};

}  // namespace fragd
