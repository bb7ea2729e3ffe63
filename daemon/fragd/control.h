// SPDX-License-Identifier: Apache-2.0
// The control socket: a Unix stream socket speaking JSON lines
// (docs/control-protocol.md). Serviced from the main loop; never blocks it.
//
// Who may talk to it is the socket file's business: mode 0600 (root only) by
// default, 0660 with a configured group (socket_group) whose members may then
// ask read requests. Act requests (compact, pool, reload) are answered only to
// uid 0 (SO_PEERCRED), whatever the file mode.
//
// Every socket is non-blocking and nothing waits on a client. Each connection
// is bounded: a request line of at most kMaxRequestBytes, a token-bucket rate
// (a client above it is read more slowly, not failed), a deadline for a
// started line, an idle limit, and an output queue: answers and `trace` lines
// are queued and written when the socket takes them, a client whose queue
// would pass max_output_bytes or has not drained for write_timeout_ns is
// dropped. Requests are answered in service(), a few at a time per client in
// turn, within service_budget_ns per call. Connections are limited in all
// (max_clients), per user (max_clients_per_uid) and some slots are kept for
// root (root_clients). Drops and refusals are counted by reason (stats()).
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "fragd/control_stats.h"
#include "protocol/request.h"

namespace fragd {

struct ControlOptions {
  std::string path;
  std::optional<gid_t> group;        // socket 0660 root:group when set, else 0600 root:root
  double rate_per_second = 20;       // sustained requests per connection
  double burst = 40;                 // requests a connection may send at once
  uint64_t line_deadline_ns = 10'000'000'000ULL;  // a started request line must end within this
  uint64_t idle_ns = 60'000'000'000ULL;           // a silent connection (not tracing) is closed after this
  size_t max_clients = 64;
  size_t max_clients_per_uid = 16;   // connections of one user other than root
  size_t root_clients = 4;           // of max_clients, kept for uid 0
  size_t max_output_bytes = 8u << 20;             // output queued for one connection
  uint64_t write_timeout_ns = 10'000'000'000ULL;  // queued output must drain within this
  uint64_t service_budget_ns = 20'000'000ULL;     // request handling per service() call
  // The peer's uid (-1 unknown); SO_PEERCRED when empty. Tests give their own.
  std::function<long(int fd)> peer_uid;
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

  // What to poll: the listening socket for input, each client for input
  // (when its requests are wanted) and output (when some is queued).
  std::vector<pollfd> poll_fds() const;
  // Milliseconds until service() has work: a held-back client may go on,
  // requests are waiting, a deadline passes (0: now; -1: none).
  int timeout_ms() const;
  // Called with poll's revents for `fd`: reads and writes. Answers nothing.
  void on_poll(int fd, short revents);
  // Accepts new connections, closes clients past a deadline, answers waiting
  // requests within the budget. Called after on_poll for every fd of a poll.
  void service();
  // Answers a deferred request; false when that client has gone.
  bool reply(uint64_t token, const nlohmann::json& answer);
  // Queues one line for every `trace` subscriber; returns how many could not take it.
  size_t broadcast_trace(const std::string& line);
  size_t trace_subscribers() const;
  size_t clients() const { return clients_.size(); }
  const ControlStats& stats() const { return stats_; }

 private:
  struct Client {
    int fd = -1;
    uint64_t token = 0;            // names the client to reply()
    bool waiting = false;          // a deferred answer is owed; its next requests wait
    long uid = -1;
    std::string in;
    std::string out;               // queued output; out_off bytes of it are sent
    size_t out_off = 0;
    uint64_t out_since_ns = 0;     // when the queue was last empty (0: it is)
    bool closing = false;          // told why it is dropped: flush, then close
    bool gone = false;             // to be closed at the end of this call
    bool trace = false;
    double tokens = 0;
    uint64_t refill_ns = 0;        // when tokens were last topped up
    uint64_t line_start_ns = 0;    // when the pending partial line began (0: none)
    uint64_t last_active_ns = 0;
    size_t queued() const { return out.size() - out_off; }
    bool has_line() const { return in.find('\n') != std::string::npos; }
  };
  ControlServer() = default;
  // Accepts one pending connection (or refuses it past a limit); false when none is pending.
  bool accept_client();
  // Answers at most one complete request line; false when none could be answered.
  bool serve_one(Client& c, uint64_t now);
  // Checks a client's partial line against the size limit and its deadline.
  void check_line(Client& c, uint64_t now);
  // Queues a line; drops the client (output_full) when the queue would pass the cap.
  bool queue(Client& c, const std::string& line);
  // Writes what the socket takes; marks the client gone on an error or when a closing one drained.
  void flush(Client& c);
  // Tells the client why (when `why` is not empty), counts the drop and closes after the flush.
  void drop(Client& c, DropReason reason, const std::string& why);
  void refill(Client& c, uint64_t now) const;
  // Tokens the client would have at `now`.
  double tokens_at(const Client& c, uint64_t now) const;
  // Closes the clients marked gone.
  void reap();

  ControlOptions opt_;
  int listen_fd_ = -1;
  // The socket file this server bound (owned_), by device and inode: only that file is removed
  // at the end, never one another fragd bound at the same path since.
  bool owned_ = false;
  dev_t bound_dev_ = 0;
  ino_t bound_ino_ = 0;
  void remove_own_file() const;
  Handler handler_;
  std::vector<Client> clients_;
  uint64_t next_token_ = 1;
  size_t next_turn_ = 0;           // the client service() starts with, for fairness
  bool accept_pending_ = false;    // the listening socket was readable
  ControlStats stats_;
};

}  // namespace fragd
