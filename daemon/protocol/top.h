// SPDX-License-Identifier: Apache-2.0
// The answer to {"cmd":"top"} (docs/control-protocol.md): who stalls, who pays,
// where, cumulative since fragd started, with each node's score and free 2 MiB
// and 1 GiB blocks. fragd fills it from its attribution (sources/attribution);
// `fragctl top` takes intervals of it and renders them (fragctl/render/top.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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
// from_json: every field required (but a stack's unnamed_frames, absent from an older fragd); a
// malformed one is named by its path ("top.cgroups[1].stall_ns is not a non-negative integer").
void to_json(nlohmann::json& j, const TopReply& r);
void from_json(const nlohmann::json& j, TopReply& r);

// `newer` minus `older` (an interval): rows matched by name (consumer and order; stack by
// consumer, call site and frames); a row only in `newer` counts whole; nodes are newer's.
TopReply top_interval(const TopReply& newer, const TopReply& older);

}  // namespace fragd
