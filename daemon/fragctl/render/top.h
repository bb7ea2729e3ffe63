// SPDX-License-Identifier: Apache-2.0
// `fragctl top`'s screen: each node's score and free 2 MiB / 1 GiB blocks, then
// cgroups, consumers and kernel call sites by stall time (or stall count), and
// with --stacks the whole stacks. Pure: the caller prints it.
#pragma once

#include <string>

#include "protocol/top.h"

namespace fragd {

struct TopViewOptions {
  std::string sort = "time";  // "time" or "stalls"
  size_t limit = 10;          // rows per table
  bool stacks = false;
  double interval_s = 0;      // 0: cumulative since fragd started
};

std::string format_top_text(const TopReply& r, const TopViewOptions& o);

// `newer` minus `older` (an interval): rows matched by name (consumer and order; stack by
// consumer, call site and frames); a row only in `newer` counts whole; nodes are newer's.
TopReply top_interval(const TopReply& newer, const TopReply& older);

}  // namespace fragd
