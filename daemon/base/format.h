// SPDX-License-Identifier: Apache-2.0
// The one formatter of each kind of quantity fragd prints: durations, sizes and
// counts. Each has a few styles for the places that need them (a config value
// that must read back exactly, a measured figure, an age), chosen by argument.
#pragma once

#include <cstdint>
#include <string>

namespace fragd {

enum class DurationStyle {
  Exact,     // the config file's form, reads back to the same value: "5m", "250ms", "1500us", "0s"
  Measured,  // a measured time, three significant digits: "7.2ms", "598us", "2.05s"; "-" for NaN
  Age,       // how long ago, coarse: "45s", "3m07s", "2h05m", "1d03h"
};
std::string format_duration(double ns, DurationStyle style = DurationStyle::Measured);

enum class SizeStyle {
  Config,  // the config file's form: "2MiB", "1.50GiB", "512KiB"
  Text,    // for people: "2 MiB", "1.5 GiB", "16.0 MiB" (16380 KiB), "512 KiB"
};
std::string format_size_kib(uint64_t kib, SizeStyle style = SizeStyle::Text);

// A count or ratio with three significant digits and no exponent: 12.5, 10, 598, 1234.
std::string format_count(double v);

}  // namespace fragd
