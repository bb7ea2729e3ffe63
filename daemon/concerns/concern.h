// SPDX-License-Identifier: Apache-2.0
// A concern of the daemon (stalls, compaction, memory, attribution, pageblocks and the
// pollution ledger, act mode): its state and the work of its own at each tick, its part of the
// metrics, of the status answer and of a reload, the requests it answers, and the descriptors it
// waits on. The Daemon holds them as a list, in tick order, and hands each request to the concern
// that answers it (status and reload, which every concern has a part in, are the Daemon's own).
// What a tick read comes to them as an argument, a Tick: the BPF maps the Daemon read and what the
// memory concern read of /proc and sysfs (it ticks first; Daemon::tick holds the order). The
// last Tick comes again with every status and answer. Shared holds only what is fragd's own: the
// running config and the warnings said once. Each concern keeps its own counters, which the
// Daemon gathers at a scrape; the BPF side reaches stalls, attribution and pageblocks through a
// port of their own (built in daemon_run.cc, which owns the programs).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "base/text.h"
#include "base/result.h"
#include "concerns/programs/reader.h"
#include "kernel/bpf_object.h"
#include "kernel/procfs.h"
#include "policy/config.h"
#include "protocol/readers.h"
#include "protocol/request.h"
#include "protocol/status.h"
#include "concerns/memory/forecast.h"
#include "concerns/programs/programs.h"
#include "fragd/event_loop.h"
#include "fragd/exporter.h"

namespace fragd {

// A problem that persists is logged once, not every tick (it stays counted in metrics): once per
// key, its cause, until cleared(key) logs that it went away.
class Warnings {
 public:
  void once(const std::string& key, const std::string& message) {
    if (warned_.size() < 1000 && warned_.insert(key).second) log_warn(message);
  }
  void once(const std::string& w) { once(w, w); }
  void cleared(const std::string& key, const std::string& message) {
    if (warned_.erase(key)) log_info(message);
  }

 private:
  std::set<std::string> warned_;
};

// A concern's read of its BPF maps at each tick, into the last tick's snapshot (the histograms
// again only when its HistWatch says they moved): none until one read whole; a failed read is
// counted (fragd_collect_errors_total{source="bpf"}) and logged once until the maps read well.
template <class Snapshot>
class MapsRead {
 public:
  explicit MapsRead(std::string what) : what_(std::move(what)) {}
  // read(Snapshot&, HistWatch&) -> Result<void>
  template <class Read>
  void tick(Warnings& warn, Read&& read) {
    const bool first = !snap_;
    if (first) snap_.emplace();
    if (auto r = read(*snap_, due_)) {
      warn.cleared("bpf " + what_, "the " + what_ + " maps are readable again");
    } else {
      if (first) snap_.reset();
      errors_++;
      warn.once("bpf " + what_, r.error().message + " (counted in fragd_collect_errors_total{source=\"bpf\"}; not "
                                                    "logged again until the maps read well)");
    }
  }
  const Snapshot* get() const { return snap_ ? &*snap_ : nullptr; }
  uint64_t errors() const { return errors_; }

 private:
  std::string what_;
  std::optional<Snapshot> snap_;
  HistWatch due_;
  uint64_t errors_ = 0;
};

// What one tick read. Null: not read (yet), or unreadable at this tick.
struct Tick {
  uint64_t now = 0;
  const MemSnapshot* mem = nullptr;      // /proc and sysfs (the last good read)
  const MachineFacts* facts = nullptr;   // the nodes and their sizes requests are checked against
  // Each node's free 2 MiB blocks forecast, with compaction.forecast on in act mode (else empty).
  const std::vector<NodeForecast>* forecast = nullptr;
  bool counting = false;  // allocation counting: the per-page mm_page_alloc program is attached
  const StallsSnapshot* stalls = nullptr;  // the stalls concern's read of its maps, this tick
  const CompactionSnapshot* compaction = nullptr;  // the compaction concern's, this tick

  // The machine facts, or none (no node, a 4 KiB page) when the Tick carries none.
  const MachineFacts& machine() const {
    static const MachineFacts kNone;
    return facts ? *facts : kNone;
  }
};

struct Shared {
  explicit Shared(Config c) : cfg(std::move(c)) {}
  Config cfg;  // the running config: a reload replaces it, then tells every concern
  Warnings warn;
};

// The requests the Daemon answers itself (each concern has a part in them). A concern lists the
// ones it answers as kAnswers, defined beside its answer() in its .cc;
// tests/unit/fragd/concerns_test.cc checks that every command is answered exactly once.
inline constexpr std::array kDaemonAnswers{Command::Status, Command::Reload};
inline bool among(std::span<const Command> answers, Command cmd) {
  return std::find(answers.begin(), answers.end(), cmd) != answers.end();
}

class Concern {
 public:
  virtual ~Concern() = default;
  // Its work at a tick, in the Daemon's order of concerns.
  virtual void tick(const Tick& /*t*/) {}
  // Its families, when a scrape asks for them: from its own state and the last Tick, with the
  // series `plan` allows (the config's metrics: section).
  virtual void metrics(const SeriesPlan& /*plan*/, const Tick& /*last*/, Families& /*out*/) {}
  // Its part of the status answer, before the reader's restrictions.
  virtual void status(StatusReply& /*s*/, const Tick& /*last*/) const {}
  // A reload: before, whether the new config can be taken (a refusal keeps the running one);
  // after, the running config (Shared::cfg) is the new one.
  virtual Result<void> accept(const Config& /*next*/) { return {}; }
  virtual void reload() {}
  // Whether it answers requests of this command, and the answer to one from `reader`: a message
  // (protocol/), or nothing yet for one answered later through the control server's
  // reply(token). parse_request checked every field; act requests come from root only.
  virtual bool answers(Command /*cmd*/) const { return false; }
  virtual std::optional<nlohmann::json> answer(const ControlRequest& /*req*/, Reader /*reader*/, uint64_t /*token*/,
                                               const Tick& /*last*/) {
    return std::nullopt;
  }
  // The descriptors it waits on, registered once the loop is built.
  virtual void watch(EventLoop& /*loop*/) {}
};

}  // namespace fragd
