// SPDX-License-Identifier: Apache-2.0
#include "concerns/attribution/attribution.h"

#include <algorithm>

#include "concerns/attribution/classify.h"

namespace fragd {

namespace {

Attr minus(const Attr& a, const Attr& b) {
  return {a.entries >= b.entries ? a.entries - b.entries : 0, a.ns >= b.ns ? a.ns - b.ns : 0};
}

// Fills up to `k` series from `now` (label by key) among keys without one, most stall time first.
// A key seen in the previous round (`prev`) starts from what it showed then: that stays in "other".
template <class Key, class LabelOf>
void fill_series(const std::map<Key, Attr>& now, const std::map<Key, Attr>& prev, size_t k,
                 std::map<Key, TopSeries>& series, const LabelOf& label_of) {
  if (series.size() >= k) return;
  std::vector<std::pair<Key, Attr>> cands;
  for (const auto& [key, a] : now)
    if (!series.count(key) && a.entries + a.ns > 0) cands.push_back({key, a});
  std::sort(cands.begin(), cands.end(), [](const auto& x, const auto& y) {
    return x.second.ns != y.second.ns ? x.second.ns > y.second.ns : x.second.entries > y.second.entries;
  });
  for (const auto& [key, a] : cands) {
    if (series.size() >= k) break;
    std::string label;
    if (!label_of(key, label)) continue;
    auto p = prev.find(key);
    series[key] = {label, p == prev.end() ? Attr{} : p->second};
  }
}

// The rows of a top-K family: each series (sorted by label) since it began, then "other": the
// rest of `now` and `outside` (counts no key holds any more).
template <class Key>
std::vector<std::pair<std::string, Attr>> top_rows(const std::map<Key, Attr>& now, const std::map<Key, TopSeries>& series,
                                                   Attr outside) {
  std::vector<std::pair<std::string, Attr>> rows;
  Attr total = outside, in_series;
  for (const auto& [k, a] : now) total += a;
  for (const auto& [k, s] : series) {
    auto it = now.find(k);
    const Attr val = minus(it == now.end() ? Attr{} : it->second, s.base);
    in_series += val;
    rows.push_back({s.label, val});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  rows.push_back({"other", minus(total, in_series)});
  return rows;
}

}  // namespace

void StallAttribution::name_stacks(const std::vector<SiteCount>& sites, const StackReader& read_stack,
                                   KernelSymbols* syms) {
  std::map<int32_t, std::vector<uint64_t>> fresh;
  std::vector<uint64_t> addrs;
  for (const SiteCount& s : sites) {
    const int32_t id = s.key.stack_id;
    if (id < 0 || frames_.count(id) || fresh.count(id)) continue;
    auto ips = read_stack(id);
    fresh[id] = ips ? *ips : std::vector<uint64_t>{};
    if (ips) addrs.insert(addrs.end(), ips->begin(), ips->end());
  }
  if (fresh.empty()) return;
  if (syms) syms->resolve(addrs);
  // A frame no symbol names stays "": its address is never kept, shown or exported (it would
  // tell where the kernel sits in memory, what KASLR and kptr_restrict hide).
  for (auto& [id, ips] : fresh) {
    std::vector<std::string> names;
    for (uint64_t a : ips) names.push_back(syms ? syms->name(a) : std::string());
    frames_[id] = std::move(names);
  }
}

void StallAttribution::update(const std::vector<SiteCount>& sites, const std::vector<CgroupCount>& cgroups,
                              const alloc_stats& st, const StackReader& read_stack, KernelSymbols* syms,
                              CgroupLookup& lookup, bool sweep) {
  lookup.new_round();
  name_stacks(sites, read_stack, syms);
  AttributionView v;
  v.symbols = syms && syms->usable();
  v.symbols_why_not = syms ? syms->why_not() : "no symbol table";

  // Consumers and call sites, from every site (each classified once).
  std::map<std::string, Attr> by_site;
  std::map<int32_t, StackView> stacks;
  for (const SiteCount& s : sites) {
    const SiteKey key = key_of(s.key);
    auto it = site_info_.find(key);
    if (it == site_info_.end()) {
      static const std::vector<std::string> kNone;
      auto f = frames_.find(s.key.stack_id);
      const std::vector<std::string>& names = f != frames_.end() ? f->second : kNone;
      it = site_info_.emplace(key, SiteInfo{classify_consumer(s.key, names), call_site(names)}).first;
    }
    if (s.failure) {
      v.failures[{s.key.order, (s.key.gfp & FRAGD_GFP_DIRECT_RECLAIM) != 0, it->second.consumer}] += s.attr.entries;
      continue;
    }
    const Attr a{s.attr.entries, s.attr.ns};
    v.consumers[{s.key.order, it->second.consumer}] += a;
    by_site[it->second.callsite] += a;
    if (s.key.stack_id >= 0) {
      StackView& sv = stacks[s.key.stack_id];
      sv.stack_id = s.key.stack_id;
      sv.consumer = it->second.consumer;
      sv.callsite = it->second.callsite;
      if (auto f = frames_.find(s.key.stack_id); f != frames_.end() && sv.frames.empty() && !sv.unnamed_frames)
        for (const auto& n : f->second) {
          if (n.empty()) sv.unnamed_frames++;
          else sv.frames.push_back(n);
        }
      sv.attr += a;
    }
  }
  for (unsigned o = 0; o < FRAGD_NR_ORDERS; o++)
    for (unsigned c = 0; c < 2; c++) v.failures_counted[o][c] = st.failures[o][c];
  for (unsigned o = 0; o < FRAGD_NR_ORDERS; o++) {
    if (st.sites_full_entries[o] + st.sites_full_ns[o] == 0) continue;
    const Attr a{st.sites_full_entries[o], st.sites_full_ns[o]};
    v.consumers[{o, "other"}] += a;
    by_site["unknown"] += a;
    v.sites_full_entries += st.sites_full_entries[o];
  }
  // Every consumer of each order that stalled, so that a series exists from the first stall.
  for (unsigned o = 0; o < FRAGD_NR_ORDERS; o++) {
    uint64_t e = 0;
    for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) e += st.direct_entries[o][p];
    if (e == 0) continue;
    for (const char* c : kConsumers) v.consumers[{o, c}];
  }
  for (auto& [id, sv] : stacks) v.stacks.push_back(std::move(sv));
  std::sort(v.stacks.begin(), v.stacks.end(), [](const StackView& a, const StackView& b) { return a.attr.ns > b.attr.ns; });

  // Call sites: top K by stall time, the rest "other".
  fill_series<std::string>(by_site, cs_prev_, top_callsites_, cs_series_, [](const std::string& k, std::string& label) {
    label = k;
    return true;
  });
  v.callsites = top_rows(by_site, cs_series_, Attr{});
  cs_prev_ = by_site;

  update_cgroups(cgroups, st, lookup, sweep, v);
  view_ = std::move(v);
}

void StallAttribution::update_cgroups(const std::vector<CgroupCount>& cgroups, const alloc_stats& st,
                                      CgroupLookup& lookup, bool sweep, AttributionView& v) {
  std::map<uint64_t, Attr> now;
  for (const CgroupCount& c : cgroups) now[c.cgroup_id] = Attr{c.attr.entries, c.attr.ns};
  // A cgroup deleted: its counts to "other", its series and BPF entry go. Exported ones are
  // checked every round, the others on a sweep.
  for (auto it = now.begin(); it != now.end();) {
    const uint64_t id = it->first;
    bool gone = false;
    if (auto s = cg_series_.find(id); s != cg_series_.end()) gone = !lookup.exists(id, s->second.label);
    else if (sweep && lookup.available()) gone = !lookup.path(id);
    if (!gone) {
      ++it;
      continue;
    }
    cg_gone_ += it->second;
    cg_series_.erase(id);
    forgotten_.push_back(id);
    view_.cgroups_removed++;
    it = now.erase(it);
  }
  v.cgroups_removed = view_.cgroups_removed;
  fill_series<uint64_t>(now, cg_prev_, top_cgroups_, cg_series_, [&](uint64_t id, std::string& label) {
    auto p = lookup.path(id);
    if (!p) return false;
    label = *p;
    return true;
  });
  Attr outside = cg_gone_;
  outside += Attr{st.cgroups_full_entries, st.cgroups_full_ns};
  v.cgroups_full_entries = st.cgroups_full_entries;
  v.stacks_lost = st.stacks_lost;
  v.cgroups = top_rows(now, cg_series_, outside);
  cg_prev_ = now;
}

std::vector<uint64_t> StallAttribution::take_forgotten() {
  std::vector<uint64_t> out;
  out.swap(forgotten_);
  return out;
}

}  // namespace fragd
