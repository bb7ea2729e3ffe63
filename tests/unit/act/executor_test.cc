// SPDX-License-Identifier: Apache-2.0
// The executor (act/executor.h) reports a compaction that fragd stopped as it
// exits (the actuator's ECANCELED) as "abandoned", not as an error, on its
// own and inside a pool resize; the simulated kernel of fake_actuator.h.
#include "act/executor.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "fake_actuator.h"

namespace fragd {
namespace {

using test::FakeActuator;

ActionRequest compact(int node) {
  ActionRequest r;
  r.id = 7;
  r.kind = ActionKind::Compact;
  r.node = node;
  return r;
}

TEST(ExecutorCompact, AWriteStoppedAsFragdExitsIsAbandoned) {
  FakeActuator f;
  f.set_node(0, 1024000, 80, 10);
  f.fail("compact", ECANCELED, 1);
  ActionExecutor exec(f, {});
  const ActionOutcome o = exec.run(compact(0), Policy{});
  EXPECT_EQ(o.result, "abandoned");
  EXPECT_NE(o.detail.find("/compact"), std::string::npos) << o.detail;
}

TEST(ExecutorCompact, ARefusedWriteIsStillAnError) {
  FakeActuator f;
  f.set_node(0, 1024000, 80, 10);
  f.fail("compact", EROFS, 1);
  ActionExecutor exec(f, {});
  EXPECT_EQ(exec.run(compact(0), Policy{}).result, "error");
}

TEST(ExecutorPool, ACompactionStoppedMidResizeAbandonsTheResize) {
  FakeActuator f;
  f.set_node(0, 1024000, 90, 10);  // few free 2 MiB blocks: the resize compacts first
  f.fail("compact", ECANCELED, 1);
  ActionExecutor exec(f, {});
  ActionRequest r;
  r.id = 8;
  r.kind = ActionKind::Pool;
  r.node = 0;
  r.size_kib = 2048;
  r.target = 1000;
  r.compact_nodes = {0};
  Policy p;
  p.hugepages.guard_kib = 0;
  const ActionOutcome o = exec.run(r, p);
  EXPECT_EQ(o.result, "abandoned") << o.detail;
  EXPECT_EQ(o.compactions, 0u);
}

}  // namespace
}  // namespace fragd
