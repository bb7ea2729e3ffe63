// SPDX-License-Identifier: Apache-2.0
// The act-mode engine (concerns/act/engine.h) on hand-built observations: observe mode,
// manual requests, proactiveness, pools, labels.
#include "concerns/act/engine.h"
#include "concerns/act/executor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "concerns/act/pool.h"
#include "engine_builders.h"
#include "fake_actuator.h"

namespace fragd {
namespace {

using namespace test;

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
  ASSERT_TRUE(raised_at_zero(e));
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
  ASSERT_TRUE(raised_at_zero(e));
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

// A global 2 MiB pool of target 100, empty at time 0.
class EnginePoolTarget : public ::testing::Test {
 protected:
  Policy p = pool_policy(100);
  Engine e{p};
  Observation o = pool_obs(0);
};

TEST_F(EnginePoolTarget, WaitDoublesAfterFailuresAndResetsOnANewTarget) {
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

TEST_F(EnginePoolTarget, OkButStillOffTargetWaitsMinInterval) {
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
