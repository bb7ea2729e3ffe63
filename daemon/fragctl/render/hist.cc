// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/hist.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "base/format.h"
#include "base/text.h"
#include "fragctl/render/log2.h"
#include "protocol/wire.h"

namespace fragd {
namespace {

using json = nlohmann::json;

OrderStats order_interval(const OrderStats& n, const OrderStats& o) {
  auto sub = [](uint64_t a, uint64_t b) { return a >= b ? a - b : 0; };
  OrderStats d;
  d.order = n.order;
  d.fast = sub(n.fast, o.fast);
  d.stalled = sub(n.stalled, o.stalled);
  d.failed = sub(n.failed, o.failed);
  d.compaction_ns = sub(n.compaction_ns, o.compaction_ns);
  d.reclaim_ns = sub(n.reclaim_ns, o.reclaim_ns);
  d.success = n.success - o.success;
  d.failure = n.failure - o.failure;
  return d;
}

json nan_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

}  // namespace

std::string format_hist_body(const HistSnapshot& s, const HistViewOptions& opt);
json hist_report_body_json(const HistSnapshot& s, const HistViewOptions& opt);

std::string format_order_size(unsigned order, uint64_t page_kib) {
  return std::to_string(page_kib << order) + " KiB";
}

Result<HistSnapshot> parse_hist_answer(const json& answer) { return read_answer<HistSnapshot>(answer, "hist"); }

HistSnapshot hist_interval(const HistSnapshot& newer, const HistSnapshot& older) {
  if (newer.uptime_ns < older.uptime_ns) return newer;  // fragd restarted
  HistSnapshot d;
  d.min_order = newer.min_order;
  d.uptime_ns = newer.uptime_ns - older.uptime_ns;
  d.counting_mode = newer.counting_mode;
  d.counting = newer.counting;
  for (const auto& n : newer.orders) {
    const OrderStats* o = older.find(n.order);
    d.orders.push_back(o ? order_interval(n, *o) : n);
  }
  return d;
}

std::vector<const OrderStats*> shown_orders(const HistSnapshot& s, const HistViewOptions& opt) {
  std::vector<const OrderStats*> out;
  for (const auto& o : s.orders) {
    if (opt.order ? o.order == *opt.order : o.allocations() > 0) out.push_back(&o);
  }
  return out;
}

std::string format_order_header(const OrderStats& o, uint64_t page_kib) {
  return strf("order %u (%s): fast %llu  stalled %llu  failed %llu  stall p50 %s p90 %s p99 %s max %s"
              "  compaction %.1fms reclaim %.1fms",
              o.order, format_order_size(o.order, page_kib).c_str(), static_cast<unsigned long long>(o.fast),
              static_cast<unsigned long long>(o.stalled), static_cast<unsigned long long>(o.failed),
              format_duration(percentile_ns(o.success, 0.50)).c_str(), format_duration(percentile_ns(o.success, 0.90)).c_str(),
              format_duration(percentile_ns(o.success, 0.99)).c_str(), format_duration(max_ns(o.success)).c_str(),
              static_cast<double>(o.compaction_ns) / 1e6, static_cast<double>(o.reclaim_ns) / 1e6);
}

std::string format_hist_text(const HistSnapshot& s, const HistViewOptions& opt) {
  std::string note;
  if (s.counting && !*s.counting)
    note = "allocation counting is off now (bpf.allocations: " + s.counting_mode +
           (s.counting_mode == "adaptive" ? ", on from the next stall" : "") +
           "): fast, stalled and failed counts and stall times cover only the periods it was on; "
           "compaction and reclaim times are complete\n";
  return note + format_hist_body(s, opt);
}

std::string format_hist_body(const HistSnapshot& s, const HistViewOptions& opt) {
  auto shown = shown_orders(s, opt);
  if (shown.empty()) {
    if (opt.order)
      return strf("order %u is not tracked by fragd (it watches orders %u..%d)\n", *opt.order, s.min_order,
                  FRAGD_NR_ORDERS - 1);
    return strf("no allocation of order %u..%d\n", s.min_order, FRAGD_NR_ORDERS - 1);
  }
  std::string out;
  bool first = true;
  for (const OrderStats* o : shown) {
    if (!first) out += "\n";
    first = false;
    out += format_order_header(*o, opt.page_kib) + "\n";
    out += render_log2(o->success);
    if (!o->failure.empty()) {
      out += strf("  stalls that failed (%llu):\n", static_cast<unsigned long long>(o->failure.bucket_total()));
      out += render_log2(o->failure);
    }
  }
  return out;
}

json latency_report_json(const LatencyHist& h) {
  json buckets = json::array();
  for (uint32_t b = 0; b < FRAGD_HIST_BUCKETS && b < h.buckets.size(); ++b) {
    if (h.buckets[b] == 0) continue;
    json upper = b == FRAGD_HIST_BUCKETS - 1 ? json(nullptr) : json(fragd_hist_upper(b));
    buckets.push_back(json::array({fragd_hist_lower(b), upper, h.buckets[b]}));
  }
  return json{{"count", h.count},
              {"sum_ns", h.sum_ns},
              {"p50_ns", nan_null(percentile_ns(h, 0.50))},
              {"p90_ns", nan_null(percentile_ns(h, 0.90))},
              {"p99_ns", nan_null(percentile_ns(h, 0.99))},
              {"max_ns", nan_null(max_ns(h))},
              {"buckets", std::move(buckets)}};
}

json hist_report_json(const HistSnapshot& s, const HistViewOptions& opt) {
  json out = hist_report_body_json(s, opt);
  if (s.counting) out["allocations"] = {{"mode", s.counting_mode}, {"counting", *s.counting}};
  return out;
}

json hist_output_json(const HistSnapshot& s, const HistViewOptions& opt, const std::string& time,
                      std::optional<HistInterval> interval) {
  json out = hist_report_json(s, opt);
  out["time"] = time;
  out["cumulative"] = !interval;
  out["interval_s"] = interval ? json(interval->seconds) : json(nullptr);
  out["interval_ns"] = interval ? json(s.uptime_ns) : json(nullptr);
  if (interval) out["uptime_ns"] = interval->uptime_ns;
  return out;
}

json hist_report_body_json(const HistSnapshot& s, const HistViewOptions& opt) {
  json orders = json::array();
  for (const OrderStats* o : shown_orders(s, opt)) {
    orders.push_back(json{{"order", o->order},
                          {"size_kib", opt.page_kib << o->order},
                          {"fast", o->fast},
                          {"stalled", o->stalled},
                          {"failed", o->failed},
                          {"phase_ns", {{"compaction", o->compaction_ns}, {"reclaim", o->reclaim_ns}}},
                          {"stall",
                           {{"success", latency_report_json(o->success)},
                            {"failure", latency_report_json(o->failure)}}}});
  }
  return json{{"uptime_ns", s.uptime_ns}, {"min_order", s.min_order}, {"orders", std::move(orders)}};
}

}  // namespace fragd
