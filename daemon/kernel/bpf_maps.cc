// SPDX-License-Identifier: Apache-2.0
#include "kernel/bpf_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fragd {

int possible_cpus() { return libbpf_num_possible_cpus(); }

Result<void> read_percpu_words(int fd, uint32_t key, int ncpus, uint64_t* out, size_t words, const char* map) {
  if (ncpus <= 0) return make_error("cannot count possible CPUs (/sys/devices/system/cpu/possible)");
  std::vector<uint64_t> buf(words * ncpus);
  if (bpf_map_lookup_elem(fd, &key, buf.data()) != 0)
    return sys_error(std::string("read BPF map ") + map + " key " + std::to_string(key));
  std::fill(out, out + words, 0);
  for (int c = 0; c < ncpus; c++)
    for (size_t i = 0; i < words; i++) out[i] += buf[c * words + i];
  return {};
}

Result<uint32_t> read_hash_raw(int fd, uint32_t max, size_t key_size, size_t value_size, void* keys, void* values,
                               const char* map) {
  auto* k = static_cast<char*>(keys);
  auto* v = static_cast<char*>(values);
  uint32_t total = 0;
  uint64_t in_batch = 0, out_batch = 0;  // the kernel's token for a hash map is a __u32 bucket index
  bool first = true, batched = true;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  while (total < max) {
    uint32_t count = max - total;
    const int err = bpf_map_lookup_batch(fd, first ? nullptr : &in_batch, &out_batch, k + total * key_size,
                                         v + total * value_size, &count, &opts);
    if (err < 0 && (-err == EINVAL || -err == ENOTSUP || -err == EOPNOTSUPP) && first) {
      batched = false;
      break;
    }
    total += std::min(count, max - total);
    if (err < 0) {
      if (-err == ENOENT) break;  // the end of the map
      if (-err == ENOSPC) break;  // the map grew while read and a bucket no longer fits: stop at max
      return make_error(std::string("batch lookup of BPF map ") + map + ": " + strerror(-err), -err);
    }
    in_batch = out_batch;
    first = false;
  }
  if (batched) return total;
  total = 0;
  std::vector<char> key(key_size), next(key_size);
  bool have = false;
  // A key deleted under us restarts the walk at the first key: bounded by max.
  for (uint32_t i = 0; i < max; i++) {
    if (bpf_map_get_next_key(fd, have ? key.data() : nullptr, next.data()) != 0) break;
    key = next;
    have = true;
    if (bpf_map_lookup_elem(fd, key.data(), v + total * value_size) != 0) continue;  // deleted since
    std::memcpy(k + total * key_size, key.data(), key_size);
    total++;
  }
  return total;
}

Result<void> map_lookup(int fd, const void* key, void* value, const char* map, const std::string& key_text) {
  if (bpf_map_lookup_elem(fd, key, value) != 0)
    return sys_error(std::string("read BPF map ") + map + " key " + key_text);
  return {};
}

Result<void> map_delete(int fd, const void* key, const char* map, const std::string& key_text) {
  if (bpf_map_delete_elem(fd, key) != 0 && errno != ENOENT)
    return sys_error(std::string("delete ") + key_text + " from BPF map " + map);
  return {};
}

Result<uint32_t> map_max_entries(int fd, const char* map) {
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
    return sys_error(std::string("read the info of BPF map ") + map);
  return info.max_entries;
}

LatencyHist hist_from_bpf(const fragd_hist& h) {
  LatencyHist l;
  l.buckets.assign(h.buckets, h.buckets + FRAGD_HIST_BUCKETS);
  l.count = h.count;
  l.sum_ns = h.sum_ns;
  return l;
}

}  // namespace fragd
