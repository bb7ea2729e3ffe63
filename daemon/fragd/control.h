// The control socket: a Unix stream socket speaking JSON lines
// (docs/control-protocol.md). Serviced from the main loop; never blocks it.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace fragd {

class ControlServer {
 public:
  // Answers one request; `cmd` is the request's "cmd", `uid` the client's
  // user id from SO_PEERCRED (-1 when unknown). Returns the answer object.
  using Handler =
      std::function<nlohmann::json(const std::string& cmd, const nlohmann::json& request, long uid)>;

  ~ControlServer();
  // Creates the socket at `path` (and its directory). An existing live socket
  // is an error naming it; a stale one (nobody listening) is replaced.
  static Result<std::unique_ptr<ControlServer>> start(const std::string& path, Handler handler);

  // File descriptors to poll for input: the listening socket and every client.
  std::vector<int> poll_fds() const;
  // Called when `fd` is readable.
  void on_readable(int fd);
  // Sends one line to every `trace` subscriber; returns how many could not take it.
  size_t broadcast_trace(const std::string& line);
  size_t trace_subscribers() const;

 private:
  struct Client {
    int fd = -1;
    std::string in;
    bool trace = false;
    long uid = -1;
  };
  ControlServer() = default;
  void accept_client();
  // Answers every complete request line; false when the client must be closed.
  bool serve(Client& c);
  void close_client(size_t i);
  bool send_line(Client& c, const std::string& line, bool may_block);

  int listen_fd_ = -1;
  std::string path_;
  Handler handler_;
  std::vector<Client> clients_;
};

}  // namespace fragd
