// The hugetlb pool strategy: reach a target count when it is feasible,
// never beyond it, never below the MemAvailable guard. Pure logic over an
// Actuator, so it is tested with a fake one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "act/actuator.h"

namespace fragd {

struct PoolRequest {
  int node = -1;               // < 0: the global pool
  uint64_t size_kib = 2048;
  uint64_t target = 0;
  std::vector<int> compact_nodes;  // nodes to compact when free blocks are short
  uint64_t guard_kib = 1024 * 1024;
  bool drop_caches = false;
};

struct PoolOutcome {
  // ok: target reached; short: stopped after two attempts in a row without
  // progress; guard: stopped by the MemAvailable guard; error: a read or
  // write failed (detail says which); abandoned: fragd is exiting.
  std::string result;
  std::string detail;
  uint64_t before = 0, after = 0;
  unsigned attempts = 0;     // pool writes
  unsigned compactions = 0;  // node compactions run
  bool dropped_caches = false;
};

// Grow:
//  1. current == target: ok, nothing written.
//  2. each attempt: goal = min(target, current + (MemAvailable - guard) / size);
//     goal == current -> guard. When the free blocks of the page's order on
//     the pool's node(s) are fewer than goal - current, compact
//     compact_nodes first. Write goal, read back.
//  3. progress (read back > current): next attempt. None: count a miss; two
//     misses in a row -> short. After the first miss, drop caches when
//     enabled. At most 16 attempts.
// Shrink (current > target): write target, read back (the kernel keeps pages
// in use as surplus): ok when read back <= target... else short.
PoolOutcome resize_pool(Actuator& a, const PoolRequest& r);

// log2(size_kib / 4): 9 for 2 MiB, 18 for 1 GiB.
unsigned page_order(uint64_t size_kib);

}  // namespace fragd
