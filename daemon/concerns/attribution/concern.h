// SPDX-License-Identifier: Apache-2.0
// Attribution: who stalls, who pays, where (concerns/attribution/rounds.h decides when to read
// the maps), the cgroup THP sweep, and the `top` answer.
#pragma once

#include <memory>

#include "concerns/concern.h"
#include "kernel/kallsyms.h"
#include "protocol/top.h"
#include "concerns/attribution/rounds.h"
#include "concerns/thp/cgroup_anon.h"

namespace fragd {

class AttributionConcern : public Concern {
 public:
  // Opens /proc/kallsyms: before the capabilities are dropped (fragd/settings.h). `maps` reads the
  // attribution maps (the BPF reader in fragd, fakes in unit tests); `start_ns`: when the programs
  // were attached (the top answer's uptime).
  AttributionConcern(Shared& sh, AttributionMaps maps, uint64_t start_ns);
  void tick(const Tick& t) override;
  void metrics(const SeriesPlan& plan, const Tick& last, Families& out) override;
  // Its families of a round (null: none read yet) and the cgroups' THP coverage (null: none).
  static void families(const AttributionView* v, const std::map<std::string, CgroupAnon>* anon,
                       const SeriesPlan& plan, Families& out);
  void reload() override;
  static const std::span<const Command> kAnswers;  // defined with answer()
  bool answers(Command cmd) const override { return among(kAnswers, cmd); }
  std::optional<nlohmann::json> answer(const ControlRequest& req, Reader reader, uint64_t token,
                                       const Tick& last) override;

 private:
  Shared& sh_;
  AttributionMaps maps_;
  uint64_t start_ns_;
  AttributionRounds rounds_;
  std::unique_ptr<KernelSymbols> symbols_;
  std::unique_ptr<CgroupPaths> cgroup_paths_;
};

// The answer to "top": the attribution (null: nothing read yet) and each node's score and free blocks.
TopReply top_reply(const AttributionView* a, const MemSnapshot* mem, uint64_t uptime_ns);

}  // namespace fragd
