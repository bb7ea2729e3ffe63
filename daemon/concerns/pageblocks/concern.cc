// SPDX-License-Identifier: Apache-2.0
#include "concerns/pageblocks/concern.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "base/text.h"
#include "fragd/settings.h"
#include "concerns/memory/score.h"
#include "protocol/preflight.h"
#include "protocol/wire.h"
#include "concerns/pollution/pollution.h"

namespace fragd {

namespace {

// The map answer's scan (the caller sets pollution, or scan_error without a scan).
MapView map_reply(const ScanResult& r, const ScanClock& now) {
  MapView v;
  v.scanned = true;
  v.time_ns = r.wall_time_ns;
  v.age_ns = scan_age_ns(r, now);
  v.duration_ns = r.duration_ns;
  v.pageblock_order = r.pageblock_order;
  v.pages_read = r.pages_read;
  for (const auto& z : r.zones) {
    MapZone m;
    m.node = z.node;
    m.zone = z.zone;
    m.start_pfn = z.start_pfn;
    m.end_pfn = z.end_pfn;
    m.first_block = z.first_block;
    for (const auto& b : z.blocks) {
      m.classes.push_back(b.cls);
      m.used.push_back(b.used);
    }
    for (size_t c = 0; c < kBlockClasses; c++) m.counts[c] = z.counts[c];
    m.free_pages = z.free_pages;
    m.hugepages_free = z.hugepages_free;
    m.hugepages_compaction = z.hugepages_compaction;
    m.hugepages_polluted = z.hugepages_polluted;
    m.compaction_cost_pages = z.compaction_cost_pages;
    if (z.sample_blocks < z.blocks.size()) m.sample = MapZone::Sample{z.sample_blocks, z.compaction_ci, z.polluted_ci};
    v.zones.push_back(std::move(m));
  }
  if (r.map_oldest_boot_ns) v.map_age_ns = now.boot_ns > r.map_oldest_boot_ns ? now.boot_ns - r.map_oldest_boot_ns : 0;
  return v;
}

// "pollution" of the map answer (with_blocks: the worst blocks too) and of the status answer
// (totals and top polluters).
PollutionInfo pollution_info(const PollutionCounters& c, const PollutionSummary& s, bool with_blocks) {
  PollutionInfo p;
  p.tracked_blocks = s.blocks;
  p.tracked_pages = s.pages;
  p.events = c.events;
  p.untracked_events = c.untracked_events();
  // comm is whatever the task set (prctl PR_SET_NAME): any bytes.
  for (const auto& t : s.top) p.top.push_back({utf8_escaped(t.comm), t.cgroup_id, t.blocks, t.pages});
  if (with_blocks) {
    p.blocks.emplace();
    for (const auto& b : s.worst)
      p.blocks->push_back({b.block, static_cast<int>(b.node), b.pages, b.events, b.first_ns, b.last_ns, b.pid,
                           utf8_escaped(b.comm), b.cgroup_id, migratetype_name(b.alloc_mt)});
  }
  return p;
}

// "scan" of the status answer: per zone classes and huge pages.
ScanSummary scan_summary(const ScanResult& r, const ScanClock& now) {
  ScanSummary s;
  s.age_ns = scan_age_ns(r, now);
  s.duration_ns = r.duration_ns;
  s.zones.emplace();
  for (const auto& z : r.zones) {
    ScanZoneSummary zs;
    zs.node = static_cast<uint64_t>(z.node);
    zs.zone = z.zone;
    zs.counts.emplace();
    for (size_t c = 0; c < kBlockClasses; c++) (*zs.counts)[block_class_name(static_cast<BlockClass>(c))] = z.counts[c];
    zs.hugepages = ScanHugepages{z.hugepages_free, z.hugepages_compaction, z.hugepages_polluted, z.compaction_ci.lo,
                                 z.compaction_ci.hi};
    zs.compaction_cost_pages = z.compaction_cost_pages;
    zs.blocks = z.blocks.size();
    zs.sample_blocks = z.sample_blocks;
    s.zones->push_back(std::move(zs));
  }
  s.sampled = r.sampled;
  if (r.map_oldest_boot_ns) s.map_age_ns = now.boot_ns > r.map_oldest_boot_ns ? now.boot_ns - r.map_oldest_boot_ns : 0;
  return s;
}

}  // namespace

PageblocksConcern::PageblocksConcern(Shared& sh, ControlServer& control, PollutionPort ledger,
                                     std::vector<ZoneSpan> spans)
    : sh_(sh), control_(control), ledger_(std::move(ledger)), spans_(std::move(spans)) {
  if (sh_.cfg.scan_pageblocks) iomem_fd_ = ::open((sh_.cfg.proc_root + "/iomem").c_str(), O_RDONLY | O_CLOEXEC);
}

PageblocksConcern::~PageblocksConcern() {
  if (iomem_fd_ >= 0) ::close(iomem_fd_);  // the scanner never took it
}

void PageblocksConcern::start_scanner(const MemSnapshot* mem) {
  if (!sh_.cfg.scan_pageblocks) {
    scan_off_ = "the pageblock scan is off (pageblocks.scan: false in " + sh_.cfg.source + ")";
    return;
  }
  const unsigned order = mem && mem->pageblock_order ? mem->pageblock_order : 9;
  const int fd = iomem_fd_;
  iomem_fd_ = -1;  // the scanner's now, closed by it
  if (auto s = PageblockScanner::start(scan_settings(sh_.cfg, order), fd)) {
    scanner_ = std::move(*s);
  } else {
    scan_off_ = s.error().message;
    log_warn(scan_off_);
  }
}

void PageblocksConcern::tick(const Tick& t) {
  if (ledger_.read_fallback)
    fallback_.tick(sh_.warn, [this](fallback_stats& f, HistWatch&) -> Result<void> {
      auto r = ledger_.read_fallback();
      if (!r) return r.error();
      f = *r;
      return {};
    });
  if (ledger_.enabled) refresh_pollution();
  if (!scanner_) return;
  if (auto change = t.mem ? scan_change_.see(*t.mem, ledger_.pageblock_order) : std::nullopt) {
    log_debug("pageblock scan at the next interval: memory changed since the last (" + *change + ")");
    scanner_->mark_changed();
  }
  for (const auto& m : scanner_->take_messages())
    sh_.warn.once(m.rfind("pageblock scan failed", 0) == 0 ? std::string("scan failed") : m, m);
  const uint64_t ok = scanner_->scans_ok();
  if (ok > scans_ok_seen_) sh_.warn.cleared("scan failed", "pageblock scans work again");
  scans_ok_seen_ = ok;
}

void PageblocksConcern::metrics(const SeriesPlan&, const Tick&, Families& out) {
  std::optional<ScanStats> scan;
  if (scanner_) {
    scan.emplace();
    scan->scan = scanner_->latest();
    scan->ok = scanner_->scans_ok();
    scan->failed = scanner_->scans_failed();
    scan->skipped = scanner_->scans_skipped();
    scan->cost = scanner_->cost();
    scan->now_boot_ns = now_ns(CLOCK_BOOTTIME);
  }
  families(fallback_.get(), pollution_ ? &*pollution_ : nullptr, scan ? &*scan : nullptr, out);
}

void PageblocksConcern::families(const fallback_stats* fallback, const PollutionStats* pollution,
                                 const ScanStats* scan, Families& out) {
  if (fallback) fallback_metrics(*fallback, out);
  if (pollution) pollution_metrics(*pollution, out);
  if (scan) scan_metrics(*scan, out);
}

void PageblocksConcern::status(StatusReply& s, const Tick&) const {
  if (auto p = pollution_ ? read_pollution() : std::nullopt) s.pollution = pollution_info(p->counters, p->summary, false);
  if (auto latest = scanner_ ? scanner_->latest() : nullptr) s.scan = scan_summary(*latest, ScanClock::now());
}

void PageblocksConcern::watch(EventLoop& loop) {
  if (scanner_) loop.watch(scanner_->event_fd(), [this](short) { on_scan_done(); });
}

void PageblocksConcern::refresh_pollution() {
  if (pollution_ && !pollution_released_) {
    auto c = ledger_.read_counters();
    if (c && c->events == pollution_->counters.events) return;  // no fallback since: the blocks are the same
  }
  pollution_ = read_pollution();
  pollution_released_ = false;
}

std::optional<PollutionStats> PageblocksConcern::read_pollution(uint64_t max_blocks) const {
  auto p = ledger_.read();
  if (!p) {
    ledger_read_errors_++;
    sh_.warn.once(p.error().message);
    return std::nullopt;
  }
  PollutionStats ps;
  ps.counters = p->counters;
  ps.counters.released_blocks = released_blocks_;
  ps.counters.released_pages = released_pages_;
  ps.summary = summarize_pollution(p->blocks, spans_, p->pageblock_order, 10, max_blocks);
  return ps;
}

nlohmann::json PageblocksConcern::map_answer(const ScanResult* scan, const std::string& scan_error,
                                             const MapAsk& ask) const {
  MapView v;
  if (scan) v = map_reply(*scan, ScanClock::now());
  else v.scan_error = scan_error;
  if (ask.node && v.scanned) {
    std::set<int> nodes;
    for (const auto& z : v.zones) nodes.insert(z.node);
    if (!nodes.count(*ask.node)) {
      std::string have;
      for (int n : nodes) have += (have.empty() ? "" : ", ") + std::to_string(n);
      return error_answer("map: node " + std::to_string(*ask.node) + " has no zone in the pageblock map (nodes: " +
                          have + "); ask for one of those");
    }
    std::erase_if(v.zones, [&](const MapZone& z) { return z.node != *ask.node; });
  }
  if (pollution_)
    if (auto p = read_pollution(ask.max_blocks)) v.pollution = pollution_info(p->counters, p->summary, true);
  restrict_map(v, ask.reader);
  v.note = ask.note;
  return v;
}

namespace {
constexpr std::array kPageblocksAnswered{Command::Map, Command::Preflight};
}  // namespace
const std::span<const Command> PageblocksConcern::kAnswers{kPageblocksAnswered};

std::optional<nlohmann::json> PageblocksConcern::answer(const ControlRequest& req, Reader reader, uint64_t token,
                                                       const Tick& last) {
  if (req.cmd == Command::Preflight) {
    auto s = supply({req.size_kib.value_or(0), req.order, req.count.value_or(0), req.node.value_or(-1)}, last);
    if (!s) return error_answer(s.error().message);
    return *s;
  }
  const int64_t max_age_ns = req.max_age_ns.value_or(5'000'000'000);
  MapAsk ask{req.max_blocks.value_or(kDefaultMapBlocks), reader, req.node, std::nullopt};
  if (!scanner_) return map_answer(nullptr, scan_off_, ask);
  const ScanClock now = ScanClock::now();
  auto latest = scanner_->latest();
  // Only root may have every block read now. A reader of the socket group is answered from the
  // picture the scanner keeps within its budget (sampled rounds), however often it asks; so is
  // root while the last forced full scan is too recent (full_scan_wait_ns: across all clients).
  const uint64_t wait_ns = reader == Reader::Root ? scanner_->full_scan_wait_ns() : 0;
  const bool may_scan = reader == Reader::Root && wait_ns == 0;
  if (latest && (scan_age_ns(*latest, now) <= static_cast<uint64_t>(max_age_ns) || !may_scan)) {
    if (scan_age_ns(*latest, now) > static_cast<uint64_t>(max_age_ns))
      ask.note = reader == Reader::Root
                     ? "full scans asked for are held to " + strf("%g", scanner_->full_budget() * 100) +
                           "% of a core across all clients (pageblocks.full_scan_budget, a burst of 5): this is "
                           "the scanner's latest map; a full scan is possible again in " +
                           std::to_string((wait_ns + 999'999'999) / 1'000'000'000) + " s"
                     : "the pageblock map as the scanner keeps it (its sampled rounds); only root may ask for a full scan";
    return map_answer(latest.get(), "", ask);
  }
  // A scan takes most of a second: the scanner thread runs it and the answer follows
  // (on_scan_done), so that ticks and other clients never wait for it. Without a map yet, a
  // reader waits for the scanner's first round, which it does not force.
  const uint64_t oldest_ok = may_scan ? now.boot_ns - std::min<uint64_t>(now.boot_ns, static_cast<uint64_t>(max_age_ns)) : 0;
  pending_maps_.add(token, oldest_ok, scanner_->scans_done(), ask);
  if (may_scan) scanner_->request();
  return std::nullopt;
}

Result<Supply> PageblocksConcern::supply(const SupplyAsk& ask, const Tick& last) const {
  SupplyInputs in;
  in.mem = last.mem;
  in.spans = spans_;
  in.page_kib = last.machine().page_kib;
  // The latest scan or sampled round as it is: a preflight never asks for a scan.
  auto latest = scanner_ ? scanner_->latest() : nullptr;
  if (latest) {
    in.scan = latest.get();
    in.scan_age_ns = scan_age_ns(*latest, ScanClock::now());
  } else {
    in.no_scan = scanner_ ? "no pageblock scan has finished yet" : scan_off_;
  }
  return estimate_supply(ask, in);
}

// A block stays in the ledger until a scan that began after its last recorded fallback finds
// no unmovable page in it (concerns/pollution: release_clean_blocks).
void PageblocksConcern::reconcile_pollution(const ScanResult& scan) {
  auto p = ledger_.read();
  if (!p) return;
  const Released rel = release_clean_blocks(p->blocks, scan, ledger_.ledger);
  if (rel.error) sh_.warn.once("release", rel.error->message);
  released_blocks_ += rel.blocks;
  released_pages_ += rel.pages;
  if (rel.blocks) pollution_released_ = true;
}

void PageblocksConcern::on_scan_done() {
  const uint64_t done = scanner_->take_event();
  auto latest = scanner_->latest();
  if (latest && ledger_.enabled && latest->boot_time_ns > reconciled_scan_ns_) {
    reconciled_scan_ns_ = latest->boot_time_ns;
    reconcile_pollution(*latest);
  }
  const std::string error = scanner_->last_error();
  bool again = false;
  for (const auto& d : pending_maps_.scan_ended(done, latest != nullptr, latest ? latest->boot_time_ns : 0, error, again))
    control_.reply(d.token, map_answer(d.with_scan ? latest.get() : nullptr, d.with_scan ? "" : error, d.ask));
  // Those still waiting asked for a full scan (root, allowed when asked) that has not run yet,
  // unless the scanner began it already: it took the request as this scan ended, and asking
  // again would run one more full scan, past the budget, that nobody waits for.
  if (again) scanner_->request(pending_maps_.newest_oldest_ok());
}

}  // namespace fragd
