// SPDX-License-Identifier: Apache-2.0
// The answer to {"cmd":"status"} (docs/control-protocol.md): per node its
// score, zones and hugepage pools; the BPF programs; compaction runs;
// allocation counting; the last pageblock scan and the pollution tracked;
// the policy (act mode) with its nodes, pool targets and actions. fragd fills
// it (each concern its part: concerns/<concern>/concern.cc); fragctl renders it
// (fragctl/render/status.h). Nearly every field is optional: an answer from
// an older or newer fragd shows what it has, and "-" for the rest. Each field is
// declared once, in status.cc's Fields<> tables (protocol/fields.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocol/action.h"
#include "protocol/lease.h"
#include "protocol/map.h"

namespace fragd {

struct ZoneStatus {
  std::optional<std::string> zone;
  std::optional<uint64_t> present_pages, free_pages, score;
  std::optional<std::vector<uint64_t>> free_blocks;     // per order
  std::optional<std::vector<double>> unusable_index;    // per order
  std::optional<std::map<std::string, uint64_t>> pageblocks;  // migratetype -> blocks
};

struct HugepagePoolStatus {
  std::optional<uint64_t> size_kib, total, free;
};

struct NodeStatus {
  std::optional<uint64_t> node, score, present_pages;
  // The kernel's node_unreclaimable (/proc/zoneinfo): kswapd has given up reclaiming the node.
  // Absent when the kernel does not say.
  std::optional<bool> unreclaimable;
  std::optional<std::vector<ZoneStatus>> zones;
  std::optional<std::vector<HugepagePoolStatus>> hugepages;
};

// The kernel's compaction settings (/proc/sys/vm) as the last tick read them; a setting this
// kernel lacks (defrag_mode before Linux 6.15) is absent.
struct VmSettings {
  std::optional<uint64_t> compaction_proactiveness, defrag_mode;
};

struct ProgramStatus {
  std::optional<std::string> name, tracepoint;
  std::optional<bool> attached;
  std::optional<uint64_t> id;
  std::optional<std::string> error;  // when not attached
};

struct CompactionRuns {
  std::optional<std::string> trigger;
  std::optional<uint64_t> runs, pages_migrated, pages_failed;
  std::optional<double> seconds;
};

// bpf.allocations: whether fast and failed allocations are counted now.
struct AllocationCounting {
  std::optional<std::string> mode;
  std::optional<bool> counting;
  std::optional<double> counting_seconds;
  std::optional<uint64_t> hold_ns, free_blocks_threshold;
};

struct PolicyStatus {
  std::optional<std::string> mode, method, source;
  std::optional<bool> dry_run, proactiveness_raised;
  std::optional<uint64_t> reloads, reload_errors, budget_used_ns, budget_ns;
  std::optional<uint64_t> budget_cuts;  // actions cut short at their compaction budget since start
};

struct PolicyNodeStatus {
  std::optional<int64_t> node;
  std::optional<uint64_t> score;
  std::optional<bool> hot;
  std::optional<uint64_t> floor;  // null: not learned
  std::optional<uint64_t> misses;
  std::optional<std::string> waiting;
  std::optional<uint64_t> next_allowed_in_ns;
};

struct PoolStatus {
  std::optional<int64_t> node;  // -1: the global pool
  std::optional<uint64_t> size_kib, target, reached;
  std::optional<bool> manual;   // set by fragctl pool set
  std::optional<std::string> last_result;
};

// The huge pages a zone's blocks make: free now, by compaction (with the 95% interval of an
// estimate from a sample: compaction_lower..upper), and lost to pollution.
struct ScanHugepages {
  std::optional<uint64_t> free, compaction, polluted, compaction_lower, compaction_upper;
};
// The last pageblock scan, per zone (fragctl map has the blocks).
struct ScanZoneSummary {
  std::optional<uint64_t> node;
  std::optional<std::string> zone;
  std::optional<std::map<std::string, uint64_t>> counts;  // block class -> blocks
  std::optional<ScanHugepages> hugepages;
  std::optional<uint64_t> compaction_cost_pages;
  // The zone's blocks and how many the estimates come from (fewer: a sample).
  std::optional<uint64_t> blocks, sample_blocks;
};
struct ScanSummary {
  std::optional<uint64_t> age_ns, duration_ns;
  std::optional<bool> sampled;        // the estimates come from a sample of pageblocks
  std::optional<uint64_t> map_age_ns;  // the map's least recently read block (absent: not whole yet)
  std::optional<std::vector<ScanZoneSummary>> zones;
};

struct StatusReply {
  std::optional<std::string> version;
  std::optional<uint64_t> pid, tick_ns;
  std::vector<NodeStatus> nodes;  // required
  std::optional<VmSettings> vm;
  std::optional<std::vector<ProgramStatus>> programs;
  std::optional<std::vector<std::string>> warnings;  // /proc files that could not be read
  std::optional<uint64_t> events_dropped;
  std::optional<std::vector<CompactionRuns>> compaction;  // by trigger
  std::optional<AllocationCounting> allocations;
  std::optional<PollutionInfo> pollution;  // null: not tracked
  std::optional<ScanSummary> scan;         // null: no scan (yet, or the scanner is off)
  std::optional<PolicyStatus> policy;
  std::optional<std::vector<PolicyNodeStatus>> policy_nodes;
  std::optional<std::vector<PoolStatus>> pools;
  // Absent (a fragd without act mode), null (none running) or the action running.
  std::optional<std::optional<ActionSummary>> action_running;
  std::optional<std::vector<ActionReport>> actions;  // the last ones, oldest first
  // Leases (act mode): the live ones, then the last ended ones, oldest first.
  std::optional<std::vector<LeaseView>> leases;
  // Set in an answer to a reader other than root (protocol/readers.h): what it was not sent.
  std::optional<std::string> withheld;
};
void to_json(nlohmann::json& j, const StatusReply& s);
void from_json(const nlohmann::json& j, StatusReply& s);

}  // namespace fragd
