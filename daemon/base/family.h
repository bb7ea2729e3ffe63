// SPDX-License-Identifier: Apache-2.0
// Building Prometheus metric families: every source appends the families it
// owns (concerns/<concern>/metrics.h) to one list the exporter serves. Families
// are plain data (prometheus-cpp's MetricFamily); nothing here does I/O.
#pragma once

#include <prometheus/metric_family.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/histogram.h"
#include "base/series.h"

namespace fragd {

using prometheus::MetricType;
using Labels = std::vector<std::pair<std::string, std::string>>;

// The families of one build, in order, as the text exposition serves them; and beside them the
// full resolution of every latency histogram (the fine BPF buckets) for the exposition that
// carries it: the protobuf one's native histograms (fragd/exposition.h). fine[name][i] belongs to
// metric i of family `name`.
struct Families : std::vector<prometheus::MetricFamily> {
  Families() = default;
  Families(std::vector<prometheus::MetricFamily> families) : vector(std::move(families)) {}  // no histogram's fine buckets
  std::map<std::string, std::vector<LatencyHist>> fine;
};

class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, prometheus::MetricType type);
  // A metric of the family. Label values that are not UTF-8 are escaped (utf8_escaped in
  // base/text.h), so both expositions hold valid UTF-8 whatever the names fed in.
  prometheus::ClientMetric& add(Labels labels);
  void counter(Labels labels, double v) { add(std::move(labels)).counter.value = v; }
  void gauge(Labels labels, double v) { add(std::move(labels)).gauge.value = v; }
  // A latency histogram in seconds. Its classic buckets are powers of two of nanoseconds
  // (classic_bucket_shifts of `layout` and `use`, then +Inf), each the union of whole fine BPF
  // buckets; the fine ones are kept for a native histogram.
  void histogram(Labels labels, const LatencyHist& h, BucketLayout layout, HistogramUse use);
  // Appends the family (and its fine histograms) to `out`.
  void take_into(Families& out);
  prometheus::MetricFamily take() { return std::move(f_); }

 private:
  prometheus::MetricFamily f_;
  std::vector<LatencyHist> fine_;
};

// Appends finished families to `out`, in order.
template <class... Builders>
void emit(Families& out, Builders&... b) {
  (b.take_into(out), ...);
}

// Appends a family of one unlabelled sample (a counter's or a gauge's value).
void single(Families& out, std::string name, std::string help, MetricType type, double v);

// The node label: the node's number, or "all" for what is not one node's (a global pool,
// an action on every node). One scheme in every family.
inline std::string node_label(int node) { return node < 0 ? "all" : std::to_string(node); }

}  // namespace fragd
