// SPDX-License-Identifier: Apache-2.0
// What `fragctl preflight` and `fragctl ensure` ask for: SIZE COUNT, or COUNT with --order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace fragd::ctl {

// SIZE COUNT, or COUNT alone with --order: what preflight and ensure ask for.
struct PageAsk {
  std::optional<uint64_t> size_kib;
  std::optional<unsigned> order;
  uint64_t count = 0;
};

// From the positional words and --order (0: not given); the error says what to write.
fragd::Result<PageAsk> parse_page_ask(const std::vector<std::string>& words, unsigned order);

}  // namespace fragd::ctl
