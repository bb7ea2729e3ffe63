// SPDX-License-Identifier: Apache-2.0
#include "fragctl/client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fragd::ctl {

namespace {

// A line longer than this is not an answer of fragd.
constexpr size_t kMaxLine = 64u << 20;

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

Result<Client> Client::connect(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return make_error("socket path '" + path + "' is empty or longer than " +
                          std::to_string(sizeof addr.sun_path - 1) + " bytes",
                      ENAMETOOLONG);
  std::memcpy(addr.sun_path, path.data(), path.size());

  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_error("cannot create a Unix socket");
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) {
    int err = errno;
    ::close(fd);
    switch (err) {
      case ENOENT:
        return make_error("fragd is not running (no socket at " + path +
                              "): start it with 'systemctl start fragd' ('make run' in a source tree)",
                          err);
      case ECONNREFUSED:
        return make_error("fragd is not running (nothing listens on " + path +
                              "): start it with 'systemctl start fragd' ('make run' in a source tree)",
                          err);
      case EACCES:
      case EPERM:
        return make_error("permission denied on " + path +
                              ": fragctl must run as root, or as a member of fragd's socket_group if the policy "
                              "sets one",
                          err);
      default:
        return sys_error("cannot connect to fragd at " + path, err);
    }
  }
  return Client(fd, path);
}

Client::Client(Client&& other) noexcept
    : fd_(other.fd_), interrupt_fd_(other.interrupt_fd_), path_(std::move(other.path_)), buf_(std::move(other.buf_)) {
  other.fd_ = -1;
}

Client& Client::operator=(Client&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    interrupt_fd_ = other.interrupt_fd_;
    path_ = std::move(other.path_);
    buf_ = std::move(other.buf_);
    other.fd_ = -1;
  }
  return *this;
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> Client::send_line(std::string_view line) {
  std::string msg(line);
  msg += '\n';
  size_t off = 0;
  while (off < msg.size()) {
    ssize_t n = ::send(fd_, msg.data() + off, msg.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET)
        return make_error("fragd closed the connection on " + path_ + " before the request was sent", errno);
      return sys_error("cannot send to fragd on " + path_);
    }
    off += static_cast<size_t>(n);
  }
  return {};
}

Result<std::optional<std::string>> Client::read_line(int timeout_ms) {
  const int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
  size_t scanned = 0;  // bytes of buf_ known to hold no '\n'
  for (;;) {
    size_t nl = buf_.find('\n', scanned);
    if (nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return std::optional<std::string>(std::move(line));
    }
    scanned = buf_.size();
    if (buf_.size() > kMaxLine)
      return make_error("fragd sent a line longer than " + std::to_string(kMaxLine >> 20) + " MiB", EMSGSIZE);

    int wait = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      if (left <= 0)
        return make_error("no answer from fragd on " + path_ + " within " + std::to_string(timeout_ms / 1000) +
                              " s: it may be stuck (check 'journalctl -u fragd')",
                          ETIMEDOUT);
      wait = static_cast<int>(left);
    }
    pollfd fds[2] = {{fd_, POLLIN, 0}, {interrupt_fd_, POLLIN, 0}};
    int rc = ::poll(fds, interrupt_fd_ >= 0 ? 2 : 1, wait);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return sys_error("poll on the fragd socket " + path_);
    }
    if (rc == 0) continue;  // timeout: reported at the top of the loop
    if (interrupt_fd_ >= 0 && (fds[1].revents & POLLIN)) return make_error("interrupted", kInterrupted);
    if (fds[0].revents == 0) continue;

    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return std::optional<std::string>();
      return sys_error("cannot read from fragd on " + path_);
    }
    if (n == 0) {
      // Closed. A last line without '\n' still counts.
      if (buf_.empty()) return std::optional<std::string>();
      std::string line = std::move(buf_);
      buf_.clear();
      return std::optional<std::string>(std::move(line));
    }
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace fragd::ctl
