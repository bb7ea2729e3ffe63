// The control server over a real Unix socket in a scratch folder, driven the way
// the main loop drives it (poll_fds / on_readable), with a handler of the test's.
#include "fragd/control.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fragd-control-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fragd::ControlOptions o;
    o.path = dir_ + "/fragd.sock";
    auto s = fragd::ControlServer::start(o, [this](const fragd::ControlRequest& r, long, uint64_t token)
                                                -> std::optional<nlohmann::json> {
      seen_.push_back(r.cmd);
      if (r.cmd == "map") {  // deferred: answered later through reply()
        deferred_ = token;
        return std::nullopt;
      }
      return nlohmann::json{{"ok", true}, {"cmd", r.cmd}};
    });
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  int connect_client() {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string p = dir_ + "/fragd.sock";
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", p.c_str());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
  // Runs the server's side of the loop until nothing is readable for a while.
  void pump() {
    for (int round = 0; round < 50; round++) {
      std::vector<pollfd> fds;
      for (int fd : server_->poll_fds()) fds.push_back({fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 20) <= 0) return;
      for (auto& p : fds)
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) server_->on_readable(p.fd);
      server_->on_timer();
    }
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

  std::string dir_;
  std::unique_ptr<fragd::ControlServer> server_;
  std::vector<std::string> seen_;
  uint64_t deferred_ = 0;
};

TEST_F(ControlTest, AnswersARequestLine) {
  const int fd = connect_client();
  ASSERT_EQ(write(fd, "{\"cmd\":\"status\"}\n", 17), 17);
  pump();
  const auto answer = nlohmann::json::parse(read_line(fd));
  EXPECT_EQ(answer["cmd"], "status");
  EXPECT_EQ(seen_, std::vector<std::string>{"status"});
  close(fd);
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
  close(fd);
}

TEST_F(ControlTest, ADeferredAnswerComesThroughReply) {
  const int fd = connect_client();
  ASSERT_GT(write(fd, "{\"cmd\":\"map\"}\n", 14), 0);
  pump();
  ASSERT_NE(deferred_, 0u);
  EXPECT_TRUE(server_->reply(deferred_, {{"ok", true}, {"cmd", "map"}}));
  EXPECT_EQ(nlohmann::json::parse(read_line(fd))["cmd"], "map");
  close(fd);
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

}  // namespace
