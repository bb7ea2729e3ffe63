// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/top.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "base/format.h"
#include "base/text.h"
#include "protocol/wire.h"

namespace fragd {

namespace {

std::string dur(uint64_t ns) { return ns == 0 ? "0" : format_duration(static_cast<double>(ns), DurationStyle::Measured); }

// Stall time as a share of one CPU over the interval ("" when cumulative).
std::string share(uint64_t ns, double interval_s) {
  if (interval_s <= 0) return "";
  char b[16];
  std::snprintf(b, sizeof b, "%5.1f%%", 100.0 * static_cast<double>(ns) / (interval_s * 1e9));
  return b;
}

bool before(const TopCount& a, const TopCount& b, const std::string& sort) {
  if (sort == "stalls") return a.stalls != b.stalls ? a.stalls > b.stalls : a.stall_ns > b.stall_ns;
  return a.stall_ns != b.stall_ns ? a.stall_ns > b.stall_ns : a.stalls > b.stalls;
}

std::string cut(const std::string& s, size_t w) { return s.size() <= w ? s : "..." + s.substr(s.size() - (w - 3)); }

}  // namespace

std::string format_top_text(const TopReply& r, const TopViewOptions& o) {
  std::string out;
  char line[512];
  for (const auto& n : r.nodes) {
    std::snprintf(line, sizeof line, "node %d  score %3u  free 2 MiB blocks %8llu  free 1 GiB blocks %4llu\n", n.node,
                  n.score, static_cast<unsigned long long>(n.free_2m), static_cast<unsigned long long>(n.free_1g));
    out += line;
  }
  const char* cpu = o.interval_s > 0 ? "  %CPU" : "";
  // Rows other than "other" by the sort key, "other" last.
  auto table = [&](const char* title, std::vector<TopRow> rows) {
    TopRow other{"other", {}};
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const TopRow& x) {
                                if (x.name != "other") return false;
                                other = x;
                                return true;
                              }),
               rows.end());
    std::sort(rows.begin(), rows.end(), [&](const TopRow& a, const TopRow& b) { return before(a.count, b.count, o.sort); });
    std::snprintf(line, sizeof line, "\n%-56s %8s %11s%s\n", title, "STALLS", "STALL TIME", cpu);
    out += line;
    size_t shown = 0;
    for (const auto& x : rows) {
      if (shown++ >= o.limit) break;
      std::snprintf(line, sizeof line, "%-56s %8llu %11s%s\n", cut(printable(x.name), 56).c_str(),
                    static_cast<unsigned long long>(x.count.stalls), dur(x.count.stall_ns).c_str(),
                    share(x.count.stall_ns, o.interval_s).c_str());
      out += line;
    }
    std::snprintf(line, sizeof line, "%-56s %8llu %11s%s\n", rows.size() > o.limit ? "other (and rows not shown above: see --limit)" : "other",
                  static_cast<unsigned long long>(other.count.stalls), dur(other.count.stall_ns).c_str(),
                  share(other.count.stall_ns, o.interval_s).c_str());
    out += line;
  };
  table("CGROUP", {r.cgroups.begin(), r.cgroups.end()});

  std::vector<TopConsumer> cons;
  for (const auto& c : r.consumers)
    if (c.count.stalls + c.count.stall_ns > 0) cons.push_back(c);
  std::sort(cons.begin(), cons.end(), [&](const TopConsumer& a, const TopConsumer& b) { return before(a.count, b.count, o.sort); });
  std::snprintf(line, sizeof line, "\n%-12s %5s %8s %11s%s\n", "CONSUMER", "ORDER", "STALLS", "STALL TIME", cpu);
  out += line;
  for (const auto& c : cons) {
    std::snprintf(line, sizeof line, "%-12s %5u %8llu %11s%s\n", printable(c.consumer).c_str(), c.order,
                  static_cast<unsigned long long>(c.count.stalls), dur(c.count.stall_ns).c_str(),
                  share(c.count.stall_ns, o.interval_s).c_str());
    out += line;
  }
  if (cons.empty()) out += "(no stall)\n";

  table(r.symbols ? "CALL SITE" : "CALL SITE (no kernel symbols: fragd lacked CAP_SYSLOG)",
        {r.callsites.begin(), r.callsites.end()});

  if (o.stacks) {
    std::vector<TopStack> st;
    for (const auto& s : r.stacks)
      if (s.count.stalls + s.count.stall_ns > 0) st.push_back(s);
    std::sort(st.begin(), st.end(), [&](const TopStack& a, const TopStack& b) { return before(a.count, b.count, o.sort); });
    out += "\nSTACKS\n";
    size_t shown = 0;
    for (const auto& s : st) {
      if (shown++ >= o.limit) break;
      std::snprintf(line, sizeof line, "%s (%s): %llu stalls, %s\n", printable(s.callsite).c_str(),
                    printable(s.consumer).c_str(), static_cast<unsigned long long>(s.count.stalls),
                    dur(s.count.stall_ns).c_str());
      out += line;
      for (const auto& f : s.frames) out += "    " + printable(f) + "\n";
      if (s.unnamed_frames)
        out += strf("    (%llu frame%s without a kernel symbol)\n", static_cast<unsigned long long>(s.unnamed_frames),
                    s.unnamed_frames == 1 ? "" : "s");
    }
    if (st.empty()) out += "(no stack)\n";
  }
  return out;
}

namespace {

TopCount minus(const TopCount& a, const TopCount* b) {
  if (!b) return a;
  return {a.stalls >= b->stalls ? a.stalls - b->stalls : 0, a.stall_ns >= b->stall_ns ? a.stall_ns - b->stall_ns : 0};
}

}  // namespace

TopReply top_interval(const TopReply& newer, const TopReply& older) {
  TopReply d = newer;
  d.uptime_ns = newer.uptime_ns >= older.uptime_ns ? newer.uptime_ns - older.uptime_ns : newer.uptime_ns;
  auto rows = [](auto& out, const auto& old) {
    std::map<std::string, const TopCount*> by;
    for (const auto& r : old) by[r.name] = &r.count;
    for (auto& r : out) r.count = minus(r.count, by.count(r.name) ? by[r.name] : nullptr);
  };
  rows(d.cgroups, older.cgroups);
  rows(d.callsites, older.callsites);
  std::map<std::pair<unsigned, std::string>, const TopCount*> cons;
  for (const auto& c : older.consumers) cons[{c.order, c.consumer}] = &c.count;
  for (auto& c : d.consumers) {
    auto it = cons.find({c.order, c.consumer});
    c.count = minus(c.count, it == cons.end() ? nullptr : it->second);
  }
  std::map<std::tuple<std::string, std::string, std::vector<std::string>>, const TopCount*> st;
  for (const auto& s : older.stacks) st[{s.consumer, s.callsite, s.frames}] = &s.count;
  for (auto& s : d.stacks) {
    auto it = st.find({s.consumer, s.callsite, s.frames});
    s.count = minus(s.count, it == st.end() ? nullptr : it->second);
  }
  return d;
}

}  // namespace fragd
