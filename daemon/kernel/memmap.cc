// SPDX-License-Identifier: Apache-2.0
#include "kernel/memmap.h"

#include "base/text.h"
#include "kernel/procfs.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fragd {

Result<std::vector<ZoneSpan>> parse_zone_spans(std::string_view text, std::string_view path) {
  std::vector<ZoneSpan> out;
  struct Partial {
    ZoneSpan z;
    uint64_t spanned = 0;
    bool has_start = false, has_spanned = false;
  };
  std::vector<Partial> all;
  for (size_t pos = 0; pos < text.size();) {
    const std::string_view line = next_line(text, pos);
    auto t = tokenize(line);
    if (t.empty()) continue;
    if (t[0] == "Node" && t.size() >= 4 && t[2] == "zone") {
      Partial p;
      std::string_view n = t[1];
      if (!n.empty() && n.back() == ',') n.remove_suffix(1);
      uint64_t node;
      if (!parse_u64(n, node)) continue;
      p.z.node = static_cast<int>(node);
      p.z.zone = std::string(t[3]);
      all.push_back(std::move(p));
      continue;
    }
    if (all.empty()) continue;
    Partial& p = all.back();
    uint64_t v;
    if (t[0] == "start_pfn:" && t.size() == 2 && parse_u64(t[1], v)) {
      p.z.start_pfn = v;
      p.has_start = true;
    } else if (t[0] == "spanned" && t.size() == 2 && parse_u64(t[1], v)) {
      p.spanned = v;
      p.has_spanned = true;
    } else if (t[0] == "min" && t.size() == 2 && parse_u64(t[1], v)) {
      p.z.reserve_pages += v;
    } else if (t[0] == "low" && t.size() == 2 && parse_u64(t[1], v)) {
      p.z.low_pages = v;
    } else if (t[0] == "high" && t.size() == 2 && parse_u64(t[1], v)) {
      p.z.high_pages = v;
    } else if (t[0] == "protection:") {
      // "protection: (0, 3019, 24090, 24090, 24090)"
      uint64_t most = 0;
      for (size_t i = 1; i < t.size(); i++) {
        std::string_view s = t[i];
        while (!s.empty() && (s.front() == '(')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ',' || s.back() == ')')) s.remove_suffix(1);
        if (parse_u64(s, v)) most = std::max(most, v);
      }
      p.z.reserve_pages += most;
      p.z.protection_pages = most;
    }
  }
  for (auto& p : all) {
    if (!p.has_start || !p.has_spanned || p.spanned == 0) continue;
    if (p.spanned > UINT64_MAX - p.z.start_pfn) continue;  // garbage: the span would wrap past 2^64
    p.z.end_pfn = p.z.start_pfn + p.spanned;
    out.push_back(std::move(p.z));
  }
  if (out.empty())
    return make_error(std::string(path) +
                          ": no zone with \"start_pfn\" and \"spanned\" lines; fragd needs the zoneinfo of "
                          "Linux 4.x or later",
                      EINVAL);
  return out;
}

Result<std::vector<PfnRange>> parse_iomem_ram(std::string_view text, std::string_view path, uint64_t page_bytes) {
  std::vector<PfnRange> out;
  bool zero_addresses = false;
  for (size_t pos = 0; pos < text.size();) {
    const std::string_view line = next_line(text, pos);
    if (line.empty() || line[0] == ' ') continue;  // nested resources are indented
    const size_t colon = line.find(" : ");
    if (colon == std::string_view::npos || line.substr(colon + 3) != "System RAM") continue;
    const std::string_view range = line.substr(0, colon);
    const size_t dash = range.find('-');
    uint64_t lo, hi;
    if (dash == std::string_view::npos || !parse_u64(range.substr(0, dash), lo, 16) ||
        !parse_u64(range.substr(dash + 1), hi, 16))
      continue;
    if (lo == 0 && hi == 0) {
      zero_addresses = true;
      continue;
    }
    const uint64_t start = (lo + page_bytes - 1) / page_bytes, end = (hi + 1) / page_bytes;
    if (end > start) out.push_back({start, end});
  }
  if (out.empty())
    return make_error(std::string(path) + (zero_addresses
                                               ? ": addresses read as zero (only root sees them); run fragd as root"
                                               : ": no \"System RAM\" range"),
                      zero_addresses ? EACCES : EINVAL);
  std::sort(out.begin(), out.end(), [](const PfnRange& a, const PfnRange& b) { return a.start_pfn < b.start_pfn; });
  return out;
}

namespace {
// A sysfs value without its surrounding whitespace and newline.
std::string_view trimmed(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}
// "0x1f" (sysfs writes addresses with the prefix) as a number.
bool parse_hex(std::string_view s, uint64_t& out) {
  s = trimmed(s);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return parse_u64(s, out, 16);
}
}  // namespace

Result<std::vector<PfnRange>> read_firmware_memmap_ram(const std::string& sys_root, uint64_t page_bytes) {
  const std::string dir = sys_root + "/firmware/memmap";
  DIR* d = opendir(dir.c_str());
  if (!d)
    return make_error("cannot open " + dir + ": " + std::strerror(errno) +
                          " (the kernel lacks CONFIG_FIRMWARE_MEMMAP, or /sys is not mounted there)",
                      errno);
  std::vector<std::string> entries;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') entries.emplace_back(e->d_name);
  closedir(d);
  std::vector<PfnRange> out;
  for (const auto& name : entries) {
    const std::string base = dir + "/" + name;
    auto type = read_text_file(base + "/type");
    if (!type || trimmed(*type) != "System RAM") continue;
    auto lo_text = read_text_file(base + "/start");
    auto hi_text = read_text_file(base + "/end");
    uint64_t lo, hi;
    if (!lo_text || !hi_text || !parse_hex(*lo_text, lo) || !parse_hex(*hi_text, hi) || hi < lo)
      return make_error(base + ": start and end are not two hexadecimal addresses, start <= end", EINVAL);
    const uint64_t start = (lo + page_bytes - 1) / page_bytes, end = (hi + 1) / page_bytes;
    if (end > start) out.push_back({start, end});
  }
  if (out.empty()) return make_error(dir + ": no \"System RAM\" range", EINVAL);
  std::sort(out.begin(), out.end(), [](const PfnRange& a, const PfnRange& b) { return a.start_pfn < b.start_pfn; });
  return out;
}

}  // namespace fragd
