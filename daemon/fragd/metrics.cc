#include "fragd/metrics.h"

#include <algorithm>
#include <cerrno>
#include <iterator>

#include "sources/memory/score.h"
#include "version.h"

namespace fragd {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Prometheus histograms keep to power-of-two nanosecond bounds, 1.024 us .. 17.2 s
// (25 buckets + Inf); each is the union of whole fine BPF buckets.
constexpr unsigned kCoarseFirstShift = FRAGD_HIST_MIN_SHIFT;
constexpr unsigned kCoarseLastShift = FRAGD_HIST_MAX_SHIFT;

class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, MetricType type) {
    f_.name = std::move(name);
    f_.help = std::move(help);
    f_.type = type;
  }
  ClientMetric& add(std::vector<std::pair<std::string, std::string>> labels) {
    ClientMetric m;
    for (auto& [k, v] : labels) m.label.push_back({k, v});
    f_.metric.push_back(std::move(m));
    return f_.metric.back();
  }
  void counter(std::vector<std::pair<std::string, std::string>> labels, double v) { add(std::move(labels)).counter.value = v; }
  void gauge(std::vector<std::pair<std::string, std::string>> labels, double v) { add(std::move(labels)).gauge.value = v; }
  void histogram(std::vector<std::pair<std::string, std::string>> labels, const LatencyHist& h) {
    auto& m = add(std::move(labels));
    m.histogram.sample_count = h.count;
    m.histogram.sample_sum = h.sum_ns / 1e9;
    uint64_t cum = 0;
    size_t b = 0;
    for (unsigned k = kCoarseFirstShift; k <= kCoarseLastShift; k++) {
      const uint64_t bound = 1ULL << k;
      while (b < h.buckets.size() && fragd_hist_upper(b) <= bound) cum += h.buckets[b++];
      m.histogram.bucket.push_back({cum, bound / 1e9});
    }
    m.histogram.bucket.push_back({h.count, std::numeric_limits<double>::infinity()});
  }
  MetricFamily take() { return std::move(f_); }

 private:
  MetricFamily f_;
};

// Appends finished families to `out`, in order.
template <class... Builders>
void emit(std::vector<MetricFamily>& out, Builders&... b) {
  (out.push_back(b.take()), ...);
}

std::string node_label(int node) { return std::to_string(node); }

}  // namespace

std::vector<MetricFamily> build_families(unsigned min_order, const BpfSnapshot* bpf, const MemSnapshot* mem,
                                         const std::vector<ProgramState>& programs, const SelfStats& self,
                                         const ActStats* act, const ScanStats* scan,
                                         const PollutionStats* pollution) {
  std::vector<MetricFamily> out;

  {
    FamilyBuilder f("fragd_build_info", "fragd's version; always 1.", MetricType::Gauge);
    f.gauge({{"version", FRAGD_VERSION}}, 1);
    emit(out, f);
  }
  {
    FamilyBuilder f("fragd_bpf_program_attached",
                    "1 when the BPF program is attached to its tracepoint, 0 when it is not (its feature is off).",
                    MetricType::Gauge);
    for (const auto& p : programs) f.gauge({{"program", p.name}, {"tracepoint", p.tracepoint}}, p.attached);
    emit(out, f);
  }
  {
    // ebpf_exporter's convention: run counts and time accrue only while BPF run-time stats are on
    // (kernel.bpf_stats_enabled=1, or a BPF_ENABLE_STATS fd held, as `fragctl cost` does).
    FamilyBuilder runs("fragd_bpf_program_runs_total",
                       "Runs of each BPF program counted while the kernel's BPF run-time statistics were on "
                       "(kernel.bpf_stats_enabled, or `fragctl cost`); 0 otherwise.",
                       MetricType::Counter);
    FamilyBuilder secs("fragd_bpf_program_run_seconds_total",
                       "Run time of each BPF program while the kernel's BPF run-time statistics were on.",
                       MetricType::Counter);
    FamilyBuilder miss("fragd_bpf_program_recursion_misses_total",
                       "Runs of each BPF program the kernel skipped because another BPF program was running on "
                       "that CPU (their events are lost).",
                       MetricType::Counter);
    for (const auto& r : self.run_stats) {
      runs.counter({{"program", r.name}}, r.run_cnt);
      secs.counter({{"program", r.name}}, r.run_time_ns / 1e9);
      miss.counter({{"program", r.name}}, r.recursion_misses);
    }
    FamilyBuilder on("fragd_alloc_counting",
                     "1 while fragd counts every high-order allocation (the mm_page_alloc program is attached: "
                     "fragd_alloc_total outcomes fast and failed are exported), 0 while it does not "
                     "(bpf.allocations adaptive and no stall for adaptive_hold, or off); by bpf.allocations mode.",
                     MetricType::Gauge);
    on.gauge({{"mode", self.allocations_mode}}, self.counting);
    FamilyBuilder secs_on("fragd_alloc_counting_seconds_total",
                          "Seconds the mm_page_alloc counting program was attached since fragd started.",
                          MetricType::Counter);
    secs_on.counter({}, self.counting_seconds);
    FamilyBuilder sw("fragd_alloc_counting_switches_total",
                     "Times allocation counting was switched on or off (bpf.allocations: adaptive).",
                     MetricType::Counter);
    for (const char* d : {"on", "off"}) {
      auto it = self.counting_switches.find(d);
      sw.counter({{"to", d}}, it == self.counting_switches.end() ? 0 : it->second);
    }
    emit(out, runs, secs, miss, on, secs_on, sw);
  }

  if (bpf) {
    const auto& a = bpf->alloc;
    FamilyBuilder total("fragd_alloc_total",
                        "High-order page allocations seen at kmem:mm_page_alloc while allocation counting was on, "
                        "by order and outcome: fast (no direct compaction or reclaim), stalled (granted after a "
                        "stall), failed (not granted), at_switch (ended just after counting switched on, in a task "
                        "whose stall began before). fast and failed are absent while counting is off (see "
                        "fragd_alloc_counting): bpf.allocations adaptive switches it on at every stall, so stalled "
                        "allocations are counted but fast ones and failures without a stall are not; with "
                        "bpf.allocations off the family is absent.",
                        MetricType::Counter);
    FamilyBuilder stall("fragd_alloc_stall_seconds",
                        "Time from an allocation's first direct compaction or reclaim event to its completion "
                        "(a lower bound of its latency), by order and result; allocations that ended while "
                        "allocation counting was on (bpf.allocations adaptive: every stall after the one that "
                        "switched counting on; absent with bpf.allocations off).",
                        MetricType::Histogram);
    FamilyBuilder entries("fragd_direct_stall_entries_total",
                          "Entries of allocating tasks into direct compaction (mm_compaction_try_to_compact_pages; "
                          "the kernel's compact_stall, by order) and direct reclaim (mm_vmscan_direct_reclaim_begin).",
                          MetricType::Counter);
    FamilyBuilder phase("fragd_alloc_stall_phase_seconds_total",
                        "Time allocating tasks spent in direct compaction (mm_compaction_try_to_compact_pages to "
                        "the end of its last zone run) and in direct reclaim (begin to end), by the allocation's "
                        "order; exact in every bpf.allocations mode.",
                        MetricType::Counter);
    const bool timed = self.allocations_mode != "off" || self.counting;
    for (unsigned o = min_order; o < FRAGD_NR_ORDERS; o++) {
      const std::string ol = std::to_string(o);
      // Stalls switch counting on, so stalled allocations and their times are counted
      // whenever counting can be on; fast ones and failures without a stall only while it is.
      if (timed) {
        for (unsigned k = 0; k < FRAGD_NR_OUTCOMES; k++)
          if (self.counting || k == FRAGD_OUTCOME_STALLED)
            total.counter({{"order", ol}, {"outcome", outcome_name(k)}}, a.allocs[o][k]);
        total.counter({{"order", ol}, {"outcome", "at_switch"}}, a.allocs_at_switch[o]);
        for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++)
          stall.histogram({{"order", ol}, {"result", result_name(r)}}, bpf->stall[o][r]);
      }
      for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) {
        phase.counter({{"order", ol}, {"phase", phase_name(p)}}, a.phase_ns[o][p] / 1e9);
        entries.counter({{"order", ol}, {"phase", phase_name(p)}}, a.direct_entries[o][p]);
      }
    }
    if (timed) emit(out, total, stall);
    emit(out, phase, entries);

    const auto& c = bpf->compaction;
    FamilyBuilder runs("fragd_compaction_runs_total",
                       "Zone compaction runs (mm_compaction_begin/end) by who ran them and how they ended.",
                       MetricType::Counter);
    FamilyBuilder dur("fragd_compaction_duration_seconds", "Duration of zone compaction runs, by trigger.",
                      MetricType::Histogram);
    FamilyBuilder mig("fragd_compaction_pages_migrated_total", "Pages moved by compaction, by trigger.",
                      MetricType::Counter);
    FamilyBuilder fail("fragd_compaction_pages_failed_total", "Pages compaction failed to move, by trigger.",
                       MetricType::Counter);
    for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) {
      for (unsigned s = 0; s < FRAGD_NR_CSTATUS; s++)
        runs.counter({{"trigger", trigger_name(t)}, {"status", cstatus_name(s)}}, c.runs[t][s]);
      dur.histogram({{"trigger", trigger_name(t)}}, bpf->compaction_hist[t]);
      mig.counter({{"trigger", trigger_name(t)}}, c.pages_migrated[t]);
      fail.counter({{"trigger", trigger_name(t)}}, c.pages_failed[t]);
    }
    emit(out, runs, dur, mig, fail);

    FamilyBuilder fb("fragd_fallback_total",
                     "Allocations that took pages from another migratetype's free list (mm_page_alloc_extfrag); "
                     "claimed=\"false\" from a movable block by an unmovable/reclaimable request leaves a hybrid "
                     "pageblock.",
                     MetricType::Counter);
    for (unsigned i = 0; i < FRAGD_NR_MT; i++)
      for (unsigned j = 0; j < FRAGD_NR_MT; j++)
        for (unsigned cl = 0; cl < 2; cl++) {
          const uint64_t v = bpf->fallback.fallbacks[i][j][cl];
          if (v == 0 && (i == j || i == FRAGD_MT_OTHER || j == FRAGD_MT_OTHER || i >= FRAGD_MT_HIGHATOMIC ||
                         j >= FRAGD_MT_HIGHATOMIC))
            continue;  // impossible or exotic pairs appear only once seen
          fb.counter({{"alloc_migratetype", migratetype_name(i)},
                      {"fallback_migratetype", migratetype_name(j)},
                      {"claimed", cl ? "true" : "false"}},
                     v);
        }
    emit(out, fb);

    FamilyBuilder dropped("fragd_events_dropped_total",
                          "Slow-stall events lost because the BPF ring buffer was full.", MetricType::Counter);
    dropped.counter({}, a.events_dropped);
    emit(out, dropped);
    FamilyBuilder unmatched("fragd_compaction_events_unmatched_total",
                            "Compaction end or migration events with no run start seen (runs already under way "
                            "when fragd attached).",
                            MetricType::Counter);
    unmatched.counter({}, c.runs_unmatched);
    emit(out, unmatched);
  }

  if (mem) {
    FamilyBuilder zs("fragd_fragmentation_score",
                     "The kernel's fragmentation score of a zone (extfrag_for_order at order 9): percent of free "
                     "memory not in free blocks of 2 MiB or more. 0 = unfragmented, 100 = no free 2 MiB block.",
                     MetricType::Gauge);
    FamilyBuilder fbk("fragd_free_blocks", "Free blocks of each order (/proc/buddyinfo).", MetricType::Gauge);
    FamilyBuilder ufi("fragd_unusable_free_index",
                      "The kernel's unusable free space index: fraction of free memory unusable for an "
                      "allocation of this order.",
                      MetricType::Gauge);
    FamilyBuilder pb("fragd_pageblocks", "Pageblocks of each migratetype (/proc/pagetypeinfo).", MetricType::Gauge);
    FamilyBuilder fp("fragd_zone_free_pages", "Free pages in the zone (from /proc/buddyinfo).", MetricType::Gauge);
    for (const auto& z : mem->zones) {
      if (z.present_pages == 0) continue;  // empty zones (Movable, Device) carry nothing
      const std::string n = node_label(z.node);
      zs.gauge({{"node", n}, {"zone", z.zone}}, zone_score(z));
      const auto ui = unusable_index(z);
      for (size_t o = 0; o < z.free_blocks.size(); o++) {
        fbk.gauge({{"node", n}, {"zone", z.zone}, {"order", std::to_string(o)}}, z.free_blocks[o]);
        if (o < ui.size()) ufi.gauge({{"node", n}, {"zone", z.zone}, {"order", std::to_string(o)}}, ui[o]);
      }
      fp.gauge({{"node", n}, {"zone", z.zone}}, buddy_free_pages(z));
      for (const auto& [mt, count] : z.pageblocks)
        pb.gauge({{"node", n}, {"zone", z.zone}, {"migratetype", mt}}, count);
    }
    emit(out, zs, fbk, ufi, pb, fp);

    FamilyBuilder ns("fragd_node_fragmentation_score",
                     "The kernel's node fragmentation score (what proactive compaction compares with its "
                     "thresholds): zone scores weighted by present pages.",
                     MetricType::Gauge);
    for (const auto& s : node_scores(mem->zones)) ns.gauge({{"node", node_label(s.node)}}, s.score);
    emit(out, ns);

    FamilyBuilder hp("fragd_hugepages", "Hugetlb pool pages per node and size (sysfs).", MetricType::Gauge);
    for (const auto& p : mem->hugepages) {
      const std::string size = std::to_string(p.size_kib) + "kB";
      hp.gauge({{"node", node_label(p.node)}, {"size", size}, {"state", "total"}}, p.total);
      hp.gauge({{"node", node_label(p.node)}, {"size", size}, {"state", "free"}}, p.free);
    }
    if (act)
      for (const auto& p : act->pools)
        hp.gauge({{"node", p.node < 0 ? "all" : node_label(p.node)},
                  {"size", std::to_string(p.size_kib) + "kB"},
                  {"state", "target"}},
                 p.target);
    emit(out, hp);
  }

  if (act) {
    FamilyBuilder info("fragd_policy_info",
                       "The running policy: mode (observe|act), dry_run and compaction method; always 1.",
                       MetricType::Gauge);
    info.gauge({{"mode", act->mode}, {"dry_run", act->dry_run ? "true" : "false"}, {"method", act->method}}, 1);
    FamilyBuilder rel("fragd_policy_reloads_total",
                      "Policy reloads (SIGHUP, fragctl reload) by result; a failed one keeps the running policy.",
                      MetricType::Counter);
    rel.counter({{"result", "ok"}}, act->reloads_ok);
    rel.counter({{"result", "error"}}, act->reloads_failed);
    FamilyBuilder acts("fragd_actions_total",
                       "Actions fragd ran (or, with dry_run, decided) by action, node (-1: global) and result.",
                       MetricType::Counter);
    for (const auto& [k, v] : act->actions)
      acts.counter({{"action", std::get<0>(k)}, {"node", node_label(std::get<1>(k))}, {"result", std::get<2>(k)}}, v);
    FamilyBuilder dur("fragd_action_duration_seconds", "Wall time of fragd's actions, by action.",
                      MetricType::Histogram);
    for (const auto& [a, h] : act->durations) dur.histogram({{"action", a}}, h);
    FamilyBuilder mig("fragd_action_pages_migrated_total",
                      "Pages migrated by compaction during fragd's actions (compaction trigger \"fragd\").",
                      MetricType::Counter);
    for (const auto& [a, v] : act->pages_migrated) mig.counter({{"action", a}}, v);
    FamilyBuilder sc("fragd_action_score",
                     "The node's fragmentation score before and after fragd's last compaction of it.",
                     MetricType::Gauge);
    for (const auto& [n, ba] : act->last_score) {
      if (ba.first >= 0) sc.gauge({{"node", node_label(n)}, {"when", "before"}}, ba.first);
      if (ba.second >= 0) sc.gauge({{"node", node_label(n)}, {"when", "after"}}, ba.second);
    }
    FamilyBuilder hot("fragd_policy_node_hot",
                      "1 while the node's score trigger holds (above high, not yet below low).", MetricType::Gauge);
    FamilyBuilder miss("fragd_policy_backoff_misses",
                       "Compactions in a row that did not help the node; the wait before the next doubles with each.",
                       MetricType::Gauge);
    for (const auto& n : act->nodes) {
      hot.gauge({{"node", node_label(n.node)}}, n.hot);
      miss.gauge({{"node", node_label(n.node)}}, n.misses);
    }
    FamilyBuilder bud("fragd_compaction_budget_seconds",
                      "Compaction time caused by fragd in the last 60 s (used) and the policy's cpu_budget (limit).",
                      MetricType::Gauge);
    bud.gauge({{"kind", "used"}}, act->budget_used_ns / 1e9);
    bud.gauge({{"kind", "limit"}}, act->budget_ns / 1e9);
    FamilyBuilder raised("fragd_proactiveness_raised",
                         "1 while fragd holds vm.compaction_proactiveness raised (method proactiveness).",
                         MetricType::Gauge);
    raised.gauge({}, act->proactiveness_raised);
    emit(out, info, rel, acts, dur, mig, sc, hot, miss, bud, raised);
  }

  if (scan) {
    FamilyBuilder runs("fragd_scans_total",
                       "Pageblock scans of /proc/kpageflags, by result; result=\"unchanged\" counts the intervals "
                       "that found free memory and pageblock types unchanged and did not scan "
                       "(pageblocks.max_age bounds how old a scan gets).",
                       MetricType::Counter);
    runs.counter({{"result", "ok"}}, scan->ok);
    runs.counter({{"result", "error"}}, scan->failed);
    runs.counter({{"result", "unchanged"}}, scan->skipped);
    emit(out, runs);
  }
  if (scan && scan->scan) {
    const ScanResult& r = *scan->scan;
    FamilyBuilder cls("fragd_pageblock_class",
                      "Pageblocks by what their pages hold (/proc/kpageflags): free (every page free), movable "
                      "(in use, movable pages only), hybrid (movable pages polluted by unmovable ones: never a huge "
                      "page until those are freed), unmovable (mostly kernel pages), huge (a hugetlb page or THP), "
                      "offline (holes, offline memory).",
                      MetricType::Gauge);
    FamilyBuilder obt("fragd_hugepages_obtainable",
                      "Huge pages (one per pageblock) obtainable in the zone: how=\"free\" free blocks now, "
                      "how=\"compaction\" further ones a full compaction could make (movable blocks, bounded by the "
                      "free pages above the zone's reserve). Their sum is what compaction and then a pool write "
                      "would get.",
                      MetricType::Gauge);
    FamilyBuilder pol("fragd_hugepages_polluted",
                      "Huge pages lost to pollution: hybrid pageblocks, which compaction cannot free while their "
                      "unmovable pages live.",
                      MetricType::Gauge);
    FamilyBuilder cost("fragd_compaction_cost_pages",
                       "Pages compaction would have to migrate to make the how=\"compaction\" huge pages: the "
                       "movable pages of that many least-occupied movable blocks (a lower bound).",
                       MetricType::Gauge);
    for (const auto& z : r.zones) {
      const std::string n = node_label(z.node);
      for (size_t c = 0; c < kBlockClasses; c++)
        cls.gauge({{"node", n}, {"zone", z.zone}, {"class", block_class_name(static_cast<BlockClass>(c))}},
                  z.counts[c]);
      obt.gauge({{"node", n}, {"zone", z.zone}, {"how", "free"}}, z.hugepages_free);
      obt.gauge({{"node", n}, {"zone", z.zone}, {"how", "compaction"}}, z.hugepages_compaction);
      pol.gauge({{"node", n}, {"zone", z.zone}}, z.hugepages_polluted);
      cost.gauge({{"node", n}, {"zone", z.zone}}, z.compaction_cost_pages);
    }
    emit(out, cls, obt, pol, cost);
    FamilyBuilder dur("fragd_scan_duration_seconds", "Wall time of the last pageblock scan.", MetricType::Gauge);
    dur.gauge({}, r.duration_ns / 1e9);
    FamilyBuilder ts("fragd_scan_timestamp_seconds", "Unix time the last pageblock scan began.", MetricType::Gauge);
    ts.gauge({}, r.wall_time_ns / 1e9);
    emit(out, dur, ts);
  }

  if (pollution) {
    FamilyBuilder blocks("fragd_polluted_pageblocks",
                         "Movable pageblocks holding pages of unmovable or reclaimable allocations that fell back "
                         "into them without claiming them: fragd's ledger, recorded from kmem:mm_page_alloc_extfrag and "
                         "released when the pageblock scan finds no unmovable page left in the block (never "
                         "released while pageblocks.scan is false).",
                         MetricType::Gauge);
    FamilyBuilder pages("fragd_polluted_pages",
                        "Pages handed out by the recorded polluting fallbacks into the blocks of "
                        "fragd_polluted_pageblocks since each was last found clean.",
                        MetricType::Gauge);
    for (const auto& n : pollution->summary.nodes) {
      blocks.gauge({{"node", node_label(n.node)}}, n.blocks);
      pages.gauge({{"node", node_label(n.node)}}, n.pages);
    }
    emit(out, blocks, pages);
    const PollutionCounters& c = pollution->counters;
    FamilyBuilder ev("fragd_pollution_events_total",
                     "Polluting fallbacks: an unmovable or reclaimable allocation served from a movable pageblock "
                     "that kept its type.",
                     MetricType::Counter);
    ev.counter({}, c.events);
    FamilyBuilder un("fragd_pollution_untracked_total",
                     "Polluting fallbacks not recorded: reason=\"map_full\" (the ledger holds one record per "
                     "pageblock of RAM, 262144 at most), reason=\"range\" (larger than a pageblock).",
                     MetricType::Counter);
    un.counter({{"reason", "map_full"}}, c.untracked_full);
    un.counter({{"reason", "range"}}, c.untracked_range);
    FamilyBuilder rel("fragd_pollution_released_pages_total",
                      "Pages of ledger records released because a pageblock scan found their block clean.",
                      MetricType::Counter);
    rel.counter({}, c.released_pages);
    FamilyBuilder relb("fragd_pollution_released_pageblocks_total",
                       "Ledger records released because a pageblock scan found no unmovable page in their block.",
                       MetricType::Counter);
    relb.counter({}, c.released_blocks);
    emit(out, ev, un, rel, relb);
  }

  {
    FamilyBuilder e("fragd_collect_errors_total",
                    "Failed reads of a source: the BPF maps, or one /proc or sysfs source (buddyinfo, zoneinfo, "
                    "pagetypeinfo, vmstat, meminfo, hugepages, nodes). A failing source is read again at a "
                    "doubling interval up to 60 s.",
                    MetricType::Counter);
    e.counter({{"source", "bpf"}}, self.collect_errors_bpf);
    for (const char* s : kSnapshotSources) {
      auto it = self.collect_errors_files.find(s);
      e.counter({{"source", s}}, it == self.collect_errors_files.end() ? 0 : it->second);
    }
    for (const auto& [source, n] : self.collect_errors_files)
      if (std::find(std::begin(kSnapshotSources), std::end(kSnapshotSources), source) == std::end(kSnapshotSources))
        e.counter({{"source", source}}, n);
    emit(out, e);
    FamilyBuilder we("fragd_kernel_write_errors_total",
                     "Writes to a kernel file the kernel refused, by file (the allow-listed path, <N> a node, <S> "
                     "a page size in kB) and errno name. The action fails and fragd backs off.",
                     MetricType::Counter);
    for (const auto& [key, n] : self.kernel_write_errors)
      we.counter({{"file", key.first}, {"error", key.second}}, n);
    emit(out, we);
    FamilyBuilder t("fragd_slow_stall_events_total",
                    "Slow-stall events read from the ring buffer (stalls above bpf.slow_stall_threshold).",
                    MetricType::Counter);
    t.counter({}, self.trace_events);
    emit(out, t);
    FamilyBuilder u("fragd_trace_events_unsent_total",
                    "Slow-stall events not delivered to a `fragctl trace` client that did not keep up.",
                    MetricType::Counter);
    u.counter({}, self.trace_events_unsent);
    emit(out, u);
    FamilyBuilder d("fragd_collector_tick_seconds", "Duration of the last collector tick.", MetricType::Gauge);
    d.gauge({}, self.last_tick_seconds);
    emit(out, d);
    FamilyBuilder late("fragd_collector_tick_late_max_seconds",
                       "Largest delay between a collector tick's due time and its start since fragd started.",
                       MetricType::Gauge);
    late.gauge({}, self.tick_late_max_seconds);
    emit(out, late);
    FamilyBuilder missed("fragd_collector_ticks_missed_total",
                         "Collector ticks skipped because the main loop was busy for a whole tick or longer.",
                         MetricType::Counter);
    missed.counter({}, static_cast<double>(self.ticks_missed));
    emit(out, missed);
  }
  return out;
}

}  // namespace fragd
