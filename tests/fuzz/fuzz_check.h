// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the fuzz targets: an invariant check that stops the run
// (libFuzzer then saves the input as a crash), and the input as text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

// FUZZ_CHECK(cond, "what"): a broken invariant is a finding, like a crash.
#define FUZZ_CHECK(cond, what)                                                                  \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", __FILE__, __LINE__, what, #cond); \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

namespace fragd_fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace fragd_fuzz
