// SPDX-License-Identifier: Apache-2.0
#include "fragd/exposition.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <io/prometheus/client/metrics.pb.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

namespace fragd {

namespace {

namespace pb = io::prometheus::client;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One media range of an Accept header: its type and parameters (names in lower case), q apart.
struct MediaRange {
  std::string type;
  std::map<std::string, std::string> params;
  double q = 1.0;
};

std::vector<MediaRange> media_ranges(std::string_view accept) {
  std::vector<MediaRange> out;
  while (!accept.empty()) {
    const size_t comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view{} : accept.substr(comma + 1);
    MediaRange m;
    size_t semi = range.find(';');
    m.type = lower(trim(range.substr(0, semi)));
    while (semi != std::string_view::npos) {
      range = range.substr(semi + 1);
      semi = range.find(';');
      const std::string_view p = range.substr(0, semi);
      const size_t eq = p.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string name = lower(trim(p.substr(0, eq)));
      std::string value(trim(p.substr(eq + 1)));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      if (name == "q") {
        char* end = nullptr;
        const double q = std::strtod(value.c_str(), &end);
        m.q = end != value.c_str() && *end == '\0' && q >= 0 && q <= 1 ? q : 0;
      } else {
        m.params[name] = value;
      }
    }
    if (!m.type.empty()) out.push_back(std::move(m));
  }
  return out;
}

pb::MetricType proto_type(prometheus::MetricType t) {
  switch (t) {
    case prometheus::MetricType::Counter: return pb::COUNTER;
    case prometheus::MetricType::Gauge: return pb::GAUGE;
    case prometheus::MetricType::Summary: return pb::SUMMARY;
    case prometheus::MetricType::Histogram: return pb::HISTOGRAM;
    case prometheus::MetricType::Untyped: break;
  }
  return pb::UNTYPED;
}

void fill_histogram(pb::Histogram* out, const prometheus::ClientMetric::Histogram& classic, const LatencyHist* fine) {
  out->set_sample_count(classic.sample_count);
  out->set_sample_sum(classic.sample_sum);
  for (const auto& b : classic.bucket) {
    if (std::isinf(b.upper_bound)) continue;  // the +Inf bucket is the count
    auto* pbb = out->add_bucket();
    pbb->set_cumulative_count(b.cumulative_count);
    pbb->set_upper_bound(b.upper_bound);
  }
  if (!fine) return;
  const NativeHistogram n = native_histogram(*fine);
  out->set_sample_count(n.count);
  out->set_sample_sum(n.sum);
  out->set_schema(n.schema);
  out->set_zero_threshold(n.zero_threshold);
  out->set_zero_count(n.zero_count);
  for (const auto& [offset, length] : n.spans) {
    auto* s = out->add_positive_span();
    s->set_offset(offset);
    s->set_length(length);
  }
  for (int64_t d : n.deltas) out->add_positive_delta(d);
}

std::string protobuf_exposition(const Families& families) {
  std::string out;
  google::protobuf::io::StringOutputStream raw(&out);
  google::protobuf::io::CodedOutputStream coded(&raw);
  for (const auto& f : families) {
    pb::MetricFamily m;
    m.set_name(f.name);
    m.set_help(f.help);
    m.set_type(proto_type(f.type));
    const auto fine = families.fine.find(f.name);
    for (size_t i = 0; i < f.metric.size(); i++) {
      const auto& cm = f.metric[i];
      auto* pm = m.add_metric();
      for (const auto& l : cm.label) {
        auto* lp = pm->add_label();
        lp->set_name(l.name);
        lp->set_value(l.value);
      }
      switch (f.type) {
        case prometheus::MetricType::Counter: pm->mutable_counter()->set_value(cm.counter.value); break;
        case prometheus::MetricType::Gauge: pm->mutable_gauge()->set_value(cm.gauge.value); break;
        case prometheus::MetricType::Untyped: pm->mutable_untyped()->set_value(cm.untyped.value); break;
        case prometheus::MetricType::Summary: {
          auto* s = pm->mutable_summary();
          s->set_sample_count(cm.summary.sample_count);
          s->set_sample_sum(cm.summary.sample_sum);
          for (const auto& q : cm.summary.quantile) {
            auto* pq = s->add_quantile();
            pq->set_quantile(q.quantile);
            pq->set_value(q.value);
          }
          break;
        }
        case prometheus::MetricType::Histogram: {
          const bool has_fine = fine != families.fine.end() && i < fine->second.size();
          fill_histogram(pm->mutable_histogram(), cm.histogram, has_fine ? &fine->second[i] : nullptr);
          break;
        }
      }
    }
    coded.WriteVarint32(static_cast<uint32_t>(m.ByteSizeLong()));
    m.SerializeWithCachedSizes(&coded);
  }
  coded.Trim();
  return out;
}

}  // namespace

ExpositionFormat negotiate(std::string_view accept) {
  double proto_q = 0, text_q = 0;
  for (const MediaRange& m : media_ranges(accept)) {
    if (m.type == "application/vnd.google.protobuf") {
      auto proto = m.params.find("proto");
      auto enc = m.params.find("encoding");
      if (proto != m.params.end() && proto->second == "io.prometheus.client.MetricFamily" && enc != m.params.end() &&
          enc->second == "delimited")
        proto_q = std::max(proto_q, m.q);
    } else if (m.type == "text/plain" || m.type == "text/*" || m.type == "*/*") {
      text_q = std::max(text_q, m.q);
    }
  }
  return proto_q > 0 && proto_q >= text_q ? ExpositionFormat::Protobuf : ExpositionFormat::Text;
}

const char* content_type(ExpositionFormat f) {
  return f == ExpositionFormat::Protobuf
             ? "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
             : "text/plain; version=0.0.4; charset=utf-8";
}

std::string serialize(const Families& families, ExpositionFormat f) {
  if (f == ExpositionFormat::Protobuf) return protobuf_exposition(families);
  return prometheus::TextSerializer().Serialize(families);
}

int32_t native_bucket_index(double seconds, int32_t schema) {
  const double per_octave = std::ldexp(1.0, schema);
  auto upper = [&](int32_t i) { return std::exp2(i / per_octave); };
  int32_t i = static_cast<int32_t>(std::ceil(std::log2(seconds) * per_octave));
  // log2 may land a hair off at a bound: (upper(i-1), upper(i)] decides.
  while (upper(i - 1) >= seconds) i--;
  while (upper(i) < seconds) i++;
  return i;
}

NativeHistogram native_histogram(const LatencyHist& h) {
  NativeHistogram n;
  n.schema = kNativeSchema;
  n.zero_threshold = static_cast<double>(fragd_hist_upper(0)) / 1e9;
  n.sum = static_cast<double>(h.sum_ns) / 1e9;
  std::map<int32_t, uint64_t> buckets;
  for (uint32_t b = 0; b < h.buckets.size() && b < FRAGD_HIST_BUCKETS; b++) {
    const uint64_t c = h.buckets[b];
    if (c == 0) continue;
    n.count += c;
    if (b == 0) {
      n.zero_count += c;
      continue;
    }
    const double lo = static_cast<double>(fragd_hist_lower(b));
    const double ns = b == FRAGD_HIST_BUCKETS - 1 ? lo : (lo + static_cast<double>(fragd_hist_upper(b))) / 2;
    buckets[native_bucket_index(ns / 1e9, n.schema)] += c;
  }
  int32_t next = 0;  // the index after the last bucket encoded
  uint64_t prev = 0;
  for (const auto& [i, c] : buckets) {
    if (n.spans.empty() || i != next) n.spans.push_back({n.spans.empty() ? i : i - next, 0});
    n.spans.back().second++;
    n.deltas.push_back(static_cast<int64_t>(c) - static_cast<int64_t>(prev));
    prev = c;
    next = i + 1;
  }
  return n;
}

}  // namespace fragd
