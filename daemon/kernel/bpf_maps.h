// SPDX-License-Identifier: Apache-2.0
// Reading BPF maps of any layout: a per-CPU value summed over the CPUs, a hash map whole, one
// entry looked up or deleted, a map's size. The mechanism alone: it knows no object and no
// concern; each concern reads its own maps with it (concerns/<concern>/maps).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "base/histogram.h"
#include "base/result.h"
#include "fragd_common.h"

namespace fragd {

// The possible CPUs, as the kernel sizes a per-CPU map's value (0 or less: unknown).
int possible_cpus();

// Sums `words` __u64 of every CPU's value of key `key` of per-CPU map `fd` into `out`.
Result<void> read_percpu_words(int fd, uint32_t key, int ncpus, uint64_t* out, size_t words, const char* map);

// A per-CPU value made only of __u64 fields, summed over the CPUs.
template <class T>
Result<void> read_percpu(int fd, uint32_t key, int ncpus, T* out, const char* map) {
  static_assert(sizeof(T) % 8 == 0 && std::is_trivially_copyable_v<T>);
  std::array<uint64_t, sizeof(T) / 8> sum{};
  if (auto r = read_percpu_words(fd, key, ncpus, sum.data(), sum.size(), map); !r) return r;
  std::memcpy(static_cast<void*>(out), sum.data(), sizeof(T));
  return {};
}
// The same, returned: the one value of a per-CPU array of one entry (key 0).
template <class T>
Result<T> read_percpu_value(int fd, int ncpus, const char* map) {
  T v{};
  if (auto r = read_percpu(fd, 0, ncpus, &v, map); !r) return r.error();
  return v;
}

// Every entry of hash map `fd`, at most `max`, into `keys` and `values` (key_size and value_size
// bytes each, room for `max`), by batches where the kernel has them (5.6+), else key by key.
// Returns how many were read.
Result<uint32_t> read_hash_raw(int fd, uint32_t max, size_t key_size, size_t value_size, void* keys, void* values,
                               const char* map);

template <class K, class V>
Result<void> read_hash(int fd, uint32_t max, std::vector<K>& keys, std::vector<V>& values, const char* map) {
  static_assert(std::is_trivially_copyable_v<K> && std::is_trivially_copyable_v<V>);
  keys.assign(max, K{});
  values.assign(max, V{});
  auto n = read_hash_raw(fd, max, sizeof(K), sizeof(V), keys.data(), values.data(), map);
  if (!n) return n.error();
  keys.resize(*n);
  values.resize(*n);
  return {};
}

// One entry: looked up into `value` (an error naming the map and `key_text` when it is missing),
// or deleted (a missing entry is no error).
Result<void> map_lookup(int fd, const void* key, void* value, const char* map, const std::string& key_text);
Result<void> map_delete(int fd, const void* key, const char* map, const std::string& key_text);

// max_entries of map `fd`.
Result<uint32_t> map_max_entries(int fd, const char* map);

// A BPF histogram as the daemon keeps it.
LatencyHist hist_from_bpf(const fragd_hist& h);

}  // namespace fragd
