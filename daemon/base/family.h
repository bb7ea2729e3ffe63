// SPDX-License-Identifier: Apache-2.0
// Building Prometheus metric families: every source appends the families it
// owns (sources/<concern>/metrics.h) to one list the exporter serves. Families
// are plain data (prometheus-cpp's MetricFamily); nothing here does I/O.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <utility>
#include <vector>

#include "base/histogram.h"

namespace fragd {

using prometheus::MetricType;
using Families = std::vector<prometheus::MetricFamily>;
using Labels = std::vector<std::pair<std::string, std::string>>;

class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, prometheus::MetricType type);
  prometheus::ClientMetric& add(Labels labels);
  void counter(Labels labels, double v) { add(std::move(labels)).counter.value = v; }
  void gauge(Labels labels, double v) { add(std::move(labels)).gauge.value = v; }
  // A latency histogram in seconds, on power-of-two nanosecond bounds 1.024 us .. 17.2 s
  // (25 buckets + Inf), each the union of whole fine BPF buckets.
  void histogram(Labels labels, const LatencyHist& h);
  prometheus::MetricFamily take() { return std::move(f_); }

 private:
  prometheus::MetricFamily f_;
};

// Appends finished families to `out`, in order.
template <class... Builders>
void emit(Families& out, Builders&... b) {
  (out.push_back(b.take()), ...);
}

// Appends a family of one unlabelled sample (a counter's or a gauge's value).
void single(Families& out, std::string name, std::string help, MetricType type, double v);

// The node label: the node's number, or "all" for what is not one node's (a global pool,
// an action on every node). One scheme in every family.
inline std::string node_label(int node) { return node < 0 ? "all" : std::to_string(node); }

}  // namespace fragd
