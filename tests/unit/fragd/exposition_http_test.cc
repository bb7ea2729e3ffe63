// SPDX-License-Identifier: Apache-2.0
// /metrics over a real loopback socket: the Accept header picks the exposition, each format
// with its Content-Type, and a scraper asking for nothing in particular gets text.

#include <gtest/gtest.h>

#include <string>

#include "fragd/http.h"
#include "fragd/loopback_http.h"

namespace {

using fragd_test::free_port;

struct Response {
  std::string content_type, body;
};

Response get_metrics(int port, const std::string& accept) {
  const auto r = fragd_test::http_get(port, "/metrics", accept.empty() ? "" : "Accept: " + accept + "\r\n");
  return {r.content_type, r.body};
}

TEST(MetricsExposition, TheAcceptHeaderPicksTheFormat) {
  const int port = free_port();
  auto m = fragd::MetricsServer::start("127.0.0.1:" + std::to_string(port), 60'000'000'000ULL);
  ASSERT_TRUE(m) << m.error().message;
  fragd::Families fs;
  fragd::FamilyBuilder h("fragd_x_seconds", "a histogram", fragd::MetricType::Histogram);
  fragd::LatencyHist lh;
  lh.add(300'000, 2);
  h.histogram({{"order", "4-8"}}, lh, fragd::BucketLayout::Coarse, fragd::HistogramUse::Quantiles);
  fragd::emit(fs, h);
  (*m)->publish(fs);

  const Response text = get_metrics(port, "");
  EXPECT_EQ(text.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(text.body.find("fragd_x_seconds_count{order=\"4-8\"} 2"), std::string::npos) << text.body;

  const Response proto = get_metrics(port,
                                     "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                                     "encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2");
  EXPECT_EQ(proto.content_type,
            "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited");
  EXPECT_EQ(proto.body, fragd::serialize(fs, fragd::ExpositionFormat::Protobuf));
  EXPECT_EQ(proto.body.find("fragd_x_seconds_count"), std::string::npos);  // no text in it

  // Each format is cached apart: text again after protobuf is still text.
  EXPECT_EQ(get_metrics(port, "text/plain").body, text.body);
}

}  // namespace
