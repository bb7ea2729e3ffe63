// SPDX-License-Identifier: Apache-2.0
// Act mode: the host-wide act lock, the engine (decides at each tick), the sysfs actuator and
// the runner thread (writes), the finished actions; the `compact`, `pool` and `action` requests,
// the status answer's policy part, the act metrics, and the policy of a reload.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "concerns/act/act_lock.h"
#include "concerns/act/action_log.h"
#include "concerns/act/engine.h"
#include "concerns/act/metrics.h"
#include "concerns/act/runner.h"
#include "concerns/act/sysfs_actuator.h"
#include "concerns/concern.h"
#include "protocol/lease.h"
#include "protocol/request.h"
#include "concerns/supply/supply.h"

namespace fragd {

// `fragd --restore`: under the act lock, puts back the kernel settings a
// fragd that did not exit cleanly left changed (concerns/act/saved_state.h), and says
// what it did. 0 when nothing is left changed (or a running act-mode fragd
// holds them: it restores them itself), 1 when something could not be put back
// or the state file was refused.
int restore_saved_settings(const std::string& proc_root, const std::string& sys_root);

class ActConcern : public Concern {
 public:
  // What the host or a node can supply now (PageblocksConcern::supply): ensure's check.
  using SupplyPort = std::function<Result<Supply>(const SupplyAsk&, const Tick&)>;
  // `retick`: a tick of every concern, run after an action finished (it changed the numbers).
  ActConcern(Shared& sh, std::function<void()> retick, SupplyPort supply);
  // Act mode at start: the host-wide act lock, then what a fragd that did not exit cleanly
  // left changed, put back. Before the control socket, BPF and any write.
  Result<void> lock_if_acting();
  // Once the BPF programs are loaded: the processes that write compaction files for fragd
  // count as trigger "fragd".
  void own_writers(BpfPrograms& programs);
  // After the capabilities were dropped: the runner thread, reading the maps through `reader`.
  Result<void> start_runner(BpfReader& reader);
  // A running action ends first (a compaction write's process is killed, a pool resize stops
  // at its next step); then the saved settings go back.
  void stop();

  void tick(const Tick& t) override;
  void metrics(const SeriesPlan& plan, const Tick& last, Families& out) override;
  // Its families of the policy, the engine's state and the actions.
  static void families(const ActStats& act, const SeriesPlan& plan, Families& out);
  void status(StatusReply& s, const Tick& last) const override;
  Result<void> accept(const Config& next) override;
  void reload() override;
  void watch(EventLoop& loop) override;

  static const std::span<const Command> kAnswers;  // defined with answer()
  bool answers(Command cmd) const override { return among(kAnswers, cmd); }
  // compact, pool: the ids of the actions queued; action: one action's state; ensure: the lease
  // and the action that makes it; release: the leases ended.
  std::optional<nlohmann::json> answer(const ControlRequest& req, Reader reader, uint64_t token,
                                       const Tick& last) override;
  ActStats& stats() { return actions_.stats(); }
  // Writes the kernel refused, by file and errno name: fragd_kernel_write_errors_total.
  SysfsActuator::WriteErrors write_errors() const { return actuator_.write_errors(); }

 private:
  Result<void> take_act_lock(const std::string& why);
  void record(const ActionOutcome& o);
  std::optional<nlohmann::json> ensure(const ControlRequest& req, const Tick& last);
  LeaseView lease_view(const Lease& l, uint64_t now) const;
  void log_ended_leases();
  void on_finished();

  Shared& sh_;
  std::function<void()> retick_;
  SupplyPort supply_;
  Engine engine_;
  // Before the runner: released only after the runner put back what it changed.
  std::unique_ptr<ActLock> act_lock_;
  SysfsActuator actuator_;
  std::unique_ptr<ActionRunner> runner_;
  ActionLog actions_;  // finished actions: logged, counted, the last ones kept; manual ones queued
};

}  // namespace fragd
