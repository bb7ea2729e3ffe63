// SPDX-License-Identifier: Apache-2.0
#include "base/family.h"

#include <limits>

#include "base/text.h"

namespace fragd {

FamilyBuilder::FamilyBuilder(std::string name, std::string help, prometheus::MetricType type) {
  f_.name = std::move(name);
  f_.help = std::move(help);
  f_.type = type;
}

prometheus::ClientMetric& FamilyBuilder::add(Labels labels) {
  prometheus::ClientMetric m;
  // Every label value of every family passes here: one that is not UTF-8 (a cgroup's directory
  // name is any bytes) would make Prometheus refuse the whole scrape, text or protobuf.
  for (auto& [k, v] : labels) m.label.push_back({std::move(k), utf8_escaped(std::move(v))});
  f_.metric.push_back(std::move(m));
  return f_.metric.back();
}

void FamilyBuilder::histogram(Labels labels, const LatencyHist& h, BucketLayout layout, HistogramUse use) {
  auto& m = add(std::move(labels));
  m.histogram.sample_count = h.count;
  m.histogram.sample_sum = h.sum_ns / 1e9;
  uint64_t cum = 0;
  size_t b = 0;
  for (unsigned k : classic_bucket_shifts(layout, use)) {
    const uint64_t bound = 1ULL << k;
    while (b < h.buckets.size() && fragd_hist_upper(b) <= bound) cum += h.buckets[b++];
    m.histogram.bucket.push_back({cum, bound / 1e9});
  }
  m.histogram.bucket.push_back({h.count, std::numeric_limits<double>::infinity()});
  fine_.resize(f_.metric.size() - 1);  // the metrics added before without a histogram
  fine_.push_back(h);
}

void FamilyBuilder::take_into(Families& out) {
  if (!fine_.empty()) {
    fine_.resize(f_.metric.size());
    out.fine[f_.name] = std::move(fine_);
  }
  out.push_back(std::move(f_));
}

void single(Families& out, std::string name, std::string help, MetricType type, double v) {
  FamilyBuilder b(std::move(name), std::move(help), type);
  if (type == MetricType::Counter) b.counter({}, v);
  else b.gauge({}, v);
  out.push_back(b.take());
}

}  // namespace fragd
