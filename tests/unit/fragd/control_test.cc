// SPDX-License-Identifier: Apache-2.0
// The control server over a real Unix socket in a scratch folder, driven the way
// the main loop drives it (poll_fds / on_poll / service), with a handler of the test's.
#include "fragd/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

namespace {

using fragd::DropReason;
using fragd::RefuseReason;

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fragd-control-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    start(fragd::ControlOptions{});
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  // (Re)starts the server with `o` (its path set here); peer uids come from next_uid_.
  void start(fragd::ControlOptions o) {
    server_.reset();
    o.path = dir_ + "/fragd.sock";
    if (!o.peer_uid) o.peer_uid = [this](int) { return next_uid_; };
    auto s = fragd::ControlServer::start(o, [this](const fragd::ControlRequest& r, long, uint64_t token)
                                                -> std::optional<nlohmann::json> {
      seen_.emplace_back(fragd::command_name(r.cmd));
      if (handler_delay_ns_) std::this_thread::sleep_for(std::chrono::nanoseconds(handler_delay_ns_));
      if (r.cmd == fragd::Command::Map) {  // deferred: answered later through reply()
        deferred_ = token;
        return std::nullopt;
      }
      nlohmann::json a{{"ok", true}, {"cmd", fragd::command_name(r.cmd)}};
      if (pad_) a["pad"] = std::string(pad_, 'x');
      return a;
    });
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
  }

  int connect_client() {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string p = dir_ + "/fragd.sock";
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", p.c_str());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    fds_.push_back(fd);
    return fd;
  }
  // Times one call into the server; the longest is kept in max_call_ns_.
  void timed(const std::function<void()>& f) {
    const uint64_t t0 = mono_ns();
    f();
    max_call_ns_ = std::max(max_call_ns_, mono_ns() - t0);
  }
  // Runs the server's side of the loop until it has nothing to do for 20 ms.
  void pump(int rounds = 200) {
    for (int round = 0; round < rounds; round++) {
      auto fds = server_->poll_fds();
      const int t = server_->timeout_ms();
      const int ready = poll(fds.data(), fds.size(), t >= 0 && t < 20 ? t : 20);
      for (const auto& p : fds)
        if (p.revents) timed([&] { server_->on_poll(p.fd, p.revents); });
      timed([&] { server_->service(); });
      if (ready <= 0 && t != 0) return;
    }
  }
  // Pumps until `done` or `secs` pass.
  bool pump_until(const std::function<bool()>& done, double secs) {
    const uint64_t end = mono_ns() + static_cast<uint64_t>(secs * 1e9);
    while (!done()) {
      if (mono_ns() > end) return false;
      pump(1);
    }
    return true;
  }
  static std::string read_line(int fd) {
    std::string out;
    char c;
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, 1000) > 0 && read(fd, &c, 1) == 1) {
      if (c == '\n') return out;
      out += c;
    }
    return out;
  }
  // Reads what is there now; returns the bytes.
  static size_t drain(int fd) {
    char buf[65536];
    size_t got = 0;
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0;) got += static_cast<size_t>(n);
    return got;
  }
  // Sends `n` requests without reading anything back (the client's socket is non-blocking,
  // so a full socket stops the writing instead of the test).
  static size_t flood(int fd, const std::string& request, size_t n) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    size_t sent = 0;
    for (; sent < n; sent++)
      if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) break;
    return sent;
  }
  uint64_t dropped(DropReason r) const { return server_->stats().dropped[static_cast<size_t>(r)]; }
  uint64_t refused(RefuseReason r) const { return server_->stats().refused[static_cast<size_t>(r)]; }

  std::string dir_;
  std::unique_ptr<fragd::ControlServer> server_;
  std::vector<std::string> seen_;
  std::vector<int> fds_;
  uint64_t deferred_ = 0;
  size_t pad_ = 0;                // bytes of padding in every answer
  uint64_t handler_delay_ns_ = 0;
  long next_uid_ = 0;             // the uid the next accepted peer has
  uint64_t max_call_ns_ = 0;
};

TEST_F(ControlTest, AnswersARequestLine) {
  const int fd = connect_client();
  ASSERT_EQ(write(fd, "{\"cmd\":\"status\"}\n", 17), 17);
  pump();
  const auto answer = nlohmann::json::parse(read_line(fd));
  EXPECT_EQ(answer["cmd"], "status");
  EXPECT_EQ(seen_, std::vector<std::string>{"status"});
}

TEST_F(ControlTest, AMalformedRequestIsAnsweredWithTheReasonAndClosed) {
  const int fd = connect_client();
  ASSERT_GT(write(fd, "not json\n", 9), 0);
  pump();
  const auto answer = nlohmann::json::parse(read_line(fd));
  EXPECT_EQ(answer["ok"], false);
  EXPECT_FALSE(answer["error"].get<std::string>().empty());
  EXPECT_TRUE(seen_.empty());  // the handler never saw it
  pump();
  EXPECT_EQ(server_->clients(), 0u);
  EXPECT_EQ(dropped(DropReason::BadRequest), 1u);
}

TEST_F(ControlTest, ADeferredAnswerComesThroughReply) {
  const int fd = connect_client();
  ASSERT_GT(write(fd, "{\"cmd\":\"map\"}\n", 14), 0);
  pump();
  ASSERT_NE(deferred_, 0u);
  EXPECT_TRUE(server_->reply(deferred_, {{"ok", true}, {"cmd", "map"}}));
  EXPECT_EQ(nlohmann::json::parse(read_line(fd))["cmd"], "map");
  close(fd);
  fds_.clear();
  pump();
  EXPECT_EQ(server_->clients(), 0u);
  EXPECT_FALSE(server_->reply(deferred_, {{"ok", true}}));  // that client has gone
}

TEST_F(ControlTest, ASecondServerOnALiveSocketIsRefused) {
  fragd::ControlOptions o;
  o.path = dir_ + "/fragd.sock";
  auto second = fragd::ControlServer::start(o, [](const fragd::ControlRequest&, long, uint64_t) {
    return std::optional<nlohmann::json>{};
  });
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find(o.path), std::string::npos) << second.error().message;
}

// A client that asks for a lot and reads nothing: no call into the server waits
// for it (the bound is generous; it checks that nothing blocks, it is no timing
// goal), its answers queue up to the cap, then it is dropped as output_full, and
// a client beside it is answered all along.
TEST_F(ControlTest, AClientThatNeverReadsBlocksNothingAndIsDroppedWhenItsQueueIsFull) {
  fragd::ControlOptions o;
  o.burst = 1000;
  o.rate_per_second = 1000;
  o.max_output_bytes = 2u << 20;
  start(o);
  pad_ = 64u << 10;  // 64 KiB answers: the socket's buffer holds a few, the queue the rest
  const int hog = connect_client();
  const int other = connect_client();
  ASSERT_EQ(flood(hog, "{\"cmd\":\"status\"}\n", 200), 200u);
  ASSERT_TRUE(pump_until([&] { return server_->clients() == 1; }, 10)) << "the client that reads nothing was kept";
  EXPECT_EQ(dropped(DropReason::OutputFull), 1u);
  EXPECT_LT(max_call_ns_, 200'000'000u) << "a call into the server took " << max_call_ns_ / 1e6 << " ms";
  ASSERT_EQ(write(other, "{\"cmd\":\"hist\"}\n", 15), 15);
  pump();
  EXPECT_EQ(nlohmann::json::parse(read_line(other))["cmd"], "hist");
}

// One answer larger than the output cap on its own is not sent: the client gets an error that
// names its size and the cap, and keeps its connection.
TEST_F(ControlTest, AnAnswerOverTheCapIsReplacedByAnErrorThatSaysWhy) {
  fragd::ControlOptions o;
  o.max_output_bytes = 1u << 20;
  start(o);
  pad_ = 2u << 20;
  const int c = connect_client();
  ASSERT_EQ(write(c, "{\"cmd\":\"status\"}\n", 17), 17);
  pump();
  const auto a = nlohmann::json::parse(read_line(c));
  EXPECT_EQ(a["ok"], false);
  const std::string why = a.value("error", "");
  EXPECT_NE(why.find("over the control socket's limit of 1048576 bytes"), std::string::npos) << why;
  EXPECT_EQ(server_->clients(), 1u) << "the client was closed";
  pad_ = 0;
  ASSERT_EQ(write(c, "{\"cmd\":\"hist\"}\n", 15), 15);
  pump();
  EXPECT_EQ(nlohmann::json::parse(read_line(c))["cmd"], "hist");
  EXPECT_EQ(dropped(DropReason::OutputFull), 0u);
}

// A server removes only the socket file it made: one whose file was replaced (another fragd
// bound the same path after the first one's file was removed) leaves the new file alone.
TEST_F(ControlTest, AServerRemovesOnlyTheSocketFileItMade) {
  const std::string path = dir_ + "/fragd.sock";
  ASSERT_EQ(unlink(path.c_str()), 0);
  fragd::ControlOptions o;
  o.path = path;
  o.peer_uid = [](int) { return 0; };
  auto second = fragd::ControlServer::start(o, [](const fragd::ControlRequest&, long, uint64_t)
                                                   -> std::optional<nlohmann::json> { return nlohmann::json{}; });
  ASSERT_TRUE(second) << second.error().message;
  server_.reset();
  EXPECT_EQ(access(path.c_str(), F_OK), 0) << "the first server removed the socket the second one made";
  second->reset();
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "the second server left its own socket behind";
}

// Output that does not drain within the write timeout drops its client, though
// the queue is far from full.
TEST_F(ControlTest, OutputThatDoesNotDrainInTimeDropsItsClient) {
  fragd::ControlOptions o;
  o.write_timeout_ns = 300'000'000;
  start(o);
  pad_ = 64u << 10;
  const int hog = connect_client();
  ASSERT_EQ(flood(hog, "{\"cmd\":\"status\"}\n", 20), 20u);
  pump();
  ASSERT_EQ(server_->clients(), 1u);  // queued, not dropped yet
  EXPECT_EQ(dropped(DropReason::OutputFull), 0u);
  ASSERT_TRUE(pump_until([&] { return server_->clients() == 0; }, 5)) << "a stalled client was kept";
  EXPECT_EQ(dropped(DropReason::WriteTimeout), 1u);
  EXPECT_LT(max_call_ns_, 200'000'000u) << "a call into the server took " << max_call_ns_ / 1e6 << " ms";
}

// `trace` lines go through the same queue: a subscriber that reads nothing costs
// broadcast_trace no wait and is dropped at the cap; one that reads gets every line.
TEST_F(ControlTest, ATraceSubscriberThatDoesNotReadIsDroppedAtTheCap) {
  fragd::ControlOptions o;
  o.max_output_bytes = 1u << 20;
  start(o);
  const int hog = connect_client();
  const int reader = connect_client();
  for (int fd : {hog, reader}) ASSERT_EQ(write(fd, "{\"cmd\":\"trace\"}\n", 16), 16);
  pump();
  EXPECT_EQ(nlohmann::json::parse(read_line(reader))["ok"], true);
  ASSERT_EQ(server_->trace_subscribers(), 2u);
  const std::string line = "{\"event\":\"" + std::string(1000, 'e') + "\"}";
  size_t unsent = 0, received = 0;
  int i = 0;
  for (; i < 5000 && server_->clients() == 2; i++) {
    timed([&] { unsent += server_->broadcast_trace(line); });
    received += drain(reader);
  }
  EXPECT_EQ(server_->clients(), 1u) << "after " << i << " lines";
  EXPECT_EQ(server_->trace_subscribers(), 1u);
  EXPECT_EQ(unsent, 1u);
  EXPECT_EQ(dropped(DropReason::OutputFull), 1u);
  pump();
  received += drain(reader);
  EXPECT_EQ(received, static_cast<size_t>(i) * (line.size() + 1));  // the reader got every line
  EXPECT_LT(max_call_ns_, 200'000'000u) << "broadcast_trace took " << max_call_ns_ / 1e6 << " ms";
}

// Requests are answered one per client in turn within the service budget:
// four clients with 40 slow requests each all get a first answer in the first
// call, and no call runs far past the budget. 1 ms a request: the first round
// (4 ms) fits the 20 ms budget even with each sleep overshooting several times
// on a loaded machine (at 4 ms a request, 3 of 4 clients were answered there).
TEST_F(ControlTest, PipelinedRequestsAreAnsweredInTurnWithinTheBudget) {
  handler_delay_ns_ = 1'000'000;  // 1 ms a request, 40 ms a client
  int c[4];
  for (int& fd : c) fd = connect_client();
  pump();
  ASSERT_EQ(server_->clients(), 4u);
  std::string forty;
  for (int i = 0; i < 40; i++) forty += "{\"cmd\":\"status\"}\n";
  for (int fd : c) ASSERT_EQ(write(fd, forty.data(), forty.size()), static_cast<ssize_t>(forty.size()));
  // Read everything the clients sent, then one service() call.
  for (int round = 0; round < 20; round++) {
    auto fds = server_->poll_fds();
    poll(fds.data(), fds.size(), 10);
    for (const auto& p : fds)
      if (p.revents) server_->on_poll(p.fd, p.revents);
  }
  EXPECT_TRUE(seen_.empty()) << "on_poll answered requests";
  timed([&] { server_->service(); });
  EXPECT_GE(seen_.size(), 4u);
  EXPECT_LT(seen_.size(), 40u) << "one call answered a whole client's burst";
  EXPECT_LT(max_call_ns_, 100'000'000u) << "one service() call took " << max_call_ns_ / 1e6 << " ms (budget 20)";
  for (int fd : c) EXPECT_EQ(nlohmann::json::parse(read_line(fd))["ok"], true);
  EXPECT_EQ(server_->timeout_ms(), 0);  // more is waiting
  ASSERT_TRUE(pump_until([&] { return seen_.size() == 160; }, 10));
}

// Slots: a user other than root may hold max_clients_per_uid connections, and
// the last root_clients slots are root's; each refusal is answered with its
// reason and counted.
TEST_F(ControlTest, ClientsAreLimitedPerUserAndRootKeepsItsSlots) {
  fragd::ControlOptions o;
  o.max_clients = 8;
  o.max_clients_per_uid = 3;
  o.root_clients = 2;
  start(o);
  auto join = [&](long uid) {
    next_uid_ = uid;
    const int fd = connect_client();
    pump();
    return fd;
  };
  for (int i = 0; i < 3; i++) join(1000);
  EXPECT_EQ(server_->clients(), 3u);
  const int fourth = join(1000);
  EXPECT_NE(read_line(fourth).find("too many clients of uid 1000"), std::string::npos);
  EXPECT_EQ(refused(RefuseReason::UidLimit), 1u);
  EXPECT_EQ(server_->clients(), 3u);
  for (int i = 0; i < 3; i++) join(1001);
  EXPECT_EQ(server_->clients(), 6u);  // 8 - 2 kept for root: full for everyone else
  const int other = join(1002);
  EXPECT_NE(read_line(other).find("kept for root"), std::string::npos);
  EXPECT_EQ(refused(RefuseReason::ServerFull), 1u);
  const int root1 = join(0);
  join(0);
  EXPECT_EQ(server_->clients(), 8u);
  ASSERT_EQ(write(root1, "{\"cmd\":\"status\"}\n", 17), 17);
  pump();
  EXPECT_EQ(nlohmann::json::parse(read_line(root1))["cmd"], "status");
  const int ninth = join(0);
  EXPECT_NE(read_line(ninth).find("too many clients (8 connected)"), std::string::npos);
  EXPECT_EQ(refused(RefuseReason::ServerFull), 2u);
  EXPECT_EQ(refused(RefuseReason::UidLimit), 1u);
}

// Without an injected function the uid is the peer's, from SO_PEERCRED.
TEST_F(ControlTest, ThePeersUidComesFromTheSocket) {
  fragd::ControlOptions o;  // no peer_uid: SO_PEERCRED
  o.path = dir_ + "/fragd.sock";
  long seen = -2;
  server_.reset();
  auto s = fragd::ControlServer::start(o, [&](const fragd::ControlRequest&, long uid, uint64_t) {
    seen = uid;
    return std::optional<nlohmann::json>(nlohmann::json{{"ok", true}});
  });
  ASSERT_TRUE(s) << s.error().message;
  server_ = std::move(*s);
  const int fd = connect_client();
  ASSERT_EQ(write(fd, "{\"cmd\":\"status\"}\n", 17), 17);
  pump();
  EXPECT_EQ(nlohmann::json::parse(read_line(fd))["ok"], true);
  EXPECT_EQ(seen, static_cast<long>(getuid()));
}

}  // namespace
