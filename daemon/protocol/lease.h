// SPDX-License-Identifier: Apache-2.0
// Leases on the wire (docs/control-protocol.md): the answers to {"cmd":"ensure"} and
// {"cmd":"release"}, and the status answer's "leases". One struct per message, its fields
// declared once in the tables below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/fields.h"

namespace fragd {

// One lease as fragctl shows it (concerns/act/leases.h keeps the rest).
struct LeaseView {
  uint64_t id = 0;
  std::string consumer;
  std::optional<int> node;  // none: the global pool
  uint64_t size_kib = 0;
  uint64_t count = 0;
  std::string state;  // making, held, ended
  uint64_t age_ns = 0;         // since asked
  uint64_t expires_in_ns = 0;  // held: until its hold is over; 0 otherwise
  uint64_t action = 0;         // the pool action that made it
  std::string end;             // ended: why
};

// ensure: the lease (hugetlb sizes) and the actions queued to make the pages.
struct EnsureReply {
  std::optional<LeaseView> lease;  // none for --order: free blocks are made, not held
  std::vector<uint64_t> ids;
  uint64_t target = 0;  // the pool's target with the lease (hugetlb sizes)
  std::string reason;   // what was asked, as the action log names it
};

// release: the leases it ended (none: the consumer held none, which is not an error).
struct ReleaseReply {
  std::vector<LeaseView> released;
};

namespace wire {

template <>
struct Fields<LeaseView> {
  static auto list() {
    using T = LeaseView;
    return std::make_tuple(field("id", &T::id), field("for", &T::consumer), field_or_null("node", &T::node),
                           field("size_kib", &T::size_kib), field("count", &T::count), field("state", &T::state),
                           field("age_ns", &T::age_ns), field("expires_in_ns", &T::expires_in_ns),
                           field("action", &T::action), field_or_default("end", &T::end));
  }
};
template <>
struct Fields<EnsureReply> {
  static auto list() {
    using T = EnsureReply;
    return std::make_tuple(field_or_null("lease", &T::lease), field("ids", &T::ids), field("target", &T::target),
                           field("reason", &T::reason));
  }
};
template <>
struct Fields<ReleaseReply> {
  static auto list() { return std::make_tuple(field("released", &ReleaseReply::released)); }
};

}  // namespace wire

inline void to_json(nlohmann::json& j, const LeaseView& r) { j = wire::write_object(r); }
inline void from_json(const nlohmann::json& j, LeaseView& r) { wire::read_object(j, r, "lease"); }
inline void to_json(nlohmann::json& j, const EnsureReply& r) {
  j = wire::write_object(r);
  j["ok"] = true;
}
inline void from_json(const nlohmann::json& j, EnsureReply& r) { wire::read_object(j, r, "ensure"); }
inline void to_json(nlohmann::json& j, const ReleaseReply& r) {
  j = wire::write_object(r);
  j["ok"] = true;
}
inline void from_json(const nlohmann::json& j, ReleaseReply& r) { wire::read_object(j, r, "release"); }

}  // namespace fragd
