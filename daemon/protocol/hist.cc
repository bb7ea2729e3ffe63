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
  json orders = json::array();
  for (const auto& o : s.orders)
    orders.push_back({{"order", o.order},
                      {"fast", o.fast},
                      {"stalled", o.stalled},
                      {"failed", o.failed},
                      {"phase_ns", {{"compaction", o.compaction_ns}, {"reclaim", o.reclaim_ns}}},
                      {"stall", {{"success", o.success}, {"failure", o.failure}}}});
  j = json{{"ok", true},
           {"min_order", s.min_order},
           {"uptime_ns", s.uptime_ns},
           {"hist_scheme",
            {{"sub_bits", FRAGD_HIST_SUB_BITS},
             {"min_shift", FRAGD_HIST_MIN_SHIFT},
             {"max_shift", FRAGD_HIST_MAX_SHIFT},
             {"buckets", FRAGD_HIST_BUCKETS}}},
           {"orders", std::move(orders)}};
  if (s.counting) j["allocations"] = {{"mode", s.counting_mode}, {"counting", *s.counting}};
}

namespace {

LatencyHist latency_member(const json& stall, const char* key, const std::string& where) {
  const json* h = opt_member(stall, key, json::value_t::object, where + ".stall");
  if (!h) return LatencyHist{};
  try {
    return h->get<LatencyHist>();
  } catch (const Malformed& m) {
    malformed(where + ".stall." + key + ": " + m.what);
  }
}

}  // namespace

void from_json(const json& answer, HistSnapshot& s) {
  s = HistSnapshot{};
  s.min_order = static_cast<unsigned>(std::min<uint64_t>(opt_u64(answer, "min_order", "answer").value_or(0), 64));
  s.uptime_ns = opt_u64(answer, "uptime_ns", "answer").value_or(0);
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
  auto it = answer.find("orders");
  if (it == answer.end() || !it->is_array()) malformed("no \"orders\" array");
  for (const auto& oj : *it) {
    if (!oj.is_object()) malformed("an entry of \"orders\" is not an object");
    OrderStats o;
    uint64_t order = req_u64(oj, "order", "order entry");
    if (order >= FRAGD_NR_ORDERS)
      malformed(strf("order %llu above %d", static_cast<unsigned long long>(order), FRAGD_NR_ORDERS - 1));
    o.order = static_cast<unsigned>(order);
    const std::string w = strf("order %u", o.order);
    o.fast = req_u64(oj, "fast", w);
    o.stalled = req_u64(oj, "stalled", w);
    o.failed = req_u64(oj, "failed", w);
    if (const json* ph = opt_member(oj, "phase_ns", json::value_t::object, w)) {
      o.compaction_ns = opt_u64(*ph, "compaction", w + ".phase_ns").value_or(0);
      o.reclaim_ns = opt_u64(*ph, "reclaim", w + ".phase_ns").value_or(0);
    }
    if (const json* st = opt_member(oj, "stall", json::value_t::object, w)) {
      o.success = latency_member(*st, "success", w);
      o.failure = latency_member(*st, "failure", w);
    }
    if (s.find(o.order)) malformed(w + " appears twice");
    s.orders.push_back(std::move(o));
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
