#include "fragd/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "core/log.h"

namespace fragd {
namespace {

constexpr size_t kMaxRequest = 64 * 1024;
constexpr size_t kMaxClients = 64;

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

}  // namespace

ControlServer::~ControlServer() {
  for (auto& c : clients_) close(c.fd);
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    unlink(path_.c_str());
  }
}

Result<std::unique_ptr<ControlServer>> ControlServer::start(const std::string& path, Handler handler) {
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
  s->handler_ = std::move(handler);
  s->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s->listen_fd_ < 0) return sys_error("create the control socket");
  if (bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return sys_error("bind the control socket " + path + " (pass --socket PATH)");
  s->path_ = path;
  chmod(path.c_str(), 0660);
  if (listen(s->listen_fd_, 16) != 0) return sys_error("listen on the control socket " + path);
  return s;
}

std::vector<int> ControlServer::poll_fds() const {
  std::vector<int> fds{listen_fd_};
  for (const auto& c : clients_) fds.push_back(c.fd);
  return fds;
}

size_t ControlServer::trace_subscribers() const {
  size_t n = 0;
  for (const auto& c : clients_) n += c.trace;
  return n;
}

void ControlServer::accept_client() {
  int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return;
  if (clients_.size() >= kMaxClients) {
    const char msg[] = "{\"ok\":false,\"error\":\"too many clients\"}\n";
    (void)!write(fd, msg, sizeof(msg) - 1);
    close(fd);
    return;
  }
  ucred cred{};
  socklen_t len = sizeof(cred);
  long uid = -1;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) uid = static_cast<long>(cred.uid);
  clients_.push_back(Client{fd, {}, false, uid});
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

bool ControlServer::serve(Client& c) {
  size_t nl;
  while ((nl = c.in.find('\n')) != std::string::npos) {
    const std::string line = c.in.substr(0, nl);
    c.in.erase(0, nl + 1);
    nlohmann::json answer;
    std::string cmd;
    try {
      const auto req = nlohmann::json::parse(line);
      if (!req.is_object() || !req.contains("cmd") || !req["cmd"].is_string())
        throw std::invalid_argument("a request is a JSON object with a string \"cmd\"");
      cmd = req["cmd"].get<std::string>();
      answer = handler_(cmd, req, c.uid);
    } catch (const std::exception& e) {
      answer = {{"ok", false}, {"error", std::string("bad request: ") + e.what()}};
    }
    if (cmd == "trace" && answer.value("ok", false)) c.trace = true;
    if (!send_line(c, answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), true)) return false;
  }
  return true;
}

void ControlServer::on_readable(int fd) {
  if (fd == listen_fd_) {
    accept_client();
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
    if (clients_[i].in.size() > kMaxRequest) {
      close_client(i);
      return;
    }
    if (!serve(clients_[i])) close_client(i);
    return;
  }
}

size_t ControlServer::broadcast_trace(const std::string& line) {
  size_t unsent = 0;
  for (auto& c : clients_)
    if (c.trace && !send_line(c, line, false)) unsent++;
  return unsent;
}

}  // namespace fragd
