// SPDX-License-Identifier: Apache-2.0
#include "base/series.h"

#include <algorithm>

namespace fragd {

const char* detail_word(Detail d) {
  switch (d) {
    case Detail::Zones: return "zones";
    case Detail::Results: return "results";
    case Detail::Statuses: return "statuses";
    case Detail::ThpSizes: return "thp_sizes";
    case Detail::KernelCounters: return "kernel_counters";
    case Detail::Programs: return "programs";
  }
  return "?";
}

std::vector<OrderGroup> order_groups(unsigned from, const std::vector<unsigned>& starts) {
  const unsigned top = FRAGD_NR_ORDERS - 1;
  std::vector<unsigned> s{std::min(from, top)};
  for (unsigned o : starts)
    if (o > from && o <= top) s.push_back(o);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  std::vector<OrderGroup> out;
  for (size_t i = 0; i < s.size(); i++) {
    OrderGroup g;
    g.first = s[i];
    g.last = i + 1 < s.size() ? s[i + 1] - 1 : top;
    g.label = g.first == g.last ? std::to_string(g.first) : std::to_string(g.first) + "-" + std::to_string(g.last);
    out.push_back(std::move(g));
  }
  return out;
}

SeriesPlan series_plan(const SeriesSettings& s, unsigned min_order, unsigned demand_order) {
  std::vector<unsigned> starts = s.orders;
  starts.push_back(demand_order);
  SeriesPlan p;
  starts.push_back(min_order);
  p.traced = order_groups(min_order, starts);
  // The free lists start at order 0 and split where the traced orders do, and at the listed
  // orders below bpf.min_order too (free blocks of every order are read).
  p.buddy = order_groups(0, starts);
  p.buckets = s.buckets;
  p.detail = s.detail;
  return p;
}

SeriesPlan widest_plan(unsigned min_order) {
  SeriesSettings s;
  s.orders.clear();
  for (unsigned o = 1; o < FRAGD_NR_ORDERS; o++) s.orders.push_back(o);
  s.buckets = BucketLayout::Fine;
  for (unsigned d = 0; d < kDetailWords; d++) s.detail.add(static_cast<Detail>(d));
  return series_plan(s, min_order, min_order);
}

std::vector<unsigned> classic_bucket_shifts(BucketLayout layout, HistogramUse use) {
  std::vector<unsigned> out;
  if (layout == BucketLayout::Fine) {
    for (unsigned k = FRAGD_HIST_MIN_SHIFT; k <= FRAGD_HIST_MAX_SHIFT; k++) out.push_back(k);
  } else if (use == HistogramUse::Quantiles) {
    for (unsigned k = 14; k <= 30; k += 4) out.push_back(k);
  }
  return out;
}

}  // namespace fragd
