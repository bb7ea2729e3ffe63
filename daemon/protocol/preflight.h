// SPDX-License-Identifier: Apache-2.0
// The answer to {"cmd":"preflight"} (docs/control-protocol.md): may this host, or one node,
// supply COUNT pages of a size now, after one compaction, or not (concerns/supply). Root and
// socket_group readers get the same answer: it carries no physical address. Its fields are
// declared once, in the table below.
#pragma once

#include <nlohmann/json.hpp>

#include "protocol/bounds.h"
#include "protocol/fields.h"
#include "concerns/supply/supply.h"

namespace fragd {
namespace wire {

template <>
struct Codec<Verdict> {
  static nlohmann::json write(const Verdict& v) { return verdict_name(v); }
  static void read(const nlohmann::json& j, Verdict& out, const std::string& path) {
    for (Verdict v : {Verdict::Ready, Verdict::Makeable, Verdict::No})
      if (j.is_string() && j.get_ref<const std::string&>() == verdict_name(v)) {
        out = v;
        return;
      }
    malformed(path + ": not one of ready, makeable, no");
  }
};

template <>
struct Fields<NodeSupply> {
  static auto list() {
    using T = NodeSupply;
    return std::make_tuple(field("node", &T::node).within(0, 1 << 20), field("pool_free", &T::pool_free),
                           field("free_blocks", &T::free_blocks), field("free", &T::free),
                           field("makeable", &T::makeable), field("makeable_interval", &T::makeable_ci),
                           field("pages_to_migrate", &T::pages_to_migrate), field("total_pages", &T::total_pages));
  }
};
template <>
struct Fields<Supply> {
  static auto list() {
    using T = Supply;
    return std::make_tuple(field("verdict", &T::verdict), field("size_kib", &T::size_kib),
                           field("order", &T::order).within(0, 63), field("hugetlb", &T::hugetlb),
                           field("count", &T::count), field_or_null("node", &T::node),
                           field("free", &T::free), field("makeable", &T::makeable),
                           field("pages_to_migrate", &T::pages_to_migrate), field("interval", &T::interval),
                           field("age_seconds", &T::age_seconds), field("basis", &T::basis),
                           field("reason", &T::reason), field("nodes", &T::nodes));
  }
};

}  // namespace wire

// Every field required ("node" null for the whole host).
inline void to_json(nlohmann::json& j, const Supply& r) {
  j = wire::write_object(r);
  j["ok"] = true;
}
inline void from_json(const nlohmann::json& j, Supply& r) { wire::read_object(j, r, "preflight"); }

}  // namespace fragd
