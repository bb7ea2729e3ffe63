// SPDX-License-Identifier: Apache-2.0
// The HTTP endpoint: GET /metrics (Prometheus text format, or protobuf with native histograms
// when the scraper's Accept header asks for it: fragd/exposition.h), GET /healthz
// (liveness: the collector ticks) and GET /readyz (readiness: the first tick
// is done with every program attached as configured), nothing else. civetweb serves it from a small pool of worker threads, each
// request bounded in size and time, so a slow or oversized client costs one
// worker for at most the request timeout and never the collector.
#pragma once

#include <prometheus/metric_family.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/family.h"
#include "base/result.h"
#include "fragd/exposition.h"

class CivetServer;

namespace fragd {

struct HttpLimits {
  unsigned threads = 8;              // concurrent requests served; more wait in the accept queue
  unsigned request_timeout_ms = 2000;  // a client must send its request and take the answer in this time
  unsigned max_request_bytes = 8192;   // request line and headers; longer ones are refused
};

class MetricsServer {
 public:
  ~MetricsServer();
  // Binds ADDR:PORT; the error names the address and the fix when it is taken.
  // `stale_after_ns`: /healthz answers 503 when no tick published for this long.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& listen, uint64_t stale_after_ns,
                                                      HttpLimits limits = {});
  // A tick's families; serialized on the first scrape after, shared by every scrape until the next.
  void publish(Families families);
  // Families built when a scrape asks, not at every tick: ticked() says the collector's state
  // moved on (and keeps /healthz fresh); a scrape that finds the published families older than
  // the last tick makes want_fd() readable and waits up to `build_wait_ms` for the collector's
  // publish(), then serves what was published last. The collector polls want_fd() and, when it
  // is readable, calls take_want() and publishes.
  void ticked();
  int want_fd() const { return want_fd_; }
  void take_want();
  void set_build_wait_ms(unsigned ms) { build_wait_ms_ = ms; }
  // Families built anew at each scrape and served after the tick's (fragd's process_* figures,
  // read when asked, as every client library does). Called from the HTTP worker threads.
  void set_scrape_families(std::function<std::vector<prometheus::MetricFamily>()> build);

  // For the handlers.
  std::shared_ptr<const std::string> exposition(ExpositionFormat format = ExpositionFormat::Text);
  // 200 and "ok" when the collector ticked recently; 503 and why otherwise.
  std::pair<int, std::string> health() const;
  // What keeps fragd from being ready ("" once it is), set after each tick.
  void set_readiness(std::string problem);
  // 200 and "ready" when set_readiness("") was the last word and health() is
  // 200; 503 and the reason otherwise ("starting: ..." before the first tick).
  std::pair<int, std::string> readiness() const;

 private:
  MetricsServer() = default;
  mutable std::mutex mu_;
  std::condition_variable built_;
  uint64_t ticked_gen_ = 0, built_gen_ = 0;  // ticks seen; the tick the published families are from
  bool asked_ = false, stopping_ = false;
  int want_fd_ = -1;
  unsigned build_wait_ms_ = 2000;
  Families families_;
  // families_ serialized in each format; null until a scrape asks for it.
  std::shared_ptr<const std::string> text_, proto_;
  std::function<std::vector<prometheus::MetricFamily>()> scrape_families_;
  uint64_t published_ns_ = 0;                // CLOCK_MONOTONIC of the last publish
  uint64_t stale_after_ns_ = 0;
  std::string unready_ = "starting: the first tick has not run yet";
  struct Handlers;
  std::unique_ptr<Handlers> handlers_;
  std::unique_ptr<CivetServer> server_;
};

}  // namespace fragd
