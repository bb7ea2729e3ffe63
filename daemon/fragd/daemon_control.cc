// SPDX-License-Identifier: Apache-2.0
#include "fragd/daemon.h"

#include "base/text.h"
#include "fragd/views.h"
#include "protocol/wire.h"
#include "sources/memory/score.h"
#include "sources/pollution/pollution.h"
#include "version.h"

namespace fragd {

void Daemon::refresh_pollution() {
  if (pollution_ && !pollution_released_) {
    auto c = reader_->read_pollution_counters();
    if (c && c->events == pollution_->counters.events) return;  // no fallback since: the blocks are the same
  }
  pollution_ = read_pollution();
  pollution_released_ = false;
}

std::optional<PollutionStats> Daemon::read_pollution(uint64_t max_blocks) {
  auto p = reader_->read_pollution();
  if (!p) {
    self_.collect_errors_bpf++;
    warn_once(p.error().message);
    return std::nullopt;
  }
  PollutionStats ps;
  ps.counters = p->counters;
  ps.counters.released_blocks = released_blocks_;
  ps.counters.released_pages = released_pages_;
  ps.summary = summarize_pollution(p->blocks, spans_, p->pageblock_order, 10, max_blocks);
  return ps;
}

nlohmann::json Daemon::map_answer(const ScanResult* scan, const std::string& scan_error, uint64_t max_blocks,
                                  Reader reader) {
  MapView v;
  if (scan) v = map_reply(*scan, ScanClock::now());
  else v.scan_error = scan_error;
  if (pollution_)
    if (auto p = read_pollution(max_blocks)) v.pollution = pollution_info(p->counters, p->summary, true);
  restrict_map(v, reader);
  return v;
}

std::optional<nlohmann::json> Daemon::map_request(int64_t max_age_ns, uint64_t max_blocks, uint64_t token,
                                                  Reader reader) {
  if (!scanner_) return map_answer(nullptr, scan_off_, max_blocks, reader);
  const ScanClock now = ScanClock::now();
  auto latest = scanner_->latest();
  if (latest && scan_age_ns(*latest, now) <= static_cast<uint64_t>(max_age_ns))
    return map_answer(latest.get(), "", max_blocks, reader);
  // A scan takes most of a second: the scanner thread runs it and the answer follows
  // (on_scan_done), so that ticks and other clients never wait for it.
  pending_maps_.add(token, now.boot_ns - std::min<uint64_t>(now.boot_ns, static_cast<uint64_t>(max_age_ns)),
                    scanner_->scans_done(), {max_blocks, reader});
  scanner_->request();
  return std::nullopt;
}

// A block stays in the ledger until a scan that began after its last recorded fallback finds
// no unmovable page in it (sources/pollution: release_clean_blocks).
void Daemon::reconcile_pollution(const ScanResult& scan) {
  auto p = reader_->read_pollution();
  if (!p) return;
  const Released r = release_clean_blocks(
      p->blocks, scan,
      {[this](uint64_t b) { return reader_->polluted_last_boot_ns(b); },
       [this](uint64_t b) { return reader_->release_polluted(b); }});
  if (r.error) warn_once("release", r.error->message);
  released_blocks_ += r.blocks;
  released_pages_ += r.pages;
  if (r.blocks) pollution_released_ = true;
}

void Daemon::on_scan_done() {
  const uint64_t done = scanner_->take_event();
  auto latest = scanner_->latest();
  if (latest && bpf_->pollution_enabled() && latest->boot_time_ns > reconciled_scan_ns_) {
    reconciled_scan_ns_ = latest->boot_time_ns;
    reconcile_pollution(*latest);
  }
  const std::string error = scanner_->last_error();
  bool again = false;
  for (const auto& d : pending_maps_.scan_ended(done, latest != nullptr, latest ? latest->boot_time_ns : 0, error, again))
    control_->reply(d.token, map_answer(d.with_scan ? latest.get() : nullptr, d.with_scan ? "" : error,
                                        d.ask.max_blocks, d.ask.reader));
  if (again) scanner_->request();
}

std::optional<nlohmann::json> Daemon::handle(const ControlRequest& req, Reader reader, uint64_t token) {
  // parse_request checked every field's type and range; ControlServer answered
  // act requests from anyone but root already.
  switch (req.cmd) {
    case Command::Compact: {
      auto ids = engine_->request_compact(req.node.value_or(-1), facts_, req.timeout_ms.value_or(0) * 1000000);
      if (!ids) return error_answer(ids.error().message);
      for (auto id : *ids) actions_.queued(id);
      act(now_ns());
      return IdsReply{*ids};
    }
    case Command::Pool: {
      auto id = engine_->request_pool(*req.size_kib, req.node.value_or(-1), *req.count, facts_,
                                     req.timeout_ms.value_or(0) * 1000000);
      if (!id) return error_answer(id.error().message);
      actions_.queued(*id);
      act(now_ns());
      return IdsReply{{*id}};
    }
    case Command::Action:
      return action_state(*req.id);
    case Command::Reload:
      return reload("fragctl reload");
    case Command::Map: {
      // A scan costs ~0.1 us of kernel time per page: only root may ask for one more often than every 5 s.
      const int64_t age = req.max_age_ns.value_or(5'000'000'000);
      return map_request(reader == Reader::Root ? age : std::max<int64_t>(age, 5'000'000'000),
                         req.max_blocks.value_or(kDefaultMapBlocks), token, reader);
    }
    case Command::Hist: {
      auto s = reader_->read();  // fresh, so `fragctl hist --interval` sees exact intervals
      if (!s) return error_answer(s.error().message);
      HistSnapshot h = hist_reply(*s, cfg_.min_order, now_ns() - start_ns_);
      h.counting_mode = cfg_.allocations;
      h.counting = bpf_->counting();
      return h;
    }
    case Command::Top:
      return top_reply(attribution_.view(), last_mem_ ? &*last_mem_ : nullptr,
                       now_ns() - start_ns_);
    case Command::Status: {
      StatusReply r = status_reply(last_mem_ ? &*last_mem_ : nullptr, last_bpf_ ? &*last_bpf_ : nullptr,
                                   bpf_->programs(), cfg_.tick_ns);
      add_policy_status(r);
      r.allocations = AllocationCounting{cfg_.allocations, bpf_->counting(), self_.counting.counting_seconds,
                                         cfg_.adaptive_hold_ns, cfg_.adaptive_free_blocks};
      if (auto p = pollution_ ? read_pollution() : std::nullopt) r.pollution = pollution_info(p->counters, p->summary, false);
      if (auto latest = scanner_ ? scanner_->latest() : nullptr) r.scan = scan_summary(*latest, ScanClock::now());
      restrict_status(r, reader);
      return r;
    }
    case Command::Trace:
      return TraceAck{};
  }
  return error_answer("request " + std::to_string(static_cast<int>(req.cmd)) + " has no handler");  // not reached
}

}  // namespace fragd
