// SPDX-License-Identifier: Apache-2.0
// `fragctl preflight`'s line for a person: the verdict and its figures, and what they rest on.
#pragma once

#include <string>

#include "concerns/supply/supply.h"

namespace fragd {

// "node 0: 1000 x 2 MiB makeable, 312 free now and 4100 more by compaction (95%: ...), migrating
// about 120k pages [sampled scan, 3.0 s old]\n"
std::string format_preflight(const Supply& s);

}  // namespace fragd
