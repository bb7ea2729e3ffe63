// SPDX-License-Identifier: Apache-2.0
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
  if (listen_fd_ >= 0) close(listen_fd_);
  remove_own_file();
}

void ControlServer::remove_own_file() const {
  struct stat st;
  if (owned_ && lstat(opt_.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == bound_dev_ &&
      st.st_ino == bound_ino_)
    unlink(opt_.path.c_str());
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
  // The file just made, through a descriptor of the file itself (O_PATH, no symlink followed): a
  // path swapped in between is refused, and only this file is given to the group and removed.
  const int pfd = open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (pfd < 0 || fstat(pfd, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
    const int e = pfd < 0 ? errno : EEXIST;
    if (pfd >= 0) close(pfd);
    return sys_error("the control socket " + path + " was replaced right after it was made: pass --socket PATH "
                     "in a directory only root can write", e);
  }
  s->owned_ = true;
  s->bound_dev_ = st.st_dev;
  s->bound_ino_ = st.st_ino;
  if (options.group) {
    const std::string self = "/proc/self/fd/" + std::to_string(pfd);
    if (fchownat(pfd, "", static_cast<uid_t>(-1), *options.group, AT_EMPTY_PATH) != 0 ||
        chmod(self.c_str(), 0660) != 0) {
      const int e = errno;
      close(pfd);
      return sys_error("give the control socket " + path + " to group " + std::to_string(*options.group), e);
    }
  }
  close(pfd);
  if (listen(s->listen_fd_, 64) != 0) return sys_error("listen on the control socket " + path);
  return s;
}

std::vector<pollfd> ControlServer::poll_fds() const {
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  for (const auto& c : clients_) {
    short events = 0;
    // A complete line waits for service(): nothing more is read until it is answered.
    if (!c.closing && !c.waiting && !c.has_line()) events |= POLLIN;
    if (c.queued()) events |= POLLOUT;
    if (events) fds.push_back({c.fd, events, 0});
  }
  return fds;
}

size_t ControlServer::trace_subscribers() const {
  size_t n = 0;
  for (const auto& c : clients_) n += c.trace && !c.closing;
  return n;
}

double ControlServer::tokens_at(const Client& c, uint64_t now) const {
  if (now <= c.refill_ns) return c.tokens;
  return std::min(opt_.burst, c.tokens + (now - c.refill_ns) / 1e9 * opt_.rate_per_second);
}

void ControlServer::refill(Client& c, uint64_t now) const {
  c.tokens = tokens_at(c, now);
  c.refill_ns = std::max(c.refill_ns, now);
}

int ControlServer::timeout_ms() const {
  const uint64_t now = now_ns();
  uint64_t next = UINT64_MAX;
  for (const auto& c : clients_) {
    if (c.queued()) next = std::min(next, c.out_since_ns + opt_.write_timeout_ns);
    if (c.closing) continue;
    if (!c.waiting && c.has_line()) {
      const double need = std::max(0.0, 1.0 - tokens_at(c, now));
      next = std::min(next, now + static_cast<uint64_t>(std::ceil(need / opt_.rate_per_second * 1e9)));
    }
    if (c.line_start_ns) next = std::min(next, c.line_start_ns + opt_.line_deadline_ns);
    if (!c.trace && !c.waiting && !c.has_line() && !c.queued())
      next = std::min(next, c.last_active_ns + opt_.idle_ns);
  }
  if (next == UINT64_MAX) return -1;
  if (next <= now) return 0;
  return static_cast<int>(std::min<uint64_t>((next - now + 999'999) / 1'000'000, 60'000));
}

bool ControlServer::accept_client() {
  int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return false;
  long uid = -1;
  if (opt_.peer_uid) {
    uid = opt_.peer_uid(fd);
  } else {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) uid = static_cast<long>(cred.uid);
  }
  const size_t n = clients_.size();
  const size_t of_uid =
      static_cast<size_t>(std::count_if(clients_.begin(), clients_.end(), [uid](const Client& c) { return c.uid == uid; }));
  std::optional<RefuseReason> refused;
  std::string why;
  if (n >= opt_.max_clients) {
    refused = RefuseReason::ServerFull;
    why = "too many clients (" + std::to_string(n) + " connected): try again later";
  } else if (uid != 0 && n + opt_.root_clients >= opt_.max_clients) {
    refused = RefuseReason::ServerFull;
    why = "too many clients (" + std::to_string(n) + " connected; the last " + std::to_string(opt_.root_clients) +
          " of " + std::to_string(opt_.max_clients) + " are kept for root): try again later";
  } else if (uid != 0 && of_uid >= opt_.max_clients_per_uid) {
    refused = RefuseReason::UidLimit;
    why = "too many clients of uid " + std::to_string(uid) + " (" + std::to_string(of_uid) +
          " connected; a user other than root may hold " + std::to_string(opt_.max_clients_per_uid) +
          "): close one, e.g. a `fragctl trace`, and try again";
  }
  if (refused) {
    stats_.refused[static_cast<size_t>(*refused)]++;
    const std::string msg = error_line(why) + "\n";
    (void)!send(fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);  // a new socket's buffer is empty
    close(fd);
    return true;
  }
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

void ControlServer::reap() {
  for (size_t i = clients_.size(); i-- > 0;) {
    if (!clients_[i].gone) continue;
    close(clients_[i].fd);
    clients_.erase(clients_.begin() + static_cast<long>(i));
  }
}

void ControlServer::flush(Client& c) {
  while (c.queued()) {
    const ssize_t n = send(c.fd, c.out.data() + c.out_off, c.queued(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out_off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    c.gone = true;  // the peer has gone: nobody to tell
    return;
  }
  if (!c.queued()) {
    c.out.clear();
    c.out_off = 0;
    c.out_since_ns = 0;
    if (c.closing) c.gone = true;
  } else if (c.out_off >= (64u << 10) && c.out_off * 2 >= c.out.size()) {
    c.out.erase(0, c.out_off);
    c.out_off = 0;
  }
}

bool ControlServer::queue(Client& c, const std::string& line) {
  if (c.gone) return false;
  const size_t cap = opt_.max_output_bytes;
  // An answer larger than the cap on its own is never sent: the client gets why instead and
  // keeps its connection.
  const std::string too_big =
      line.size() + 1 > cap
          ? error_line("the answer is " + std::to_string(line.size()) + " bytes, over the control socket's limit of " +
                       std::to_string(cap) + " bytes for one client's unread answers; ask for less (a map of "
                       "one node: fragctl map --node N; fewer ledger blocks: --blocks)")
          : std::string();
  const std::string& out = too_big.empty() ? line : too_big;
  if (c.queued() + out.size() + 1 > cap) {
    // The answers not yet begun are dropped and the line in flight is finished, then one line
    // says why, if the socket takes it now: a client that reads nothing cannot be told, and is
    // not waited for.
    const size_t end = c.out.find('\n', c.out_off);
    if (end != std::string::npos) c.out.resize(end + 1);
    drop(c, DropReason::OutputFull,
         "closed: this client's unread answers passed the control socket's limit of " + std::to_string(cap) +
             " bytes; read each answer before asking again");
    if (c.queued()) c.gone = true;
    return false;
  }
  if (!c.queued()) c.out_since_ns = now_ns();
  c.out.append(out).push_back('\n');
  flush(c);
  return !c.gone;
}

void ControlServer::drop(Client& c, DropReason reason, const std::string& why) {
  if (c.gone || c.closing) return;
  stats_.dropped[static_cast<size_t>(reason)]++;
  c.closing = true;
  c.trace = false;
  if (why.empty()) {
    c.gone = true;
    return;
  }
  // One last line saying why, past the cap (it is short); closed once it is written.
  if (!c.queued()) c.out_since_ns = now_ns();
  c.out.append(error_line(why)).push_back('\n');
  flush(c);
}

void ControlServer::check_line(Client& c, uint64_t now) {
  const size_t nl = c.in.find('\n');
  const size_t pending = nl == std::string::npos ? c.in.size() : nl;
  if (pending > kMaxRequestBytes) {
    drop(c, DropReason::BadRequest,
         "bad request: a request line is limited to " + std::to_string(kMaxRequestBytes) + " bytes");
    return;
  }
  if (nl != std::string::npos || c.in.empty() || c.waiting) c.line_start_ns = 0;  // no line being sent
  else if (!c.line_start_ns) c.line_start_ns = now;
}

bool ControlServer::serve_one(Client& c, uint64_t now) {
  if (c.waiting || c.closing || c.gone) return false;
  const size_t nl = c.in.find('\n');
  if (nl == std::string::npos) return false;
  refill(c, now);
  if (c.tokens < 1) return false;  // held back: timeout_ms() says when it may go on
  c.tokens -= 1;
  c.last_active_ns = now;
  std::string_view line(c.in.data(), nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto req = parse_request(line);
  if (!req) {
    // A client that sends what is not a request gets one answer saying why, then the door.
    drop(c, DropReason::BadRequest, "bad request: " + req.error().message);
    return true;
  }
  c.in.erase(0, nl + 1);
  std::optional<nlohmann::json> answer;
  if (req->access == Access::Act && c.uid != 0) {
    answer = error_answer("'" + std::string(command_name(req->cmd)) +
                          "' changes the host or the daemon and needs root (caller uid " + std::to_string(c.uid) +
                          "): run it with sudo");
  } else {
    try {
      answer = handler_(*req, c.uid, c.token);
    } catch (const std::exception& e) {
      answer = error_answer("fragd could not answer '" + std::string(command_name(req->cmd)) + "': " + e.what());
    }
  }
  if (!answer) {
    c.waiting = true;  // answered by reply(); nothing more is read from it until then
  } else {
    if (req->cmd == Command::Trace && answer->value("ok", false)) c.trace = true;
    queue(c, answer->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  check_line(c, now);
  return true;
}

void ControlServer::on_poll(int fd, short revents) {
  if (fd == listen_fd_) {
    // Accepted in service(), after every client's revents of this poll: a new
    // connection may reuse the number of one closed meanwhile.
    accept_pending_ = true;
    return;
  }
  auto it = std::find_if(clients_.begin(), clients_.end(), [fd](const Client& c) { return c.fd == fd; });
  if (it == clients_.end()) return;
  Client& c = *it;
  if (revents & (POLLERR | POLLHUP)) {
    c.gone = true;  // the peer closed its end (or the socket failed): nobody reads what is queued
  } else if ((revents & POLLOUT) && c.queued()) {
    flush(c);
  }
  if (!c.gone && !c.closing && !c.waiting && !c.has_line() && (revents & POLLIN)) {
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      check_line(c, now_ns());
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      // The client is done sending: what is queued for it still goes out.
      c.closing = true;
      c.trace = false;
      flush(c);
      if (!c.queued()) c.gone = true;
    }
  }
  reap();
}

void ControlServer::service() {
  if (accept_pending_) {
    accept_pending_ = false;
    for (size_t n = 0; n < opt_.max_clients + 1 && accept_client(); n++) {
    }
  }
  const uint64_t start = now_ns();
  for (auto& c : clients_) {
    if (c.queued() && start - c.out_since_ns > opt_.write_timeout_ns) {
      if (!c.closing) stats_.dropped[static_cast<size_t>(DropReason::WriteTimeout)]++;
      c.gone = true;  // what it did not read in time, it will not read now
      continue;
    }
    if (c.closing) continue;
    if (c.line_start_ns && start - c.line_start_ns > opt_.line_deadline_ns) {
      drop(c, DropReason::LineDeadline,
           strf("bad request: a request line must end with a newline within %.0f s", opt_.line_deadline_ns / 1e9));
    } else if (!c.trace && !c.waiting && !c.has_line() && !c.queued() && start - c.last_active_ns > opt_.idle_ns) {
      drop(c, DropReason::Idle, "");
    }
  }
  reap();
  // One request per client in turn, until none is left or the budget is spent;
  // timeout_ms() is then 0 and the next call goes on where this one stopped.
  const size_t n = clients_.size();
  if (n == 0) return;
  size_t i = next_turn_ % n;
  for (size_t idle = 0; idle < n; i = (i + 1) % n) {
    const uint64_t now = now_ns();
    if (now - start >= opt_.service_budget_ns) break;
    idle = serve_one(clients_[i], now) ? 0 : idle + 1;
  }
  next_turn_ = i;
  reap();
}

bool ControlServer::reply(uint64_t token, const nlohmann::json& answer) {
  auto it = std::find_if(clients_.begin(), clients_.end(),
                         [token](const Client& c) { return c.token == token && c.waiting; });
  if (it == clients_.end()) return false;
  Client& c = *it;
  c.waiting = false;
  const uint64_t now = now_ns();
  c.last_active_ns = now;
  queue(c, answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  check_line(c, now);
  const bool sent = !c.gone;
  reap();
  return sent;
}

size_t ControlServer::broadcast_trace(const std::string& line) {
  size_t unsent = 0;
  for (auto& c : clients_)
    if (c.trace && !c.closing && !queue(c, line)) unsent++;
  reap();
  return unsent;
}

}  // namespace fragd
