// SPDX-License-Identifier: Apache-2.0
// Stalls: the slow-stall stream to `fragctl trace` clients, allocation counting (when the
// per-page mm_page_alloc program is attached: concerns/stalls/counting.h decides, this attaches
// and detaches it), the `hist` and `trace` answers and the status answer's allocation counting
// and events dropped. Compaction runs are the compaction concern's.
#pragma once

#include <bpf/libbpf.h>

#include <functional>
#include <memory>

#include "concerns/concern.h"
#include "fragd/control.h"
#include "protocol/hist.h"
#include "concerns/stalls/counting.h"
#include "concerns/stalls/maps.h"

namespace fragd {

// What the concern needs of the BPF side (the loaded programs and their reader in fragd,
// stubs in unit tests).
struct StallsPort {
  int slow_stalls_fd = -1;  // ring buffer of stall_event, for fragctl trace; -1: none
  int wakeups_fd = -1;      // ring buffer of __u32 orders: a stall while counting is off; -1: none
  std::function<bool()> counting;                      // the mm_page_alloc program is attached
  std::function<Result<void>(bool on)> set_counting;   // attaches or detaches it
  std::function<void()> arm_wakeup;                    // the next stall sends a wake-up
  unsigned pageblock_order = 9;
  StallsMapFds maps;  // its counters and histograms
  // Reads them (concerns/stalls/maps.cc; a stub in unit tests).
  std::function<Result<void>(const StallsMapFds&, StallsSnapshot&, HistWatch&)> read = read_stalls;
};

class StallsConcern : public Concern {
 public:
  // The first of the concerns after memory to tick (Daemon::tick): reads its maps, which the
  // others get in their Tick (`stalls`), then steers allocation counting.
  // Opens the port's ring buffers; `control` sends the trace stream; `start_ns`: when the
  // programs were attached (counting's first state, the hist answer's uptime).
  StallsConcern(Shared& sh, ControlServer& control, StallsPort bpf, uint64_t start_ns);
  void tick(const Tick& t) override;
  void status(StatusReply& s, const Tick& last) const override;
  void metrics(const SeriesPlan& plan, const Tick& last, Families& out) override;
  // Its families of its maps (null: unread) and its counting.
  static void families(const StallsSnapshot* maps, const CountingStats& stats, const SeriesPlan& plan,
                       Families& out);
  // The last tick's read of its maps (null until one read well) and the reads that failed.
  const StallsSnapshot* snapshot() const { return read_.get(); }
  uint64_t read_errors() const { return read_.errors(); }
  void reload() override;
  void watch(EventLoop& loop) override;
  static const std::span<const Command> kAnswers;  // defined with answer()
  bool answers(Command cmd) const override { return among(kAnswers, cmd); }
  // hist: the histograms as they are now (fresh, so `fragctl hist --interval` sees exact
  // intervals); trace: its acknowledgement (the control server streams the stalls that follow).
  std::optional<nlohmann::json> answer(const ControlRequest& req, Reader reader, uint64_t token,
                                       const Tick& last) override;
  // Allocation counting and the slow-stall stream: fragd_allocation_counting* and trace families.
  const CountingStats& counting_stats() const { return stats_; }

 private:
  static int on_ring_event(void* ctx, void* data, size_t size);
  static int on_wakeup(void* ctx, void* data, size_t size);
  void switch_counting(const CountingSwitch& sw);
  CountingSettings settings() const;

  Shared& sh_;
  ControlServer& control_;
  StallsPort bpf_;
  uint64_t start_ns_;
  MapsRead<StallsSnapshot> read_{"stalls"};
  CountingStats stats_;  // before counting_, which counts into it
  CountingSteer counting_;
  using Ring = std::unique_ptr<ring_buffer, decltype(&ring_buffer__free)>;
  Ring ring_{nullptr, &ring_buffer__free};     // slow stalls, for fragctl trace
  Ring wakeups_{nullptr, &ring_buffer__free};  // a stall while counting is off (adaptive)
};

// A slow stall of the ring buffer as `fragctl trace` receives it.
StallEvent stall_message(const stall_event& e);

}  // namespace fragd
