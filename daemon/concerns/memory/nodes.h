// SPDX-License-Identifier: Apache-2.0
// The nodes with memory, as the zones of each snapshot show them: a node taken offline or its
// memory hot-removed leaves (no zone with present pages), one brought online comes.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "kernel/procfs.h"

namespace fragd {

struct NodeChange {
  std::vector<int> gone, came;  // ascending
};

class OnlineNodes {
 public:
  // The nodes with present pages in `zones`; what changed since the last call (nothing on the
  // first, which only learns them).
  std::optional<NodeChange> update(const std::vector<ZoneFree>& zones);
  const std::set<int>& nodes() const { return online_; }

 private:
  std::set<int> online_;
};

}  // namespace fragd
