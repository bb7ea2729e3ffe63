// SPDX-License-Identifier: Apache-2.0
// The answer to {"cmd":"top"} (docs/control-protocol.md): who stalls, who pays,
// where, cumulative since fragd started, with each node's score and free 2 MiB
// and 1 GiB blocks. fragd fills it from its attribution (concerns/attribution);
// `fragctl top` takes intervals of it and renders them (fragctl/render/top.h).
// Its fields are declared once, in the table below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/fields.h"

namespace fragd {

struct TopCount {
  uint64_t stalls = 0, stall_ns = 0;
};
struct TopRow {  // a cgroup or a call site; "other" sums the rest
  std::string name;
  TopCount count;
};
// The two kinds of row, apart because the answer names each one's key ("cgroup", "callsite").
struct TopCgroup : TopRow {};
struct TopCallsite : TopRow {};
struct TopConsumer {
  unsigned order = 0;
  std::string consumer;
  TopCount count;
};
struct TopStack {
  std::string consumer, callsite;
  std::vector<std::string> frames;  // the named frames' functions, innermost first
  TopCount count;
  uint64_t unnamed_frames = 0;  // frames no kernel symbol names: left out (never an address)
};
struct TopNode {
  int node = 0;
  unsigned score = 0;
  uint64_t free_2m = 0, free_1g = 0;  // free blocks able to hold a 2 MiB / 1 GiB page
};

struct TopReply {
  uint64_t uptime_ns = 0;
  bool symbols = false;  // kernel call sites are named
  std::vector<TopNode> nodes;
  std::vector<TopCgroup> cgroups;
  std::vector<TopCallsite> callsites;
  std::vector<TopConsumer> consumers;
  std::vector<TopStack> stacks;  // most stall time first
};
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
    return std::make_tuple(field("order", &T::order).within(0, 63), field("consumer", &T::consumer),
                           field_inline(&T::count));
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
    return std::make_tuple(field("node", &T::node).within(0, 1 << 20), field("score", &T::score).within(0, 100),
                           field("free_2m_blocks", &T::free_2m), field("free_1g_blocks", &T::free_1g));
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

// Every field required (but a stack's unnamed_frames, absent from an older fragd); a malformed
// one is named by its path ("top.cgroups[1].stall_ns is not a non-negative integer").
inline void to_json(nlohmann::json& j, const TopReply& r) {
  j = wire::write_object(r);
  j["ok"] = true;
}
inline void from_json(const nlohmann::json& j, TopReply& r) { wire::read_object(j, r, "top"); }

}  // namespace fragd
