// SPDX-License-Identifier: Apache-2.0
#include "protocol/map.h"
#include "protocol/bounds.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/fields.h"

namespace fragd {
namespace {
constexpr uint64_t kMaxMapNode = 65535;  // a zone's or a polluted block's node, at most
}  // namespace
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

// A zone's classes travel as one string, a character per block (block_class_char); '?' (a block
// not read yet) is checked against "sample" after the table.
template <>
struct Codec<std::vector<BlockClass>> {
  static nlohmann::json write(const std::vector<BlockClass>& v) {
    std::string s;
    s.reserve(v.size());
    for (BlockClass c : v) s += block_class_char(c);
    return s;
  }
  static void read(const nlohmann::json& j, std::vector<BlockClass>& out, const std::string& path) {
    if (!j.is_string()) malformed(path + ": not a string");
    const auto& s = j.get_ref<const std::string&>();
    out.clear();
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      BlockClass c;
      if (!block_class_from_char(s[i], c))
        malformed(strf("%s: character 0x%02x at block %zu is not a block class (one of . m x U H -, and ? in a "
                       "sampled zone)",
                       path.c_str(), static_cast<unsigned char>(s[i]), i));
      out.push_back(c);
    }
  }
};
// Blocks per class, keyed by the class's name (block_class_name): every class present.
template <>
struct Codec<std::array<uint64_t, kBlockClasses>> {
  static nlohmann::json write(const std::array<uint64_t, kBlockClasses>& v) {
    nlohmann::json o = nlohmann::json::object();
    for (size_t c = 0; c < kBlockClasses; c++) o[block_class_name(static_cast<BlockClass>(c))] = v[c];
    return o;
  }
  static void read(const nlohmann::json& j, std::array<uint64_t, kBlockClasses>& out, const std::string& path) {
    if (!j.is_object()) malformed(path + ": not an object");
    for (size_t c = 0; c < kBlockClasses; c++) out[c] = u64_member(j, block_class_name(static_cast<BlockClass>(c)), path);
  }
};

// Each field of a zone of the map answer, once. "classes" and "used" are left out of an answer
// that withheld them (empty); what depends on other fields (the zone's blocks, the pfns, the
// withholding) is checked in check_zone.
template <>
struct Fields<MapZone::Sample> {
  static auto list() {
    using T = MapZone::Sample;
    return std::make_tuple(field("blocks", &T::blocks), field("compaction", &T::compaction),
                           field("polluted", &T::polluted));
  }
};
template <>
struct Fields<MapZone> {
  static auto list() {
    using T = MapZone;
    return std::make_tuple(
        field("node", &T::node).within(0, kMaxMapNode), field("zone", &T::zone), field("start_pfn", &T::start_pfn),
        field("end_pfn", &T::end_pfn), field("first_block", &T::first_block),
        field_or_default("classes", &T::classes), field_or_default("used", &T::used), field("counts", &T::counts),
        field("free_pages", &T::free_pages), field("hugepages.free", &T::hugepages_free),
        field("hugepages.compaction", &T::hugepages_compaction), field("hugepages.polluted", &T::hugepages_polluted),
        field("compaction_cost_pages", &T::compaction_cost_pages), field("sample", &T::sample));
  }
};

}  // namespace wire
namespace {

using json = nlohmann::json;
using namespace wire;
using ull = unsigned long long;

// What the table cannot say of a zone read from `z` at `path`: its blocks follow from its pfns
// and the pageblock order; "classes" and "used" are there unless the answer withheld them
// (`per_block` false), one per block; counts, free pages and hugepages fit in the zone.
void check_zone(const json& z, const MapZone& m, const std::string& path, unsigned order, bool per_block) {
  if (m.zone.empty()) malformed(path + ".zone: empty");
  if (m.end_pfn <= m.start_pfn)
    malformed(strf("%s: end_pfn %llu is not above start_pfn %llu", path.c_str(), ull(m.end_pfn), ull(m.start_pfn)));
  if (m.first_block != m.start_pfn >> order)
    malformed(strf("%s.first_block: %llu is not start_pfn >> pageblock_order (%llu)", path.c_str(),
                   ull(m.first_block), ull(m.start_pfn >> order)));
  const uint64_t nblocks = ((m.end_pfn - 1) >> order) - m.first_block + 1;
  const uint64_t block_pages = uint64_t{1} << order;
  const bool sampled = m.sample.has_value();
  auto at_most = [&](const std::string& p, uint64_t v, uint64_t max) {
    if (v > max) malformed(strf("%s: %llu is out of range (at most %llu)", p.c_str(), ull(v), ull(max)));
  };

  std::array<uint64_t, kBlockClasses + 1> counted{};
  if (!per_block) {
    for (const char* key : {"classes", "used"})
      if (z.contains(key)) malformed(path + "." + key + ": present in an answer that says it withheld it");
  } else {
    for (const char* key : {"classes", "used"})
      if (!z.contains(key)) malformed(path + ": missing \"" + key + "\"");
    if (m.classes.size() != nblocks)
      malformed(strf("%s.classes: %zu blocks, but pfns %llu..%llu span %llu blocks", path.c_str(), m.classes.size(),
                     ull(m.start_pfn), ull(m.end_pfn), ull(nblocks)));
    for (size_t i = 0; i < m.classes.size(); ++i) {
      if (m.classes[i] == BlockClass::Unseen && !sampled)
        malformed(strf("%s.classes: character 0x%02x at block %zu is not a block class (one of . m x U H -, and ? "
                       "in a sampled zone)",
                       path.c_str(), static_cast<unsigned char>(block_class_char(m.classes[i])), i));
      ++counted[static_cast<size_t>(m.classes[i])];
    }
    if (m.used.size() != nblocks)
      malformed(strf("%s.used: %zu values, but \"classes\" has %llu blocks", path.c_str(), m.used.size(), ull(nblocks)));
    for (size_t i = 0; i < m.used.size(); ++i)
      if (m.used[i] > block_pages)
        malformed(strf("%s.used[%zu]: %llu is more than the %llu pages of a block", path.c_str(), i, ull(m.used[i]),
                       ull(block_pages)));
  }

  uint64_t sum = 0;
  for (size_t c = 0; c < kBlockClasses; ++c) {
    const char* name = block_class_name(static_cast<BlockClass>(c));
    if (sampled || !per_block) at_most(path + ".counts." + name, m.counts[c], nblocks);
    else if (m.counts[c] != counted[c])
      malformed(strf("%s.counts.%s: %llu, but \"classes\" has %llu %s blocks", path.c_str(), name,
                     ull(m.counts[c]), ull(counted[c]), name));
    sum += m.counts[c];
  }
  if (!sampled && !per_block && sum != nblocks)  // the classes counted, without them: one class per block
    malformed(strf("%s.counts: %llu blocks in all, but pfns %llu..%llu span %llu blocks", path.c_str(), ull(sum),
                   ull(m.start_pfn), ull(m.end_pfn), ull(nblocks)));

  at_most(path + ".free_pages", m.free_pages, m.end_pfn - m.start_pfn);
  at_most(path + ".hugepages.free", m.hugepages_free, nblocks);
  at_most(path + ".hugepages.compaction", m.hugepages_compaction, nblocks);
  at_most(path + ".hugepages.polluted", m.hugepages_polluted, nblocks);
  at_most(path + ".compaction_cost_pages", m.compaction_cost_pages, m.end_pfn - m.start_pfn);
  if (sampled) {
    const std::string sp = path + ".sample";
    at_most(sp + ".blocks", m.sample->blocks, nblocks);
    auto holds = [&](const char* key, const Bounds& b, uint64_t value) {
      if (b.lo > value || value > b.hi || b.hi > nblocks)
        malformed(strf("%s.%s: [%llu, %llu] does not hold the estimate %llu within the %llu blocks", sp.c_str(), key,
                       ull(b.lo), ull(b.hi), ull(value), ull(nblocks)));
    };
    holds("compaction", m.sample->compaction, m.hugepages_compaction);
    holds("polluted", m.sample->polluted, m.hugepages_polluted);
  }
}

MapZone parse_zone(const json& z, const std::string& path, unsigned order, bool per_block) {
  MapZone m;
  read_object(z, m, path);
  check_zone(z, m, path, order, per_block);
  return m;
}

// Checks what the table cannot: the node's range, the times' order, and (in a map answer,
// whose pageblock order is known) that a block lies in the physical address space.
void check_pollution(const PollutionInfo& v, unsigned order, const std::string& path) {
  if (!v.blocks) return;
  for (size_t i = 0; i < v.blocks->size(); ++i) {
    const PollutedBlockInfo& pb = (*v.blocks)[i];
    const std::string bp = strf("%s.blocks[%zu]", path.c_str(), i);
    if (pb.node < 0 || static_cast<uint64_t>(pb.node) > kMaxMapNode)
      malformed(strf("%s.node: %d is out of range 0..%llu", bp.c_str(), pb.node, ull(kMaxMapNode)));
    if (pb.last_ns < pb.first_ns)
      malformed(strf("%s.last_ns: %llu is before first_ns %llu", bp.c_str(), ull(pb.last_ns), ull(pb.first_ns)));
    if (pb.block > (UINT64_MAX >> order)) malformed(bp + ".block: beyond the physical address space");
  }
}

PollutionInfo parse_pollution(const json& p, unsigned order, const std::string& path) {
  if (!p.is_object()) malformed(path + ": not an object or null");
  PollutionInfo v;
  read_object(p, v, path);
  check_pollution(v, order, path);
  return v;
}

MapView parse_body(const json& a) {
  MapView v;
  if (auto it = a.find("withheld"); it != a.end() && !it->is_null()) {
    if (!it->is_string()) malformed("withheld: not a string");
    v.withheld = it->get<std::string>();
  }
  if (auto it = a.find("note"); it != a.end() && !it->is_null()) {
    if (!it->is_string()) malformed("note: not a string");
    v.note = it->get<std::string>();
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
    v.pollution = parse_pollution(pol, v.pageblock_order, "pollution");
    if (!v.pollution->blocks && !v.withheld) malformed("pollution: missing \"blocks\"");
    if (v.withheld && (v.pollution->blocks || !v.pollution->top.empty()))
      malformed("pollution: blocks or polluters in an answer that says it withheld them");
  }
  return v;
}

}  // namespace

void to_json(json& j, const PollutionInfo& p) { j = write_object(p); }

void read_json(const json& j, PollutionInfo& p, const std::string& path) { p = parse_pollution(j, 0, path); }
void from_json(const json& j, PollutionInfo& p) { read_json(j, p, "pollution"); }

void to_json(json& j, const MapView& v) {
  j = json{{"ok", true}, {"scan", nullptr}, {"pollution", nullptr}};
  if (v.withheld) j["withheld"] = *v.withheld;
  if (v.note) j["note"] = *v.note;
  if (v.pollution) j["pollution"] = *v.pollution;
  if (!v.scanned) {
    j["scan_error"] = v.scan_error;
    return;
  }
  json zones = json::array();
  for (const auto& z : v.zones) {
    json zj = write_object(z);
    if (v.withheld) {  // a zone that still has them is sent without
      zj.erase("classes");
      zj.erase("used");
    }
    zones.push_back(std::move(zj));
  }
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
