// SPDX-License-Identifier: Apache-2.0
// The sysfs actuator's compaction write (concerns/act/sysfs_actuator.h, concerns/act/child_write.h)
// against files in a scratch --path.sysfs: it is made by a child process that
// fragd registers before it writes, and a stop kills it. The "long compaction"
// is a FIFO nobody reads: the child's open blocks until it is killed, as a
// write to nodeN/compact blocks until the kernel is done.
#include "concerns/act/sysfs_actuator.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <future>
#include <thread>

#include "base/text.h"
#include "kernel/procfs_fixtures.h"

namespace fragd {
namespace {

using namespace std::chrono_literals;
using test::TempDir;

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool gone(pid_t pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }

struct Node0 {
  TempDir sys;
  std::string compact;
  Node0() : compact(sys.path() + "/devices/system/node/node0/compact") {
    sys.write("devices/system/node/node0/compact", "");
  }
};

// Node 0 with an actuator whose writer hooks only note whether a child was registered: for
// the writes that must not start.
struct WatchedNode0 : Node0 {
  SysfsActuator a{"/nonexistent-proc", sys.path()};
  bool owned = false;
  WatchedNode0() {
    a.set_writer_hooks({[this](pid_t) -> Result<void> {
                          owned = true;
                          return {};
                        },
                        {},
                        {}});
  }
  // compact_node(0) fails with `err`, and no child was registered or wrote.
  void expect_no_write(int err) {
    const Result<void> r = a.compact_node(0);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, err);
    EXPECT_FALSE(owned);
    EXPECT_EQ(read_all(compact), "");
  }
};

// Whether `pending`, a write blocked in its open of the FIFO `fifo`, ended within `limit`. When
// it did not, a reader releases the blocked open first, so that the failing test still ends.
bool ended_within(std::future<Result<void>>& pending, const std::string& fifo, std::chrono::seconds limit) {
  if (pending.wait_for(limit) != std::future_status::timeout) return true;
  const int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  pending.wait();
  if (fd >= 0) close(fd);
  return false;
}

TEST(SysfsCompact, WritesFromARegisteredChildThatIsReapedAfter) {
  Node0 n;
  SysfsActuator a("/nonexistent-proc", n.sys.path());
  pid_t owned = -1, disowned = -1;
  std::string seen_at_own = "unset";
  a.set_writer_hooks({[&](pid_t pid) -> Result<void> {
                        owned = pid;
                        seen_at_own = read_all(n.compact);  // the child waits until fragd has registered it
                        return {};
                      },
                      [&](pid_t pid) { disowned = pid; },
                      {}});
  ASSERT_TRUE(a.compact_node(0));
  EXPECT_EQ(read_all(n.compact), "1");
  EXPECT_EQ(seen_at_own, "");
  EXPECT_GT(owned, 0);
  EXPECT_NE(owned, getpid());
  EXPECT_EQ(disowned, owned);
  EXPECT_TRUE(gone(owned)) << "child " << owned << " was not reaped";
  const ChildWriteReport c = a.last_compaction_child();
  EXPECT_EQ(c.pid, owned);
  EXPECT_TRUE(c.attempted);
  EXPECT_FALSE(c.killed);
}

TEST(SysfsCompact, StopKillsAWriteThatDoesNotReturn) {
  Node0 n;
  ASSERT_EQ(unlink(n.compact.c_str()), 0);
  ASSERT_EQ(mkfifo(n.compact.c_str(), 0600), 0);
  SysfsActuator a("/nonexistent-proc", n.sys.path());
  auto pending = std::async(std::launch::async, [&a] { return a.compact_node(0); });
  // The write is under way (its open of the FIFO blocks) ...
  ASSERT_EQ(pending.wait_for(300ms), std::future_status::timeout) << "the compaction write did not block";
  const auto t0 = std::chrono::steady_clock::now();
  a.request_stop();
  // ... and the stop ends it.
  ASSERT_TRUE(ended_within(pending, n.compact, 5s)) << "request_stop() did not end a compaction write within 5 s";
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const Result<void> r = pending.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ECANCELED) << r.error().message;
  EXPECT_NE(r.error().message.find("fragd is exiting"), std::string::npos) << r.error().message;
  EXPECT_LT(ms, 2000);
  const ChildWriteReport c = a.last_compaction_child();
  EXPECT_TRUE(c.killed);
  EXPECT_FALSE(c.attempted);
  EXPECT_TRUE(gone(c.pid)) << "child " << c.pid << " left running";
  EXPECT_TRUE(a.write_errors().empty()) << "a stopped write counted as refused by the kernel";
}

TEST(ChildWriteDeadline, PollWaitsUntilTheDeadlineRoundedUp) {
  EXPECT_EQ(deadline_poll_ms(5'000'000'000ULL, 0), -1) << "no deadline: wait for ever";
  EXPECT_EQ(deadline_poll_ms(5'000'000'000ULL, 5'000'000'000ULL), 0);
  EXPECT_EQ(deadline_poll_ms(6'000'000'000ULL, 5'000'000'000ULL), 0) << "passed: no wait";
  EXPECT_EQ(deadline_poll_ms(5'000'000'000ULL, 5'000'000'001ULL), 1) << "never ends before the deadline";
  EXPECT_EQ(deadline_poll_ms(5'000'000'000ULL, 5'250'000'000ULL), 250);
  EXPECT_EQ(deadline_poll_ms(0, ~0ULL), 1'000'000'000) << "capped to what poll takes";
}

// A compaction write that does not return is killed at the action's deadline: ETIMEDOUT,
// the child reaped, not counted as the kernel's refusal.
TEST(SysfsCompact, TheDeadlineKillsAWriteThatDoesNotReturn) {
  Node0 n;
  ASSERT_EQ(unlink(n.compact.c_str()), 0);
  ASSERT_EQ(mkfifo(n.compact.c_str(), 0600), 0);
  SysfsActuator a("/nonexistent-proc", n.sys.path());
  a.set_deadline(now_ns(CLOCK_MONOTONIC) + 300'000'000ULL);
  auto pending = std::async(std::launch::async, [&a] { return a.compact_node(0); });
  ASSERT_TRUE(ended_within(pending, n.compact, 10s)) << "the deadline did not end a compaction write";
  const Result<void> r = pending.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ETIMEDOUT) << r.error().message;
  EXPECT_NE(r.error().message.find("compaction.cpu_budget"), std::string::npos) << r.error().message;
  const ChildWriteReport c = a.last_compaction_child();
  EXPECT_TRUE(c.cut);
  EXPECT_FALSE(c.killed) << "a cut is not a stop";
  EXPECT_TRUE(gone(c.pid)) << "child " << c.pid << " left running";
  EXPECT_TRUE(a.write_errors().empty()) << "a cut write counted as refused by the kernel";
}

TEST(SysfsCompact, APassedDeadlineStartsNoWriteButAClearedOneDoes) {
  WatchedNode0 n;
  n.a.set_deadline(1);  // long past
  ASSERT_NO_FATAL_FAILURE(n.expect_no_write(ETIMEDOUT));
  n.a.set_deadline(0);
  ASSERT_TRUE(n.a.compact_node(0));
  EXPECT_EQ(read_all(n.compact), "1");
}

TEST(SysfsPool, TheDeadlineKillsAPoolGrowThatDoesNotReturn) {
  TempDir sys;
  const std::string rel = "devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages";
  sys.write(rel, "0\n");
  const std::string file = sys.path() + "/" + rel;
  ASSERT_EQ(unlink(file.c_str()), 0);
  ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
  SysfsActuator a("/nonexistent-proc", sys.path());
  a.set_deadline(now_ns(CLOCK_MONOTONIC) + 300'000'000ULL);
  auto pending = std::async(std::launch::async, [&a] { return a.grow_pool(0, 2048, 8); });
  ASSERT_TRUE(ended_within(pending, file, 10s)) << "the deadline did not end a pool write";
  const Result<void> r = pending.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ETIMEDOUT) << r.error().message;
}

// vm.drop_caches can take seconds on a host with much page cache: its write is a killable
// child like the others, ended at the action's deadline and by a stop.
TEST(SysfsDropCaches, TheDeadlineAndAStopKillADropCachesWriteThatDoesNotReturn) {
  TempDir proc;
  proc.write("sys/vm/drop_caches", "");
  const std::string file = proc.path() + "/sys/vm/drop_caches";
  ASSERT_EQ(unlink(file.c_str()), 0);
  ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
  {
    SysfsActuator a(proc.path(), "/nonexistent-sys");
    a.set_deadline(now_ns(CLOCK_MONOTONIC) + 300'000'000ULL);
    auto pending = std::async(std::launch::async, [&a] { return a.drop_caches(); });
    ASSERT_TRUE(ended_within(pending, file, 10s)) << "the deadline did not end a drop_caches write";
    const Result<void> r = pending.get();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ETIMEDOUT) << r.error().message;
  }
  SysfsActuator a(proc.path(), "/nonexistent-sys");
  auto pending = std::async(std::launch::async, [&a] { return a.drop_caches(); });
  ASSERT_EQ(pending.wait_for(300ms), std::future_status::timeout) << "the drop_caches write did not block";
  a.request_stop();
  ASSERT_TRUE(ended_within(pending, file, 5s)) << "request_stop() did not end a drop_caches write";
  const Result<void> r = pending.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ECANCELED) << r.error().message;
}

TEST(SysfsCompact, AfterAStopNoWriteStarts) {
  WatchedNode0 n;
  n.a.request_stop();
  n.expect_no_write(ECANCELED);
}

TEST(SysfsCompact, ARefusedOpenIsTheKernelsErrorAndCounted) {
  TempDir sys;
  sys.write("devices/system/node/node1/compact", "");  // node dirs exist, node 0's does not
  SysfsActuator a("/nonexistent-proc", sys.path());
  const Result<void> r = a.compact_node(0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_NE(r.error().message.find("open " + sys.path() + "/devices/system/node/node0/compact for writing"),
            std::string::npos)
      << r.error().message;
  const auto errs = a.write_errors();
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs.begin()->first.first, "/sys/devices/system/node/node<N>/compact");
  EXPECT_EQ(errs.begin()->first.second, "ENOENT");
  EXPECT_TRUE(a.last_compaction_child().attempted);
}

TEST(SysfsCompact, NoWriteWhenTheChildCannotBeRegistered) {
  Node0 n;
  SysfsActuator a("/nonexistent-proc", n.sys.path());
  pid_t child = -1;
  bool disowned = false;
  a.set_writer_hooks({[&](pid_t pid) -> Result<void> {
                        child = pid;
                        return make_error("BPF map full", ENOSPC);
                      },
                      [&](pid_t) { disowned = true; },
                      {}});
  const Result<void> r = a.compact_node(0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOSPC);
  EXPECT_NE(r.error().message.find("BPF map full"), std::string::npos) << r.error().message;
  EXPECT_EQ(read_all(n.compact), "") << "the child wrote although it was never registered";
  EXPECT_FALSE(disowned);
  EXPECT_TRUE(gone(child));
  EXPECT_TRUE(a.write_errors().empty());
}

TEST(SysfsCompact, WholeMachineFileWithoutNodeDirs) {
  TempDir proc, sys;
  proc.write("sys/vm/compact_memory", "");
  SysfsActuator a(proc.path(), sys.path());
  ASSERT_TRUE(a.compact_node(0));
  EXPECT_EQ(read_all(proc.path() + "/sys/vm/compact_memory"), "1");
  EXPECT_TRUE(gone(a.last_compaction_child().pid));
}

// A pool's compaction sized to what it lacks (compact_node_until): the write runs (a FIFO nobody
// reads: it never returns by itself) until /proc/buddyinfo shows the blocks, then its child is
// killed and the write counts as done, not as cut or stopped.
TEST(SysfsCompact, ACompactionUntilBlocksStopsOnceTheyExist) {
  Node0 n;
  TempDir proc;
  auto buddy = [&](unsigned order9) {
    proc.write("buddyinfo", "Node 0, zone   Normal      0      0      0      0      0      0      0      0      0 " +
                                std::to_string(order9) + "      0\n");
  };
  buddy(10);
  ASSERT_EQ(unlink(n.compact.c_str()), 0);
  ASSERT_EQ(mkfifo(n.compact.c_str(), 0600), 0);
  SysfsActuator a(proc.path(), n.sys.path());
  a.set_deadline(now_ns(CLOCK_MONOTONIC) + 20'000'000'000ULL);  // a bound for a broken build only
  // Already there: no write at all.
  ASSERT_TRUE(a.compact_node_until(0, 9, 10));
  EXPECT_EQ(a.last_compaction_child().pid, -1);
  auto pending = std::async(std::launch::async, [&a] { return a.compact_node_until(0, 9, 40); });
  EXPECT_EQ(pending.wait_for(300ms), std::future_status::timeout) << "the write ended with 10 of 40 blocks";
  buddy(40);
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready) << "the write went on with the blocks there";
  const Result<void> r = pending.get();
  EXPECT_TRUE(r) << r.error().message;
  const ChildWriteReport c = a.last_compaction_child();
  EXPECT_TRUE(c.reached);
  EXPECT_FALSE(c.cut);
  EXPECT_FALSE(c.killed);
  EXPECT_TRUE(gone(c.pid)) << "child " << c.pid << " left running";
  EXPECT_TRUE(a.write_errors().empty());
}

// One vmstat refresh: "1" written to vm.stat_refresh; a refused write fails it and is counted.
TEST(SysfsRefresh, WritesStatRefreshAndCountsARefusal) {
  TempDir proc, sys;
  proc.write("sys/vm/stat_refresh", "");
  SysfsActuator a(proc.path(), sys.path());
  ASSERT_TRUE(a.refresh_vm_stats());
  EXPECT_EQ(read_all(proc.path() + "/sys/vm/stat_refresh"), "1");
  EXPECT_TRUE(a.write_errors().empty());
  TempDir proc2;
  proc2.write("sys/vm/stat_refresh/x", "");  // a directory: the write fails
  SysfsActuator b(proc2.path(), sys.path());
  auto r = b.refresh_vm_stats();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("stat_refresh"), std::string::npos) << r.error().message;
  EXPECT_EQ(b.write_errors().size(), 1u);
}

}  // namespace
}  // namespace fragd
