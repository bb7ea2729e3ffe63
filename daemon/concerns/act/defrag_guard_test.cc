// SPDX-License-Identifier: Apache-2.0
// The vm.defrag_mode guard (concerns/act/defrag_guard.h): when it turns defrag_mode off, when it puts the
// value back, what it will not judge; the executor's two actions against a fake kernel; the
// saved value put back by restore_saved like every other setting.
#include "concerns/act/defrag_guard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "concerns/act/engine.h"
#include "concerns/act/executor.h"
#include "concerns/act/saved_state.h"
#include "fake_actuator.h"

namespace {

using fragd::DefragGuard;
using fragd::DefragModeGuard;
using fragd::GuardSample;

constexpr uint64_t kGuardSecond = 1'000'000'000ULL;

DefragGuard guard_policy() {
  DefragGuard g;
  g.enabled = true;
  g.atomic_failures_per_second = 1;
  g.pressure_full_percent = 5;
  g.window_ns = 60 * kGuardSecond;
  g.hold_ns = 600 * kGuardSecond;
  return g;
}

// A tick every 2 s from t0 for `secs`, with atomic failures and PSI full growing at the given
// rates; returns the first request and the time it came.
struct Fed {
  std::optional<fragd::GuardRequest> req;
  uint64_t at = 0;
};
Fed feed(DefragModeGuard& g, const DefragGuard& p, uint64_t t0, unsigned secs, double atomic_per_s,
         double full_share, unsigned defrag_mode = 1, bool counting = true, bool act = true) {
  for (unsigned t = 0; t <= secs; t += 2) {
    GuardSample s;
    s.now_ns = t0 + t * kGuardSecond;
    s.defrag_mode = defrag_mode;
    s.atomic_failures = static_cast<uint64_t>(atomic_per_s * (t0 / kGuardSecond + t));
    s.counting = counting;
    s.pressure_full_s = full_share * (t0 / kGuardSecond + t);
    if (auto r = g.decide(s, act, p, false)) return {r, s.now_ns};
  }
  return {};
}

TEST(DefragGuard, AtomicFailuresOverTheLimitForAWholeWindowTurnItOff) {
  DefragModeGuard g;
  const auto p = guard_policy();
  const Fed r = feed(g, p, 1000 * kGuardSecond, 120, 3.0, 0);
  ASSERT_TRUE(r.req);
  EXPECT_TRUE(r.req->off);
  EXPECT_EQ(r.at, 1060 * kGuardSecond) << "not before a whole window of samples";
  EXPECT_NE(r.req->reason.find("3.00 atomic allocation failures/s > 1"), std::string::npos) << r.req->reason;
  EXPECT_NEAR(*g.atomic_per_second(), 3.0, 1e-9);
}

TEST(DefragGuard, PressureFullOverTheLimitTurnsItOff) {
  DefragModeGuard g;
  const Fed r = feed(g, guard_policy(), 0, 120, 0, 0.08);  // 8% of the time
  ASSERT_TRUE(r.req);
  EXPECT_TRUE(r.req->off);
  EXPECT_NE(r.req->reason.find("memory pressure full 8.00% > 5%"), std::string::npos) << r.req->reason;
}

TEST(DefragGuard, UnderTheLimitsNothingHappens) {
  DefragModeGuard g;
  EXPECT_FALSE(feed(g, guard_policy(), 0, 600, 0.5, 0.02).req);
  EXPECT_NEAR(*g.atomic_per_second(), 0.5, 1e-9);
  EXPECT_NEAR(*g.pressure_full_percent(), 2.0, 1e-9);
}

TEST(DefragGuard, AtomicFailuresAreNotJudgedWhereCountingWasOff) {
  DefragModeGuard g;
  // Failures counted only while counting is on: a window with counting off says nothing.
  EXPECT_FALSE(feed(g, guard_policy(), 0, 300, 50, 0, 1, /*counting=*/false).req);
  EXPECT_FALSE(g.atomic_per_second());
}

TEST(DefragGuard, NothingWhileDefragModeIsOffOrAbsentOrTheGuardIsOff) {
  DefragModeGuard g;
  auto p = guard_policy();
  EXPECT_FALSE(feed(g, p, 0, 300, 50, 0.5, /*defrag_mode=*/0).req);
  EXPECT_FALSE(feed(g, p, 0, 300, 50, 0.5, 1, true, /*act=*/false).req);
  p.enabled = false;
  EXPECT_FALSE(feed(g, p, 0, 300, 50, 0.5).req);
  // A kernel without vm.defrag_mode.
  DefragModeGuard none;
  GuardSample s;
  for (uint64_t t = 0; t < 300; t += 2) {
    s.now_ns = t * kGuardSecond;
    s.atomic_failures = t * 100;
    s.counting = true;
    EXPECT_FALSE(none.decide(s, true, guard_policy(), false));
  }
}

TEST(DefragGuard, TheValueGoesBackAfterTheHoldAndAWholeWindowPassesBeforeTheNextJudgement) {
  DefragModeGuard g;
  const auto p = guard_policy();
  const Fed off = feed(g, p, 0, 120, 3.0, 0);
  ASSERT_TRUE(off.req && off.req->off);
  g.finished(true, "ok", off.at);
  ASSERT_EQ(g.held_since(), std::optional<uint64_t>(off.at));
  // Held: defrag_mode reads 0 now; nothing until the hold is over, then the put-back.
  const Fed back = feed(g, p, off.at + 2 * kGuardSecond, 700, 3.0, 0, /*defrag_mode=*/0);
  ASSERT_TRUE(back.req);
  EXPECT_FALSE(back.req->off);
  EXPECT_TRUE(back.req->on_hold);
  EXPECT_EQ(back.at, off.at + 600 * kGuardSecond);
  g.finished(false, "ok", back.at);
  EXPECT_FALSE(g.held_since());
  // The failures go on with defrag_mode 1 again: judged on a new whole window only.
  const Fed again = feed(g, p, back.at + 2 * kGuardSecond, 120, 3.0, 0);
  ASSERT_TRUE(again.req);
  EXPECT_EQ(again.at, back.at + 62 * kGuardSecond);
}

TEST(DefragGuard, ObserveModeOrTheGuardTurnedOffPutsTheValueBackAtOnce) {
  for (bool act : {false, true}) {
    DefragModeGuard g;
    auto p = guard_policy();
    const Fed off = feed(g, p, 0, 120, 3.0, 0);
    ASSERT_TRUE(off.req);
    g.finished(true, "ok", off.at);
    if (act) p.enabled = false;
    GuardSample s;
    s.now_ns = off.at + 4 * kGuardSecond;
    s.defrag_mode = 0;
    const auto r = g.decide(s, act, p, false);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->off);
    EXPECT_FALSE(r->on_hold);
    EXPECT_NE(r->reason.find(act ? "enabled false" : "mode observe"), std::string::npos) << r->reason;
  }
}

TEST(DefragGuard, AFailedPutBackIsTriedAgainAfterAMinute) {
  DefragModeGuard g;
  const auto p = guard_policy();
  g.finished(true, "ok", 0);
  GuardSample s;
  s.defrag_mode = 0;
  s.now_ns = 600 * kGuardSecond;
  ASSERT_TRUE(g.decide(s, true, p, false));
  g.finished(false, "error", 600 * kGuardSecond);
  s.now_ns = 630 * kGuardSecond;
  EXPECT_FALSE(g.decide(s, true, p, false));
  s.now_ns = 660 * kGuardSecond;
  EXPECT_TRUE(g.decide(s, true, p, false));
}

TEST(DefragGuardEngine, TheEngineIssuesTheGuardsActionsWithTheirTriggers) {
  fragd::Policy pol;
  pol.act = true;
  pol.compaction.score.enabled = false;
  pol.compaction.demand.enabled = false;
  pol.compaction.reserve.memory_percent = 0;
  pol.compaction.defrag_guard = guard_policy();
  fragd::Engine e(pol);
  std::optional<fragd::ActionRequest> got;
  for (uint64_t t = 0; t <= 120 && !got; t += 2) {
    fragd::Observation o;
    o.now_ns = t * kGuardSecond;
    o.guard.now_ns = o.now_ns;
    o.guard.defrag_mode = 1;
    o.guard.counting = true;
    o.guard.atomic_failures = t * 5;
    got = e.decide(o);
  }
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, fragd::ActionKind::DefragModeOff);
  EXPECT_STREQ(fragd::action_name(got->kind), "defrag_mode_off");
  EXPECT_STREQ(fragd::trigger_label(got->trigger), "guard");
  fragd::ActionOutcome out;
  out.req = *got;
  out.result = "ok";
  out.end_ns = 60 * kGuardSecond;
  e.finished(out);
  EXPECT_EQ(e.defrag_guard().held_since(), std::optional<uint64_t>(60 * kGuardSecond));
}

TEST(DefragGuardExecutor, OffSavesTheValueAndWritesZeroRestorePutsItBack) {
  fragd::test::FakeActuator f;
  std::vector<std::string> remembered, forgotten;
  fragd::ActionExecutor::Hooks hooks;
  hooks.remember = [&](const std::string& file, uint64_t v, uint64_t wrote) -> fragd::Result<void> {
    remembered.push_back(file + " " + std::to_string(v) + " " + std::to_string(wrote));
    return {};
  };
  hooks.forget = [&](const std::string& file) { forgotten.push_back(file); };
  fragd::ActionExecutor x(f, hooks);
  fragd::Policy p;
  p.act = true;
  fragd::ActionRequest r;
  r.kind = fragd::ActionKind::DefragModeOff;
  auto o = x.run(r, p);
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(f.defrag_mode, std::optional<unsigned>(0));
  EXPECT_EQ(remembered, std::vector<std::string>{"/proc/sys/vm/defrag_mode 1 0"});
  r.kind = fragd::ActionKind::DefragModeRestore;
  o = x.run(r, p);
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(f.defrag_mode, std::optional<unsigned>(1));
  EXPECT_EQ(forgotten, std::vector<std::string>{"/proc/sys/vm/defrag_mode"});
}

TEST(DefragGuardExecutor, AValueSetSinceByAnOperatorIsLeftAndOffTwiceIsRefused) {
  fragd::test::FakeActuator f;
  fragd::ActionExecutor x(f, {});
  fragd::Policy p;
  p.act = true;
  fragd::ActionRequest r;
  r.kind = fragd::ActionKind::DefragModeOff;
  ASSERT_EQ(x.run(r, p).result, "ok");
  const auto twice = x.run(r, p);
  EXPECT_EQ(twice.result, "refused");
  EXPECT_NE(twice.detail.find("reads 0 already"), std::string::npos) << twice.detail;
  f.defrag_mode = 1;  // an operator turned it back on
  r.kind = fragd::ActionKind::DefragModeRestore;
  const auto o = x.run(r, p);
  EXPECT_EQ(o.result, "ok");
  EXPECT_NE(o.detail.find("left as it is"), std::string::npos) << o.detail;
  EXPECT_EQ(f.calls.back(), "read_defrag_mode") << "nothing written over the operator's value";
}

TEST(DefragGuardExecutor, DryRunAndAKernelWithoutDefragModeWriteNothing) {
  fragd::test::FakeActuator f;
  fragd::ActionExecutor x(f, {});
  fragd::Policy p;
  p.act = true;
  p.dry_run = true;
  fragd::ActionRequest r;
  r.kind = fragd::ActionKind::DefragModeOff;
  EXPECT_EQ(x.run(r, p).result, "dry_run");
  EXPECT_TRUE(f.calls.empty());
  p.dry_run = false;
  f.defrag_mode.reset();
  const auto o = x.run(r, p);
  EXPECT_EQ(o.result, "error");
  EXPECT_NE(o.detail.find("defrag_mode"), std::string::npos) << o.detail;
}

TEST(DefragGuardSaved, ASavedDefragModeIsPutBackAndABadValueIsRefused) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fragd-guard-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = (dir / "saved-state").string();
  {
    fragd::SavedState s(file);
    ASSERT_TRUE(s.remember(fragd::kDefragModeFile, 1, "/proc", 0));
  }
  fragd::test::FakeActuator f;
  f.defrag_mode = 0;
  fragd::SavedState s(file);
  ASSERT_TRUE(s.load());
  const auto rep = fragd::restore_saved(s, f);
  EXPECT_TRUE(rep.ok());
  ASSERT_EQ(rep.restored.size(), 1u);
  EXPECT_EQ(rep.restored[0], "vm.defrag_mode restored to 1");
  EXPECT_EQ(f.defrag_mode, std::optional<unsigned>(1));
  const auto bad = fragd::parse_saved_state("/proc/sys/vm/defrag_mode 2 root=/proc wrote=0\n", file);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("vm.defrag_mode 2 is not 0 or 1"), std::string::npos) << bad.error().message;
  fs::remove_all(dir);
}

}  // namespace
