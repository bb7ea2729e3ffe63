// SPDX-License-Identifier: Apache-2.0
#include "protocol/top.h"

#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "protocol/fields.h"

namespace fragd {

using nlohmann::json;
using namespace wire;

namespace wire {

// Each field of the top answer, once (protocol/fields.h); a row's counts sit beside its name.
template <>
struct Fields<TopCount> {
  static auto list() { return std::make_tuple(field("stalls", &TopCount::stalls), field("stall_ns", &TopCount::stall_ns)); }
};
template <>
struct Fields<TopCgroup> {
  static auto list() {
    using T = TopCgroup;
    return std::make_tuple(field<T, std::string>("cgroup", &T::name), field_inline<T, TopCount>(&T::count));
  }
};
template <>
struct Fields<TopCallsite> {
  static auto list() {
    using T = TopCallsite;
    return std::make_tuple(field<T, std::string>("callsite", &T::name), field_inline<T, TopCount>(&T::count));
  }
};
template <>
struct Fields<TopConsumer> {
  static auto list() {
    using T = TopConsumer;
    return std::make_tuple(field("order", &T::order), field("consumer", &T::consumer), field_inline(&T::count));
  }
};
template <>
struct Fields<TopStack> {
  static auto list() {
    using T = TopStack;
    return std::make_tuple(field("consumer", &T::consumer), field("callsite", &T::callsite),
                           field("frames", &T::frames), field_or_default("unnamed_frames", &T::unnamed_frames),
                           field_inline(&T::count));
  }
};
template <>
struct Fields<TopNode> {
  static auto list() {
    using T = TopNode;
    return std::make_tuple(field("node", &T::node), field("score", &T::score), field("free_2m_blocks", &T::free_2m),
                           field("free_1g_blocks", &T::free_1g));
  }
};
template <>
struct Fields<TopReply> {
  static auto list() {
    using T = TopReply;
    return std::make_tuple(field("uptime_ns", &T::uptime_ns), field("symbols", &T::symbols),
                           field("nodes", &T::nodes), field("cgroups", &T::cgroups), field("consumers", &T::consumers),
                           field("callsites", &T::callsites), field("stacks", &T::stacks));
  }
};

}  // namespace wire

namespace {

TopCount minus(const TopCount& a, const TopCount* b) {
  if (!b) return a;
  return {a.stalls >= b->stalls ? a.stalls - b->stalls : 0, a.stall_ns >= b->stall_ns ? a.stall_ns - b->stall_ns : 0};
}

}  // namespace

void to_json(json& j, const TopReply& r) {
  j = write_object(r);
  j["ok"] = true;
}

void from_json(const json& j, TopReply& r) {
  read_object(j, r, "top");
  // What a table cannot say: the ranges.
  for (size_t i = 0; i < r.nodes.size(); i++) {
    const std::string path = "top.nodes[" + std::to_string(i) + "]";
    if (r.nodes[i].node < 0 || r.nodes[i].node > (1 << 20)) malformed(path + ".node is out of range 0..1048576");
    if (r.nodes[i].score > 100) malformed(path + ".score is out of range 0..100");
  }
  for (size_t i = 0; i < r.consumers.size(); i++)
    if (r.consumers[i].order > 63) malformed("top.consumers[" + std::to_string(i) + "].order is out of range 0..63");
}

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
