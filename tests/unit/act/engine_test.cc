// The act-mode decision logic (act/engine.h): recorded sequences of node
// scores, stalls and failures (tests/fixtures/sequences, format in its
// README) replayed through decide() and finished() against the simulated
// kernel of fake_actuator.h, and hand-built observations for each rule.
#include "act/engine.h"
#include "act/executor.h"

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

#include "act/pool.h"
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
    ok = arg(1) == "node" || arg(1) == "proactiveness";
    c.method = arg(1) == "node" ? CompactMethod::Node : CompactMethod::Proactiveness;
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

  Observation observe() const {
    Observation o;
    o.now_ns = now_;
    o.nodes = fake.observe_nodes();
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

// ----------------------------------------------------- recorded sequences --

TEST(EngineSequence, ScoreHysteresis) {
  Replay r = replay_file("hysteresis.seq");
  EXPECT_EQ(r.done.front().req.reason, "score 45 > high 40");
  EXPECT_EQ(r.done[1].req.reason, "score 35 >= low 20 (hot since it rose above 40)");
  EXPECT_EQ(r.fake.score_of(0), 15u);
  ASSERT_EQ(r.engine.nodes().size(), 1u);
  EXPECT_FALSE(r.engine.nodes()[0].hot);
}

TEST(EngineSequence, BackoffDoublesCapsEscapesAndResets) {
  Fixture f = load_fixture("backoff.seq");
  Replay r(f);
  r.run_until(150 * kS);  // after the 4th miss
  ASSERT_EQ(r.engine.nodes().size(), 1u);
  NodeState n = r.engine.nodes()[0];
  EXPECT_EQ(n.misses, 4u);
  ASSERT_TRUE(n.floor.has_value());
  EXPECT_EQ(*n.floor, 57u);
  EXPECT_EQ(n.waiting, "backoff");
  EXPECT_EQ(n.next_allowed_ns, 144 * kS + 80 * kS);  // capped at backoff_max 80s, not 160s
  r.run_until(f.h.end_ns);
  EXPECT_TRUE(r.failures.empty()) << joined(r.failures);
  EXPECT_EQ(joined(r.actions()), joined(f.expected));
  n = r.engine.nodes()[0];
  EXPECT_EQ(n.misses, 0u);  // the last compaction helped
  EXPECT_FALSE(n.floor.has_value());
}

TEST(EngineSequence, FailingCompactionBacksOffNoBusyLoop) {
  Replay r = replay_file("failing_compact.seq");
  // The schedule: first try, then waits of min_interval * 2^misses capped at
  // backoff_max, each from the failed action's end (ticks of 1 s).
  const Fixture& f = r.fixture();
  const uint64_t mi = f.policy.compaction.min_interval_ns, cap = f.policy.compaction.backoff.max_ns;
  unsigned bound = 0;
  for (uint64_t t = 0, misses = 0; t <= f.h.end_ns; ++bound) {
    ++misses;
    uint64_t wait = mi;
    for (uint64_t i = 0; i < misses && wait < cap; ++i) wait *= 2;
    t += std::min(wait, cap);
  }
  EXPECT_LE(r.done.size(), bound);
  EXPECT_LE(r.done.size(), 16u);  // one hour; a 10 s loop would be 360
  for (const auto& d : r.done) {
    EXPECT_EQ(d.out.result, "error");
    EXPECT_NE(d.out.detail.find("Device or resource busy"), std::string::npos) << d.out.detail;
  }
  EXPECT_EQ(r.engine.nodes()[0].waiting, "backoff");
}

TEST(EngineSequence, FailingPoolBacksOffThenRecovers) {
  Replay r = replay_file("failing_pool.seq");
  for (size_t i = 0; i + 1 < r.done.size(); ++i) {
    EXPECT_EQ(r.done[i].out.result, "error");
    EXPECT_NE(r.done[i].out.detail.find("Operation not permitted"), std::string::npos);
  }
  EXPECT_EQ(r.fake.pool_total(-1, 2048), 100u);
  ASSERT_EQ(r.engine.pools().size(), 1u);
  EXPECT_EQ(r.engine.pools()[0].last_result, "ok");
}

TEST(EngineSequence, DemandByRateAndByP99) {
  Replay r = replay_file("demand.seq");
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0].req.reason, "12 stalls/s of order>=4 > 10 over 10s");
  EXPECT_EQ(r.done[1].req.reason.rfind("stall p99 ", 0), 0u) << r.done[1].req.reason;
  EXPECT_NE(r.done[1].req.reason.find("ms > 5ms over 10s (6 stalls)"), std::string::npos) << r.done[1].req.reason;
}

TEST(EngineSequence, ReserveGoalAndItsInfeasibleCase) {
  Replay r = replay_file("reserve.seq");
  EXPECT_EQ(r.done.front().req.reason, "reserve: 20 free order-9 blocks < 512");
}

TEST(EngineSequence, CpuBudgetDefersTheSecondNode) {
  Fixture f = load_fixture("budget.seq");
  Replay r(f);
  r.run_until(30 * kS);
  EXPECT_EQ(r.engine.budget_used_ns(), 4 * kS);
  bool saw = false;
  for (const auto& n : r.engine.nodes())
    if (n.node == 1) {
      saw = true;
      EXPECT_TRUE(n.hot);
      EXPECT_EQ(n.waiting, "cpu_budget");
    }
  EXPECT_TRUE(saw);
  r.run_until(f.h.end_ns);
  EXPECT_TRUE(r.failures.empty()) << joined(r.failures);
  EXPECT_EQ(joined(r.actions()), joined(f.expected));
}

TEST(EngineSequence, ProactivenessRaiseRestoreHold) {
  Replay r = replay_file("proactiveness.seq");
  EXPECT_EQ(r.done.front().req.reason, "node 0: score 60 > high 40");
  EXPECT_EQ(r.done.front().req.proactiveness, 90u);
  EXPECT_EQ(r.fake.proactiveness, 20u);  // restored
  EXPECT_EQ(r.fake.count_calls("write_proactiveness 90"), 4u);
  EXPECT_EQ(r.fake.count_calls("write_proactiveness 20"), 4u);
  EXPECT_EQ(r.fake.count_calls("compact"), 0u);  // the kernel compacts, not fragd
  EXPECT_FALSE(r.engine.proactiveness_raised());
}

TEST(EngineSequence, PoolGrowShrinkManualGuard) {
  Replay r = replay_file("pool.seq");
  EXPECT_EQ(r.done[0].out.pool_after, 300u);
  EXPECT_EQ(r.done[1].out.pool_after, 100u);
  EXPECT_EQ(r.done[2].out.pool_after, 400u);
  EXPECT_EQ(r.done[3].out.pool_after, 473u);
  EXPECT_EQ(r.fake.count_calls("compact 0"), 1u);  // only the first grow was short of blocks
  EXPECT_GE(r.fake.mem_available, 1024u * 1024u);  // never below the guard
  ASSERT_EQ(r.engine.pools().size(), 1u);
  EXPECT_TRUE(r.engine.pools()[0].manual);
  EXPECT_EQ(r.engine.pools()[0].target, 800u);
  EXPECT_EQ(r.engine.pools()[0].last_result, "guard");
}

TEST(EngineSequence, DryRunDecidesButWritesNothing) {
  Replay r = replay_file("dry_run.seq");
  EXPECT_EQ(r.fake.count_calls("compact"), 0u);
  EXPECT_EQ(r.fake.count_calls("write_pool"), 0u);
  EXPECT_EQ(r.fake.count_calls("write_proactiveness"), 0u);
  // dry_run teaches nothing: no miss, no floor.
  EXPECT_EQ(r.engine.nodes()[0].misses, 0u);
  EXPECT_FALSE(r.engine.nodes()[0].floor.has_value());
}

TEST(EngineSequence, ObserveModeDecidesNothingAndRefusesManual) {
  Replay r = replay_file("observe.seq");
  EXPECT_TRUE(r.done.empty());
  EXPECT_TRUE(r.fake.calls.empty()) << joined(r.fake.calls);
  ASSERT_EQ(r.manual_errors.size(), 2u);
  for (const auto& e : r.manual_errors) EXPECT_NE(e.find("set `mode: act`"), std::string::npos) << e;
}

TEST(EngineSequence, ManualRequestsFirst) {
  Replay r = replay_file("manual.seq");
  EXPECT_EQ(r.done[1].req.reason, "fragctl compact --node 1");
}

// ------------------------------------------------- hand-built observations --

NodeObservation node_obs(int id, unsigned score, uint64_t free_pages = kFree, uint64_t blocks9 = 0) {
  NodeObservation n;
  n.node = id;
  n.score = score;
  n.free_pages = free_pages;
  n.free_blocks.assign(11, 0);
  n.free_blocks[9] = blocks9;
  return n;
}

Observation obs_at(uint64_t t_ns, std::vector<NodeObservation> nodes) {
  Observation o;
  o.now_ns = t_ns;
  o.nodes = std::move(nodes);
  return o;
}

PoolTarget global_pool(uint64_t size_kib, uint64_t count) {
  PoolTarget t;
  t.size_kib = size_kib;
  t.count = count;
  return t;
}

Policy act_policy() {
  Policy p;
  p.act = true;
  p.compaction.demand.enabled = false;
  return p;
}

ActionOutcome outcome(const ActionRequest& r, const std::string& result, uint64_t start, uint64_t end,
                      int before = -1, int after = -1) {
  ActionOutcome o;
  o.req = r;
  o.result = result;
  o.start_ns = start;
  o.end_ns = end;
  o.score_before = before;
  o.score_after = after;
  return o;
}

MachineFacts one_node_facts() {
  MachineFacts m;
  m.nodes = {0};
  m.node_total_kib = {16ULL << 20};
  m.mem_total_kib = 16ULL << 20;
  m.hugepage_kib = {2048, 1048576};
  return m;
}

TEST(EngineScore, NoStartBetweenLowAndHighAndNotAtHigh) {
  Engine e(act_policy());
  for (unsigned s : {20u, 30u, 39u, 40u})
    EXPECT_FALSE(e.decide(obs_at(s * kS, {node_obs(0, s)}))) << s;
  auto r = e.decide(obs_at(50 * kS, {node_obs(0, 41)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, ActionKind::Compact);
  EXPECT_EQ(r->trigger, Trigger::Score);
  EXPECT_EQ(r->reason, "score 41 > high 40");
}

TEST(EngineScore, ScoreTriggerOff) {
  Policy p = act_policy();
  p.compaction.score.enabled = false;
  Engine e(p);
  EXPECT_FALSE(e.decide(obs_at(0, {node_obs(0, 99)})));
  EXPECT_FALSE(e.nodes()[0].hot);
}

TEST(EngineScore, NodeOutsideScopeIsLeftAlone) {
  Policy p = act_policy();
  p.compaction.nodes.all = false;
  p.compaction.nodes.nodes = {1};
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 99), node_obs(1, 50)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 1);
  ASSERT_EQ(e.nodes().size(), 1u);
  EXPECT_EQ(e.nodes()[0].node, 1);
}

TEST(EngineScore, HighestScoreFirst) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 50), node_obs(1, 90), node_obs(2, 70)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 1);
}

TEST(EngineLimits, MinIntervalFromTheEndOfTheLastAction) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "ok", 0, 2 * kS, 90, 60));  // still hot: 60 > 40
  EXPECT_FALSE(e.decide(obs_at(11 * kS, {node_obs(0, 60)})));  // 9 s after the end
  EXPECT_EQ(e.nodes()[0].waiting, "min_interval");
  EXPECT_EQ(e.nodes()[0].next_allowed_ns, 12 * kS);
  EXPECT_TRUE(e.decide(obs_at(12 * kS, {node_obs(0, 60)})));
}

TEST(EngineLimits, NoOverlapWhileAnActionRuns) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 90), node_obs(1, 90)}));
  ASSERT_TRUE(r);
  EXPECT_TRUE(e.busy());
  for (uint64_t t = 1; t < 30; ++t) EXPECT_FALSE(e.decide(obs_at(t * kS, {node_obs(0, 90), node_obs(1, 90)})));
  // A manual request waits too.
  ASSERT_TRUE(e.request_compact(1, [] {
                 MachineFacts m = one_node_facts();
                 m.nodes = {0, 1};
                 m.node_total_kib = {1, 1};
                 return m;
               }()));
  EXPECT_FALSE(e.decide(obs_at(31 * kS, {node_obs(0, 90), node_obs(1, 90)})));
  e.finished(outcome(*r, "ok", 0, 32 * kS, 90, 10));
  EXPECT_FALSE(e.busy());
  auto m = e.decide(obs_at(32 * kS, {node_obs(0, 10), node_obs(1, 90)}));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->trigger, Trigger::Manual);
}

TEST(EngineLimits, UnknownOrRepeatedFinishedIsIgnored) {
  Engine e(act_policy());
  ActionRequest ghost;
  ghost.id = 999;
  e.finished(outcome(ghost, "ok", 0, kS));  // never issued
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(ghost, "error", 0, kS));
  EXPECT_TRUE(e.busy());
  e.finished(outcome(*r, "ok", 0, kS, 90, 10));
  e.finished(outcome(*r, "error", 0, kS));  // reported twice: the second is ignored
  EXPECT_EQ(e.nodes()[0].misses, 0u);
}

TEST(EngineLimits, ErrorBacksOffWithoutAFloor) {
  Engine e(act_policy());
  uint64_t t = 0;
  std::vector<uint64_t> starts;
  for (; t < 2000 * kS; t += kS) {
    auto r = e.decide(obs_at(t, {node_obs(0, 90)}));
    if (!r) continue;
    starts.push_back(t);
    auto o = outcome(*r, "error", t, t + kMs);
    o.detail = "write /sys/devices/system/node/node0/compact: Device or resource busy";
    e.finished(o);
    EXPECT_FALSE(e.nodes()[0].floor.has_value());
  }
  // 10 s * 2^k up to 600 s: 0, 21, 62, 143, 304, 625, 1226, 1827
  EXPECT_EQ(starts, (std::vector<uint64_t>{0, 21 * kS, 62 * kS, 143 * kS, 304 * kS, 625 * kS, 1226 * kS, 1827 * kS}));
}

TEST(EngineLimits, BudgetCountsProactiveTimeOnlyWhileRaised) {
  Policy p = act_policy();
  p.compaction.method = CompactMethod::Proactiveness;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 10)});
  EXPECT_FALSE(e.decide(o));
  o.now_ns = kS;
  o.proactive_compaction_ns = 5 * kS;  // kcompactd on its own: not fragd's
  o.fragd_compaction_ns = 2 * kS;
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.budget_used_ns(), 2 * kS);

  o.now_ns = 2 * kS;
  o.nodes = {node_obs(0, 90)};
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kind, ActionKind::RaiseProactiveness);
  e.finished(outcome(*r, "ok", 2 * kS, 2 * kS + kMs));
  EXPECT_TRUE(e.proactiveness_raised());
  o.now_ns = 3 * kS;
  o.proactive_compaction_ns += 3 * kS;  // while raised: counts
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.budget_used_ns(), 5 * kS);

  // A spent budget ends the raise early.
  o.now_ns = 4 * kS;
  o.proactive_compaction_ns += 2 * kS;
  auto restore = e.decide(o);
  ASSERT_TRUE(restore);
  EXPECT_EQ(restore->kind, ActionKind::RestoreProactiveness);
  EXPECT_EQ(restore->reason, "cpu budget: 7s of compaction in the last 60s > 6s");
  e.finished(outcome(*restore, "ok", 4 * kS, 4 * kS + kMs));
  EXPECT_FALSE(e.proactiveness_raised());
  o.now_ns = 5 * kS;  // the interval of the restore still counts (nothing new here)
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 6 * kS;
  o.proactive_compaction_ns += 10 * kS;  // no longer fragd's
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.budget_used_ns(), 7 * kS);
  // The window slides: 60 s later the old time no longer counts.
  o.now_ns = 70 * kS;
  e.decide(o);
  EXPECT_EQ(e.budget_used_ns(), 0u);
}

TEST(EngineLimits, BudgetExpectsTheLongestRecentDuration) {
  Policy p = act_policy();
  p.compaction.cpu_budget_ns = 12 * kS + kS / 2;  // 12.5 s
  p.compaction.min_interval_ns = kS;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 90), node_obs(1, 90)});
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "ok", 0, 3 * kS, 90, 10));
  o.now_ns = 3 * kS;
  o.fragd_compaction_ns = 3 * kS;
  o.nodes = {node_obs(0, 10), node_obs(1, 90)};
  auto r2 = e.decide(o);  // 3 used + 3 expected <= 12.5
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->node, 1);
  e.finished(outcome(*r2, "ok", 3 * kS, 8 * kS, 90, 60));  // 5 s: the mean is 4 s, the longest 5 s
  o.now_ns = 20 * kS;
  o.fragd_compaction_ns = 8 * kS;
  o.nodes = {node_obs(0, 10), node_obs(1, 60)};
  EXPECT_FALSE(e.decide(o));  // 8 used + 5 expected > 12.5 (the mean, 4, would have fit)
  EXPECT_EQ(e.nodes()[1].waiting, "cpu_budget");
}

TEST(EngineDemand, FewerThanFiveStallsNeverTriggerP99) {
  Policy p = act_policy();
  p.compaction.demand.enabled = true;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 30)});
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 5 * kS;
  o.stall_hist.add(50 * kMs, 4);  // 4 very slow stalls
  o.stalls_total = 4;
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 6 * kS;
  o.stall_hist.add(50 * kMs, 1);  // the 5th
  o.stalls_total = 5;
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Demand);
  EXPECT_EQ(r->reason.rfind("stall p99 ", 0), 0u) << r->reason;
  EXPECT_NE(r->reason.find("(5 stalls)"), std::string::npos) << r->reason;
}

TEST(EngineDemand, OnlyNodesWithSomethingToCompact) {
  Policy p = act_policy();
  p.compaction.demand.enabled = true;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 19), node_obs(1, 20)});
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 10 * kS;
  o.stalls_total = 1000;
  o.stall_hist.add(100000, 1000);
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 1);  // node 0's score is below low
  EXPECT_EQ(r->reason, "100 stalls/s of order>=4 > 10 over 10s");
}

TEST(EngineDemand, CounterResetIsNotASpike) {
  Policy p = act_policy();
  p.compaction.demand.enabled = true;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 30)});
  o.stalls_total = 5000;
  o.stall_hist.add(100000, 5000);
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 10 * kS;
  o.stalls_total = 5050;
  o.stall_hist.add(100000, 50);
  EXPECT_FALSE(e.decide(o));  // 5/s
  // fragd's counters began again from 0 (a restart of the BPF side).
  o.now_ns = 11 * kS;
  o.stalls_total = 3;
  o.stall_hist = LatencyHist{};
  o.stall_hist.add(100000, 3);
  EXPECT_FALSE(e.decide(o));  // 53 since the sample at 0 s: 4.8/s, not a negative or huge number
  o.now_ns = 12 * kS;
  o.stalls_total = 100;
  o.stall_hist.add(100000, 97);
  auto r = e.decide(o);  // 150 stalls since the sample at 0 s: 12.5/s
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, "12.5 stalls/s of order>=4 > 10 over 12s");
}

TEST(EngineReserve, CountsLargerBlocksAsSeveral) {
  Policy p = act_policy();
  p.compaction.score.enabled = false;
  p.compaction.reserve.order = 9;
  p.compaction.reserve.blocks = 8;
  Engine e(p);
  NodeObservation n = node_obs(0, 50, 100000, 3);
  n.free_blocks[10] = 2;  // 3 + 2*2 = 7 < 8
  auto r = e.decide(obs_at(0, {n}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, "reserve: 7 free order-9 blocks < 8");
  e.finished(outcome(*r, "ok", 0, kS));
  n.free_blocks[10] = 3;  // 9: met
  EXPECT_FALSE(e.decide(obs_at(20 * kS, {n})));
}

TEST(EngineReserve, InfeasibleWhenFreePagesCannotHoldIt) {
  Policy p = act_policy();
  p.compaction.score.enabled = false;
  p.compaction.reserve.blocks = 512;  // 512 << 9 = 262144 pages
  Engine e(p);
  EXPECT_FALSE(e.decide(obs_at(0, {node_obs(0, 99, 262143, 0)})));
  EXPECT_TRUE(e.decide(obs_at(kS, {node_obs(0, 99, 262144, 0)})));
}

TEST(EngineRobust, EmptyObservationZeroFreePagesVanishingNode) {
  Policy p = act_policy();
  p.compaction.reserve.blocks = 4;
  p.compaction.demand.enabled = true;
  Engine e(p);
  EXPECT_FALSE(e.decide(Observation{}));
  EXPECT_FALSE(e.decide(obs_at(kS, {node_obs(0, 0, 0, 0)})));  // no free memory: nothing to do
  NodeObservation bare;  // no free_blocks at all
  bare.node = 1;
  EXPECT_FALSE(e.decide(obs_at(2 * kS, {bare})));
  EXPECT_EQ(e.nodes().size(), 1u);  // node 0 is gone: forgotten
  EXPECT_EQ(e.nodes()[0].node, 1);
  // An empty observation (a failed read) keeps what fragd knows.
  EXPECT_FALSE(e.decide(obs_at(3 * kS, {})));
  EXPECT_EQ(e.nodes().size(), 1u);
  // The clock going back does not underflow the windows.
  EXPECT_FALSE(e.decide(obs_at(kS, {bare})));
  EXPECT_EQ(e.budget_used_ns(), 0u);
}

TEST(EngineRobust, OutcomeForAForgottenNode) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 90), node_obs(1, 10)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 0);
  EXPECT_FALSE(e.decide(obs_at(kS, {node_obs(1, 10)})));
  e.finished(outcome(*r, "no_gain", 0, 2 * kS, 90, 90));
  EXPECT_FALSE(e.busy());
  EXPECT_EQ(e.nodes().size(), 1u);
}

TEST(EngineDryRun, OutcomeSetsLastActionButTeachesNothing) {
  Policy p = act_policy();
  p.dry_run = true;
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "dry_run", 0, kMs, 90, -1));
  EXPECT_FALSE(e.decide(obs_at(5 * kS, {node_obs(0, 90)})));  // min_interval
  EXPECT_EQ(e.nodes()[0].misses, 0u);
  EXPECT_FALSE(e.nodes()[0].floor.has_value());
  EXPECT_TRUE(e.decide(obs_at(11 * kS, {node_obs(0, 90)})));
}

TEST(EngineDryRun, ProactivenessIsOnlySimulated) {
  Policy p = act_policy();
  p.dry_run = true;
  p.compaction.method = CompactMethod::Proactiveness;
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kind, ActionKind::RaiseProactiveness);
  e.finished(outcome(*r, "dry_run", 0, kMs));
  EXPECT_FALSE(e.proactiveness_raised());  // nothing was written
  EXPECT_FALSE(e.decide(obs_at(kS, {node_obs(0, 90)})));  // but it does not raise again
  auto back = e.decide(obs_at(2 * kS, {node_obs(0, 10)}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, ActionKind::RestoreProactiveness);
  e.finished(outcome(*back, "dry_run", 2 * kS, 2 * kS + kMs));
  EXPECT_FALSE(e.decide(obs_at(3 * kS, {node_obs(0, 10)})));
}

TEST(EngineObserve, DecidesNothingAndRefusesWithTheFix) {
  Policy p;  // mode: observe
  p.hugepages.pools.push_back(global_pool(2048, 100));
  Engine e(p);
  for (uint64_t t = 0; t < 100; ++t) EXPECT_FALSE(e.decide(obs_at(t * kS, {node_obs(0, 99)})));
  auto c = e.request_compact(0, one_node_facts());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("set `mode: act`"), std::string::npos) << c.error().message;
  auto q = e.request_pool(2048, -1, 10, one_node_facts());
  ASSERT_FALSE(q);
  EXPECT_NE(q.error().message.find("set `mode: act`"), std::string::npos) << q.error().message;
}

TEST(EngineManual, RequestsAreCheckedAgainstTheMachine) {
  Engine e(act_policy());
  const MachineFacts m = one_node_facts();
  auto bad_node = e.request_compact(3, m);
  ASSERT_FALSE(bad_node);
  EXPECT_NE(bad_node.error().message.find("node 3 does not exist"), std::string::npos);
  auto bad_size = e.request_pool(4096, -1, 1, m);
  ASSERT_FALSE(bad_size);
  EXPECT_NE(bad_size.error().message.find("no 4096 kB huge pages (offered: 2048 kB, 1048576 kB)"), std::string::npos)
      << bad_size.error().message;
  auto too_many = e.request_pool(1048576, 0, 17, m);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("ask for at most 16"), std::string::npos) << too_many.error().message;
  auto ok = e.request_compact(-1, m);
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->size(), 1u);
  auto again = e.request_compact(0, m);  // already queued: the same id
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *ok);
}

TEST(EngineManual, BypassesBackoffAndBudgetAndGoesFirst) {
  Policy p = act_policy();
  p.hugepages.pools.push_back(global_pool(2048, 100));
  Engine e(p);
  ASSERT_TRUE(e.request_compact(0, one_node_facts()));
  Observation o = obs_at(0, {node_obs(0, 90)});
  o.fragd_compaction_ns = 0;
  auto r = e.decide(o);  // the pool and the hot node wait
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Manual);
  EXPECT_EQ(r->kind, ActionKind::Compact);
  e.finished(outcome(*r, "no_gain", 0, kS, 90, 90));
  EXPECT_EQ(e.nodes()[0].misses, 1u);  // a manual result teaches too
  ASSERT_TRUE(e.request_compact(0, one_node_facts()));
  o.now_ns = 2 * kS;
  o.fragd_compaction_ns = 100 * kS;  // far over budget
  auto again = e.decide(o);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trigger, Trigger::Manual);
}

TEST(EngineManual, PoolRequestSetsARunTimeTargetUntilReload) {
  Policy p = act_policy();
  p.hugepages.pools.push_back(global_pool(2048, 100));
  Engine e(p);
  auto id = e.request_pool(2048, 0, 50, one_node_facts());
  ASSERT_TRUE(id);
  auto pools = e.pools();
  ASSERT_EQ(pools.size(), 1u);  // the node pool replaces the overlapping global target
  EXPECT_EQ(pools[0].node, 0);
  EXPECT_TRUE(pools[0].manual);
  auto again = e.request_pool(2048, 0, 60, one_node_facts());  // still queued: same id, newer count
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *id);
  e.set_policy(p);  // a reload: the queued request is dropped and reported
  auto dropped = e.take_dropped();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].req.id, *id);
  EXPECT_EQ(dropped[0].req.target, 60u);
  EXPECT_EQ(dropped[0].result, "refused");
  EXPECT_TRUE(e.take_dropped().empty());
  pools = e.pools();
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].node, -1);
  EXPECT_EQ(pools[0].target, 100u);
  EXPECT_FALSE(pools[0].manual);
}

TEST(EngineManual, ReloadToObserveDropsQueuedRequests) {
  Engine e(act_policy());
  ASSERT_TRUE(e.request_compact(0, one_node_facts()));
  Policy observe;
  e.set_policy(observe);
  auto dropped = e.take_dropped();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_NE(dropped[0].detail.find("mode: observe"), std::string::npos);
  EXPECT_FALSE(e.decide(obs_at(0, {node_obs(0, 99)})));
}

TEST(EngineProactiveness, PolicyChangeRestoresEvenInObserveMode) {
  Policy p = act_policy();
  p.compaction.method = CompactMethod::Proactiveness;
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "ok", 0, kMs));
  ASSERT_TRUE(e.proactiveness_raised());
  Policy observe = p;
  observe.act = false;
  e.set_policy(observe);
  auto back = e.decide(obs_at(kS, {node_obs(0, 90)}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, ActionKind::RestoreProactiveness);
  EXPECT_EQ(back->trigger, Trigger::Policy);
  EXPECT_EQ(back->reason, "policy changed: mode observe");
  // A failed restore is retried, with waits, until it works.
  e.finished(outcome(*back, "error", kS, kS + kMs));
  EXPECT_TRUE(e.proactiveness_raised());
  EXPECT_FALSE(e.decide(obs_at(5 * kS, {node_obs(0, 90)})));
  EXPECT_FALSE(e.decide(obs_at(21 * kS, {node_obs(0, 90)})));  // 20 s after the failure ended at 1.001 s
  auto retry = e.decide(obs_at(22 * kS, {node_obs(0, 90)}));
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->kind, ActionKind::RestoreProactiveness);
  e.finished(outcome(*retry, "ok", 22 * kS, 22 * kS + kMs));
  EXPECT_FALSE(e.proactiveness_raised());
  EXPECT_FALSE(e.decide(obs_at(23 * kS, {node_obs(0, 90)})));
}

TEST(EngineProactiveness, MethodChangeRestoresThenCompacts) {
  Policy p = act_policy();
  p.compaction.method = CompactMethod::Proactiveness;
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "ok", 0, kMs));
  p.compaction.method = CompactMethod::Node;
  e.set_policy(p);
  auto back = e.decide(obs_at(kS, {node_obs(0, 90)}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->reason, "policy changed: method node");
  e.finished(outcome(*back, "ok", kS, kS + kMs));
  // The raise counted as an action on node 0 (90 -> 90: no gain), so the
  // node waits its back-off before the first compaction.
  EXPECT_EQ(e.nodes()[0].misses, 1u);
  EXPECT_FALSE(e.decide(obs_at(2 * kS, {node_obs(0, 90)})));
  auto c = e.decide(obs_at(22 * kS, {node_obs(0, 90)}));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, ActionKind::Compact);
}

TEST(EngineProactiveness, RaiseErrorBacksOff) {
  Policy p = act_policy();
  p.compaction.method = CompactMethod::Proactiveness;
  Engine e(p);
  unsigned raises = 0;
  for (uint64_t t = 0; t < 600; ++t) {
    auto r = e.decide(obs_at(t * kS, {node_obs(0, 90)}));
    if (!r) continue;
    ASSERT_EQ(r->kind, ActionKind::RaiseProactiveness);
    ++raises;
    e.finished(outcome(*r, "error", t * kS, t * kS + kMs));
    EXPECT_FALSE(e.proactiveness_raised());
  }
  EXPECT_EQ(raises, 5u);  // 0, 21, 62, 143, 304 (and 625 is past the end)
}

TEST(EnginePools, WaitDoublesAfterFailuresAndResetsOnANewTarget) {
  Policy p = act_policy();
  p.hugepages.pools.push_back(global_pool(2048, 100));
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 10)});
  o.pools = {{-1, 2048, 0}};
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, ActionKind::Pool);
  EXPECT_EQ(r->reason, "pool 2048kB global: 0 < target 100");
  EXPECT_EQ(r->compact_nodes, std::vector<int>{0});
  e.finished(outcome(*r, "short", 0, kS));
  EXPECT_EQ(e.pools()[0].next_allowed_ns, 21 * kS);
  o.now_ns = 20 * kS;
  EXPECT_FALSE(e.decide(o));
  // A reload with a new target acts at once.
  p.hugepages.pools[0].count = 50;
  e.set_policy(p);
  auto n = e.decide(o);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->target, 50u);
  e.finished(outcome(*n, "ok", 20 * kS, 21 * kS));
  o.pools = {{-1, 2048, 50}};
  o.now_ns = 40 * kS;
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.pools()[0].last_result, "ok");
}

TEST(EnginePools, OkButStillOffTargetWaitsMinInterval) {
  Policy p = act_policy();
  p.hugepages.pools.push_back(global_pool(2048, 100));
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 10)});
  o.pools = {{-1, 2048, 0}};
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "ok", 0, kS));
  // Someone else took pages back at once: the observation disagrees with ok.
  for (uint64_t t = 1; t <= 10; ++t) {
    o.now_ns = t * kS;
    EXPECT_FALSE(e.decide(o)) << t;
  }
  o.now_ns = 11 * kS;
  auto again = e.decide(o);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->kind, ActionKind::Pool);
}

TEST(EnginePools, NodePoolCompactsItsNodeOnly) {
  Policy p = act_policy();
  PoolTarget t;
  t.size_kib = 2048;
  t.node.all = false;
  t.node.nodes = {1};
  t.count = 10;
  p.hugepages.pools.push_back(t);
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 10), node_obs(1, 10)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 1);
  EXPECT_EQ(r->compact_nodes, std::vector<int>{1});
  EXPECT_EQ(r->reason, "pool 2048kB node 1: not observed, target 10");
}

TEST(EngineNames, ActionAndTriggerLabels) {
  EXPECT_STREQ(action_name(ActionKind::Compact), "compact");
  EXPECT_STREQ(action_name(ActionKind::RaiseProactiveness), "proactiveness_raise");
  EXPECT_STREQ(action_name(ActionKind::RestoreProactiveness), "proactiveness_restore");
  EXPECT_STREQ(action_name(ActionKind::Pool), "pool");
  EXPECT_STREQ(trigger_label(Trigger::Score), "score");
  EXPECT_STREQ(trigger_label(Trigger::Demand), "demand");
  EXPECT_STREQ(trigger_label(Trigger::Reserve), "reserve");
  EXPECT_STREQ(trigger_label(Trigger::Manual), "manual");
  EXPECT_STREQ(trigger_label(Trigger::Pool), "pool");
  EXPECT_STREQ(trigger_label(Trigger::Hold), "hold");
  EXPECT_STREQ(trigger_label(Trigger::Policy), "policy");
}

}  // namespace
}  // namespace fragd
