// SPDX-License-Identifier: Apache-2.0
// Leases (concerns/act/leases.h) and the engine's pool actions for them (concerns/act/engine_leases.cc): a lease is
// made, held, and its pages go back when its hold is over, when it is released, when its action
// falls short, and on a reload to observe mode; it outlives a reload that stays in act mode.
#include "concerns/act/engine.h"
#include "concerns/act/leases.h"

#include <gtest/gtest.h>

#include "engine_builders.h"

namespace fragd {
namespace {

using namespace test;

// Node 0 pools of 2 MiB and the global one, as a tick observes them.
Observation with_pools(uint64_t t, uint64_t node0, uint64_t global) {
  Observation o = obs_at(t, {node_obs(0, 10)});
  o.pools = {{0, 2048, node0}, {-1, 2048, global}};
  return o;
}

ActionOutcome pool_done(const ActionRequest& r, const std::string& result, uint64_t after, uint64_t end) {
  ActionOutcome o = outcome(r, result, end - kMs, end);
  o.pool_after = after;
  return o;
}

TEST(Leases, StateMachine) {
  Leases ls;
  auto a = ls.add("libvirt:vm1", 0, 2048, 100, 60 * kS, 0, 1);
  ASSERT_TRUE(a.ok());
  ls.set_action(1, 7);
  EXPECT_EQ(ls.leased({0, 2048}), 100u);
  // The same consumer twice on one pool: refused, naming the lease.
  auto twice = ls.add("libvirt:vm1", 0, 2048, 5, kS, 0, 2);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("already holds lease 1"), std::string::npos) << twice.error().message;
  // Another consumer adds its own pages.
  ASSERT_TRUE(ls.add("slurm:42", 0, 2048, 20, kS, 0, 3).ok());
  ls.set_action(3, 8);
  EXPECT_EQ(ls.leased({0, 2048}), 120u);
  // Action 7 made its pages: held for 60 s from then.
  auto held = ls.made(7, true, "", 10 * kS);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->state, LeaseState::Held);
  EXPECT_EQ(held->expires_ns, 70 * kS);
  // Action 8 fell short: that lease ends, its count leaves the pool's target.
  auto short_one = ls.made(8, false, "short", 11 * kS);
  ASSERT_TRUE(short_one);
  EXPECT_EQ(short_one->state, LeaseState::Ended);
  EXPECT_EQ(ls.leased({0, 2048}), 100u);
  EXPECT_TRUE(ls.expire(69 * kS).empty());
  auto over = ls.expire(70 * kS);
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].consumer, "libvirt:vm1");
  EXPECT_EQ(ls.leased({0, 2048}), 0u);
  EXPECT_EQ(ls.ended().size(), 2u);
  EXPECT_TRUE(ls.release(std::string("libvirt:vm1"), std::nullopt, "released", 80 * kS).empty());
}

TEST(EngineLease, MadeHeldAndGivenBackWhenTheHoldIsOver) {
  Engine e(act_policy());
  EXPECT_FALSE(e.decide(with_pools(0, 10, 10)));  // the pool is seen: 10 pages of someone's
  auto q = e.request_ensure("libvirt:vm1", 0, 2048, 100, 60 * kS, one_node_facts(), 5 * kS);
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->target, 110u) << "a lease adds its pages to what the pool had";
  auto grow = e.decide(with_pools(kS, 10, 10));
  ASSERT_TRUE(grow);
  EXPECT_EQ(grow->kind, ActionKind::Pool);
  EXPECT_EQ(grow->trigger, Trigger::Lease);
  EXPECT_EQ(grow->target, 110u);
  ASSERT_TRUE(grow->restore_to);
  EXPECT_EQ(*grow->restore_to, 10u) << "should fragd stop, the pool goes back to what it had";
  EXPECT_EQ(grow->budget_ns, 5 * kS);
  EXPECT_EQ(grow->lease, q->lease.id);
  EXPECT_NE(grow->reason.find("ensure for libvirt:vm1"), std::string::npos) << grow->reason;
  e.finished(pool_done(*grow, "ok", 110, 2 * kS));
  ASSERT_EQ(e.leases().live().size(), 1u);
  EXPECT_EQ(e.leases().live()[0].state, LeaseState::Held);
  // Held: nothing to do while the pool holds base + lease.
  for (uint64_t t = 3; t < 62; t += 10) EXPECT_FALSE(e.decide(with_pools(t * kS, 110, 110))) << t;
  // The hold is over at 62 s: the pool goes back to its base.
  auto back = e.decide(with_pools(62 * kS, 110, 110));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->trigger, Trigger::Lease);
  EXPECT_EQ(back->target, 10u);
  EXPECT_EQ(back->lease, 0u);
  auto ended = e.take_ended_leases();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_NE(ended[0].end.find("over"), std::string::npos) << ended[0].end;
  e.finished(pool_done(*back, "ok", 10, 63 * kS));
  EXPECT_FALSE(e.decide(with_pools(64 * kS, 10, 10)));
  // Back at base, no lease: the pool is the operator's again, its size changes nothing.
  EXPECT_FALSE(e.decide(with_pools(65 * kS, 30, 30)));
}

TEST(EngineLease, ShortActionEndsTheLeaseAndPutsThePoolBack) {
  Engine e(act_policy());
  e.decide(with_pools(0, 0, 0));
  auto q = e.request_ensure("slurm:42", 0, 2048, 100, 60 * kS, one_node_facts(), 5 * kS);
  ASSERT_TRUE(q.ok());
  auto grow = e.decide(with_pools(kS, 0, 0));
  ASSERT_TRUE(grow);
  e.finished(pool_done(*grow, "short", 60, 2 * kS));
  EXPECT_TRUE(e.leases().live().empty()) << "a lease whose pages were not all made holds none";
  auto back = e.decide(with_pools(3 * kS, 60, 60));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, 0u);
}

TEST(EngineLease, ReleaseAndReload) {
  Engine e(act_policy());
  e.decide(with_pools(0, 0, 0));
  ASSERT_TRUE(e.request_ensure("k8s:ns/pod", 0, 2048, 50, 600 * kS, one_node_facts(), 5 * kS).ok());
  auto grow = e.decide(with_pools(kS, 0, 0));
  ASSERT_TRUE(grow);
  e.finished(pool_done(*grow, "ok", 50, 2 * kS));
  // A reload in act mode keeps the lease.
  e.set_policy(act_policy());
  EXPECT_EQ(e.leases().live().size(), 1u);
  EXPECT_FALSE(e.decide(with_pools(3 * kS, 50, 50)));
  // Released by its consumer: the pool goes back at the next decision.
  auto gone = e.release(std::string("k8s:ns/pod"), std::nullopt);
  ASSERT_EQ(gone.size(), 1u);
  auto back = e.decide(with_pools(4 * kS, 50, 50));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, 0u);
  e.finished(pool_done(*back, "ok", 0, 5 * kS));
  // A reload to observe mode ends every lease, and fragd still puts their pages back.
  ASSERT_TRUE(e.request_ensure("k8s:ns/pod", 0, 2048, 50, 600 * kS, one_node_facts(), 5 * kS).ok());
  grow = e.decide(with_pools(6 * kS, 0, 0));
  ASSERT_TRUE(grow);
  EXPECT_NE(grow->id, grow->lease) << "the action's id and the lease's differ: the outcome must find its lease";
  e.finished(pool_done(*grow, "ok", 50, 7 * kS));
  ASSERT_EQ(e.leases().live().size(), 1u);
  EXPECT_EQ(e.leases().live()[0].state, LeaseState::Held);
  Policy observe = act_policy();
  observe.act = false;
  e.set_policy(observe);
  EXPECT_TRUE(e.leases().live().empty());
  back = e.decide(with_pools(8 * kS, 50, 50));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, 0u);
}

TEST(EngineLease, RefusalsSayWhatIsPossible) {
  Engine e(act_policy());
  // Before the pool was read once.
  auto early = e.request_ensure("a", 0, 2048, 1, kS, one_node_facts(), 0);
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.error().message.find("not read"), std::string::npos) << early.error().message;
  e.decide(with_pools(0, 0, 0));
  auto size = e.request_ensure("a", 0, 4096, 1, kS, one_node_facts(), 0);
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().message.find("offered: 2 MiB, 1 GiB"), std::string::npos) << size.error().message;
  auto node = e.request_ensure("a", 3, 2048, 1, kS, one_node_facts(), 0);
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.error().message.find("node 3 does not exist"), std::string::npos) << node.error().message;
  ASSERT_TRUE(e.request_ensure("a", 0, 2048, 1, kS, one_node_facts(), 0).ok());
  auto mixed = e.request_ensure("b", -1, 2048, 1, kS, one_node_facts(), 0);
  ASSERT_FALSE(mixed.ok()) << "a global lease would undo the node pool's";
  EXPECT_NE(mixed.error().message.find("name a node with --node"), std::string::npos) << mixed.error().message;
  Policy observe = act_policy();
  observe.act = false;
  Engine o(observe);
  auto refused = o.request_ensure("a", 0, 2048, 1, kS, one_node_facts(), 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("observe mode"), std::string::npos);
}

TEST(EngineLease, RidesOnAPolicyPool) {
  Policy p = act_policy();
  PoolTarget t = global_pool(2048, 40);
  t.node.all = false;
  t.node.nodes = {0};
  p.hugepages.pools.push_back(t);
  Engine e(p);
  auto first = e.decide(with_pools(0, 40, 40));
  EXPECT_FALSE(first) << "the policy's pool is at its target";
  auto q = e.request_ensure("vm", 0, 2048, 10, 60 * kS, one_node_facts(), kS);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->target, 50u);
  auto grow = e.decide(with_pools(kS, 40, 40));
  ASSERT_TRUE(grow);
  e.finished(pool_done(*grow, "ok", 50, 2 * kS));
  EXPECT_FALSE(e.decide(with_pools(3 * kS + 30 * kS, 50, 50))) << "the policy does not shrink leased pages";
  auto back = e.decide(with_pools(62 * kS, 50, 50));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, 40u) << "back to the policy's target";
}

}  // namespace
}  // namespace fragd
