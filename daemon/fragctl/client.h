// SPDX-License-Identifier: Apache-2.0
// fragctl's client of fragd's control socket: a Unix stream socket carrying
// one JSON object per line in each direction (docs/control-protocol.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace fragd::ctl {

// Error::err of a read cut short by the interrupt fd (a signal).
constexpr int kInterrupted = EINTR;

class Client {
 public:
  // Connects to the socket at `path`. The error message says what to do:
  // start fragd (ENOENT, ECONNREFUSED), run as root or as a member of the
  // socket's group (EACCES, EPERM).
  static Result<Client> connect(const std::string& path);

  Client(Client&& other) noexcept;
  Client& operator=(Client&& other) noexcept;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  // A read also ends (Error with err == kInterrupted) as soon as `fd` is
  // readable, e.g. a signalfd for SIGINT/SIGTERM. -1: none.
  void set_interrupt_fd(int fd) { interrupt_fd_ = fd; }

  // Sends `line` followed by '\n'.
  Result<void> send_line(std::string_view line);

  // The next line, without its '\n'; nullopt when fragd closed the
  // connection. timeout_ms < 0 waits for ever; otherwise the whole line must
  // arrive within timeout_ms (Error with err == ETIMEDOUT).
  Result<std::optional<std::string>> read_line(int timeout_ms);

  const std::string& path() const { return path_; }

 private:
  Client(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  int interrupt_fd_ = -1;
  std::string path_;
  std::string buf_;  // bytes received and not yet returned
};

}  // namespace fragd::ctl
