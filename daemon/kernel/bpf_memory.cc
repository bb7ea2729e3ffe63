// SPDX-License-Identifier: Apache-2.0
#include "kernel/bpf_memory.h"

#include <algorithm>
#include <charconv>

namespace fragd {

Result<uint64_t> parse_fdinfo_memlock(std::string_view fdinfo, const std::string& where) {
  constexpr std::string_view kKey = "memlock:";
  size_t at = 0;
  while (at < fdinfo.size()) {
    size_t end = fdinfo.find('\n', at);
    if (end == std::string_view::npos) end = fdinfo.size();
    std::string_view line = fdinfo.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, kKey.size()) != kKey) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (line.empty() || ec != std::errc() || p != line.data() + line.size())
      return make_error(where + ": \"memlock:\" is not a whole number of bytes: \"" + std::string(line) + "\"", EINVAL);
    return v;
  }
  return make_error(where + " has no \"memlock:\" line: is it a BPF map's fdinfo?", ENOENT);
}

void add_map_memory(std::vector<MapMemory>& out, const std::string& object, const std::string& map, bool internal,
                    uint64_t bytes) {
  const std::string name = internal ? std::string(kGlobalsMap) : map;
  auto it = std::find_if(out.begin(), out.end(),
                         [&](const MapMemory& m) { return m.object == object && m.map == name; });
  if (it == out.end()) it = out.insert(out.end(), MapMemory{object, name, 0, 0});
  it->bytes += bytes;
  it->maps++;
}

}  // namespace fragd
