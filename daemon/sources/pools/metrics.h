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

void pool_metrics(const MemSnapshot& mem, const std::vector<PoolGauge>& targets, Families& out);

}  // namespace fragd
