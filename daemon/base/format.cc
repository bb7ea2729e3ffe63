// SPDX-License-Identifier: Apache-2.0
#include "base/format.h"

#include <cmath>

#include "base/text.h"

namespace fragd {
namespace {

using ull = unsigned long long;

std::string exact_duration(uint64_t ns) {
  static constexpr struct {
    uint64_t ns;
    const char* name;
  } units[] = {{3600'000'000'000ULL, "h"}, {60'000'000'000ULL, "m"}, {1'000'000'000ULL, "s"},
               {1'000'000ULL, "ms"},       {1'000ULL, "us"},         {1ULL, "ns"}};
  if (ns == 0) return "0s";
  for (const auto& u : units)
    if (ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  return std::to_string(ns) + "ns";  // not reached: every ns is a multiple of 1 ns
}

std::string age(uint64_t ns) {
  const uint64_t s = ns / 1'000'000'000ULL;
  if (s < 60) return strf("%llus", ull(s));
  if (s < 3600) return strf("%llum%02llus", ull(s / 60), ull(s % 60));
  if (s < 86400) return strf("%lluh%02llum", ull(s / 3600), ull(s % 3600 / 60));
  return strf("%llud%02lluh", ull(s / 86400), ull(s % 86400 / 3600));
}

}  // namespace

std::string format_count(double v) { return v >= 1000.0 ? strf("%.0f", v) : strf("%.3g", v); }

std::string format_duration(double ns, DurationStyle style) {
  if (std::isnan(ns)) return "-";
  if (ns < 0) ns = 0;
  switch (style) {
    case DurationStyle::Exact:
      return exact_duration(static_cast<uint64_t>(std::llround(ns)));
    case DurationStyle::Age:
      return age(static_cast<uint64_t>(ns));
    case DurationStyle::Measured:
      break;
  }
  if (ns >= 1e9) return format_count(ns / 1e9) + "s";
  if (ns >= 1e6) return format_count(ns / 1e6) + "ms";
  if (ns >= 1e3) return format_count(ns / 1e3) + "us";
  return format_count(ns) + "ns";
}

std::string format_size_kib(uint64_t kib, SizeStyle style) {
  static constexpr struct {
    unsigned shift;
    const char* name;
  } units[] = {{30, "TiB"}, {20, "GiB"}, {10, "MiB"}, {0, "KiB"}};
  const char* sep = style == SizeStyle::Text ? " " : "";
  for (const auto& u : units) {
    const uint64_t per = uint64_t{1} << u.shift;
    if (kib < per && u.shift > 0) continue;
    if (kib % per == 0) return strf("%llu%s%s", ull(kib / per), sep, u.name);
    const double v = static_cast<double>(kib) / static_cast<double>(per);
    return strf(style == SizeStyle::Config ? "%.2f%s%s" : "%.1f%s%s", v, sep, u.name);
  }
  return strf("%llu%sKiB", ull(kib), sep);  // not reached
}

}  // namespace fragd
