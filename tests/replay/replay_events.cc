// SPDX-License-Identifier: Apache-2.0
#include "replay_events.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "concerns/compaction/maps.h"
#include "concerns/stalls/maps.h"  // the label values: trigger_name, outcome_name, ...

namespace fragd::replay {
namespace {

std::string idx(const std::string& name, std::initializer_list<std::string> labels) {
  std::string s = name;
  for (const auto& l : labels) s += "[" + l + "]";
  return s;
}

void add_hist(std::map<std::string, uint64_t>& m, const std::string& name, const fragd_hist& h) {
  m[name + ".count"] = h.count;
  m[name + ".sum_ns"] = h.sum_ns;
}

// "12", "2.5" (ms) -> ns; "5ms", "1.5s", "300us" likewise with a unit; a bare number for counts.
bool parse_value(const std::string& text, const char* default_unit, uint64_t& out) {
  size_t end = 0;
  while (end < text.size() && (isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) end++;
  if (end == 0) return false;
  const std::string num = text.substr(0, end), unit = end < text.size() ? text.substr(end) : default_unit;
  uint64_t scale;
  if (unit == "") scale = 1;
  else if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1000;
  else if (unit == "ms") scale = 1000000;
  else if (unit == "s") scale = 1000000000;
  else return false;
  const size_t dot = num.find('.');
  const std::string whole = num.substr(0, dot), frac = dot == std::string::npos ? "" : num.substr(dot + 1);
  if (frac.find('.') != std::string::npos) return false;
  out = std::strtoull(whole.c_str(), nullptr, 10) * scale;
  uint64_t f = scale;
  for (char c : frac) {
    if (f % 10 != 0) return false;  // finer than a nanosecond
    f /= 10;
    out += static_cast<uint64_t>(c - '0') * f;
  }
  return true;
}

// The file's time 0 on the programs' clock: bpf_ktime_get_ns is never 0 (0 means "no stall open").
constexpr uint64_t kClockBase = 1000000000000ULL;  // 1000 s after boot

int find_name(const std::string& v, unsigned n, const char* (*name)(unsigned)) {
  for (unsigned i = 0; i < n; i++)
    if (v == name(i)) return static_cast<int>(i);
  return -1;
}

}  // namespace

std::map<std::string, uint64_t> counters(const replay_state& r) {
  std::map<std::string, uint64_t> m;
  const auto& a = r.alloc;
  for (unsigned o = 0; o < FRAGD_NR_ORDERS; o++) {
    const std::string os = std::to_string(o);
    for (unsigned k = 0; k < FRAGD_NR_OUTCOMES; k++) m[idx("allocs", {os, outcome_name(k)})] = a.allocs[o][k];
    m[idx("allocs_at_switch", {os})] = a.allocs_at_switch[o];
    m[idx("own_allocs", {os})] = a.own_allocs[o];
    m[idx("stalls_abandoned", {os})] = a.stalls_abandoned[o];
    for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) {
      m[idx("phase_ns", {os, phase_name(p)})] = a.phase_ns[o][p];
      m[idx("direct_entries", {os, phase_name(p)})] = a.direct_entries[o][p];
    }
    for (unsigned res = 0; res < FRAGD_NR_RESULTS; res++)
      add_hist(m, idx("stall_hist", {os, result_name(res)}), r.stall_hist[FRAGD_STALL_HIST_KEY(o, res)]);
  }
  for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) m[idx("own_entries", {phase_name(p)})] = a.own_entries[p];
  m["events_dropped"] = a.events_dropped;
  m["events_no_storage"] = a.events_no_storage;
  m["wakeups_dropped"] = a.wakeups_dropped;
  const auto& c = r.compaction;
  for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) {
    for (unsigned s = 0; s < FRAGD_NR_CSTATUS; s++) m[idx("runs", {trigger_name(t), cstatus_name(s)})] = c.runs[t][s];
    m[idx("pages_migrated", {trigger_name(t)})] = c.pages_migrated[t];
    m[idx("pages_failed", {trigger_name(t)})] = c.pages_failed[t];
    add_hist(m, idx("compaction_hist", {trigger_name(t)}), r.compaction_hist[t]);
  }
  m["runs_unmatched"] = c.runs_unmatched;
  m["wakeups"] = r.wakeups;
  m["slow_events"] = r.slow_events;
  return m;
}

std::vector<std::string> run_file(const std::string& path) {
  std::vector<std::string> errors;
  std::ifstream in(path);
  if (!in) return {path + ": cannot be read"};
  replay_state r;
  replay_init(&r);
  std::map<std::string, std::pair<uint64_t, int>> expected;  // counter -> value, line
  std::string line;
  for (int n = 1; std::getline(in, line); n++) {
    auto err = [&](const std::string& what) { errors.push_back(path + ":" + std::to_string(n) + ": " + what); };
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string time, who, event;
    if (!(words >> time)) continue;
    if (time == "expect") {
      std::string name, value;
      uint64_t v;
      if (!(words >> name >> value) || !parse_value(value, "", v)) {
        err("want `expect COUNTER VALUE`");
        continue;
      }
      expected[name] = {v, n};
      continue;
    }
    uint64_t t;
    if (!parse_value(time, "ms", t) || !(words >> who >> event)) {
      err("want `TIME TID EVENT [field=value ...]`");
      continue;
    }
    t += kClockBase;
    if (t < r.now) err("time goes back");
    r.now = t;
    std::map<std::string, std::string> f;
    for (std::string kv; words >> kv;) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) {
        f[kv] = "";
      } else {
        f[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    }
    auto num = [&](const char* key, uint64_t def) -> uint64_t {
      auto it = f.find(key);
      if (it == f.end()) return def;
      return std::strtoull(it->second.c_str(), nullptr, 0);
    };
    auto named = [&](const char* key, unsigned nr, const char* (*name)(unsigned)) -> unsigned {
      const int i = find_name(f[key], nr, name);
      if (i < 0) err(std::string("unknown ") + key + " '" + f[key] + "'");
      return i < 0 ? 0 : static_cast<unsigned>(i);
    };
    if (who == "-") {
      if (event == "counting" && (f.count("on") || f.count("off")))
        replay_set_counting(&r, f.count("on") ? 1 : 0);
      else if (event == "arm_wakeup")
        replay_arm_wakeup(&r);
      else if (event == "own" && f.count("tid"))
        replay_own(&r, static_cast<__u32>(num("tid", 0)));
      else
        err("unknown daemon action '" + event + "'");
      continue;
    }
    const auto tid = static_cast<__u32>(std::strtoul(who.c_str(), nullptr, 10));
    const int order = static_cast<int>(num("order", 0));
    const int storage = static_cast<int>(num("storage", 1));
    if (event == "mm_compaction_try_to_compact_pages")
      replay_try_to_compact(&r, tid, order, num("gfp", 0), storage);
    else if (event == "mm_vmscan_direct_reclaim_begin")
      replay_reclaim_begin(&r, tid, order, num("gfp", 0), storage);
    else if (event == "mm_vmscan_direct_reclaim_end")
      replay_reclaim_end(&r, tid);
    else if (event == "mm_page_alloc")
      replay_page_alloc(&r, tid, static_cast<__u32>(order), static_cast<int>(num("page", 1)));
    else if (event == "mm_compaction_begin")
      replay_compaction_begin(&r, tid, named("trigger", FRAGD_NR_TRIGGERS, trigger_name));
    else if (event == "mm_compaction_end")
      replay_compaction_end(&r, tid, named("trigger", FRAGD_NR_TRIGGERS, trigger_name),
                            named("status", FRAGD_NR_CSTATUS, cstatus_name), static_cast<int>(num("memalloc", 0)));
    else if (event == "mm_compaction_migratepages")
      replay_migratepages(&r, tid, num("nr_migrated", 0), num("nr_failed", 0));
    else
      err("unknown event '" + event + "'");
  }
  const auto got = counters(r);
  for (const auto& [name, want] : expected)
    if (!got.count(name))
      errors.push_back(path + ":" + std::to_string(want.second) + ": no counter " + name);
  for (const auto& [name, value] : got) {
    auto it = expected.find(name);
    const uint64_t want = it == expected.end() ? 0 : it->second.first;
    if (value != want)
      errors.push_back(path + ":" + (it == expected.end() ? "(no expect line)" : std::to_string(it->second.second)) +
                       ": " + name + " is " + std::to_string(value) + ", want " + std::to_string(want));
  }
  return errors;
}

}  // namespace fragd::replay
