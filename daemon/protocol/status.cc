// SPDX-License-Identifier: Apache-2.0
#include "protocol/status.h"

#include <nlohmann/json.hpp>

#include "protocol/fields.h"

namespace fragd {
namespace wire {

// Each field of the status answer, once: its key and its member (protocol/fields.h).
template <>
struct Fields<ZoneStatus> {
  static auto list() {
    using T = ZoneStatus;
    return std::make_tuple(field("zone", &T::zone), field("present_pages", &T::present_pages),
                           field("free_pages", &T::free_pages), field("score", &T::score),
                           field("free_blocks", &T::free_blocks), field("unusable_index", &T::unusable_index),
                           field("pageblocks", &T::pageblocks));
  }
};
template <>
struct Fields<HugepagePoolStatus> {
  static auto list() {
    using T = HugepagePoolStatus;
    return std::make_tuple(field("size_kib", &T::size_kib), field("total", &T::total), field("free", &T::free));
  }
};
template <>
struct Fields<NodeStatus> {
  static auto list() {
    using T = NodeStatus;
    return std::make_tuple(field("node", &T::node), field("score", &T::score),
                           field("present_pages", &T::present_pages),
                           field("unreclaimable", &T::unreclaimable), field("zones", &T::zones),
                           field("hugepages", &T::hugepages));
  }
};
template <>
struct Fields<VmSettings> {
  static auto list() {
    using T = VmSettings;
    return std::make_tuple(field("compaction_proactiveness", &T::compaction_proactiveness),
                           field("defrag_mode", &T::defrag_mode));
  }
};
template <>
struct Fields<ProgramStatus> {
  static auto list() {
    using T = ProgramStatus;
    return std::make_tuple(field("name", &T::name), field("tracepoint", &T::tracepoint),
                           field("attached", &T::attached), field("id", &T::id), field("error", &T::error));
  }
};
template <>
struct Fields<CompactionRuns> {
  static auto list() {
    using T = CompactionRuns;
    return std::make_tuple(field("trigger", &T::trigger), field("runs", &T::runs),
                           field("pages_migrated", &T::pages_migrated), field("pages_failed", &T::pages_failed),
                           field("seconds", &T::seconds));
  }
};
template <>
struct Fields<AllocationCounting> {
  static auto list() {
    using T = AllocationCounting;
    return std::make_tuple(field("mode", &T::mode), field("counting", &T::counting),
                           field("counting_seconds", &T::counting_seconds), field("hold_ns", &T::hold_ns),
                           field("free_blocks_threshold", &T::free_blocks_threshold));
  }
};
template <>
struct Fields<PolicyStatus> {
  static auto list() {
    using T = PolicyStatus;
    return std::make_tuple(field("mode", &T::mode), field("dry_run", &T::dry_run), field("method", &T::method),
                           field("source", &T::source), field("reloads", &T::reloads),
                           field("reload_errors", &T::reload_errors),
                           field("proactiveness_raised", &T::proactiveness_raised),
                           field("budget_used_ns", &T::budget_used_ns), field("budget_ns", &T::budget_ns),
                           field("budget_cuts", &T::budget_cuts));
  }
};
template <>
struct Fields<PolicyNodeStatus> {
  static auto list() {
    using T = PolicyNodeStatus;
    return std::make_tuple(field("node", &T::node), field("score", &T::score), field("hot", &T::hot),
                           field_or_null("floor", &T::floor), field("misses", &T::misses),
                           field("waiting", &T::waiting), field("next_allowed_in_ns", &T::next_allowed_in_ns));
  }
};
template <>
struct Fields<PoolStatus> {
  static auto list() {
    using T = PoolStatus;
    return std::make_tuple(field("node", &T::node), field("size_kib", &T::size_kib), field("target", &T::target),
                           field("reached", &T::reached), field("manual", &T::manual),
                           field("last_result", &T::last_result));
  }
};
template <>
struct Fields<ScanHugepages> {
  static auto list() {
    using T = ScanHugepages;
    return std::make_tuple(field("free", &T::free), field("compaction", &T::compaction),
                           field("polluted", &T::polluted), field("compaction_lower", &T::compaction_lower),
                           field("compaction_upper", &T::compaction_upper));
  }
};
template <>
struct Fields<ScanZoneSummary> {
  static auto list() {
    using T = ScanZoneSummary;
    return std::make_tuple(field("node", &T::node), field("zone", &T::zone), field("counts", &T::counts),
                           field("hugepages", &T::hugepages),
                           field("compaction_cost_pages", &T::compaction_cost_pages), field("blocks", &T::blocks),
                           field("sample_blocks", &T::sample_blocks));
  }
};
template <>
struct Fields<ScanSummary> {
  static auto list() {
    using T = ScanSummary;
    return std::make_tuple(field("age_ns", &T::age_ns), field("duration_ns", &T::duration_ns),
                           field("zones", &T::zones), field("sampled", &T::sampled),
                           field("map_age_ns", &T::map_age_ns));
  }
};
// fragd always says whether it tracks pollution and has a scan: null when not.
template <>
struct Fields<StatusReply> {
  static auto list() {
    using T = StatusReply;
    return std::make_tuple(
        field("version", &T::version), field("withheld", &T::withheld), field("pid", &T::pid),
        field("tick_ns", &T::tick_ns), field("nodes", &T::nodes), field("vm", &T::vm), field("programs", &T::programs),
        field("warnings", &T::warnings), field("events_dropped", &T::events_dropped),
        field("compaction", &T::compaction), field("allocations", &T::allocations),
        field_or_null("pollution", &T::pollution), field_or_null("scan", &T::scan), field("policy", &T::policy),
        field("policy_nodes", &T::policy_nodes), field("pools", &T::pools),
        field("action_running", &T::action_running), field("actions", &T::actions), field("leases", &T::leases));
  }
};

}  // namespace wire

void to_json(nlohmann::json& j, const StatusReply& s) {
  j = wire::write_object(s);
  j["ok"] = true;
}

void from_json(const nlohmann::json& a, StatusReply& s) {
  s = StatusReply{};
  wire::read_object(a, s, "");
}

}  // namespace fragd
