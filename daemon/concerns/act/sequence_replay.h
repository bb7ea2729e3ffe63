// SPDX-License-Identifier: Apache-2.0
// The replay harness of engine_sequence_test.cc: the fixtures of tests/fixtures/sequences
// (format in its README) read into a policy, events and expected actions, and Replay, which
// plays the daemon around Engine::decide() and finished() against the simulated kernel of
// fake_actuator.h. Included by engine_sequence_test.cc only (its functions are that file's own).
#pragma once

#include "concerns/act/engine.h"
#include "concerns/act/executor.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "concerns/act/observe.h"
#include "concerns/act/pool.h"
#include "concerns/memory/score.h"
#include "fake_actuator.h"

namespace fragd {
namespace {

using test::FakeActuator;

constexpr uint64_t kMs = 1'000'000ULL;
constexpr uint64_t kS = 1'000'000'000ULL;
constexpr uint64_t kFree = 1024000;  // pages; scores convert to blocks exactly
const std::string kSequences = std::string(FRAGD_FIXTURES_DIR) + "/sequences/";

// ------------------------------------------------------------ the fixtures --

// "0", "250ms", "10s", "1.5s", "2m", "700us" -> ns.
std::optional<uint64_t> parse_duration(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  const double v = std::stod(s.substr(0, i));
  const std::string unit = s.substr(i);
  double scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s" || (unit.empty() && v == 0)) scale = 1e9;
  else if (unit == "m") scale = 60e9;
  else return std::nullopt;
  return static_cast<uint64_t>(std::llround(v * scale));
}

int errno_named(const std::string& name) {
  static const std::map<std::string, int> names = {{"EBUSY", EBUSY}, {"EPERM", EPERM}, {"ENOENT", ENOENT},
                                                   {"EIO", EIO},     {"EACCES", EACCES}, {"EINVAL", EINVAL}};
  auto it = names.find(name);
  return it == names.end() ? -1 : it->second;
}

struct Harness {
  uint64_t tick_ns = kS;
  uint64_t end_ns = 60 * kS;
  uint64_t compact_ns = kS;           // wall time of one node compaction (and its compaction time)
  std::optional<uint64_t> kcompactd;  // cost of one proactive step; unset: no kernel proactive compaction
  uint64_t forecast_window_ns = 600 * kS;  // the free-block forecast's window (forecast_window)
};

struct Event {
  uint64_t t = 0;
  int line = 0;
  std::vector<std::string> words;
};

struct Fixture {
  Policy policy;
  Harness h;
  std::vector<Event> events;
  std::vector<std::string> expected;  // "t action node trigger result"
  std::vector<std::string> errors;
};

bool on_off(const std::string& v, bool* out) {
  if (v == "on") *out = true;
  else if (v == "off") *out = false;
  else return false;
  return true;
}

// Applies `key value...` to a policy or the harness. Returns "" or what is wrong.
std::string apply_setting(const std::vector<std::string>& w, size_t at, Policy& p, Harness* h) {
  if (at >= w.size()) return "missing key";
  const std::string& k = w[at];
  auto arg = [&](size_t i) -> std::string { return at + i < w.size() ? w[at + i] : ""; };
  auto dur = [&](size_t i, uint64_t* out) {
    auto d = parse_duration(arg(i));
    if (d) *out = *d;
    return d.has_value();
  };
  auto uns = [&](size_t i, unsigned* out) {
    try {
      *out = static_cast<unsigned>(std::stoul(arg(i)));
      return true;
    } catch (...) {
      return false;
    }
  };
  auto u64 = [&](size_t i, uint64_t* out) {
    try {
      *out = std::stoull(arg(i));
      return true;
    } catch (...) {
      return false;
    }
  };
  CompactionPolicy& c = p.compaction;
  bool ok = true;
  if (k == "tick" && h) ok = dur(1, &h->tick_ns);
  else if (k == "end" && h) ok = dur(1, &h->end_ns);
  else if (k == "compact_time" && h) ok = dur(1, &h->compact_ns);
  else if (k == "kcompactd" && h) {
    uint64_t d = 0;
    ok = dur(1, &d);
    h->kcompactd = d;
  } else if (k == "mode") {
    p.act = arg(1) == "act";
    ok = arg(1) == "act" || arg(1) == "observe";
  } else if (k == "dry_run") ok = on_off(arg(1), &p.dry_run);
  else if (k == "method") {
    static const std::map<std::string, CompactMethod> methods = {
        {"node", CompactMethod::Node}, {"pool", CompactMethod::Pool}, {"proactiveness", CompactMethod::Proactiveness}};
    ok = methods.count(arg(1)) > 0;
    if (ok) c.method = methods.at(arg(1));
  } else if (k == "nodes") {
    c.nodes.all = arg(1) == "all";
    c.nodes.nodes.clear();
    if (!c.nodes.all)
      for (size_t i = at + 1; i < w.size(); ++i) c.nodes.nodes.push_back(std::stoi(w[i]));
  } else if (k == "score") ok = on_off(arg(1), &c.score.enabled);
  else if (k == "high") ok = uns(1, &c.score.high);
  else if (k == "low") ok = uns(1, &c.score.low);
  else if (k == "demand") ok = on_off(arg(1), &c.demand.enabled);
  else if (k == "demand_rate") {
    try {
      c.demand.stalls_per_second = std::stod(arg(1));
    } catch (...) {
      ok = false;
    }
  } else if (k == "demand_p99") ok = dur(1, &c.demand.stall_p99_ns);
  else if (k == "window") ok = dur(1, &c.demand.window_ns);
  else if (k == "min_order") ok = uns(1, &c.demand.min_order);
  else if (k == "reserve") ok = uns(1, &c.reserve.order) && u64(2, &c.reserve.blocks);
  else if (k == "settle") ok = dur(1, &c.settle_ns);
  else if (k == "forecast") ok = on_off(arg(1), &c.forecast.enabled) && dur(2, &c.forecast.horizon_ns);
  else if (k == "forecast_window" && h) ok = dur(1, &h->forecast_window_ns);
  else if (k == "min_interval") ok = dur(1, &c.min_interval_ns);
  else if (k == "budget") ok = dur(1, &c.cpu_budget_ns);
  else if (k == "min_gain") ok = uns(1, &c.backoff.min_gain);
  else if (k == "backoff_max") ok = dur(1, &c.backoff.max_ns);
  else if (k == "proactiveness") ok = uns(1, &c.proactiveness.value) && dur(2, &c.proactiveness.hold_ns);
  else if (k == "guard") ok = u64(1, &p.hugepages.guard_kib);
  else if (k == "drop_caches") ok = on_off(arg(1), &p.hugepages.drop_caches);
  else if (k == "pool") {
    PoolTarget t;
    ok = u64(1, &t.size_kib) && u64(3, &t.count);
    t.node.all = arg(2) == "all";
    if (!t.node.all) t.node.nodes = {std::stoi(arg(2))};
    auto& pools = p.hugepages.pools;
    std::erase_if(pools, [&](const PoolTarget& o) {
      return o.size_kib == t.size_kib && o.node.all == t.node.all && o.node.nodes == t.node.nodes;
    });
    pools.push_back(t);
  } else return "unknown setting '" + k + "'";
  return ok ? "" : "bad value for '" + k + "'";
}

Fixture load_fixture(const std::string& name) {
  Fixture f;
  f.policy.act = true;
  // The rules these sequences pin down, whatever the shipped defaults
  // (method pool's goals: engine_goal_test.cc).
  f.policy.compaction.method = CompactMethod::Node;
  f.policy.compaction.score.high = 40;
  f.policy.compaction.score.low = 20;
  f.policy.compaction.reserve.memory_percent = 0;
  std::ifstream in(kSequences + name);
  if (!in) {
    f.errors.push_back("cannot open " + kSequences + name);
    return f;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream ws(line);
    std::vector<std::string> w;
    for (std::string x; ws >> x;) w.push_back(x);
    if (w.empty()) continue;
    const std::string where = name + ":" + std::to_string(n) + ": ";
    if (w[0] == "set") {
      if (auto e = apply_setting(w, 1, f.policy, &f.h); !e.empty()) f.errors.push_back(where + e);
    } else if (w[0] == "at" || w[0] == "expect") {
      auto t = w.size() > 1 ? parse_duration(w[1]) : std::nullopt;
      if (!t) {
        f.errors.push_back(where + "bad time");
        continue;
      }
      if (w[0] == "at") {
        f.events.push_back(Event{*t, n, std::vector<std::string>(w.begin() + 2, w.end())});
      } else if (w.size() != 6) {
        f.errors.push_back(where + "expect TIME ACTION NODE TRIGGER RESULT");
      } else {
        f.expected.push_back(std::to_string(*t / kMs) + "ms " + w[2] + " " + w[3] + " " + w[4] + " " + w[5]);
      }
    } else {
      f.errors.push_back(where + "unknown line kind '" + w[0] + "'");
    }
  }
  return f;
}

// ------------------------------------------------------ the replay harness --

struct Done {
  uint64_t t;  // when decide() returned it
  ActionRequest req;
  ActionOutcome out;
};

// Plays the daemon: ticks, observations from the fake kernel, a runner that
// executes each request on the fake as fragd's runner does, and finished()
// when the action's time is up (followed at once by a decision, as the daemon
// ticks after each finished action).
class Replay {
 public:
  explicit Replay(Fixture f) : fx_(std::move(f)), engine(fx_.policy) { fake.compact_cost_ns = fx_.h.compact_ns; }

 private:
  Fixture fx_;

 public:
  FakeActuator fake;
  std::vector<Done> done;
  std::vector<std::string> failures;       // broken invariants
  std::vector<std::string> manual_errors;  // refused manual requests

  Engine engine;
  BlockForecast forecast_{fx_.h.forecast_window_ns};  // as the memory concern keeps it: each tick's 2 MiB blocks

  uint64_t now() const { return now_; }

  // Runs every step up to `until` (inclusive).
  void run_until(uint64_t until) {
    while (true) {
      uint64_t t = next_tick_;
      if (running_ && running_->second.end_ns < t) t = running_->second.end_ns;
      if (t > until) break;
      step(t);
      if (t == next_tick_) next_tick_ += fx_.h.tick_ns;
    }
  }
  void run() { run_until(fx_.h.end_ns); }

  std::vector<std::string> actions() const {
    std::vector<std::string> v;
    for (const auto& d : done)
      v.push_back(std::to_string(d.t / kMs) + "ms " + action_name(d.req.kind) + " " + std::to_string(d.req.node) +
                  " " + trigger_label(d.req.trigger) + " " + (d.out.result.empty() ? "running" : d.out.result));
    return v;
  }
  const Fixture& fixture() const { return fx_; }

 private:
  size_t next_event_ = 0;
  uint64_t now_ = 0, next_tick_ = 0;
  bool started_ = false;
  std::optional<std::pair<size_t, ActionOutcome>> running_;  // index in done, outcome to report
  ActionExecutor exec_{fake, {}};
  uint64_t stalls_total_ = 0;
  LatencyHist stall_hist_;
  std::map<int, uint64_t> last_end_;  // per node, for the min_interval invariant

  void step(uint64_t t) {
    if (started_ && fx_.h.kcompactd) {
      const uint64_t periods = t / (500 * kMs) - now_ / (500 * kMs);
      fake.kcompactd(static_cast<unsigned>(periods), *fx_.h.kcompactd);
    }
    started_ = true;
    now_ = t;
    while (next_event_ < fx_.events.size() && fx_.events[next_event_].t <= t) apply(fx_.events[next_event_++]);
    if (running_ && running_->second.end_ns <= t) {
      Done& d = done[running_->first];
      d.out = running_->second;
      running_.reset();
      engine.finished(d.out);
      if (d.req.kind == ActionKind::Compact) last_end_[d.req.node] = d.out.end_ns;
    }
    auto req = engine.decide(observe());
    if (!req) return;
    if (running_) {
      failures.push_back("overlap at " + std::to_string(t / kMs) + "ms: " + req->reason);
      return;
    }
    check_min_interval(*req);
    execute(*req);
  }

  void check_min_interval(const ActionRequest& r) {
    if (r.kind != ActionKind::Compact || r.trigger == Trigger::Manual) return;
    auto it = last_end_.find(r.node);
    if (it != last_end_.end() && now_ < it->second + engine.policy().compaction.min_interval_ns)
      failures.push_back("compaction of node " + std::to_string(r.node) + " at " + std::to_string(now_ / kMs) +
                         "ms, less than min_interval after the last one ended");
  }

  Observation observe() {
    Observation o;
    o.now_ns = now_;
    o.nodes = fake.observe_nodes();
    std::map<int, uint64_t> blocks;
    for (const auto& n : o.nodes) blocks[n.node] = blocks_of_order(n.free_blocks, compaction_hpage_order());
    forecast_.observe(now_, blocks);
    add_forecast(o, forecast_.forecast());
    o.pools = fake.observe_pools();
    o.stalls_total = stalls_total_;
    o.stall_hist = stall_hist_;
    o.fragd_compaction_ns = fake.fragd_compaction_ns;
    o.proactive_compaction_ns = fake.proactive_compaction_ns;
    o.mem_available_kib = fake.mem_available;
    return o;
  }

  void apply(const Event& e) {
    const auto& w = e.words;
    const std::string where = "line " + std::to_string(e.line) + ": ";
    auto word = [&](size_t i) -> std::string { return i < w.size() ? w[i] : ""; };
    if (word(0) == "node") {
      const int id = std::stoi(word(1));
      uint64_t free = kFree;
      unsigned score = 0, best = 0, step = 100;
      for (size_t i = 2; i + 1 < w.size(); i += 2) {
        if (w[i] == "free") free = std::stoull(w[i + 1]);
        else if (w[i] == "score") score = static_cast<unsigned>(std::stoul(w[i + 1]));
        else if (w[i] == "best") best = static_cast<unsigned>(std::stoul(w[i + 1]));
        else if (w[i] == "step") step = static_cast<unsigned>(std::stoul(w[i + 1]));
        else failures.push_back(where + "unknown node field " + w[i]);
      }
      const auto keep = fake.nodes[id].pool;
      fake.set_node(id, free, score, best, step);
      fake.nodes[id].pool = keep;
    } else if (word(0) == "forget") {
      fake.nodes.erase(std::stoi(word(1)));
    } else if (word(0) == "stalls") {
      if (word(1) == "reset") {
        stalls_total_ = 0;
        stall_hist_ = LatencyHist{};
      } else {
        const uint64_t n = std::stoull(word(1).substr(word(1)[0] == '+' ? 1 : 0));
        auto lat = parse_duration(word(2));
        if (!lat) failures.push_back(where + "stalls +N LATENCY");
        stalls_total_ += n;
        stall_hist_.add(lat.value_or(0), n);
      }
    } else if (word(0) == "fail") {
      const int err = word(2) == "none" ? 0 : errno_named(word(2));
      if (err < 0) failures.push_back(where + "unknown errno " + word(2));
      fake.fail(word(1), err);
    } else if (word(0) == "mem_available") {
      fake.mem_available = std::stoull(word(1));
    } else if (word(0) == "compact") {
      auto r = engine.request_compact(word(1) == "all" ? -1 : std::stoi(word(1)), facts());
      if (!r) manual_errors.push_back(r.error().message);
    } else if (word(0) == "pool") {
      auto r = engine.request_pool(std::stoull(word(1)), word(2) == "all" ? -1 : std::stoi(word(2)),
                                   std::stoull(word(3)), facts());
      if (!r) manual_errors.push_back(r.error().message);
    } else if (word(0) == "reload") {
      Policy p = engine.policy();
      for (size_t i = 1; i < w.size();) {
        // one setting per key; a key's values run to the next key-like word
        size_t j = i + 1;
        while (j < w.size() && (std::isdigit(static_cast<unsigned char>(w[j][0])) || w[j] == "all" ||
                                w[j] == "on" || w[j] == "off" || w[j] == "act" || w[j] == "observe" ||
                                w[j] == "node" || w[j] == "proactiveness"))
          ++j;
        std::vector<std::string> kv(w.begin() + static_cast<long>(i), w.begin() + static_cast<long>(j));
        if (auto err = apply_setting(kv, 0, p, nullptr); !err.empty()) failures.push_back(where + err);
        i = j;
      }
      engine.set_policy(p);
      for (auto& d : engine.take_dropped()) manual_errors.push_back("dropped " + std::to_string(d.req.id) + ": " + d.detail);
    } else {
      failures.push_back(where + "unknown event " + word(0));
    }
  }

  MachineFacts facts() const {
    MachineFacts m;
    for (const auto& [id, n] : fake.nodes) {
      m.nodes.push_back(id);
      m.node_total_kib.push_back(8ULL << 20);
    }
    m.hugepage_kib = {2048, 1048576};
    m.mem_total_kib = 16ULL << 20;
    return m;
  }

  // What fragd's runner does with a request, on the fake (the same executor).
  void execute(const ActionRequest& r) {
    const Policy& p = engine.policy();
    ActionOutcome o = exec_.run(r, p);
    o.start_ns = now_;
    uint64_t took = kMs;
    if (r.kind == ActionKind::Compact && (o.result == "ok" || o.result == "no_gain")) took = fx_.h.compact_ns;
    if (r.kind == ActionKind::Pool && o.result != "dry_run") took = 10 * kMs + o.compactions * fx_.h.compact_ns;
    o.end_ns = now_ + took;
    done.push_back(Done{now_, r, ActionOutcome{}});
    running_ = std::make_pair(done.size() - 1, o);
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// Replays a fixture to its end and checks its expect lines and the
// invariants every replay must keep.
Replay replay_file(const std::string& name, const std::function<void(Replay&)>& before = {}) {
  Fixture f = load_fixture(name);
  EXPECT_TRUE(f.errors.empty()) << joined(f.errors);
  Replay r(f);
  if (before) before(r);
  r.run();
  EXPECT_TRUE(r.failures.empty()) << name << ":\n" << joined(r.failures);
  EXPECT_EQ(joined(r.actions()), joined(r.fixture().expected)) << name;
  return r;
}

}  // namespace
}  // namespace fragd
