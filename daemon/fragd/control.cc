#include "fragd/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/log.h"
#include "base/text.h"
#include "protocol/wire.h"

namespace fragd {
namespace {

Result<void> make_parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return {};
  const std::string dir = path.substr(0, slash);
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return {};
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return sys_error("create the control socket's directory " + dir);
  return {};
}

std::string error_line(const std::string& message) {
  return error_answer(message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

ControlServer::~ControlServer() {
  for (auto& c : clients_) close(c.fd);
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    unlink(opt_.path.c_str());
  }
}

Result<std::unique_ptr<ControlServer>> ControlServer::start(const ControlOptions& options, Handler handler) {
  const std::string& path = options.path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path))
    return make_error("control socket path " + path + " is too long (max " +
                          std::to_string(sizeof(addr.sun_path) - 1) + " bytes): pass a shorter --socket",
                      ENAMETOOLONG);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return make_error("control socket path " + path +
                            " exists and is not a socket: remove it or pass --socket PATH",
                        EEXIST);
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (probe >= 0) close(probe);
    if (live)
      return make_error("another fragd is already serving " + path +
                            ": stop it first, or pass --socket PATH to run a second one",
                        EADDRINUSE);
    log_warn("removing stale control socket " + path + " (nobody listens on it)");
    unlink(path.c_str());
  }
  if (auto r = make_parent_dir(path); !r) return r.error();

  std::unique_ptr<ControlServer> s(new ControlServer());
  s->opt_ = options;
  s->handler_ = std::move(handler);
  s->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s->listen_fd_ < 0) return sys_error("create the control socket");
  // Created 0600 (no window in which others could connect), then opened to the group if configured.
  const mode_t old_mask = umask(0177);
  const int b = bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  umask(old_mask);
  if (b != 0) return sys_error("bind the control socket " + path + " (pass --socket PATH)", bind_errno);
  if (options.group) {
    if (chown(path.c_str(), static_cast<uid_t>(-1), *options.group) != 0 || chmod(path.c_str(), 0660) != 0) {
      const int e = errno;
      unlink(path.c_str());
      return sys_error("give the control socket " + path + " to group " + std::to_string(*options.group), e);
    }
  }
  if (listen(s->listen_fd_, 64) != 0) return sys_error("listen on the control socket " + path);
  return s;
}

std::vector<int> ControlServer::poll_fds() const {
  std::vector<int> fds{listen_fd_};
  for (const auto& c : clients_)
    if (!c.held && !c.waiting) fds.push_back(c.fd);
  return fds;
}

size_t ControlServer::trace_subscribers() const {
  size_t n = 0;
  for (const auto& c : clients_) n += c.trace;
  return n;
}

void ControlServer::refill(Client& c, uint64_t now) const {
  if (now > c.refill_ns) {
    c.tokens = std::min(opt_.burst, c.tokens + (now - c.refill_ns) / 1e9 * opt_.rate_per_second);
    c.refill_ns = now;
  }
}

int ControlServer::timeout_ms() const {
  const uint64_t now = now_ns();
  uint64_t next = UINT64_MAX;
  for (const auto& c : clients_) {
    if (c.held) {
      const double need = std::max(0.0, 1.0 - c.tokens);
      next = std::min(next, c.refill_ns + static_cast<uint64_t>(std::ceil(need / opt_.rate_per_second * 1e9)));
    }
    if (c.line_start_ns) next = std::min(next, c.line_start_ns + opt_.line_deadline_ns);
    if (!c.trace && !c.held && !c.waiting) next = std::min(next, c.last_active_ns + opt_.idle_ns);
  }
  if (next == UINT64_MAX) return -1;
  if (next <= now) return 0;
  return static_cast<int>(std::min<uint64_t>((next - now + 999'999) / 1'000'000, 60'000));
}

bool ControlServer::accept_client() {
  int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return false;
  if (clients_.size() >= opt_.max_clients) {
    const std::string msg =
        error_line("too many clients (" + std::to_string(opt_.max_clients) + " connected): try again later") + "\n";
    (void)!write(fd, msg.data(), msg.size());
    close(fd);
    return true;
  }
  ucred cred{};
  socklen_t len = sizeof(cred);
  long uid = -1;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) uid = static_cast<long>(cred.uid);
  const uint64_t now = now_ns();
  Client c;
  c.fd = fd;
  c.token = next_token_++;
  c.uid = uid;
  c.tokens = opt_.burst;
  c.refill_ns = now;
  c.last_active_ns = now;
  clients_.push_back(std::move(c));
  return true;
}

void ControlServer::close_client(size_t i) {
  close(clients_[i].fd);
  clients_.erase(clients_.begin() + static_cast<long>(i));
}

bool ControlServer::send_line(Client& c, const std::string& line, bool may_block) {
  std::string out = line + "\n";
  size_t off = 0;
  while (off < out.size()) {
    ssize_t n = send(c.fd, out.data() + off, out.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && may_block) {
      // An answer is small; wait a little for a slow reader, never forever.
      pollfd p{c.fd, POLLOUT, 0};
      if (poll(&p, 1, 1000) == 1) continue;
    }
    return false;
  }
  return true;
}

bool ControlServer::serve(Client& c, uint64_t now) {
  c.held = false;
  size_t nl;
  while (!c.waiting && (nl = c.in.find('\n')) != std::string::npos) {
    if (nl > kMaxRequestBytes) break;  // refused below
    refill(c, now);
    if (c.tokens < 1) {
      c.held = true;  // read no more from it until a token comes back
      c.line_start_ns = 0;
      return true;
    }
    c.tokens -= 1;
    c.last_active_ns = now;
    std::string_view line(c.in.data(), nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto req = parse_request(line);
    if (!req) {
      // A client that sends what is not a request gets one answer saying why, then the door.
      send_line(c, error_line("bad request: " + req.error().message), true);
      return false;
    }
    c.in.erase(0, nl + 1);
    std::optional<nlohmann::json> answer;
    if (req->access == Access::Act && c.uid != 0) {
      answer = error_answer("'" + req->cmd + "' changes the host or the daemon and needs root (caller uid " +
                            std::to_string(c.uid) + "): run it with sudo");
    } else {
      try {
        answer = handler_(*req, c.uid, c.token);
      } catch (const std::exception& e) {
        answer = error_answer(std::string("fragd could not answer '") + req->cmd + "': " + e.what());
      }
    }
    if (!answer) {
      c.waiting = true;  // answered by reply(); nothing more is read from it until then
      c.line_start_ns = 0;
      return true;
    }
    if (req->cmd == "trace" && answer->value("ok", false)) c.trace = true;
    if (!send_line(c, answer->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), true)) return false;
  }
  if (c.waiting) return true;
  const size_t pending = c.in.find('\n') == std::string::npos ? c.in.size() : c.in.find('\n');
  if (pending > kMaxRequestBytes) {
    send_line(c,
              error_line("bad request: a request line is limited to " + std::to_string(kMaxRequestBytes) +
                         " bytes"),
              true);
    return false;
  }
  c.line_start_ns = c.in.empty() ? 0 : (c.line_start_ns ? c.line_start_ns : now);
  return true;
}

void ControlServer::on_readable(int fd) {
  if (fd == listen_fd_) {
    for (size_t n = 0; n < opt_.max_clients + 1 && accept_client(); n++) {
    }
    return;
  }
  for (size_t i = 0; i < clients_.size(); i++) {
    if (clients_[i].fd != fd) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      close_client(i);
      return;
    }
    clients_[i].in.append(buf, static_cast<size_t>(n));
    if (!serve(clients_[i], now_ns())) close_client(i);
    return;
  }
}

void ControlServer::on_timer() {
  const uint64_t now = now_ns();
  for (size_t i = clients_.size(); i-- > 0;) {
    Client& c = clients_[i];
    if (c.held && !serve(c, now)) {
      close_client(i);
      continue;
    }
    if (c.line_start_ns && now - c.line_start_ns > opt_.line_deadline_ns) {
      send_line(c,
                error_line(strf("bad request: a request line must end with a newline within %.0f s",
                                opt_.line_deadline_ns / 1e9)),
                false);
      close_client(i);
      continue;
    }
    if (!c.trace && !c.held && !c.waiting && now - c.last_active_ns > opt_.idle_ns) close_client(i);
  }
}

bool ControlServer::reply(uint64_t token, const nlohmann::json& answer) {
  for (size_t i = 0; i < clients_.size(); i++) {
    Client& c = clients_[i];
    if (c.token != token || !c.waiting) continue;
    c.waiting = false;
    const uint64_t now = now_ns();
    c.last_active_ns = now;
    if (!send_line(c, answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), true) ||
        !serve(c, now)) {
      close_client(i);
      return false;
    }
    return true;
  }
  return false;
}

size_t ControlServer::broadcast_trace(const std::string& line) {
  size_t unsent = 0;
  for (auto& c : clients_)
    if (c.trace && !send_line(c, line, false)) unsent++;
  return unsent;
}

}  // namespace fragd
