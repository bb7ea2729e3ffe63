// SPDX-License-Identifier: Apache-2.0
#include "protocol/top.h"

#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "protocol/wire.h"

namespace fragd {

using nlohmann::json;
using namespace wire;

namespace {

json count_json(const TopCount& c) { return json{{"stalls", c.stalls}, {"stall_ns", c.stall_ns}}; }
TopCount count_of(const json& o, const std::string& path) {
  return TopCount{u64_member(o, "stalls", path), u64_member(o, "stall_ns", path)};
}
json rows_json(const std::vector<TopRow>& rows, const char* key) {
  json a = json::array();
  for (const auto& r : rows) {
    json o = count_json(r.count);
    o[key] = r.name;
    a.push_back(std::move(o));
  }
  return a;
}
std::vector<TopRow> rows_of(const json& j, const char* member_name, const char* key) {
  std::vector<TopRow> out;
  const json& a = array_member(j, member_name, "top");
  for (size_t i = 0; i < a.size(); i++) {
    const std::string path = std::string("top.") + member_name + "[" + std::to_string(i) + "]";
    out.push_back({string_member(a[i], key, path), count_of(a[i], path)});
  }
  return out;
}
TopCount minus(const TopCount& a, const TopCount* b) {
  if (!b) return a;
  return {a.stalls >= b->stalls ? a.stalls - b->stalls : 0, a.stall_ns >= b->stall_ns ? a.stall_ns - b->stall_ns : 0};
}

}  // namespace

void to_json(json& j, const TopReply& r) {
  json nodes = json::array();
  for (const auto& n : r.nodes)
    nodes.push_back({{"node", n.node}, {"score", n.score}, {"free_2m_blocks", n.free_2m}, {"free_1g_blocks", n.free_1g}});
  json consumers = json::array();
  for (const auto& c : r.consumers) {
    json o = count_json(c.count);
    o["order"] = c.order;
    o["consumer"] = c.consumer;
    consumers.push_back(std::move(o));
  }
  json stacks = json::array();
  for (const auto& s : r.stacks) {
    json o = count_json(s.count);
    o["consumer"] = s.consumer;
    o["callsite"] = s.callsite;
    o["frames"] = s.frames;
    o["unnamed_frames"] = s.unnamed_frames;
    stacks.push_back(std::move(o));
  }
  j = json{{"ok", true},
           {"uptime_ns", r.uptime_ns},
           {"symbols", r.symbols},
           {"nodes", std::move(nodes)},
           {"cgroups", rows_json(r.cgroups, "cgroup")},
           {"consumers", std::move(consumers)},
           {"callsites", rows_json(r.callsites, "callsite")},
           {"stacks", std::move(stacks)}};
}

void from_json(const json& j, TopReply& r) {
  if (!j.is_object()) malformed("top: expected an object");
  r.uptime_ns = u64_member(j, "uptime_ns", "top");
  const json& sym = member(j, "symbols", "top");
  if (!sym.is_boolean()) malformed("top.symbols: not a boolean");
  r.symbols = sym.get<bool>();
  r.nodes.clear();
  const json& nodes = array_member(j, "nodes", "top");
  for (size_t i = 0; i < nodes.size(); i++) {
    const std::string path = "top.nodes[" + std::to_string(i) + "]";
    const uint64_t node = bounded_member(nodes[i], "node", path, 1u << 20);
    r.nodes.push_back({static_cast<int>(node), static_cast<unsigned>(bounded_member(nodes[i], "score", path, 100)),
                       u64_member(nodes[i], "free_2m_blocks", path), u64_member(nodes[i], "free_1g_blocks", path)});
  }
  r.cgroups = rows_of(j, "cgroups", "cgroup");
  r.callsites = rows_of(j, "callsites", "callsite");
  r.consumers.clear();
  const json& cons = array_member(j, "consumers", "top");
  for (size_t i = 0; i < cons.size(); i++) {
    const std::string path = "top.consumers[" + std::to_string(i) + "]";
    r.consumers.push_back({static_cast<unsigned>(bounded_member(cons[i], "order", path, 63)),
                           string_member(cons[i], "consumer", path), count_of(cons[i], path)});
  }
  r.stacks.clear();
  const json& stacks = array_member(j, "stacks", "top");
  for (size_t i = 0; i < stacks.size(); i++) {
    const std::string path = "top.stacks[" + std::to_string(i) + "]";
    TopStack s{string_member(stacks[i], "consumer", path), string_member(stacks[i], "callsite", path), {},
               count_of(stacks[i], path)};
    const json& frames = array_member(stacks[i], "frames", path);
    for (size_t k = 0; k < frames.size(); k++) {
      if (!frames[k].is_string()) malformed(path + ".frames[" + std::to_string(k) + "]: not a string");
      s.frames.push_back(frames[k].get<std::string>());
    }
    s.unnamed_frames = opt_u64(stacks[i], "unnamed_frames", path).value_or(0);  // absent from an older fragd
    r.stacks.push_back(std::move(s));
  }
}

TopReply top_interval(const TopReply& newer, const TopReply& older) {
  TopReply d = newer;
  d.uptime_ns = newer.uptime_ns >= older.uptime_ns ? newer.uptime_ns - older.uptime_ns : newer.uptime_ns;
  auto rows = [](std::vector<TopRow>& out, const std::vector<TopRow>& old) {
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
