// SPDX-License-Identifier: Apache-2.0
#include "protocol/map.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/fields.h"

namespace fragd {
namespace wire {

// The pollution part of the map and status answers, once (protocol/fields.h).
template <>
struct Fields<PollutedBlockInfo> {
  static auto list() {
    using T = PollutedBlockInfo;
    return std::make_tuple(field("block", &T::block), field("node", &T::node), field("pages", &T::pages),
                           field("events", &T::events), field("first_ns", &T::first_ns),
                           field("last_ns", &T::last_ns), field("pid", &T::pid), field("comm", &T::comm),
                           field("cgroup_id", &T::cgroup_id), field("alloc", &T::alloc));
  }
};
template <>
struct Fields<PolluterInfo> {
  static auto list() {
    using T = PolluterInfo;
    return std::make_tuple(field("comm", &T::comm), field("cgroup_id", &T::cgroup_id), field("blocks", &T::blocks),
                           field("pages", &T::pages));
  }
};
template <>
struct Fields<PollutionInfo> {
  static auto list() {
    using T = PollutionInfo;
    return std::make_tuple(field("tracked_blocks", &T::tracked_blocks), field("tracked_pages", &T::tracked_pages),
                           field("untracked_events", &T::untracked_events), field("events", &T::events),
                           field("blocks", &T::blocks), field("top", &T::top));
  }
};

}  // namespace wire
namespace {

using json = nlohmann::json;
using namespace wire;
using ull = unsigned long long;

constexpr uint64_t kMaxNode = 65535;

// `per_block`: the answer carries each block's class and pages in use (not "withheld").
MapZone parse_zone(const json& z, const std::string& path, unsigned order, bool per_block) {
  if (!z.is_object()) malformed(path + ": not an object");
  MapZone m;
  m.node = static_cast<int>(bounded_member(z, "node", path, kMaxNode));
  m.zone = string_member(z, "zone", path);
  if (m.zone.empty()) malformed(path + ".zone: empty");
  m.start_pfn = u64_member(z, "start_pfn", path);
  m.end_pfn = u64_member(z, "end_pfn", path);
  if (m.end_pfn <= m.start_pfn)
    malformed(strf("%s: end_pfn %llu is not above start_pfn %llu", path.c_str(), ull(m.end_pfn), ull(m.start_pfn)));
  m.first_block = u64_member(z, "first_block", path);
  if (m.first_block != m.start_pfn >> order)
    malformed(strf("%s.first_block: %llu is not start_pfn >> pageblock_order (%llu)", path.c_str(),
                   ull(m.first_block), ull(m.start_pfn >> order)));
  const uint64_t nblocks = ((m.end_pfn - 1) >> order) - m.first_block + 1;
  const uint64_t block_pages = uint64_t{1} << order;

  const auto sample_it = z.find("sample");
  const bool sampled = sample_it != z.end() && !sample_it->is_null();
  std::array<uint64_t, kBlockClasses + 1> counted{};
  if (!per_block) {
    for (const char* key : {"classes", "used"})
      if (z.contains(key)) malformed(path + "." + key + ": present in an answer that says it withheld it");
  } else {
    const std::string classes = string_member(z, "classes", path);
    if (classes.size() != nblocks)
      malformed(strf("%s.classes: %zu blocks, but pfns %llu..%llu span %llu blocks", path.c_str(), classes.size(),
                     ull(m.start_pfn), ull(m.end_pfn), ull(nblocks)));
    m.classes.reserve(classes.size());
    for (size_t i = 0; i < classes.size(); ++i) {
      BlockClass c;
      if (!block_class_from_char(classes[i], c) || (c == BlockClass::Unseen && !sampled))
        malformed(strf("%s.classes: character 0x%02x at block %zu is not a block class (one of . m x U H -, and ? "
                       "in a sampled zone)",
                       path.c_str(), static_cast<unsigned char>(classes[i]), i));
      m.classes.push_back(c);
      ++counted[static_cast<size_t>(c)];
    }

    const json& used = array_member(z, "used", path);
    if (used.size() != nblocks)
      malformed(strf("%s.used: %zu values, but \"classes\" has %llu blocks", path.c_str(), used.size(), ull(nblocks)));
    m.used.reserve(used.size());
    for (size_t i = 0; i < used.size(); ++i) {
      const std::string p = strf("%s.used[%zu]", path.c_str(), i);
      uint64_t v = as_u64(used[i], p);
      if (v > block_pages)
        malformed(strf("%s: %llu is more than the %llu pages of a block", p.c_str(), ull(v), ull(block_pages)));
      m.used.push_back(static_cast<uint32_t>(v));
    }
  }

  const json& counts = object_member(z, "counts", path);
  for (size_t c = 0; c < kBlockClasses; ++c) {
    const char* name = block_class_name(static_cast<BlockClass>(c));
    m.counts[c] = sampled || !per_block ? bounded_member(counts, name, path + ".counts", nblocks)
                                        : u64_member(counts, name, path + ".counts");
    if (!sampled && per_block && m.counts[c] != counted[c])
      malformed(strf("%s.counts.%s: %llu, but \"classes\" has %llu %s blocks", path.c_str(), name,
                     ull(m.counts[c]), ull(counted[c]), name));
  }
  if (!sampled && !per_block) {  // the classes counted, without them: one class per block
    uint64_t sum = 0;
    for (uint64_t n : m.counts) sum += n;
    if (sum != nblocks)
      malformed(strf("%s.counts: %llu blocks in all, but pfns %llu..%llu span %llu blocks", path.c_str(), ull(sum),
                     ull(m.start_pfn), ull(m.end_pfn), ull(nblocks)));
  }

  m.free_pages = bounded_member(z, "free_pages", path, m.end_pfn - m.start_pfn);
  const json& huge = object_member(z, "hugepages", path);
  m.hugepages_free = bounded_member(huge, "free", path + ".hugepages", nblocks);
  m.hugepages_compaction = bounded_member(huge, "compaction", path + ".hugepages", nblocks);
  m.hugepages_polluted = bounded_member(huge, "polluted", path + ".hugepages", nblocks);
  m.compaction_cost_pages = bounded_member(z, "compaction_cost_pages", path, m.end_pfn - m.start_pfn);
  if (sampled) {
    const std::string sp = path + ".sample";
    if (!sample_it->is_object()) malformed(sp + ": not an object or null");
    MapZone::Sample s;
    s.blocks = bounded_member(*sample_it, "blocks", sp, nblocks);
    auto interval = [&](const char* key, uint64_t value) {
      const json& a = array_member(*sample_it, key, sp);
      const std::string ip = sp + "." + key;
      if (a.size() != 2) malformed(ip + ": not [lower, upper]");
      Bounds b{as_u64(a[0], ip + "[0]"), as_u64(a[1], ip + "[1]")};
      if (b.lo > value || value > b.hi || b.hi > nblocks)
        malformed(strf("%s: [%llu, %llu] does not hold the estimate %llu within the %llu blocks", ip.c_str(),
                       ull(b.lo), ull(b.hi), ull(value), ull(nblocks)));
      return b;
    };
    s.compaction = interval("compaction", m.hugepages_compaction);
    s.polluted = interval("polluted", m.hugepages_polluted);
    m.sample = s;
  }
  return m;
}

// Checks what the table cannot: the node's range, the times' order, and (in a map answer,
// whose pageblock order is known) that a block lies in the physical address space.
void check_pollution(const PollutionInfo& v, unsigned order) {
  if (!v.blocks) return;
  for (size_t i = 0; i < v.blocks->size(); ++i) {
    const PollutedBlockInfo& pb = (*v.blocks)[i];
    const std::string bp = strf("pollution.blocks[%zu]", i);
    if (pb.node < 0 || static_cast<uint64_t>(pb.node) > kMaxNode)
      malformed(strf("%s.node: %d is out of range 0..%llu", bp.c_str(), pb.node, ull(kMaxNode)));
    if (pb.last_ns < pb.first_ns)
      malformed(strf("%s.last_ns: %llu is before first_ns %llu", bp.c_str(), ull(pb.last_ns), ull(pb.first_ns)));
    if (pb.block > (UINT64_MAX >> order)) malformed(bp + ".block: beyond the physical address space");
  }
}

PollutionInfo parse_pollution(const json& p, unsigned order) {
  if (!p.is_object()) malformed("pollution: not an object or null");
  PollutionInfo v;
  read_object(p, v, "pollution");
  check_pollution(v, order);
  return v;
}

MapView parse_body(const json& a) {
  MapView v;
  if (auto it = a.find("withheld"); it != a.end() && !it->is_null()) {
    if (!it->is_string()) malformed("withheld: not a string");
    v.withheld = it->get<std::string>();
  }
  const json& scan = member(a, "scan", "answer");
  if (scan.is_null()) {
    v.scanned = false;
    auto it = a.find("scan_error");
    if (it != a.end() && !it->is_null() && !it->is_string()) malformed("scan_error: not a string");
    v.scan_error = (it != a.end() && it->is_string()) ? it->get<std::string>() : "fragd gave no reason";
  } else {
    if (!scan.is_object()) malformed("scan: not an object or null");
    v.scanned = true;
    v.time_ns = u64_member(scan, "time_ns", "scan");
    v.age_ns = u64_member(scan, "age_ns", "scan");
    v.duration_ns = u64_member(scan, "duration_ns", "scan");
    v.pages_read = u64_member(scan, "pages_read", "scan");
    if (auto it = scan.find("map_age_ns"); it != scan.end() && !it->is_null()) v.map_age_ns = as_u64(*it, "scan.map_age_ns");
    v.pageblock_order = static_cast<unsigned>(bounded_member(scan, "pageblock_order", "scan", kMaxMapPageblockOrder));
    const json& zones = array_member(scan, "zones", "scan");
    for (size_t i = 0; i < zones.size(); ++i)
      v.zones.push_back(parse_zone(zones[i], strf("scan.zones[%zu]", i), v.pageblock_order, !v.withheld));
  }
  const json& pol = member(a, "pollution", "answer");
  if (!pol.is_null()) {
    v.pollution = parse_pollution(pol, v.pageblock_order);
    if (!v.pollution->blocks && !v.withheld) malformed("pollution: missing \"blocks\"");
    if (v.withheld && (v.pollution->blocks || !v.pollution->top.empty()))
      malformed("pollution: blocks or polluters in an answer that says it withheld them");
  }
  return v;
}

json zone_json(const MapZone& z, bool per_block) {
  json counts;
  for (size_t c = 0; c < kBlockClasses; c++) counts[block_class_name(static_cast<BlockClass>(c))] = z.counts[c];
  json j = {{"node", z.node},
          {"zone", z.zone},
          {"start_pfn", z.start_pfn},
          {"end_pfn", z.end_pfn},
          {"first_block", z.first_block},
          {"counts", std::move(counts)},
          {"free_pages", z.free_pages},
          {"hugepages",
           {{"free", z.hugepages_free}, {"compaction", z.hugepages_compaction}, {"polluted", z.hugepages_polluted}}},
          {"compaction_cost_pages", z.compaction_cost_pages}};
  if (per_block) {
    std::string classes;
    classes.reserve(z.classes.size());
    for (BlockClass c : z.classes) classes += block_class_char(c);
    j["classes"] = std::move(classes);
    j["used"] = z.used;
  }
  if (z.sample)
    j["sample"] = {{"blocks", z.sample->blocks},
                   {"compaction", {z.sample->compaction.lo, z.sample->compaction.hi}},
                   {"polluted", {z.sample->polluted.lo, z.sample->polluted.hi}}};
  return j;
}

}  // namespace

void to_json(json& j, const PollutionInfo& p) { j = write_object(p); }

void from_json(const json& j, PollutionInfo& p) { p = parse_pollution(j, 0); }

void to_json(json& j, const MapView& v) {
  j = json{{"ok", true}, {"scan", nullptr}, {"pollution", nullptr}};
  if (v.withheld) j["withheld"] = *v.withheld;
  if (v.pollution) j["pollution"] = *v.pollution;
  if (!v.scanned) {
    j["scan_error"] = v.scan_error;
    return;
  }
  json zones = json::array();
  for (const auto& z : v.zones) zones.push_back(zone_json(z, !v.withheld));
  j["scan"] = {{"time_ns", v.time_ns},
               {"age_ns", v.age_ns},
               {"duration_ns", v.duration_ns},
               {"pageblock_order", v.pageblock_order},
               {"pages_read", v.pages_read},
               {"zones", std::move(zones)}};
  if (v.map_age_ns) j["scan"]["map_age_ns"] = *v.map_age_ns;
}

void from_json(const json& j, MapView& v) { v = parse_body(j); }

}  // namespace fragd
