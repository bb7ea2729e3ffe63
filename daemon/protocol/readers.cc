// SPDX-License-Identifier: Apache-2.0
#include "protocol/readers.h"

namespace fragd {

namespace {

constexpr const char* kMapWithheld =
    "each block's class and pages in use (scan.zones[].classes, used), the polluted blocks and the polluters "
    "(pollution.blocks, top): they place memory at physical addresses and name the tasks behind it, which the "
    "kernel shows to root only; ask as root for them";
constexpr const char* kStatusWithheld =
    "the polluters (pollution.top): they name the tasks behind the pollution fragd traced, which the kernel "
    "shows to root only; ask as root for them";

void restrict_pollution(std::optional<PollutionInfo>& p) {
  if (!p) return;
  p->top.clear();
  p->blocks.reset();
}

}  // namespace

Reader reader_of(long uid) { return uid == 0 ? Reader::Root : Reader::Other; }

void restrict_map(MapView& v, Reader reader) {
  if (reader == Reader::Root) return;
  for (MapZone& z : v.zones) {
    z.classes.clear();
    z.used.clear();
  }
  restrict_pollution(v.pollution);
  v.withheld = kMapWithheld;
}

void restrict_status(StatusReply& s, Reader reader) {
  if (reader == Reader::Root) return;
  restrict_pollution(s.pollution);
  s.withheld = kStatusWithheld;
}

}  // namespace fragd
