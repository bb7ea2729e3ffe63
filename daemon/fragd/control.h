// The control socket: a Unix stream socket speaking JSON lines
// (docs/control-protocol.md). Serviced from the main loop; never blocks it.
//
// Who may talk to it is the socket file's business: mode 0600 (root only) by
// default, 0660 with a configured group (socket_group) whose members may then
// ask read requests. Act requests (compact, pool, reload) are answered only to
// uid 0 (SO_PEERCRED), whatever the file mode. Each connection is bounded: a
// request line of at most kMaxRequestBytes, a token-bucket rate (a client
// above it is read more slowly, not failed), a deadline for a started line
// and an idle limit; a malformed request is answered with an error and the
// connection closed.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/request.h"
#include "base/result.h"

namespace fragd {

struct ControlOptions {
  std::string path;
  std::optional<gid_t> group;        // socket 0660 root:group when set, else 0600 root:root
  double rate_per_second = 20;       // sustained requests per connection
  double burst = 40;                 // requests a connection may send at once
  uint64_t line_deadline_ns = 10'000'000'000ULL;  // a started request line must end within this
  uint64_t idle_ns = 60'000'000'000ULL;           // a silent connection (not tracing) is closed after this
  size_t max_clients = 64;
};

class ControlServer {
 public:
  // Answers one parsed request; `uid` is the client's user id from
  // SO_PEERCRED (-1 when unknown). Act requests reach it only from uid 0.
  // No answer (nullopt) defers it: the caller answers later with reply(token, ...),
  // and the client's next requests wait until then.
  using Handler =
      std::function<std::optional<nlohmann::json>(const ControlRequest& request, long uid, uint64_t token)>;

  ~ControlServer();
  // Creates the socket (and its directory). An existing live socket is an
  // error naming it; a stale one (nobody listening) is replaced.
  static Result<std::unique_ptr<ControlServer>> start(const ControlOptions& options, Handler handler);

  // File descriptors to poll for input: the listening socket and every client
  // not held back by its rate limit.
  std::vector<int> poll_fds() const;
  // Milliseconds until a held-back client may go on or a deadline passes (-1: none).
  int timeout_ms() const;
  // Called when `fd` is readable.
  void on_readable(int fd);
  // Serves held-back clients whose tokens came back; closes clients past a deadline.
  void on_timer();
  // Answers a deferred request; false when that client has gone.
  bool reply(uint64_t token, const nlohmann::json& answer);
  // Sends one line to every `trace` subscriber; returns how many could not take it.
  size_t broadcast_trace(const std::string& line);
  size_t trace_subscribers() const;
  size_t clients() const { return clients_.size(); }

 private:
  struct Client {
    int fd = -1;
    uint64_t token = 0;            // names the client to reply()
    bool waiting = false;          // a deferred answer is owed; its next requests wait
    long uid = -1;
    std::string in;
    bool trace = false;
    double tokens = 0;
    uint64_t refill_ns = 0;        // when tokens were last topped up
    uint64_t line_start_ns = 0;    // when the pending partial line began (0: none)
    uint64_t last_active_ns = 0;
    bool held = false;             // out of tokens with complete lines waiting
  };
  ControlServer() = default;
  // Accepts one pending connection (or refuses it past the limit); false when none is pending.
  bool accept_client();
  // Answers complete request lines while the client has tokens; false when it must be closed.
  bool serve(Client& c, uint64_t now);
  void close_client(size_t i);
  bool send_line(Client& c, const std::string& line, bool may_block);
  void refill(Client& c, uint64_t now) const;

  ControlOptions opt_;
  int listen_fd_ = -1;
  Handler handler_;
  std::vector<Client> clients_;
  uint64_t next_token_ = 1;
};

}  // namespace fragd
