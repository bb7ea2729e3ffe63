// SPDX-License-Identifier: Apache-2.0
// Hugetlb pools per node and size (sysfs), and the targets act mode keeps them
// at. Families fragd_hugepages, fragd_hugepages_target.
#pragma once

#include <cstdint>
#include <vector>

#include "base/family.h"
#include "kernel/procfs.h"

namespace fragd {

// A pool size act mode holds (policy hugepages.pools); node -1: the global pool.
struct PoolGauge {
  int node = -1;
  uint64_t size_kib = 0;
  uint64_t target = 0;
};

// fragd_hugepages: the pools as sysfs shows them.
void pool_metrics(const MemSnapshot& mem, Families& out);
// fragd_hugepages_target: the act engine's targets (none: no family).
void pool_target_metrics(const std::vector<PoolGauge>& targets, Families& out);

}  // namespace fragd
