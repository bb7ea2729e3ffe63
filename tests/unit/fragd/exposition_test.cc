// SPDX-License-Identifier: Apache-2.0
// The protobuf exposition: content negotiation, the native histogram made of the fine buckets,
// and the delimited MetricFamily messages read back with Prometheus' own definitions.
#include "fragd/exposition.h"

#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>
#include <io/prometheus/client/metrics.pb.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace fragd {
namespace {

namespace pb = io::prometheus::client;

TEST(Negotiate, WhatPrometheusSends) {
  // Prometheus 2.x with --enable-feature=native-histograms.
  EXPECT_EQ(negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;"
                      "q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"),
            ExpositionFormat::Protobuf);
  // Prometheus 3.x scraping native histograms (OpenMetrics is not served: text remains below).
  EXPECT_EQ(negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;"
                      "q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,application/openmetrics-text;"
                      "version=0.0.1;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"),
            ExpositionFormat::Protobuf);
  // Prometheus without native histograms.
  EXPECT_EQ(negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                      "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            ExpositionFormat::Text);
}

TEST(Negotiate, OnlyAnExplicitDelimitedMetricFamilyAtTheHighestQuality) {
  EXPECT_EQ(negotiate(""), ExpositionFormat::Text);
  EXPECT_EQ(negotiate("*/*"), ExpositionFormat::Text);
  EXPECT_EQ(negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"),
            ExpositionFormat::Protobuf);
  EXPECT_EQ(negotiate(" Application/Vnd.Google.Protobuf ; proto=io.prometheus.client.MetricFamily ; "
                      "encoding=delimited , text/plain;q=0.5"),
            ExpositionFormat::Protobuf);
  // Another message, another encoding, or q=0: text.
  EXPECT_EQ(negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.Other;encoding=delimited"),
            ExpositionFormat::Text);
  EXPECT_EQ(negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text"),
            ExpositionFormat::Text);
  EXPECT_EQ(negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;"
                      "q=0,text/plain"),
            ExpositionFormat::Text);
  // Text preferred: text.
  EXPECT_EQ(negotiate("text/plain;q=0.9,application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                      "encoding=delimited;q=0.5"),
            ExpositionFormat::Text);
  EXPECT_STREQ(content_type(ExpositionFormat::Protobuf),
               "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited");
  EXPECT_STREQ(content_type(ExpositionFormat::Text), "text/plain; version=0.0.4; charset=utf-8");
}

TEST(NativeHistogram, BucketIndexHoldsItsValue) {
  for (int32_t schema : {0, 3, kNativeSchema})
    for (double v : {1e-6, 1.5e-6, 3.3e-4, 0.004194304, 0.005, 1.0, 2.0, 17.18}) {
      const int32_t i = native_bucket_index(v, schema);
      const double per = std::ldexp(1.0, schema);
      EXPECT_LT(std::exp2((i - 1) / per), v) << v << " schema " << schema;
      EXPECT_GE(std::exp2(i / per), v) << v << " schema " << schema;
    }
  EXPECT_EQ(native_bucket_index(1.0, 0), 0);  // (0.5, 1]
  EXPECT_EQ(native_bucket_index(2.0, 0), 1);  // (1, 2]
  EXPECT_EQ(native_bucket_index(1.5, 0), 1);
}

// Decodes spans and deltas back to (index, count).
std::map<int32_t, uint64_t> decode(const NativeHistogram& n) {
  std::map<int32_t, uint64_t> out;
  int32_t idx = 0;
  int64_t count = 0;
  size_t d = 0;
  for (size_t s = 0; s < n.spans.size(); s++) {
    idx += n.spans[s].first;
    for (uint32_t k = 0; k < n.spans[s].second; k++, idx++) {
      count += n.deltas.at(d++);
      out[idx] = static_cast<uint64_t>(count);
    }
  }
  EXPECT_EQ(d, n.deltas.size());
  return out;
}

TEST(NativeHistogram, EveryFineBucketWholeInTheNativeBucketOfItsMiddle) {
  LatencyHist h;
  h.add(500, 4);              // below 1.024 us: the zero bucket
  h.add(300'000, 2);          // 300 us
  h.add(301'000, 1);          // the same fine bucket
  h.add(9'000'000, 3);        // 9 ms
  h.add(40'000'000'000, 1);   // 40 s: the open bucket from 2^34 ns
  const NativeHistogram n = native_histogram(h);
  EXPECT_EQ(n.schema, kNativeSchema);
  EXPECT_DOUBLE_EQ(n.zero_threshold, 1024e-9);
  EXPECT_EQ(n.zero_count, 4u);
  EXPECT_EQ(n.count, 11u);
  EXPECT_DOUBLE_EQ(n.sum, h.sum_ns / 1e9);
  const auto buckets = decode(n);
  ASSERT_EQ(buckets.size(), 3u);
  uint64_t total = n.zero_count;
  for (const auto& [i, c] : buckets) total += c;
  EXPECT_EQ(total, n.count);
  // Each fine bucket: its count in the native bucket that holds its middle, which lies inside it.
  for (uint64_t ns : {300'000ULL, 9'000'000ULL}) {
    const uint32_t b = fragd_hist_bucket(ns);
    const double lo = fragd_hist_lower(b) / 1e9, hi = fragd_hist_upper(b) / 1e9;
    const int32_t i = native_bucket_index((lo + hi) / 2, n.schema);
    ASSERT_EQ(buckets.count(i), 1u) << ns;
    EXPECT_EQ(buckets.at(i), h.buckets[b]) << ns;
    const double per = std::ldexp(1.0, n.schema);
    EXPECT_GE(std::exp2((i - 1) / per), lo) << ns;
    EXPECT_LE(std::exp2(i / per), hi) << ns;
  }
  // The open bucket counts at 2^34 ns.
  EXPECT_EQ(buckets.at(native_bucket_index((1ULL << 34) / 1e9, n.schema)), 1u);
}

TEST(NativeHistogram, EmptyHasNoBucketAndGapsMakeSpans) {
  const NativeHistogram e = native_histogram(LatencyHist{});
  EXPECT_EQ(e.count, 0u);
  EXPECT_TRUE(e.spans.empty());
  EXPECT_TRUE(e.deltas.empty());
  LatencyHist h;
  h.add(2'000, 1);
  h.add(2'000'000, 5);
  const NativeHistogram n = native_histogram(h);
  ASSERT_EQ(n.spans.size(), 2u);
  EXPECT_EQ(n.spans[0].second, 1u);
  EXPECT_EQ(n.spans[1].second, 1u);
  EXPECT_GT(n.spans[1].first, 0);  // the gap after the first bucket
  EXPECT_EQ(n.deltas, (std::vector<int64_t>{1, 4}));
}

std::vector<pb::MetricFamily> parse_delimited(const std::string& bytes) {
  std::vector<pb::MetricFamily> out;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  uint32_t size = 0;
  while (in.ReadVarint32(&size)) {
    auto limit = in.PushLimit(static_cast<int>(size));
    pb::MetricFamily f;
    EXPECT_TRUE(f.ParseFromCodedStream(&in));
    in.PopLimit(limit);
    out.push_back(std::move(f));
  }
  return out;
}

TEST(Serialize, ProtobufCarriesEveryFamilyAndTheNativeHistogram) {
  Families fs;
  FamilyBuilder c("fragd_x_total", "a counter", MetricType::Counter);
  c.counter({{"order", "4-8"}}, 7);
  FamilyBuilder h("fragd_x_seconds", "a histogram", MetricType::Histogram);
  LatencyHist lh;
  lh.add(300'000, 2);
  lh.add(9'000'000, 1);
  h.histogram({{"order", "4-8"}, {"result", "all"}}, lh, BucketLayout::Coarse, HistogramUse::Quantiles);
  emit(fs, c, h);
  single(fs, "fragd_y", "a gauge", MetricType::Gauge, 2.5);

  const auto got = parse_delimited(serialize(fs, ExpositionFormat::Protobuf));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].name(), "fragd_x_total");
  EXPECT_EQ(got[0].type(), pb::COUNTER);
  ASSERT_EQ(got[0].metric_size(), 1);
  EXPECT_EQ(got[0].metric(0).label(0).name(), "order");
  EXPECT_EQ(got[0].metric(0).label(0).value(), "4-8");
  EXPECT_EQ(got[0].metric(0).counter().value(), 7);
  EXPECT_EQ(got[2].type(), pb::GAUGE);
  EXPECT_EQ(got[2].metric(0).gauge().value(), 2.5);

  ASSERT_EQ(got[1].type(), pb::HISTOGRAM);
  const pb::Histogram& ph = got[1].metric(0).histogram();
  EXPECT_EQ(ph.sample_count(), 3u);
  EXPECT_DOUBLE_EQ(ph.sample_sum(), lh.sum_ns / 1e9);
  // The classic buckets of the layout (+Inf implied), and the native ones.
  ASSERT_EQ(ph.bucket_size(), 5);
  EXPECT_DOUBLE_EQ(ph.bucket(2).upper_bound(), (1ULL << 22) / 1e9);
  EXPECT_EQ(ph.bucket(2).cumulative_count(), 2u);
  const NativeHistogram want = native_histogram(lh);
  EXPECT_EQ(ph.schema(), want.schema);
  EXPECT_DOUBLE_EQ(ph.zero_threshold(), want.zero_threshold);
  ASSERT_EQ(ph.positive_span_size(), static_cast<int>(want.spans.size()));
  for (int i = 0; i < ph.positive_span_size(); i++) {
    EXPECT_EQ(ph.positive_span(i).offset(), want.spans[i].first);
    EXPECT_EQ(ph.positive_span(i).length(), want.spans[i].second);
  }
  ASSERT_EQ(ph.positive_delta_size(), static_cast<int>(want.deltas.size()));
  int64_t sum = 0;
  for (int i = 0; i < ph.positive_delta_size(); i++) sum += ph.positive_delta(i) * (ph.positive_delta_size() - i);
  EXPECT_EQ(static_cast<uint64_t>(sum) + ph.zero_count(), ph.sample_count());

  // The text exposition keeps the classic buckets alone.
  const std::string text = serialize(fs, ExpositionFormat::Text);
  EXPECT_NE(text.find("fragd_x_seconds_bucket{order=\"4-8\",result=\"all\",le=\"0.004194304\"} 2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fragd_x_total{order=\"4-8\"} 7"), std::string::npos) << text;
}

// A cgroup named with bytes that are not UTF-8 (a user may mkdir one in its delegated
// subtree): Prometheus refuses a scrape with one such label value ("invalid UTF-8 label
// value"), so each bad byte is written \xnn, in both formats alike.
TEST(Serialize, ALabelValueThatIsNotUtf8IsEscapedInBothFormats) {
  Families fs;
  FamilyBuilder c("fragd_cgroup_stalls_total", "stalls by cgroup", MetricType::Counter);
  c.counter({{"cgroup", "/fragd-attr-c\xff\xfe"}}, 3);
  c.counter({{"cgroup", "/caf\xc3\xa9"}}, 1);
  emit(fs, c);
  const std::string text = serialize(fs, ExpositionFormat::Text);
  for (unsigned char ch : text.substr(0, text.find("caf"))) EXPECT_LT(ch, 0x80) << text;
  // The text format escapes the backslash itself: a parser reads back /fragd-attr-c\xff\xfe.
  EXPECT_NE(text.find("fragd_cgroup_stalls_total{cgroup=\"/fragd-attr-c\\\\xff\\\\xfe\"} 3"), std::string::npos) << text;
  EXPECT_NE(text.find("fragd_cgroup_stalls_total{cgroup=\"/caf\xc3\xa9\"} 1"), std::string::npos) << text;
  const auto got = parse_delimited(serialize(fs, ExpositionFormat::Protobuf));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].metric_size(), 2);
  EXPECT_EQ(got[0].metric(0).label(0).value(), "/fragd-attr-c\\xff\\xfe");
  EXPECT_EQ(got[0].metric(1).label(0).value(), "/caf\xc3\xa9");
}

}  // namespace
}  // namespace fragd
