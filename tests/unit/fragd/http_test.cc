// SPDX-License-Identifier: Apache-2.0
// The HTTP endpoint over a real loopback socket: /readyz says 503 until the
// daemon reports its first tick with every program attached as configured, and
// why; /healthz is not changed by readiness. Also the rule that decides which
// programs must be attached.
#include "fragd/http.h"


#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "fragd/programs.h"
#include "fragd/loopback_http.h"

namespace {

using fragd_test::free_port;

// GET `path`: the status code and the body.
std::pair<int, std::string> get(int port, const std::string& path) {
  const auto r = fragd_test::http_get(port, path);
  return {r.status, r.body};
}

TEST(Readyz, NotReadyUntilTheDaemonSaysSoThenReady) {
  const int port = free_port();
  auto m = fragd::MetricsServer::start("127.0.0.1:" + std::to_string(port), 60'000'000'000ULL);
  ASSERT_TRUE(m) << m.error().message;
  auto [code, body] = get(port, "/readyz");
  EXPECT_EQ(code, 503) << body;
  EXPECT_NE(body.find("first tick"), std::string::npos) << body;
  EXPECT_EQ(get(port, "/healthz").first, 200) << "liveness does not wait for readiness";

  (*m)->set_readiness("program alloc_stall (kmem/mm_page_alloc) is not attached: EPERM");
  std::tie(code, body) = get(port, "/readyz");
  EXPECT_EQ(code, 503);
  EXPECT_NE(body.find("alloc_stall"), std::string::npos) << body;

  (*m)->set_readiness("");
  std::tie(code, body) = get(port, "/readyz");
  EXPECT_EQ(code, 200) << body;
  EXPECT_EQ(body, "ready\n");
}

TEST(Readyz, NotReadyOnceTheCollectorIsStale) {
  const int port = free_port();
  auto m = fragd::MetricsServer::start("127.0.0.1:" + std::to_string(port), 1);  // stale after 1 ns
  ASSERT_TRUE(m) << m.error().message;
  (*m)->set_readiness("");
  const auto [code, body] = get(port, "/readyz");
  EXPECT_EQ(code, 503) << body;
  EXPECT_NE(body.find("stale"), std::string::npos) << body;
}

// /metrics: the tick's families, serialized once per publish, then the families built at the
// scrape itself, anew for each scrape.
TEST(Metrics, ScrapeFamiliesAreBuiltAtEachScrapeAfterTheTicks) {
  const int port = free_port();
  auto m = fragd::MetricsServer::start("127.0.0.1:" + std::to_string(port), 60'000'000'000ULL);
  ASSERT_TRUE(m) << m.error().message;
  std::vector<prometheus::MetricFamily> tick(1);
  tick[0].name = "fragd_tick_family";
  tick[0].help = "h";
  tick[0].type = prometheus::MetricType::Gauge;
  tick[0].metric.resize(1);
  tick[0].metric[0].gauge.value = 7;
  (*m)->publish(tick);
  std::atomic<int> built{0};  // written by the HTTP worker thread
  (*m)->set_scrape_families([&built] {
    std::vector<prometheus::MetricFamily> f(1);
    f[0].name = "process_scrapes";
    f[0].help = "h";
    f[0].type = prometheus::MetricType::Counter;
    f[0].metric.resize(1);
    f[0].metric[0].counter.value = ++built;
    return f;
  });
  auto [code, body] = get(port, "/metrics");
  ASSERT_EQ(code, 200) << body;
  EXPECT_NE(body.find("fragd_tick_family 7"), std::string::npos) << body;
  EXPECT_NE(body.find("process_scrapes 1"), std::string::npos) << body;
  EXPECT_LT(body.find("fragd_tick_family"), body.find("process_scrapes")) << body;
  std::tie(code, body) = get(port, "/metrics");
  EXPECT_NE(body.find("process_scrapes 2"), std::string::npos) << "built again for the second scrape: " << body;
  EXPECT_EQ(built.load(), 2);
  // Nothing built at the scrape (its source unreadable): the tick's families alone.
  (*m)->set_scrape_families([] { return std::vector<prometheus::MetricFamily>{}; });
  std::tie(code, body) = get(port, "/metrics");
  EXPECT_EQ(code, 200);
  EXPECT_NE(body.find("fragd_tick_family 7"), std::string::npos) << body;
  EXPECT_EQ(body.find("process_scrapes"), std::string::npos) << body;
}

fragd::ProgramState prog(const std::string& name, bool attached, bool per_page = false) {
  fragd::ProgramState p;
  p.name = name;
  p.tracepoint = "kmem/" + name;
  p.attached = attached;
  p.error = attached ? "" : "EINVAL";
  p.per_page = per_page;
  return p;
}

TEST(Readyz, ProgramsAttachedAsConfigured) {
  using fragd::unready_programs;
  EXPECT_EQ(unready_programs({prog("a", true), prog("b", true)}, "exact"), "");
  // The per-page counter is attached only while counting is on, except with allocations: exact.
  EXPECT_EQ(unready_programs({prog("a", true), prog("count", false, true)}, "adaptive"), "");
  EXPECT_EQ(unready_programs({prog("a", true), prog("count", false, true)}, "off"), "");
  const std::string why = unready_programs({prog("a", true), prog("count", false, true)}, "exact");
  EXPECT_NE(why.find("count (kmem/count)"), std::string::npos) << why;
  EXPECT_NE(unready_programs({prog("a", false), prog("b", true)}, "adaptive").find("a (kmem/a): EINVAL"),
            std::string::npos);
}

}  // namespace
