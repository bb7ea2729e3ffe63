// Small helpers shared by fragd's formatters and its daemon: printf into a
// std::string, and clock readings in nanoseconds.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>

namespace fragd {

// printf-style formatting into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The clock's time in nanoseconds (CLOCK_MONOTONIC unless told).
uint64_t now_ns(clockid_t clk = CLOCK_MONOTONIC);

}  // namespace fragd
