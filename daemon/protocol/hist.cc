// SPDX-License-Identifier: Apache-2.0
#include "protocol/hist.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/fields.h"
#include "protocol/wire.h"

// Each field of a trace line, once: comm, pid, order, duration_ns and result are required, the
// rest read as 0 when absent (protocol/fields.h).
template <>
struct fragd::wire::Fields<fragd::StallEvent> {
  static auto list() {
    using T = StallEvent;
    return std::make_tuple(field_or_default("ts_ns", &T::ts_ns), field("pid", &T::pid),
                           field_or_default("tid", &T::tid), field("comm", &T::comm),
                           field_or_default("cgroup_id", &T::cgroup_id), field("order", &T::order),
                           field_or_default("gfp", &T::gfp), field("duration_ns", &T::duration_ns),
                           field_or_default("compact_ns", &T::compact_ns),
                           field_or_default("reclaim_ns", &T::reclaim_ns), field("result", &T::result));
  }
};

// Each field of an order of the hist answer, once; the phases' times and the stall histograms
// sit in objects of their own ("phase_ns", "stall"), each part of which an older fragd may leave
// out (read as 0, an empty histogram).
template <>
struct fragd::wire::Fields<fragd::OrderStats> {
  static auto list() {
    using T = OrderStats;
    return std::make_tuple(field("order", &T::order), field("fast", &T::fast), field("stalled", &T::stalled),
                           field("failed", &T::failed), field_or_default("phase_ns.compaction", &T::compaction_ns),
                           field_or_default("phase_ns.reclaim", &T::reclaim_ns),
                           field_or_default("stall.success", &T::success),
                           field_or_default("stall.failure", &T::failure));
  }
};
// The answer's own fields; "allocations" and "hist_scheme" are read and written by hand below
// (the one present only with counting known, the other checked against this build's).
template <>
struct fragd::wire::Fields<fragd::HistSnapshot> {
  static auto list() {
    using T = HistSnapshot;
    return std::make_tuple(field_or_default("min_order", &T::min_order), field_or_default("uptime_ns", &T::uptime_ns),
                           field("orders", &T::orders));
  }
};

namespace fragd {

using nlohmann::json;
using namespace wire;

void to_json(json& j, const LatencyHist& h) {
  json pairs = json::array();
  for (size_t b = 0; b < h.buckets.size() && b < FRAGD_HIST_BUCKETS; ++b)
    if (h.buckets[b] != 0) pairs.push_back(json::array({b, h.buckets[b]}));
  j = json{{"count", h.count}, {"sum_ns", h.sum_ns}, {"buckets", std::move(pairs)}};
}

void from_json(const json& j, LatencyHist& out) {
  if (!j.is_object())
    malformed("histogram: expected an object {count, sum_ns, buckets}, got " + std::string(j.type_name()));
  LatencyHist h;
  for (const char* key : {"count", "sum_ns"}) {
    auto it = j.find(key);
    if (it == j.end()) malformed(std::string("histogram: missing \"") + key + "\"");
    if (!is_u64(*it)) malformed(std::string("histogram: \"") + key + "\" is not a non-negative integer");
    (key[0] == 'c' ? h.count : h.sum_ns) = to_u64(*it);
  }
  auto it = j.find("buckets");
  if (it == j.end()) malformed("histogram: missing \"buckets\"");
  if (!it->is_array()) malformed("histogram: \"buckets\" is not an array");
  for (const auto& pair : *it) {
    if (!pair.is_array() || pair.size() != 2 || !is_u64(pair[0]) || !is_u64(pair[1]))
      malformed("histogram: bucket entry " + pair.dump() + " is not [index, count] of non-negative integers");
    const uint64_t idx = to_u64(pair[0]), n = to_u64(pair[1]);
    if (idx >= FRAGD_HIST_BUCKETS)
      malformed("histogram: bucket index " + std::to_string(idx) + " out of range 0.." +
                std::to_string(FRAGD_HIST_BUCKETS - 1) + " (fragd and fragctl histogram schemes differ?)");
    h.buckets[idx] = h.buckets[idx] > UINT64_MAX - n ? UINT64_MAX : h.buckets[idx] + n;
  }
  out = std::move(h);
}

Result<LatencyHist> parse_latency_hist(const json& j) {
  try {
    return j.get<LatencyHist>();
  } catch (const Malformed& m) {
    return make_error(m.what);
  }
}

const OrderStats* HistSnapshot::find(unsigned order) const {
  for (const auto& o : orders)
    if (o.order == order) return &o;
  return nullptr;
}

void to_json(json& j, const HistSnapshot& s) {
  j = write_object(s);
  j["ok"] = true;
  j["hist_scheme"] = {{"sub_bits", FRAGD_HIST_SUB_BITS},
                      {"min_shift", FRAGD_HIST_MIN_SHIFT},
                      {"max_shift", FRAGD_HIST_MAX_SHIFT},
                      {"buckets", FRAGD_HIST_BUCKETS}};
  if (s.counting) j["allocations"] = {{"mode", s.counting_mode}, {"counting", *s.counting}};
}

void from_json(const json& answer, HistSnapshot& s) {
  s = HistSnapshot{};
  read_object(answer, s, "");
  s.min_order = std::min(s.min_order, 64u);
  if (const json* al = opt_member(answer, "allocations", json::value_t::object, "answer")) {
    s.counting_mode = printable(opt_str(*al, "mode", "allocations").value_or("?"));
    auto c = al->find("counting");
    if (c == al->end() || !c->is_boolean()) malformed("allocations: \"counting\" is not a boolean");
    s.counting = c->get<bool>();
  }
  if (const json* scheme = opt_member(answer, "hist_scheme", json::value_t::object, "answer")) {
    const std::string w = "hist_scheme";
    uint64_t sub = req_u64(*scheme, "sub_bits", w), lo = req_u64(*scheme, "min_shift", w),
             hi = req_u64(*scheme, "max_shift", w), n = req_u64(*scheme, "buckets", w);
    if (sub != FRAGD_HIST_SUB_BITS || lo != FRAGD_HIST_MIN_SHIFT || hi != FRAGD_HIST_MAX_SHIFT ||
        n != FRAGD_HIST_BUCKETS)
      malformed(strf("fragd's histogram scheme (sub_bits %llu, shifts %llu..%llu, %llu buckets) "
                     "differs from fragctl's (%u, %u..%u, %u): use the fragctl of the same build",
                     static_cast<unsigned long long>(sub), static_cast<unsigned long long>(lo),
                     static_cast<unsigned long long>(hi), static_cast<unsigned long long>(n), FRAGD_HIST_SUB_BITS,
                     FRAGD_HIST_MIN_SHIFT, FRAGD_HIST_MAX_SHIFT, FRAGD_HIST_BUCKETS));
  }
  // What the table cannot say: an order's range, and each order once.
  for (size_t i = 0; i < s.orders.size(); i++) {
    const unsigned order = s.orders[i].order;
    if (order >= FRAGD_NR_ORDERS) malformed(strf("orders[%zu].order: %u above %d", i, order, FRAGD_NR_ORDERS - 1));
    for (size_t k = 0; k < i; k++)
      if (s.orders[k].order == order) malformed(strf("orders[%zu]: order %u appears twice", i, order));
  }
  std::sort(s.orders.begin(), s.orders.end(),
            [](const OrderStats& a, const OrderStats& b) { return a.order < b.order; });
}

void to_json(json& j, const StallEvent& e) { j = write_object(e); }

void from_json(const json& ev, StallEvent& e) {
  e = StallEvent{};
  read_object(ev, e, "event");
}

}  // namespace fragd
