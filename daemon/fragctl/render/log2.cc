// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/log2.h"

#include <cstdio>

namespace fragd {
namespace {

uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t bucket_at(const LatencyHist& h, size_t b) { return b < h.buckets.size() ? h.buckets[b] : 0; }

// Rows of render_log2: row 0 = bucket 0, row k = octave 2^(MIN_SHIFT+k-1),
// last row = the open-ended bucket.
constexpr int kOctaves = FRAGD_HIST_MAX_SHIFT - FRAGD_HIST_MIN_SHIFT;
constexpr int kRows = kOctaves + 2;

int row_of_bucket(uint32_t b) {
  if (b == 0) return 0;
  if (b >= FRAGD_HIST_BUCKETS - 1) return kRows - 1;
  return 1 + static_cast<int>((b - 1) / FRAGD_HIST_SUB);
}

uint64_t row_lower_ns(int row) {
  if (row == 0) return 0;
  return 1ULL << (FRAGD_HIST_MIN_SHIFT + row - 1);
}

std::string format_bound(uint64_t ns, double scale, int decimals) {
  char buf[64];
  if (decimals == 0)
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(ns));
  else
    std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(ns) / scale);
  return buf;
}

}  // namespace

std::string render_log2(const LatencyHist& h, std::string unit) {
  uint64_t rows[kRows] = {};
  for (uint32_t b = 0; b < FRAGD_HIST_BUCKETS; ++b) {
    int r = row_of_bucket(b);
    rows[r] = sat_add(rows[r], bucket_at(h, b));
  }
  int first = -1, last = -1;
  uint64_t peak = 0;
  for (int r = 0; r < kRows; ++r) {
    if (rows[r] == 0) continue;
    if (first < 0) first = r;
    last = r;
    peak = std::max(peak, rows[r]);
  }
  if (first < 0) return "";

  double scale = 1000.0;
  int decimals = 1;
  if (unit == "nsecs") {
    scale = 1.0;
    decimals = 0;
  } else if (unit == "msecs") {
    scale = 1e6;
    decimals = 3;
  }

  constexpr int kBar = 40;
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "     %-19s : count     distribution\n", unit.c_str());
  out += line;
  for (int r = first; r <= last; ++r) {
    std::string lo = format_bound(row_lower_ns(r), scale, decimals);
    std::string hi;
    if (r == kRows - 1)
      hi = "inf";
    else if (decimals == 0)
      hi = format_bound(row_lower_ns(r + 1) - 1, scale, 0);  // inclusive, like bcc
    else
      hi = format_bound(row_lower_ns(r + 1), scale, decimals);
    int stars = static_cast<int>(static_cast<long double>(rows[r]) * kBar / peak);
    std::string bar(static_cast<size_t>(stars), '*');
    std::snprintf(line, sizeof line, "%10s -> %-10s : %-8llu |%-*s|\n", lo.c_str(), hi.c_str(),
                  static_cast<unsigned long long>(rows[r]), kBar, bar.c_str());
    out += line;
  }
  return out;
}

}  // namespace fragd
