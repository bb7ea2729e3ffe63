// SPDX-License-Identifier: Apache-2.0
#include "fragd/http.h"

#include <CivetServer.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>

#include <cstring>

#include "base/text.h"

namespace fragd {
namespace {

void reply(mg_connection* conn, int status, const char* type, const std::string& body, bool head = false) {
  const char* reason = status == 200 ? "OK" : status == 503 ? "Service Unavailable" : "Error";
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
            "Connection: close\r\n\r\n",
            status, reason, type, body.size());
  if (!head) mg_write(conn, body.data(), body.size());
}

}  // namespace

struct MetricsServer::Handlers {
  struct Metrics : CivetHandler {
    MetricsServer* s;
    explicit Metrics(MetricsServer* server) : s(server) {}
    static ExpositionFormat format(mg_connection* conn) {
      const char* accept = mg_get_header(conn, "Accept");
      return accept ? negotiate(accept) : ExpositionFormat::Text;
    }
    bool handleGet(CivetServer*, mg_connection* conn) override {
      const ExpositionFormat f = format(conn);
      reply(conn, 200, content_type(f), *s->exposition(f));
      return true;
    }
    bool handleHead(CivetServer*, mg_connection* conn) override {
      const ExpositionFormat f = format(conn);
      reply(conn, 200, content_type(f), *s->exposition(f), true);
      return true;
    }
  };
  struct Health : CivetHandler {
    MetricsServer* s;
    bool ready;  // /readyz, else /healthz
    Health(MetricsServer* server, bool readiness) : s(server), ready(readiness) {}
    bool handleGet(CivetServer*, mg_connection* conn) override {
      const auto [status, body] = ready ? s->readiness() : s->health();
      reply(conn, status, "text/plain; charset=utf-8", body);
      return true;
    }
  };
  // Every other path: 404, so that nothing but the two endpoints answers.
  struct NotFound : CivetHandler {
    bool handleAll(mg_connection* conn) {
      static const std::string body = "not found: fragd serves /metrics, /healthz and /readyz\n";
      mg_printf(conn,
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                "Connection: close\r\n\r\n%s",
                body.size(), body.c_str());
      return true;
    }
    bool handleGet(CivetServer*, mg_connection* c) override { return handleAll(c); }
    bool handleHead(CivetServer*, mg_connection* c) override { return handleAll(c); }
    bool handlePost(CivetServer*, mg_connection* c) override { return handleAll(c); }
    bool handlePut(CivetServer*, mg_connection* c) override { return handleAll(c); }
    bool handleDelete(CivetServer*, mg_connection* c) override { return handleAll(c); }
    bool handleOptions(CivetServer*, mg_connection* c) override { return handleAll(c); }
    bool handlePatch(CivetServer*, mg_connection* c) override { return handleAll(c); }
  };
  Metrics metrics;
  Health health, ready;
  NotFound not_found;
  explicit Handlers(MetricsServer* s) : metrics(s), health(s, false), ready(s, true) {}
};

MetricsServer::~MetricsServer() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  built_.notify_all();
  server_.reset();  // stops the workers before the handlers go
  if (want_fd_ >= 0) ::close(want_fd_);
}

void MetricsServer::ticked() {
  std::lock_guard<std::mutex> g(mu_);
  ticked_gen_++;
  published_ns_ = now_ns();
}

void MetricsServer::take_want() {
  uint64_t n = 0;
  (void)!::read(want_fd_, &n, sizeof(n));
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& listen, uint64_t stale_after_ns,
                                                            HttpLimits limits) {
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->stale_after_ns_ = stale_after_ns;
  s->published_ns_ = now_ns();
  s->want_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->want_fd_ < 0) return sys_error("create the metrics server's eventfd");
  s->handlers_ = std::make_unique<Handlers>(s.get());
  const std::vector<std::string> options = {
      "listening_ports", listen,
      "num_threads", std::to_string(limits.threads),
      "request_timeout_ms", std::to_string(limits.request_timeout_ms),
      "max_request_size", std::to_string(limits.max_request_bytes),
      "enable_keep_alive", "no",
      "listen_backlog", "128",
      "connection_queue", "64",
  };
  try {
    s->server_ = std::make_unique<CivetServer>(options);
  } catch (const std::exception& e) {
    return make_error("cannot serve metrics on " + listen + " (" + e.what() +
                          "): the port is in use, below 1024 (fragd keeps no CAP_NET_BIND_SERVICE), or the "
                          "address is not local; stop the other process or pass --listen ADDR:PORT",
                      EADDRINUSE);
  }
  s->server_->addHandler("/metrics$", s->handlers_->metrics);
  s->server_->addHandler("/healthz$", s->handlers_->health);
  s->server_->addHandler("/readyz$", s->handlers_->ready);
  s->server_->addHandler("/", s->handlers_->not_found);
  return s;
}

void MetricsServer::publish(Families families) {
  {
    std::lock_guard<std::mutex> g(mu_);
    families_ = std::move(families);
    text_.reset();
    proto_.reset();
    published_ns_ = now_ns();
    built_gen_ = ticked_gen_;
    asked_ = false;
  }
  built_.notify_all();
}

void MetricsServer::set_scrape_families(std::function<std::vector<prometheus::MetricFamily>()> build) {
  std::lock_guard<std::mutex> g(mu_);
  scrape_families_ = std::move(build);
}

std::shared_ptr<const std::string> MetricsServer::exposition(ExpositionFormat format) {
  std::shared_ptr<const std::string> tick;
  std::function<std::vector<prometheus::MetricFamily>()> build;
  {
    std::unique_lock<std::mutex> g(mu_);
    if (built_gen_ < ticked_gen_ && !stopping_) {
      // The collector ticked since the families were built: ask for new ones, once for all
      // the scrapes waiting, and wait for them (a collector that does not answer in time
      // leaves this scrape with the last ones).
      const uint64_t want = ticked_gen_;
      if (!asked_) {
        const uint64_t one = 1;
        asked_ = ::write(want_fd_, &one, sizeof(one)) == sizeof(one);
      }
      built_.wait_for(g, std::chrono::milliseconds(build_wait_ms_), [&] { return built_gen_ >= want || stopping_; });
    }
    auto& cached = format == ExpositionFormat::Protobuf ? proto_ : text_;
    if (!cached) cached = std::make_shared<const std::string>(serialize(families_, format));
    tick = cached;
    build = scrape_families_;
  }
  if (!build) return tick;
  const Families now = build();
  if (now.empty()) return tick;
  return std::make_shared<const std::string>(*tick + serialize(now, format));
}

std::pair<int, std::string> MetricsServer::health() const {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t age = now_ns() - published_ns_;
  if (age > stale_after_ns_)
    return {503, strf("stale: the collector last published %.1f s ago\n", age / 1e9)};
  return {200, "ok\n"};
}

void MetricsServer::set_readiness(std::string problem) {
  std::lock_guard<std::mutex> g(mu_);
  unready_ = std::move(problem);
}

std::pair<int, std::string> MetricsServer::readiness() const {
  auto h = health();
  if (h.first != 200) return h;
  std::lock_guard<std::mutex> g(mu_);
  if (!unready_.empty()) return {503, unready_ + "\n"};
  return {200, "ready\n"};
}

}  // namespace fragd
