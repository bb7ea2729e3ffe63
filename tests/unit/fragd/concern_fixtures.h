// SPDX-License-Identifier: Apache-2.0
// What the concerns' unit tests build alike: a node's zone with given free blocks, a control
// server on a socket in a scratch folder (the concerns that answer later send through it), and a
// family looked up by name among those a concern emitted.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/family.h"
#include "fragd/control.h"
#include "kernel/procfs.h"

namespace fragd::test {

// Node `node`'s Normal zone of 4 GiB whose free memory is `blocks[order]` free blocks of each order.
inline ZoneFree zone_with_free(int node, const std::map<unsigned, uint64_t>& blocks) {
  ZoneFree z;
  z.node = node;
  z.zone = "Normal";
  z.present_pages = z.managed_pages = z.spanned_pages = 1 << 20;
  z.free_blocks.assign(11, 0);
  for (const auto& [order, n] : blocks) {
    z.free_blocks[order] = n;
    z.free_pages += n << order;
  }
  return z;
}

// A control server at DIR/fragd.sock that answers nothing itself; null when it cannot start.
inline std::unique_ptr<ControlServer> scratch_control(const std::string& dir) {
  ControlOptions o;
  o.path = dir + "/fragd.sock";
  auto c = ControlServer::start(o, [](const ControlRequest&, long, uint64_t) { return std::nullopt; });
  return c ? std::move(*c) : nullptr;
}

// The family `name` among `fs`; null when absent.
inline const prometheus::MetricFamily* family(const Families& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace fragd::test
