// SPDX-License-Identifier: Apache-2.0
// The main loop: handlers in the order registered, a stop that ends the turn, descriptors that
// change from turn to turn, the periodic task (the watchdog) on its own clock, signals and the tick timer.
#include "fragd/event_loop.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int p[2];
    if (pipe(p) == 0) r = p[0], w = p[1];
  }
  ~Pipe() {
    close(r);
    close(w);
  }
  void put() const { ASSERT_EQ(write(w, "x", 1), 1); }
  void take() const {
    char c;
    ASSERT_EQ(read(r, &c, 1), 1);
  }
};

uint64_t fake_now = 0;

TEST(EventLoop, HandlersRunInTheOrderRegisteredAndStopEndsTheTurn) {
  Pipe a, b, c;
  fragd::EventLoop loop([] { return fake_now; });
  std::vector<std::string> seen;
  loop.watch(a.r, [&](short) { a.take(); seen.push_back("a"); });
  loop.watch(b.r, [&](short) { b.take(); seen.push_back("b"); loop.stop(); });
  loop.watch(c.r, [&](short) { c.take(); seen.push_back("c"); });
  c.put();
  b.put();
  a.put();
  EXPECT_EQ(loop.run(), 0);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));  // c is ready too, but b stopped the loop
}

TEST(EventLoop, ANegativeDescriptorIsNotWatched) {
  Pipe a;
  fragd::EventLoop loop([] { return fake_now; });
  int called = 0;
  loop.watch(-1, [&](short) { called++; });
  loop.watch(a.r, [&](short) { a.take(); loop.stop(); });
  a.put();
  EXPECT_EQ(loop.run(), 0);
  EXPECT_EQ(called, 0);
}

TEST(EventLoop, TheSetIsAskedForEachTurnAndItsAfterRunsEachTurn) {
  Pipe a, b;
  fragd::EventLoop loop([] { return fake_now; });
  int turn = 0, after = 0;
  std::vector<int> got;
  loop.watch_set(
      [&] {  // the first turn watches a, the second b
        return std::vector<pollfd>{{turn == 0 ? a.r : b.r, POLLIN, 0}};
      },
      [&](const pollfd& p) {
        got.push_back(p.fd);
        char ch;
        ASSERT_EQ(read(p.fd, &ch, 1), 1);
      },
      [] { return 1000; },
      [&] {
        after++;
        if (++turn == 2) loop.stop();
      });
  a.put();
  b.put();
  EXPECT_EQ(loop.run(), 0);
  EXPECT_EQ(got, (std::vector<int>{a.r, b.r}));
  EXPECT_EQ(after, 2);
}

TEST(EventLoop, ThePeriodicTaskRunsFirstThenOncePerPeriod) {
  Pipe a;
  uint64_t now = 1'000'000'000;
  fragd::EventLoop loop([&] { return now; });
  std::vector<uint64_t> pinged;
  loop.every(250'000'000, [&] { pinged.push_back(now); });
  int turns = 0;
  loop.watch(a.r, [&](short) {
    a.take();
    if (++turns == 3) loop.stop();
  });
  // Each turn: the clock moves on by 100 ms, and one byte wakes the poll.
  loop.watch_set([&] { return std::vector<pollfd>{}; }, [](const pollfd&) {}, [] { return -1; },
                 [&] {
                   now += 100'000'000;
                   a.put();
                 });
  a.put();
  EXPECT_EQ(loop.run(), 0);
  // Turns at 1.0 s (first: ping), 1.1 s, 1.2 s: the next ping is due at 1.25 s.
  EXPECT_EQ(pinged, (std::vector<uint64_t>{1'000'000'000}));
}

TEST(EventLoop, ThePollWakesUpForTheTask) {
  uint64_t now = 0;
  fragd::EventLoop loop([&] {
    now += 1'000'000;  // 1 ms per clock read: time passes while the loop waits
    return now;
  });
  int pings = 0;
  loop.every(5'000'000, [&] {
    if (++pings == 3) loop.stop();
  });
  // Nothing else to wait for: without the task's own deadline the poll would sleep forever.
  EXPECT_EQ(loop.run(), 0);
  EXPECT_EQ(pings, 3);
}

}  // namespace

TEST(EventLoop, SignalsAreBlockedAndHandedToTheLoopOneByOne) {
  fragd::EventLoop loop([] { return fake_now; });
  std::vector<int> got;
  ASSERT_TRUE(loop.signals({SIGUSR1, SIGUSR2}, [&](int signo) {
    got.push_back(signo);
    if (got.size() == 2) loop.stop();
  }));
  // Blocked now: raised, each waits in the signalfd instead of ending the process.
  raise(SIGUSR2);
  raise(SIGUSR1);
  EXPECT_EQ(loop.run(), 0);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int>{SIGUSR1, SIGUSR2}));
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGUSR1);
  sigaddset(&mask, SIGUSR2);
  sigprocmask(SIG_UNBLOCK, &mask, nullptr);
}

TEST(EventLoop, TheTimerSaysHowManyPeriodsPassedSinceItsLastCall) {
  fragd::EventLoop loop([] { return fake_now; });
  std::vector<uint64_t> got;
  ASSERT_TRUE(loop.timer(20'000'000, [&](uint64_t expirations) {
    got.push_back(expirations);
    if (got.size() == 2) loop.stop();
  }));
  // A loop that starts late by more than three periods: the first call carries them all.
  usleep(70'000);
  EXPECT_EQ(loop.run(), 0);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_GE(got[0], 3u);
  EXPECT_GE(got[1], 1u);
}
