// SPDX-License-Identifier: Apache-2.0
// What fragd's BPF maps take in the kernel, by the kernel's own accounting: the "memlock:"
// figure of each map's fdinfo (what `bpftool map show` prints; each map type's own
// memory-usage function since Linux 6.4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace fragd {

// The label of an object's global variables (libbpf's .rodata and .bss maps), summed.
inline constexpr const char* kGlobalsMap = "globals";

struct MapMemory {
  std::string object;  // the BPF object: stalls, compaction, pollution
  std::string map;     // the map's name in bpf/<object>.bpf.c, or kGlobalsMap
  uint64_t bytes = 0;  // the kernel's memlock figure (summed over the maps of this entry)
  uint32_t maps = 0;   // kernel maps in this entry (more than one for kGlobalsMap)
};

// The "memlock:" value of a BPF map's /proc/<pid>/fdinfo/<fd> text. `where` names the file in
// the error: a missing line or a value that is not a whole number is an Error, not a 0.
Result<uint64_t> parse_fdinfo_memlock(std::string_view fdinfo, const std::string& where);

// Adds one map's bytes to `out`: a global-data map (`internal`) to its object's kGlobalsMap
// entry, any other map as an entry of its own, in the order first seen.
void add_map_memory(std::vector<MapMemory>& out, const std::string& object, const std::string& map, bool internal,
                    uint64_t bytes);

}  // namespace fragd
