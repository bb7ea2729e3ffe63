// SPDX-License-Identifier: Apache-2.0
// The daemon composes: the concerns (concerns/<concern>/concern.h: stalls, memory, attribution, pageblocks,
// act), the HTTP and control servers, start-up with its privileges, the loop and shutdown.
// daemon.cc: the tick, the scrape, the requests, a reload; daemon_run.cc: start, loop, stop.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "concerns/act/concern.h"
#include "concerns/attribution/concern.h"
#include "concerns/compaction/concern.h"
#include "concerns/supply/concern.h"
#include "concerns/memory/concern.h"
#include "concerns/pageblocks/concern.h"
#include "concerns/stalls/concern.h"
#include "fragd/control.h"
#include "fragd/http.h"
#include "fragd/tick_clock.h"
#include "protocol/readers.h"

namespace fragd {

class Daemon {
 public:
  explicit Daemon(Config cfg) : sh_(std::move(cfg)) {}
  int run();

 private:
  int start();  // 0, or the exit code of a start that failed
  void tick();
  // What the last tick read, as of now: what every concern is handed.
  Tick last_tick() const;
  void publish_metrics();
  // Answers a request from `reader`; nothing yet for one answered later through the control
  // server's reply(token) (a map that waits for a scan).
  std::optional<nlohmann::json> handle(const ControlRequest& req, Reader reader, uint64_t token);
  nlohmann::json reload(const std::string& why);
  void stop();

  Shared sh_;
  // The BPF programs and their reader, loaded at start (fragd/programs.h).
  std::unique_ptr<BpfPrograms> programs_;
  std::unique_ptr<BpfReader> reader_;
  SelfStats self_;                   // fragd's own health, gathered at a scrape
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<MetricsServer> metrics_;
  // Each concern once, and all of them in tick order (concerns_).
  std::unique_ptr<MemoryConcern> memory_;
  std::unique_ptr<AttributionConcern> attribution_;
  std::unique_ptr<StallsConcern> stalls_;
  std::unique_ptr<CompactionConcern> compaction_;
  std::unique_ptr<ActConcern> act_;
  std::unique_ptr<PageblocksConcern> pageblocks_;
  std::unique_ptr<FeaturesConcern> features_;
  std::vector<Concern*> concerns_;
  TickClock ticks_{0, sh_.cfg.tick_ns};  // the timer's due times; reset when the timer starts
};

}  // namespace fragd
