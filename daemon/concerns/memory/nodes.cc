// SPDX-License-Identifier: Apache-2.0
#include "concerns/memory/nodes.h"

namespace fragd {

std::optional<NodeChange> OnlineNodes::update(const std::vector<ZoneFree>& zones) {
  std::set<int> online;
  for (const auto& z : zones)
    if (z.present_pages > 0) online.insert(z.node);
  if (online == online_) return std::nullopt;
  const bool first = online_.empty();
  NodeChange c;
  for (int n : online_)
    if (!online.count(n)) c.gone.push_back(n);
  for (int n : online)
    if (!online_.count(n)) c.came.push_back(n);
  online_ = std::move(online);
  if (first) return std::nullopt;
  return c;
}

}  // namespace fragd
