// SPDX-License-Identifier: Apache-2.0
#include "concerns/attribution/concern.h"

#include <map>

#include "fragd/settings.h"
#include "concerns/attribution/metrics.h"
#include "concerns/memory/score.h"

namespace fragd {

AttributionConcern::AttributionConcern(Shared& sh, AttributionMaps maps, uint64_t start_ns)
    : sh_(sh), maps_(std::move(maps)), start_ns_(start_ns), rounds_(sh.cfg.top_cgroups, sh.cfg.top_callsites) {
  const KallsymsFile ks = open_kallsyms(sh_.cfg);
  if (!ks.warning.empty()) log_warn(ks.warning);
  symbols_ = std::make_unique<KernelSymbols>(ks.fd, ks.path);
  cgroup_paths_ = std::make_unique<CgroupPaths>(sh_.cfg.sys_root);
}

void AttributionConcern::tick(const Tick& t) {
  if (!t.stalls) return;
  rounds_.tick(
      t.now, t.stalls->alloc, maps_, symbols_.get(), *cgroup_paths_,
      [this](const std::string& path) {
        return read_cgroup_anon(cgroup_paths_->root(), sh_.cfg.sys_root + "/fs/cgroup/memory", path);
      },
      {[this](const std::string& k, const std::string& m) { sh_.warn.once(k, m); },
       [this](const std::string& k, const std::string& m) { sh_.warn.cleared(k, m); }});
}

void AttributionConcern::metrics(const SeriesPlan& plan, const Tick&, Families& out) {
  families(rounds_.view(), rounds_.cgroup_anon(), plan, out);
}

void AttributionConcern::families(const AttributionView* v, const std::map<std::string, CgroupAnon>* anon,
                                  const SeriesPlan& plan, Families& out) {
  if (v) attribution_metrics(*v, plan, out);
  if (anon) cgroup_anon_metrics(*anon, out);
}

void AttributionConcern::reload() { rounds_.set_limits(sh_.cfg.top_cgroups, sh_.cfg.top_callsites); }

namespace {
constexpr std::array kAttributionAnswered{Command::Top};
}  // namespace
const std::span<const Command> AttributionConcern::kAnswers{kAttributionAnswered};

std::optional<nlohmann::json> AttributionConcern::answer(const ControlRequest&, Reader, uint64_t, const Tick& last) {
  return top_reply(rounds_.view(), last.mem, now_ns() - start_ns_);
}

TopReply top_reply(const AttributionView* a, const MemSnapshot* mem, uint64_t uptime_ns) {
  TopReply r;
  r.uptime_ns = uptime_ns;
  if (mem) {
    std::map<int, TopNode> nodes;
    for (const auto& s : node_scores(mem->zones)) nodes[s.node] = TopNode{s.node, s.score, 0, 0};
    for (const auto& z : mem->zones) {
      if (z.present_pages == 0) continue;
      TopNode& n = nodes[z.node];
      n.node = z.node;
      n.free_2m += blocks_of_order(z.free_blocks, compaction_hpage_order());
      n.free_1g += blocks_of_order(z.free_blocks, gigantic_order(kernel_page_kib()));
    }
    for (const auto& [_, n] : nodes) r.nodes.push_back(n);
  }
  if (!a) return r;
  r.symbols = a->symbols;
  // A cgroup's name is any bytes but '/' and NUL: escaped as in its /metrics label (base/family.h).
  for (const auto& [cg, x] : a->cgroups) r.cgroups.push_back({utf8_escaped(cg), {x.entries, x.ns}});
  for (const auto& [cs, x] : a->callsites) r.callsites.push_back({cs, {x.entries, x.ns}});
  for (const auto& [k, x] : a->consumers) r.consumers.push_back({k.first, k.second, {x.entries, x.ns}});
  // The 50 stacks with the most stall time (the map holds up to 2048).
  for (size_t i = 0; i < a->stacks.size() && i < 50; i++) {
    const StackView& s = a->stacks[i];
    r.stacks.push_back({s.consumer, s.callsite, s.frames, {s.attr.entries, s.attr.ns}, s.unnamed_frames});
  }
  return r;
}

}  // namespace fragd
