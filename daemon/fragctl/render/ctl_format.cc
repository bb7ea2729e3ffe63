#include "fragctl/render/ctl_format.h"
#include "base/text.h"

#include "fragctl/render/map_view.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include <nlohmann/json.hpp>

namespace fragd {

std::string format_hist_body(const HistSnapshot& s, const HistViewOptions& opt);
nlohmann::json hist_report_body_json(const HistSnapshot& s, const HistViewOptions& opt);

namespace {

using json = nlohmann::json;

// Thrown inside the formatters on a malformed answer, caught at their
// boundary and turned into an Error.
struct Malformed {
  std::string what;
};

[[noreturn]] void malformed(std::string what) { throw Malformed{std::move(what)}; }


bool is_u64(const json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0);
}

uint64_t to_u64(const json& j) {
  return j.is_number_unsigned() ? j.get<uint64_t>() : static_cast<uint64_t>(j.get<int64_t>());
}

// Required non-negative integer member.
uint64_t req_u64(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) malformed(where + ": missing \"" + key + "\"");
  if (!is_u64(*it)) malformed(where + ": \"" + key + "\" is not a non-negative integer");
  return to_u64(*it);
}

// Optional non-negative integer member (absent: nullopt; wrong type: Malformed).
std::optional<uint64_t> opt_u64(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!is_u64(*it)) malformed(where + ": \"" + key + "\" is not a non-negative integer");
  return to_u64(*it);
}

std::optional<double> opt_double(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) malformed(where + ": \"" + key + "\" is not a number");
  return it->get<double>();
}

// Optional member of a given kind; wrong kind is Malformed.
const json* opt_member(const json& obj, const char* key, json::value_t kind, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (it->type() != kind) malformed(where + ": \"" + key + "\" is not " +
                                    (kind == json::value_t::array    ? "an array"
                                     : kind == json::value_t::object ? "an object"
                                                                     : "a string"));
  return &*it;
}

std::string opt_str(const json& obj, const char* key, const std::string& where, std::string dflt = "-") {
  const json* s = opt_member(obj, key, json::value_t::string, where);
  return s ? s->get<std::string>() : dflt;
}

// Optional integer member that may be negative (node -1, score -1).
std::optional<int64_t> opt_i64(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX))
    malformed(where + ": \"" + key + "\" is not an integer");
  return it->get<int64_t>();
}

// Optional boolean member: "yes", "no", or "-" when absent.
std::string opt_yes_no(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "-";
  if (!it->is_boolean()) malformed(where + ": \"" + key + "\" is not a boolean");
  return it->get<bool>() ? "yes" : "no";
}

std::string u64_or_dash(std::optional<uint64_t> v) {
  return v ? std::to_string(*v) : std::string("-");
}

// Replaces control characters, so a process name cannot move the cursor.
std::string printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}


LatencyHist parse_latency(const json& stall, const char* key, const std::string& where) {
  const json* h = opt_member(stall, key, json::value_t::object, where + ".stall");
  if (!h) return LatencyHist{};
  auto r = LatencyHist::from_json(*h);
  if (!r) malformed(where + ".stall." + key + ": " + r.error().message);
  return std::move(*r);
}

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

Result<void> check_answer(const json& answer, std::string_view cmd) {
  const std::string c(cmd);
  if (!answer.is_object())
    return make_error("malformed answer to '" + c + "' from fragd: expected a JSON object, got " +
                      answer.type_name());
  auto ok = answer.find("ok");
  if (ok == answer.end() || !ok->is_boolean())
    return make_error("malformed answer to '" + c + "' from fragd: no boolean \"ok\"");
  if (!ok->get<bool>()) {
    auto err = answer.find("error");
    std::string why = (err != answer.end() && err->is_string()) ? err->get<std::string>()
                                                                : std::string("no reason given");
    return make_error("fragd refused '" + c + "': " + why);
  }
  return {};
}



std::string format_order_size(unsigned order, uint64_t page_kib) {
  return std::to_string(page_kib << order) + " KiB";
}

const OrderStats* HistSnapshot::find(unsigned order) const {
  for (const auto& o : orders)
    if (o.order == order) return &o;
  return nullptr;
}

Result<HistSnapshot> parse_hist_answer(const json& answer) {
  if (auto ok = check_answer(answer, "hist"); !ok) return ok.error();
  const std::string where = "malformed answer to 'hist' from fragd";
  try {
    HistSnapshot s;
    s.min_order = static_cast<unsigned>(std::min<uint64_t>(opt_u64(answer, "min_order", where).value_or(0), 64));
    s.uptime_ns = opt_u64(answer, "uptime_ns", where).value_or(0);
    if (const json* al = opt_member(answer, "allocations", json::value_t::object, where)) {
      s.counting_mode = printable(opt_str(*al, "mode", where + ".allocations", "?"));
      auto c = al->find("counting");
      if (c == al->end() || !c->is_boolean()) malformed(where + ".allocations: \"counting\" is not a boolean");
      s.counting = c->get<bool>();
    }
    if (const json* scheme = opt_member(answer, "hist_scheme", json::value_t::object, where)) {
      const std::string w = where + ": hist_scheme";
      uint64_t sub = req_u64(*scheme, "sub_bits", w), lo = req_u64(*scheme, "min_shift", w),
               hi = req_u64(*scheme, "max_shift", w), n = req_u64(*scheme, "buckets", w);
      if (sub != FRAGD_HIST_SUB_BITS || lo != FRAGD_HIST_MIN_SHIFT || hi != FRAGD_HIST_MAX_SHIFT ||
          n != FRAGD_HIST_BUCKETS)
        return make_error(strf("fragd's histogram scheme (sub_bits %llu, shifts %llu..%llu, %llu buckets) "
                               "differs from fragctl's (%u, %u..%u, %u): use the fragctl of the same build",
                               static_cast<unsigned long long>(sub), static_cast<unsigned long long>(lo),
                               static_cast<unsigned long long>(hi), static_cast<unsigned long long>(n),
                               FRAGD_HIST_SUB_BITS, FRAGD_HIST_MIN_SHIFT, FRAGD_HIST_MAX_SHIFT,
                               FRAGD_HIST_BUCKETS));
    }
    auto it = answer.find("orders");
    if (it == answer.end() || !it->is_array()) malformed(where + ": no \"orders\" array");
    for (const auto& oj : *it) {
      if (!oj.is_object()) malformed(where + ": an entry of \"orders\" is not an object");
      OrderStats o;
      uint64_t order = req_u64(oj, "order", where + ": order entry");
      if (order >= FRAGD_NR_ORDERS) malformed(where + strf(": order %llu above %d",
                                                           static_cast<unsigned long long>(order),
                                                           FRAGD_NR_ORDERS - 1));
      o.order = static_cast<unsigned>(order);
      const std::string w = where + strf(": order %u", o.order);
      o.fast = req_u64(oj, "fast", w);
      o.stalled = req_u64(oj, "stalled", w);
      o.failed = req_u64(oj, "failed", w);
      if (const json* ph = opt_member(oj, "phase_ns", json::value_t::object, w)) {
        o.compaction_ns = opt_u64(*ph, "compaction", w + ".phase_ns").value_or(0);
        o.reclaim_ns = opt_u64(*ph, "reclaim", w + ".phase_ns").value_or(0);
      }
      if (const json* st = opt_member(oj, "stall", json::value_t::object, w)) {
        o.success = parse_latency(*st, "success", w);
        o.failure = parse_latency(*st, "failure", w);
      }
      if (s.find(o.order)) malformed(w + " appears twice");
      s.orders.push_back(std::move(o));
    }
    std::sort(s.orders.begin(), s.orders.end(),
              [](const OrderStats& a, const OrderStats& b) { return a.order < b.order; });
    return s;
  } catch (const Malformed& m) {
    return make_error(m.what);
  } catch (const json::exception& e) {
    return make_error(where + ": " + e.what());
  }
}

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

namespace {

const char* const kMigratetypes[] = {"Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "Isolate"};

std::string format_pageblocks(const json& pb, const std::string& where) {
  std::string out;
  auto add = [&](const std::string& name, const json& v) {
    if (!is_u64(v)) malformed(where + ": pageblocks." + name + " is not a non-negative integer");
    if (!out.empty()) out += "  ";
    out += name + " " + std::to_string(to_u64(v));
  };
  for (const char* mt : kMigratetypes)
    if (auto it = pb.find(mt); it != pb.end()) add(mt, *it);
  for (auto it = pb.begin(); it != pb.end(); ++it)
    if (std::find(std::begin(kMigratetypes), std::end(kMigratetypes), it.key()) == std::end(kMigratetypes))
      add(it.key(), it.value());
  return out;
}

void format_node(const json& node, uint64_t page_kib, std::string& out) {
  if (!node.is_object()) malformed("an entry of \"nodes\" is not an object");
  auto id = opt_u64(node, "node", "node");
  const std::string where = "node " + u64_or_dash(id);
  auto present = opt_u64(node, "present_pages", where);
  out += where + ": score " + u64_or_dash(opt_u64(node, "score", where));
  if (present)
    out += strf(", %llu pages present (%.1f GiB)", static_cast<unsigned long long>(*present),
                static_cast<double>(*present) * static_cast<double>(page_kib) / (1024.0 * 1024.0));
  out += "\n";

  // Zones: fixed columns, then one right-aligned column per order whose width
  // fits the largest count of the node.
  struct Row {
    std::string name, score, free, unusable, pageblocks;
    std::vector<std::string> blocks;
  };
  std::vector<Row> rows;
  size_t width[FRAGD_NR_ORDERS];
  for (int o = 0; o < FRAGD_NR_ORDERS; ++o) width[o] = std::to_string(o).size();
  if (const json* zones = opt_member(node, "zones", json::value_t::array, where)) {
    for (const auto& z : *zones) {
      if (!z.is_object()) malformed(where + ": an entry of \"zones\" is not an object");
      Row r;
      r.name = printable(opt_str(z, "zone", where + ": zone"));
      const std::string zw = where + ": zone " + r.name;
      r.score = u64_or_dash(opt_u64(z, "score", zw));
      r.free = u64_or_dash(opt_u64(z, "free_pages", zw));
      r.unusable = "-";
      if (const json* ui = opt_member(z, "unusable_index", json::value_t::array, zw)) {
        if (ui->size() > 9) {
          const json& v = (*ui)[9];
          if (!v.is_number()) malformed(zw + ": unusable_index[9] is not a number");
          r.unusable = strf("%.2f", v.get<double>());
        }
      }
      const json* fb = opt_member(z, "free_blocks", json::value_t::array, zw);
      for (int o = 0; o < FRAGD_NR_ORDERS; ++o) {
        std::string v = "-";
        if (fb && static_cast<size_t>(o) < fb->size()) {
          const json& c = (*fb)[static_cast<size_t>(o)];
          if (!is_u64(c)) malformed(zw + strf(": free_blocks[%d] is not a non-negative integer", o));
          v = std::to_string(to_u64(c));
        }
        width[o] = std::max(width[o], v.size());
        r.blocks.push_back(std::move(v));
      }
      if (const json* pb = opt_member(z, "pageblocks", json::value_t::object, zw))
        r.pageblocks = format_pageblocks(*pb, zw);
      rows.push_back(std::move(r));
    }
  }
  if (!rows.empty()) {
    std::string head = strf("  %-8s %5s %10s %10s", "zone", "score", "free_pages", "unusable@9");
    std::string cols;
    for (int o = 0; o < FRAGD_NR_ORDERS; ++o) cols += strf(" %*d", static_cast<int>(width[o]), o);
    out += std::string(head.size() + 1, ' ') + "free blocks of order\n";
    out += head + cols + "\n";
    for (const Row& r : rows) {
      out += strf("  %-8s %5s %10s %10s", r.name.c_str(), r.score.c_str(), r.free.c_str(), r.unusable.c_str());
      for (int o = 0; o < FRAGD_NR_ORDERS; ++o)
        out += strf(" %*s", static_cast<int>(width[o]), r.blocks[static_cast<size_t>(o)].c_str());
      out += "\n";
      if (!r.pageblocks.empty()) out += "  " + std::string(9, ' ') + "pageblocks: " + r.pageblocks + "\n";
    }
  }

  if (const json* hp = opt_member(node, "hugepages", json::value_t::array, where)) {
    std::string line;
    for (const auto& p : *hp) {
      if (!p.is_object()) malformed(where + ": an entry of \"hugepages\" is not an object");
      auto size = opt_u64(p, "size_kib", where + ": hugepages");
      if (!line.empty()) line += ",  ";
      line += (size ? format_size_kib(*size) : std::string("?")) + ": " +
              u64_or_dash(opt_u64(p, "free", where + ": hugepages")) + " free of " +
              u64_or_dash(opt_u64(p, "total", where + ": hugepages"));
    }
    if (!line.empty()) out += "  hugepages " + line + "\n";
  }
}

void format_policy(const json& a, bool utc_times, std::string& out);

// The last pageblock scan and the pollution fragd tracks (both may be null).
void format_mobility(const json& a, uint64_t page_kib, std::string& out) {
  if (const json* scan = opt_member(a, "scan", json::value_t::object, "status")) {
    const auto age = opt_u64(*scan, "age_ns", "scan");
    const auto took = opt_u64(*scan, "duration_ns", "scan");
    out += "\npageblocks (scan " + (age ? format_duration(*age, DurationStyle::Age) : std::string("-")) + " ago, took " +
           (took ? format_duration(static_cast<double>(*took)) : std::string("-")) + "; fragctl map shows them):\n";
    out += strf("  %-4s %-8s %7s %7s %7s %9s %5s %7s  %s\n", "node", "zone", "free", "movable", "hybrid",
                "unmovable", "huge", "offline", "huge pages: free / +compaction (pages to migrate) / polluted");
    if (const json* zones = opt_member(*scan, "zones", json::value_t::array, "scan"))
      for (const auto& z : *zones) {
        if (!z.is_object()) malformed("an entry of \"scan.zones\" is not an object");
        const json* c = opt_member(z, "counts", json::value_t::object, "scan.zones");
        const json* h = opt_member(z, "hugepages", json::value_t::object, "scan.zones");
        auto cnt = [&](const char* k) { return c ? u64_or_dash(opt_u64(*c, k, "counts")) : std::string("-"); };
        auto hp = [&](const char* k) { return h ? u64_or_dash(opt_u64(*h, k, "hugepages")) : std::string("-"); };
        const auto cost = opt_u64(z, "compaction_cost_pages", "scan.zones");
        out += strf("  %-4s %-8s %7s %7s %7s %9s %5s %7s  %s / +%s (%s, %s) / %s\n",
                    u64_or_dash(opt_u64(z, "node", "scan.zones")).c_str(),
                    printable(opt_str(z, "zone", "scan.zones", "?")).c_str(), cnt("free").c_str(),
                    cnt("movable").c_str(), cnt("hybrid").c_str(), cnt("unmovable").c_str(), cnt("huge").c_str(),
                    cnt("offline").c_str(), hp("free").c_str(), hp("compaction").c_str(), u64_or_dash(cost).c_str(),
                    cost ? format_size_kib(*cost * page_kib).c_str() : "-", hp("polluted").c_str());
      }
  }
  if (const json* p = opt_member(a, "pollution", json::value_t::object, "status")) {
    out += "\npollution: " + u64_or_dash(opt_u64(*p, "tracked_blocks", "pollution")) + " movable pageblocks hold " +
           u64_or_dash(opt_u64(*p, "tracked_pages", "pollution")) + " unmovable pages (" +
           u64_or_dash(opt_u64(*p, "events", "pollution")) + " polluting fallbacks seen, " +
           u64_or_dash(opt_u64(*p, "untracked_events", "pollution")) + " not recorded)\n";
    if (const json* top = opt_member(*p, "top", json::value_t::array, "pollution"); top && !top->empty()) {
      out += strf("  %-16s %12s %8s %8s\n", "top polluters", "cgroup_id", "blocks", "pages");
      for (const auto& t : *top) {
        if (!t.is_object()) malformed("an entry of \"pollution.top\" is not an object");
        out += strf("  %-16s %12s %8s %8s\n", printable(opt_str(t, "comm", "pollution.top", "?")).c_str(),
                    u64_or_dash(opt_u64(t, "cgroup_id", "pollution.top")).c_str(),
                    u64_or_dash(opt_u64(t, "blocks", "pollution.top")).c_str(),
                    u64_or_dash(opt_u64(t, "pages", "pollution.top")).c_str());
      }
    }
  }
}

std::string format_status_body(const json& a, uint64_t page_kib, bool utc_times) {
  std::string out = "fragd " + printable(opt_str(a, "version", "status")) + ", pid " +
                    u64_or_dash(opt_u64(a, "pid", "status"));
  if (auto tick = opt_u64(a, "tick_ns", "status")) out += ", sampling every " + format_duration(static_cast<double>(*tick));
  out += "\n";

  auto nodes = a.find("nodes");
  if (nodes == a.end() || !nodes->is_array()) malformed("no \"nodes\" array");
  for (const auto& n : *nodes) {
    out += "\n";
    format_node(n, page_kib, out);
  }

  if (const json* al = opt_member(a, "allocations", json::value_t::object, "status")) {
    const std::string mode = printable(opt_str(*al, "mode", "allocations", "?"));
    auto c = al->find("counting");
    if (c != al->end() && !c->is_boolean()) malformed("allocations: \"counting\" is not a boolean");
    const bool on = c != al->end() && c->get<bool>();
    out += "\nallocation counting (bpf.allocations " + mode + "): " + (on ? "on" : "off");
    if (auto secs = opt_double(*al, "counting_seconds", "allocations")) out += strf(", on for %.0f s in all", *secs);
    if (!on && mode == "adaptive") out += " (switches on at the next stall)";
    if (!on) out += "; fast and failed allocations are not counted meanwhile";
    out += "\n";
  }

  if (const json* progs = opt_member(a, "programs", json::value_t::array, "status")) {
    out += "\nprograms attached:\n";
    for (const auto& p : *progs) {
      if (!p.is_object()) malformed("an entry of \"programs\" is not an object");
      std::string name = printable(opt_str(p, "name", "programs", "?"));
      auto at = p.find("attached");
      std::string yes = "-";
      if (at != p.end()) {
        if (!at->is_boolean()) malformed("programs: \"attached\" of " + name + " is not a boolean");
        yes = at->get<bool>() ? "yes" : "no";
      }
      out += strf("  %-32s %s\n", name.c_str(), yes.c_str());
    }
  }

  out += "\nevents dropped: " + u64_or_dash(opt_u64(a, "events_dropped", "status")) + "\n";

  if (const json* comp = opt_member(a, "compaction", json::value_t::array, "status")) {
    out += "\ncompaction runs by trigger:\n";
    out += strf("  %-10s %10s %15s %13s\n", "trigger", "runs", "pages_migrated", "pages_failed");
    for (const auto& c : *comp) {
      if (!c.is_object()) malformed("an entry of \"compaction\" is not an object");
      out += strf("  %-10s %10s %15s %13s\n", printable(opt_str(c, "trigger", "compaction", "?")).c_str(),
                  u64_or_dash(opt_u64(c, "runs", "compaction")).c_str(),
                  u64_or_dash(opt_u64(c, "pages_migrated", "compaction")).c_str(),
                  u64_or_dash(opt_u64(c, "pages_failed", "compaction")).c_str());
    }
  }
  format_mobility(a, page_kib, out);
  format_policy(a, utc_times, out);
  return out;
}

}  // namespace

Result<std::string> format_status(const json& answer, uint64_t page_kib, bool utc_times) {
  if (auto ok = check_answer(answer, "status"); !ok) return ok.error();
  try {
    return format_status_body(answer, page_kib, utc_times);
  } catch (const Malformed& m) {
    return make_error("malformed answer to 'status' from fragd: " + m.what);
  } catch (const json::exception& e) {
    return make_error(std::string("malformed answer to 'status' from fragd: ") + e.what());
  }
}

json status_output_json(const json& answer) { return answer; }

std::string trace_header() { return strf("%-8s %-16s %-7s %-5s %-11s %s", "TIME", "COMM", "PID", "ORDER", "RESULT", "MS"); }

Result<std::string> format_trace_line(const json& ev, const std::tm& local) {
  try {
    if (!ev.is_object()) malformed("not a JSON object");
    auto it = ev.find("comm");
    if (it == ev.end() || !it->is_string()) malformed("no string \"comm\"");
    std::string comm = printable(it->get<std::string>());
    uint64_t pid = req_u64(ev, "pid", "event");
    uint64_t order = req_u64(ev, "order", "event");
    uint64_t dur = req_u64(ev, "duration_ns", "event");
    it = ev.find("result");
    if (it == ev.end() || !it->is_string()) malformed("no string \"result\"");
    std::string result = printable(it->get<std::string>());
    char tbuf[16];
    std::strftime(tbuf, sizeof tbuf, "%H:%M:%S", &local);
    return strf("%-8s %-16s %-7llu %-5llu %-11s %.3f", tbuf, comm.c_str(), static_cast<unsigned long long>(pid),
                static_cast<unsigned long long>(order), result.c_str(), static_cast<double>(dur) / 1e6);
  } catch (const Malformed& m) {
    return make_error("malformed trace event from fragd: " + m.what);
  } catch (const json::exception& e) {
    return make_error(std::string("malformed trace event from fragd: ") + e.what());
  }
}

// --- Acting -----------------------------------------------------------------

json compact_request(std::optional<int> node) {
  json r{{"cmd", "compact"}};
  if (node) r["node"] = *node;
  return r;
}

json pool_request(uint64_t size_kib, uint64_t count, std::optional<int> node) {
  json r{{"cmd", "pool"}, {"size_kib", size_kib}, {"count", count}};
  if (node) r["node"] = *node;
  return r;
}

json action_request(uint64_t id) { return json{{"cmd", "action"}, {"id", id}}; }

Result<std::vector<uint64_t>> parse_ids_answer(const json& answer, std::string_view cmd) {
  if (auto ok = check_answer(answer, cmd); !ok) return ok.error();
  const std::string c(cmd);
  const std::string where = "malformed answer to '" + c + "' from fragd";
  auto it = answer.find("ids");
  if (it == answer.end() || !it->is_array()) return make_error(where + ": no \"ids\" array");
  std::vector<uint64_t> ids;
  for (const auto& v : *it) {
    if (!is_u64(v)) return make_error(where + ": an entry of \"ids\" is not a non-negative integer");
    ids.push_back(to_u64(v));
  }
  if (ids.empty())
    return make_error("fragd accepted '" + c + "' but queued no action: nothing was done (see 'fragctl status')");
  return ids;
}

Result<std::string> parse_reload_answer(const json& answer) {
  if (auto ok = check_answer(answer, "reload"); !ok) return ok.error();
  auto msg = answer.find("message");
  if (msg == answer.end() || msg->is_null()) return std::string("policy reloaded");
  if (!msg->is_string()) return make_error("malformed answer to 'reload' from fragd: \"message\" is not a string");
  return printable(msg->get<std::string>());
}

namespace {

std::string req_str(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) malformed(where + ": missing \"" + key + "\"");
  if (!it->is_string()) malformed(where + ": \"" + key + "\" is not a string");
  return it->get<std::string>();
}

OutcomeView parse_outcome_or_throw(const json& j) {
  if (!j.is_object()) malformed("an action outcome is not an object");
  OutcomeView o;
  o.id = req_u64(j, "id", "action outcome");
  const std::string w = strf("outcome of action %llu", static_cast<unsigned long long>(o.id));
  o.action = req_str(j, "action", w);
  auto node = opt_i64(j, "node", w);
  if (!node) malformed(w + ": missing \"node\"");
  o.node = *node;
  o.result = req_str(j, "result", w);
  o.trigger = opt_str(j, "trigger", w, "");
  o.reason = opt_str(j, "reason", w, "");
  o.detail = opt_str(j, "detail", w, "");
  o.start_unix_ns = opt_u64(j, "start_unix_ns", w);
  o.duration_ns = opt_u64(j, "duration_ns", w);
  o.score_before = opt_i64(j, "score_before", w);
  o.score_after = opt_i64(j, "score_after", w);
  o.blocks_before = opt_u64(j, "blocks_before", w);
  o.blocks_after = opt_u64(j, "blocks_after", w);
  o.pages_migrated = opt_u64(j, "pages_migrated", w);
  o.size_kib = opt_u64(j, "size_kib", w);
  o.target = opt_u64(j, "target", w);
  o.pool_before = opt_u64(j, "pool_before", w);
  o.pool_after = opt_u64(j, "pool_after", w);
  o.attempts = opt_u64(j, "attempts", w);
  o.compactions = opt_u64(j, "compactions", w);
  return o;
}

std::string node_text(int64_t node) { return node < 0 ? std::string("all") : std::to_string(node); }

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string score_text(std::optional<int64_t> v) { return v && *v >= 0 ? std::to_string(*v) : std::string("-"); }

std::string seconds_text(uint64_t ns) { return strf("%.2f s", static_cast<double>(ns) / 1e9); }

// Why a result is not a success, when fragd gave no detail.
std::string default_failure_reason(const OutcomeView& o) {
  const std::string target = o.target ? " of " + std::to_string(*o.target) : std::string();
  if (o.result == "no_gain")
    return "the score fell too little (" + score_text(o.score_before) + " -> " + score_text(o.score_after) + ")";
  if (o.result == "short") return "the pool stopped short of its target (" + u64_or_dash(o.pool_after) + target + ")";
  if (o.result == "guard")
    return "stopped by the MemAvailable guard (" + u64_or_dash(o.pool_after) + target + " pages)";
  if (o.result == "abandoned") return "fragd was exiting";
  if (o.result == "refused") return "fragd refused it";
  return "fragd gave no detail";
}

}  // namespace

Result<OutcomeView> parse_outcome(const json& outcome) {
  try {
    return parse_outcome_or_throw(outcome);
  } catch (const Malformed& m) {
    return make_error(m.what);
  } catch (const json::exception& e) {
    return make_error(std::string("action outcome: ") + e.what());
  }
}

std::string outcome_subject(const OutcomeView& o) {
  if (o.action == "compact") return o.node < 0 ? std::string("compact every node") : "compact node " + node_text(o.node);
  if (o.action == "pool")
    return "pool " + (o.size_kib ? format_size_kib(*o.size_kib) : std::string("?")) + " node " + node_text(o.node);
  std::string s = printable(o.action);
  if (o.node >= 0) s += " node " + std::to_string(o.node);
  return s;
}

std::string format_outcome(const OutcomeView& o) {
  std::string out = outcome_subject(o) + ": " + printable(o.result);
  auto part = [&out](const std::string& p) { out += ", " + p; };
  if (o.action == "pool") {
    if (o.pool_before || o.pool_after || o.target) {
      std::string p = u64_or_dash(o.pool_before) + " -> " + u64_or_dash(o.pool_after);
      if (o.target) p += " (target " + std::to_string(*o.target) + ")";
      part(p);
    }
    if (o.attempts) part(plural(*o.attempts, "write", "writes"));
    if (o.compactions) part(plural(*o.compactions, "compaction", "compactions"));
  } else {
    const bool measured = (o.score_before && *o.score_before >= 0) || (o.score_after && *o.score_after >= 0);
    if (measured) part("score " + score_text(o.score_before) + " -> " + score_text(o.score_after));
    // A dry run measures nothing after (it did nothing): its "after" fields are placeholders.
    const bool after_measured = o.result != "dry_run";
    if (o.trigger == "reserve" && (o.blocks_before || o.blocks_after))
      part("free blocks " + u64_or_dash(o.blocks_before) + " -> " +
           (after_measured ? u64_or_dash(o.blocks_after) : std::string("-")));
    if (o.pages_migrated && (o.action == "compact" || *o.pages_migrated > 0))
      part(plural(*o.pages_migrated, "page migrated", "pages migrated"));
  }
  if (o.duration_ns) part(seconds_text(*o.duration_ns));
  if (!o.trigger.empty() || !o.reason.empty()) {
    out += " (" + printable(o.trigger);
    if (!o.trigger.empty() && !o.reason.empty()) out += ": ";
    out += printable(o.reason) + ")";
  }
  if (!o.detail.empty()) out += "; " + printable(o.detail);
  return out;
}

std::string outcome_failure(const OutcomeView& o) {
  return outcome_subject(o) + ": " + printable(o.result) + ": " +
         (o.detail.empty() ? default_failure_reason(o) : printable(o.detail));
}

Result<ActionAnswer> parse_action_answer(const json& answer, uint64_t id) {
  const std::string which = strf("action %llu", static_cast<unsigned long long>(id));
  if (auto ok = check_answer(answer, "action"); !ok) return make_error("cannot follow " + which + ": " + ok.error().message);
  const std::string where = "malformed answer to 'action' (" + which + ") from fragd";
  auto st = answer.find("state");
  if (st == answer.end() || !st->is_string()) return make_error(where + ": no string \"state\"");
  const std::string state = st->get<std::string>();
  ActionAnswer a;
  if (state == "queued") {
    a.state = ActionState::Queued;
    return a;
  }
  if (state == "running") {
    a.state = ActionState::Running;
    return a;
  }
  if (state != "done")
    return make_error(where + ": unknown state '" + printable(state) + "' (expected queued, running or done)");
  a.state = ActionState::Done;
  auto out = answer.find("outcome");
  if (out == answer.end() || !out->is_object()) return make_error(where + ": state done without an \"outcome\" object");
  auto view = parse_outcome(*out);
  if (!view) return make_error(where + ": " + view.error().message);
  if (view->id != id)
    return make_error(where + strf(": the outcome is that of action %llu", static_cast<unsigned long long>(view->id)));
  a.raw_outcome = *out;
  a.outcome = std::move(*view);
  return a;
}

json outcomes_output_json(const std::vector<FinishedAction>& finished) {
  json arr = json::array();
  for (const auto& f : finished) arr.push_back(f.raw);
  return arr;
}

Result<std::vector<FinishedAction>> wait_for_actions(const std::vector<uint64_t>& ids, const ActionWaiter& w) {
  std::vector<std::optional<FinishedAction>> done(ids.size());
  std::vector<ActionState> state(ids.size(), ActionState::Queued);
  const int64_t deadline = w.now_ms() + w.timeout_ms;
  // "action 8 (running), action 9 (queued)" for the ones not done.
  auto pending_text = [&]() {
    std::string t;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (done[i]) continue;
      if (!t.empty()) t += ", ";
      t += strf("action %llu (%s)", static_cast<unsigned long long>(ids[i]),
                state[i] == ActionState::Running ? "running" : "queued");
    }
    return t;
  };
  for (;;) {
    size_t pending = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (done[i]) continue;
      auto answer = w.ask(action_request(ids[i]));
      if (!answer) {
        if (answer.error().err == EINTR)
          return make_error("interrupted; fragd carries on with " + pending_text() + ": see 'fragctl status' for the outcome", EINTR);
        return answer.error();
      }
      auto a = parse_action_answer(*answer, ids[i]);
      if (!a) return a.error();
      state[i] = a->state;
      if (a->state != ActionState::Done) {
        ++pending;
        continue;
      }
      done[i] = FinishedAction{std::move(a->raw_outcome), std::move(a->outcome)};
      if (w.on_done) w.on_done(*done[i]);
    }
    if (pending == 0) break;
    const int64_t now = w.now_ms();
    if (now >= deadline)
      return make_error(strf("gave up after %g s waiting for ", static_cast<double>(w.timeout_ms) / 1e3) +
                            pending_text() +
                            "; fragd carries on regardless: see 'fragctl status' for the outcome, or pass a longer "
                            "--timeout",
                        ETIMEDOUT);
    if (!w.sleep_until(std::min(now + w.interval_ms, deadline)))
      return make_error("interrupted; fragd carries on with " + pending_text() + ": see 'fragctl status' for the outcome", EINTR);
  }
  std::vector<FinishedAction> out;
  out.reserve(ids.size());
  for (auto& d : done) out.push_back(std::move(*d));
  return out;
}

// --- status: the policy block -------------------------------------------------

namespace {

std::string clock_text(std::optional<uint64_t> unix_ns, bool utc) {
  if (!unix_ns) return "-";
  std::time_t t = static_cast<std::time_t>(*unix_ns / 1000000000ULL);
  std::tm tm{};
  if (utc)
    gmtime_r(&t, &tm);
  else
    localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

std::string seconds_or_dash(std::optional<uint64_t> ns) { return ns ? seconds_text(*ns) : std::string("-"); }

void format_policy(const json& a, bool utc_times, std::string& out) {
  if (const json* p = opt_member(a, "policy", json::value_t::object, "status")) {
    const std::string w = "policy";
    std::string source = printable(opt_str(*p, "source", w));
    if (source.empty()) source = "-";
    out += "\npolicy: mode " + printable(opt_str(*p, "mode", w)) + ", dry_run " + opt_yes_no(*p, "dry_run", w) +
           ", method " + printable(opt_str(*p, "method", w)) + ", from " + source + "\n";
    out += "  reloads " + u64_or_dash(opt_u64(*p, "reloads", w)) + " (" +
           u64_or_dash(opt_u64(*p, "reload_errors", w)) + " failed), compaction budget used " +
           seconds_or_dash(opt_u64(*p, "budget_used_ns", w)) + " of " + seconds_or_dash(opt_u64(*p, "budget_ns", w)) +
           " per minute, proactiveness raised " + opt_yes_no(*p, "proactiveness_raised", w) + "\n";
  }

  if (const json* nodes = opt_member(a, "policy_nodes", json::value_t::array, "status")) {
    out += strf("  %-4s %5s %-3s %5s %6s  %-12s %s\n", "node", "score", "hot", "floor", "misses", "waiting",
                "next action in");
    for (const auto& n : *nodes) {
      if (!n.is_object()) malformed("an entry of \"policy_nodes\" is not an object");
      auto id = opt_i64(n, "node", "policy_nodes");
      const std::string w = "policy_nodes: node " + (id ? std::to_string(*id) : std::string("-"));
      std::string waiting = printable(opt_str(n, "waiting", w));
      if (waiting.empty()) waiting = "-";
      auto next = opt_u64(n, "next_allowed_in_ns", w);
      out += strf("  %-4s %5s %-3s %5s %6s  %-12s %s\n", id ? std::to_string(*id).c_str() : "-",
                  u64_or_dash(opt_u64(n, "score", w)).c_str(), opt_yes_no(n, "hot", w).c_str(),
                  u64_or_dash(opt_u64(n, "floor", w)).c_str(), u64_or_dash(opt_u64(n, "misses", w)).c_str(),
                  waiting.c_str(), next && *next > 0 ? seconds_text(*next).c_str() : "-");
    }
  }

  if (const json* pools = opt_member(a, "pools", json::value_t::array, "status")) {
    if (pools->empty()) {
      out += "  hugepage pool targets: none\n";
    } else {
      out += "  hugepage pool targets:\n";
      out += strf("    %-7s %-5s %8s %8s  %-8s %s\n", "size", "node", "target", "reached", "set by", "last result");
      for (const auto& p : *pools) {
        if (!p.is_object()) malformed("an entry of \"pools\" is not an object");
        const std::string w = "pools";
        auto size = opt_u64(p, "size_kib", w);
        auto node = opt_i64(p, "node", w);
        std::string manual = opt_yes_no(p, "manual", w);
        std::string last = printable(opt_str(p, "last_result", w));
        if (last.empty()) last = "-";
        out += strf("    %-7s %-5s %8s %8s  %-8s %s\n", size ? format_size_kib(*size).c_str() : "?",
                    node ? node_text(*node).c_str() : "-", u64_or_dash(opt_u64(p, "target", w)).c_str(),
                    u64_or_dash(opt_u64(p, "reached", w)).c_str(),
                    manual == "yes" ? "fragctl" : manual == "no" ? "policy" : "-", last.c_str());
      }
    }
  }

  if (auto it = a.find("action_running"); it != a.end()) {
    if (it->is_null()) {
      out += "  running: none\n";
    } else {
      if (!it->is_object()) malformed("\"action_running\" is neither an object nor null");
      const std::string w = "action_running";
      OutcomeView r;
      r.action = opt_str(*it, "action", w, "?");
      r.node = opt_i64(*it, "node", w).value_or(-1);
      r.size_kib = opt_u64(*it, "size_kib", w);
      r.trigger = opt_str(*it, "trigger", w, "");
      r.reason = opt_str(*it, "reason", w, "");
      out += "  running: #" + u64_or_dash(opt_u64(*it, "id", w)) + " " + outcome_subject(r);
      if (!r.trigger.empty() || !r.reason.empty()) {
        out += " (" + printable(r.trigger);
        if (!r.trigger.empty() && !r.reason.empty()) out += ": ";
        out += printable(r.reason) + ")";
      }
      out += "\n";
    }
  }

  if (const json* actions = opt_member(a, "actions", json::value_t::array, "status")) {
    const size_t n = actions->size();
    if (n == 0) {
      out += "  last actions: none\n";
    } else {
      const size_t first = n > kStatusActionsShown ? n - kStatusActionsShown : 0;
      if (first > 0)
        out += strf("  last %zu of %zu actions (newest last):\n", n - first, n);
      else
        out += "  last actions (newest last):\n";
      for (size_t i = first; i < n; ++i) {
        auto o = parse_outcome((*actions)[i]);
        if (!o) malformed("actions: " + o.error().message);
        out += strf("    %-8s #%llu ", clock_text(o->start_unix_ns, utc_times).c_str(),
                    static_cast<unsigned long long>(o->id)) +
               format_outcome(*o) + "\n";
      }
    }
  }
}

}  // namespace

Result<std::string> format_cost(const nlohmann::json& cost) {
  if (!cost.is_object() || !cost.contains("seconds") || !cost["seconds"].is_number())
    return make_error("cost answer: no number 'seconds'");
  if (!cost.contains("programs") || !cost["programs"].is_array())
    return make_error("cost answer: no array 'programs'");
  const double secs = cost["seconds"].get<double>();
  const bool have_faults = cost.contains("page_faults") && is_u64(cost["page_faults"]);
  const uint64_t faults = have_faults ? to_u64(cost["page_faults"]) : 0;
  std::string out = strf("BPF run time of fragd's programs over %.1f s", secs);
  out += have_faults ? strf(", %llu page faults\n", static_cast<unsigned long long>(faults)) : std::string("\n");
  out += strf("%-26s %-46s %12s %10s %9s %11s %7s\n", "PROGRAM", "TRACEPOINT", "RUNS", "RUNS/S", "NS/RUN",
              "NS/FAULT", "MISSES");
  uint64_t total_ns = 0, total_runs = 0;
  for (const auto& p : cost["programs"]) {
    for (const char* k : {"runs", "run_ns", "recursion_misses"})
      if (!p.is_object() || !p.contains(k) || !is_u64(p[k]))
        return make_error(std::string("cost answer: program without '") + k + "'");
    const uint64_t runs = to_u64(p["runs"]), ns = to_u64(p["run_ns"]);
    total_ns += ns;
    total_runs += runs;
    const std::string name = p.value("name", std::string("?")) + (p.value("attached", true) ? "" : " (detached)");
    out += strf("%-26s %-46s %12llu %10.0f %9s %11s %7llu\n", name.c_str(), p.value("tracepoint", std::string("?")).c_str(),
                static_cast<unsigned long long>(runs), secs > 0 ? runs / secs : 0.0,
                runs ? strf("%.0f", static_cast<double>(ns) / runs).c_str() : "-",
                faults ? strf("%.2f", static_cast<double>(ns) / faults).c_str() : "-",
                static_cast<unsigned long long>(to_u64(p["recursion_misses"])));
  }
  out += strf("%-26s %-46s %12llu %10.0f %9s %11s\n", "total", "", static_cast<unsigned long long>(total_runs),
              secs > 0 ? total_runs / secs : 0.0,
              total_runs ? strf("%.0f", static_cast<double>(total_ns) / total_runs).c_str() : "-",
              faults ? strf("%.2f", static_cast<double>(total_ns) / faults).c_str() : "-");
  out += "Run time is what the programs' bodies took; each run also pays the kernel's dispatch to the program\n"
         "(tens of ns with retpolines), which BPF statistics do not see: bench/run.sh measures both.\n";
  return out;
}

}  // namespace fragd
