// SPDX-License-Identifier: Apache-2.0
#include "fragctl/subcommand.h"

#include <algorithm>
#include <deque>

namespace fragd::ctl {
namespace {

// Filled before main() by the commands' namespace-scope declarations; a function's static, so
// it exists before the first of them, whatever the order their files are initialised in.
std::deque<Subcommand>& declared() {
  static std::deque<Subcommand> list;
  return list;
}

}  // namespace

bool declare_subcommand(Subcommand s) {
  declared().push_back(std::move(s));
  return true;
}

std::vector<const Subcommand*> subcommands() {
  std::vector<const Subcommand*> out;
  for (const auto& s : declared()) out.push_back(&s);
  std::stable_sort(out.begin(), out.end(), [](const Subcommand* a, const Subcommand* b) { return a->place < b->place; });
  return out;
}

}  // namespace fragd::ctl
