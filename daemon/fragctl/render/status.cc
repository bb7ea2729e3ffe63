// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/status.h"

#include <algorithm>
#include <ctime>

#include <nlohmann/json.hpp>

#include "base/format.h"
#include "base/text.h"
#include "fragctl/render/actions.h"
#include "fragd_common.h"
#include "protocol/wire.h"

namespace fragd {
namespace {

std::string u64_or_dash(std::optional<uint64_t> v) { return v ? std::to_string(*v) : std::string("-"); }
std::string yes_no(std::optional<bool> v) { return v ? (*v ? "yes" : "no") : "-"; }
std::string seconds_text(uint64_t ns) { return strf("%.2f s", static_cast<double>(ns) / 1e9); }
std::string seconds_or_dash(std::optional<uint64_t> ns) { return ns ? seconds_text(*ns) : std::string("-"); }
// A string from fragd, printable; "-" when absent or empty.
std::string text_or_dash(const std::optional<std::string>& s) {
  std::string t = printable(s.value_or("-"));
  return t.empty() ? "-" : t;
}

const char* const kMigratetypes[] = {"Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "Isolate"};

std::string format_pageblocks(const std::map<std::string, uint64_t>& pb) {
  std::string out;
  auto add = [&](const std::string& name, uint64_t v) {
    if (!out.empty()) out += "  ";
    out += name + " " + std::to_string(v);
  };
  for (const char* mt : kMigratetypes)
    if (auto it = pb.find(mt); it != pb.end()) add(mt, it->second);
  for (const auto& [name, v] : pb)
    if (std::find(std::begin(kMigratetypes), std::end(kMigratetypes), name) == std::end(kMigratetypes)) add(name, v);
  return out;
}

void format_node(const NodeStatus& node, uint64_t page_kib, std::string& out) {
  const std::string where = "node " + u64_or_dash(node.node);
  out += where + ": score " + u64_or_dash(node.score);
  if (node.present_pages)
    out += strf(", %llu pages present (%.1f GiB)", static_cast<unsigned long long>(*node.present_pages),
                static_cast<double>(*node.present_pages) * static_cast<double>(page_kib) / (1024.0 * 1024.0));
  if (node.unreclaimable.value_or(false)) out += ", kswapd gave up (node_unreclaimable)";
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
  if (node.zones) {
    for (const auto& z : *node.zones) {
      Row r;
      r.name = printable(z.zone.value_or("-"));
      r.score = u64_or_dash(z.score);
      r.free = u64_or_dash(z.free_pages);
      r.unusable = z.unusable_index && z.unusable_index->size() > 9 ? strf("%.2f", (*z.unusable_index)[9]) : "-";
      for (int o = 0; o < FRAGD_NR_ORDERS; ++o) {
        std::string v = "-";
        if (z.free_blocks && static_cast<size_t>(o) < z.free_blocks->size())
          v = std::to_string((*z.free_blocks)[static_cast<size_t>(o)]);
        width[o] = std::max(width[o], v.size());
        r.blocks.push_back(std::move(v));
      }
      if (z.pageblocks) r.pageblocks = format_pageblocks(*z.pageblocks);
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

  if (node.hugepages) {
    std::string line;
    for (const auto& p : *node.hugepages) {
      if (!line.empty()) line += ",  ";
      line += (p.size_kib ? format_size_kib(*p.size_kib) : std::string("?")) + ": " + u64_or_dash(p.free) +
              " free of " + u64_or_dash(p.total);
    }
    if (!line.empty()) out += "  hugepages " + line + "\n";
  }
}

// The last pageblock scan and the pollution fragd tracks (both may be null).
void format_mobility(const StatusReply& a, uint64_t page_kib, std::string& out) {
  if (a.scan) {
    const ScanSummary& scan = *a.scan;
    out += "\npageblocks (scan " + (scan.age_ns ? format_duration(*scan.age_ns, DurationStyle::Age) : std::string("-")) +
           " ago, took " + (scan.duration_ns ? format_duration(static_cast<double>(*scan.duration_ns)) : std::string("-")) +
           (scan.sampled.value_or(false) ? "; estimated from a sample of blocks, 95% intervals in brackets" : "") +
           "; fragctl map shows them):\n";
    out += strf("  %-4s %-8s %7s %7s %7s %9s %5s %7s  %s\n", "node", "zone", "free", "movable", "hybrid",
                "unmovable", "huge", "offline", "huge pages: free / +compaction (pages to migrate) / polluted");
    if (scan.zones)
      for (const auto& z : *scan.zones) {
        auto cnt = [&](const char* k) -> std::string {
          if (!z.counts) return "-";
          auto it = z.counts->find(k);
          return it == z.counts->end() ? std::string("-") : std::to_string(it->second);
        };
        const auto& cost = z.compaction_cost_pages;
        const ScanHugepages h = z.hugepages.value_or(ScanHugepages{});
        std::string comp = u64_or_dash(h.compaction);
        if (z.blocks && z.sample_blocks && *z.sample_blocks < *z.blocks && h.compaction_lower && h.compaction_upper)
          comp += strf(" [%llu-%llu, %llu of %llu blocks read]", static_cast<unsigned long long>(*h.compaction_lower),
                       static_cast<unsigned long long>(*h.compaction_upper),
                       static_cast<unsigned long long>(*z.sample_blocks), static_cast<unsigned long long>(*z.blocks));
        out += strf("  %-4s %-8s %7s %7s %7s %9s %5s %7s  %s / +%s (%s, %s) / %s\n", u64_or_dash(z.node).c_str(),
                    printable(z.zone.value_or("?")).c_str(), cnt("free").c_str(), cnt("movable").c_str(),
                    cnt("hybrid").c_str(), cnt("unmovable").c_str(), cnt("huge").c_str(), cnt("offline").c_str(),
                    u64_or_dash(h.free).c_str(), comp.c_str(),
                    u64_or_dash(cost).c_str(), cost ? format_size_kib(*cost * page_kib).c_str() : "-",
                    u64_or_dash(h.polluted).c_str());
      }
  }
  if (a.pollution) {
    const PollutionInfo& p = *a.pollution;
    out += "\npollution: " + std::to_string(p.tracked_blocks) + " movable pageblocks hold " +
           std::to_string(p.tracked_pages) + " unmovable pages (" + u64_or_dash(p.events) +
           " polluting fallbacks seen, " + std::to_string(p.untracked_events) + " not recorded)\n";
    if (!p.top.empty()) {
      out += strf("  %-16s %12s %8s %8s\n", "top polluters", "cgroup_id", "blocks", "pages");
      for (const auto& t : p.top)
        out += strf("  %-16s %12llu %8llu %8llu\n", printable(t.comm).c_str(),
                    static_cast<unsigned long long>(t.cgroup_id), static_cast<unsigned long long>(t.blocks),
                    static_cast<unsigned long long>(t.pages));
    }
  }
}

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

void format_policy(const StatusReply& a, bool utc_times, std::string& out) {
  if (a.policy) {
    const PolicyStatus& p = *a.policy;
    out += "\npolicy: mode " + printable(p.mode.value_or("-")) + ", dry_run " + yes_no(p.dry_run) + ", method " +
           printable(p.method.value_or("-")) + ", from " + text_or_dash(p.source) + "\n";
    out += "  reloads " + u64_or_dash(p.reloads) + " (" + u64_or_dash(p.reload_errors) +
           " failed), compaction budget used " + seconds_or_dash(p.budget_used_ns) + " of " +
           seconds_or_dash(p.budget_ns) + " per minute, proactiveness raised " + yes_no(p.proactiveness_raised) + "\n";
    if (p.budget_cuts && *p.budget_cuts > 0)
      out += "  actions cut short at their deadline: " + u64_or_dash(p.budget_cuts) + "\n";
  }

  if (a.policy_nodes) {
    out += strf("  %-4s %5s %-3s %5s %6s  %-12s %s\n", "node", "score", "hot", "floor", "misses", "waiting",
                "next action in");
    for (const auto& n : *a.policy_nodes) {
      const auto& next = n.next_allowed_in_ns;
      out += strf("  %-4s %5s %-3s %5s %6s  %-12s %s\n", n.node ? std::to_string(*n.node).c_str() : "-",
                  u64_or_dash(n.score).c_str(), yes_no(n.hot).c_str(), u64_or_dash(n.floor).c_str(),
                  u64_or_dash(n.misses).c_str(), text_or_dash(n.waiting).c_str(),
                  next && *next > 0 ? seconds_text(*next).c_str() : "-");
    }
  }

  if (a.pools) {
    if (a.pools->empty()) {
      out += "  hugepage pool targets: none\n";
    } else {
      out += "  hugepage pool targets:\n";
      out += strf("    %-7s %-5s %8s %8s  %-8s %s\n", "size", "node", "target", "reached", "set by", "last result");
      for (const auto& p : *a.pools) {
        const std::string manual = yes_no(p.manual);
        out += strf("    %-7s %-5s %8s %8s  %-8s %s\n", p.size_kib ? format_size_kib(*p.size_kib).c_str() : "?",
                    p.node ? node_text(*p.node).c_str() : "-", u64_or_dash(p.target).c_str(),
                    u64_or_dash(p.reached).c_str(), manual == "yes" ? "fragctl" : manual == "no" ? "policy" : "-",
                    text_or_dash(p.last_result).c_str());
      }
    }
  }

  if (a.leases && !a.leases->empty()) {
    out += "  leases (fragctl ensure):\n";
    out += strf("    %-5s %-24s %-7s %-5s %7s  %s\n", "id", "for", "size", "node", "pages", "state");
    for (const auto& l : *a.leases) {
      std::string state = l.state;
      if (l.state == "held") state += ", " + format_duration(static_cast<double>(l.expires_in_ns), DurationStyle::Age) + " left";
      if (!l.end.empty()) state += ": " + printable(l.end);
      out += strf("    %-5llu %-24s %-7s %-5s %7llu  %s\n", static_cast<unsigned long long>(l.id),
                  printable(l.consumer).c_str(), format_size_kib(l.size_kib).c_str(),
                  l.node ? std::to_string(*l.node).c_str() : "all", static_cast<unsigned long long>(l.count),
                  state.c_str());
    }
  }

  if (a.action_running) {
    if (!*a.action_running) {
      out += "  running: none\n";
    } else {
      const ActionSummary& s = **a.action_running;
      out += "  running: #" + u64_or_dash(s.id) + " " + action_subject(s.action, s.node, s.size_kib);
      if (!s.trigger.empty() || !s.reason.empty()) {
        out += " (" + printable(s.trigger);
        if (!s.trigger.empty() && !s.reason.empty()) out += ": ";
        out += printable(s.reason) + ")";
      }
      out += "\n";
    }
  }

  if (a.actions) {
    const size_t n = a.actions->size();
    if (n == 0) {
      out += "  last actions: none\n";
    } else {
      const size_t first = n > kStatusActionsShown ? n - kStatusActionsShown : 0;
      if (first > 0)
        out += strf("  last %zu of %zu actions (newest last):\n", n - first, n);
      else
        out += "  last actions (newest last):\n";
      for (size_t i = first; i < n; ++i) {
        const ActionReport& o = (*a.actions)[i];
        out += strf("    %-8s #%llu ", clock_text(o.start_unix_ns, utc_times).c_str(),
                    static_cast<unsigned long long>(o.id)) +
               format_outcome(o) + "\n";
      }
    }
  }
}

}  // namespace

std::string format_status(const StatusReply& a, uint64_t page_kib, bool utc_times) {
  std::string out = "fragd " + printable(a.version.value_or("-")) + ", pid " + u64_or_dash(a.pid);
  if (a.tick_ns) out += ", sampling every " + format_duration(static_cast<double>(*a.tick_ns));
  out += "\n";

  for (const auto& n : a.nodes) {
    out += "\n";
    format_node(n, page_kib, out);
  }
  if (a.vm) {
    // defrag_mode: a setting of Linux 6.15 and later; fragd reads both, never changes defrag_mode.
    out += "\nvm.compaction_proactiveness " + u64_or_dash(a.vm->compaction_proactiveness) + ", vm.defrag_mode " +
           (a.vm->defrag_mode ? std::to_string(*a.vm->defrag_mode) : std::string("- (none before Linux 6.15)")) +
           "\n";
  }

  if (a.allocations) {
    const AllocationCounting& al = *a.allocations;
    const std::string mode = printable(al.mode.value_or("?"));
    const bool on = al.counting.value_or(false);
    out += "\nallocation counting (bpf.allocations " + mode + "): " + (on ? "on" : "off");
    if (al.counting_seconds) out += strf(", on for %.0f s in all", *al.counting_seconds);
    if (!on && mode == "adaptive") out += " (switches on at the next stall)";
    if (!on) out += "; fast and failed allocations are not counted meanwhile";
    out += "\n";
  }

  if (a.programs) {
    out += "\nprograms attached:\n";
    for (const auto& p : *a.programs)
      out += strf("  %-32s %s\n", printable(p.name.value_or("?")).c_str(), yes_no(p.attached).c_str());
  }

  out += "\nevents dropped: " + u64_or_dash(a.events_dropped) + "\n";

  if (a.compaction) {
    out += "\ncompaction runs by trigger:\n";
    out += strf("  %-10s %10s %15s %13s\n", "trigger", "runs", "pages_migrated", "pages_failed");
    for (const auto& c : *a.compaction)
      out += strf("  %-10s %10s %15s %13s\n", printable(c.trigger.value_or("?")).c_str(), u64_or_dash(c.runs).c_str(),
                  u64_or_dash(c.pages_migrated).c_str(), u64_or_dash(c.pages_failed).c_str());
  }
  format_mobility(a, page_kib, out);
  format_policy(a, utc_times, out);
  if (a.withheld) out += "\nwithheld by fragd (this user is not root): " + printable(*a.withheld) + "\n";
  return out;
}

Result<std::string> format_status(const nlohmann::json& answer, uint64_t page_kib, bool utc_times) {
  auto s = read_answer<StatusReply>(answer, "status");
  if (!s) return s.error();
  return format_status(*s, page_kib, utc_times);
}

nlohmann::json status_output_json(const nlohmann::json& answer) { return answer; }

}  // namespace fragd
