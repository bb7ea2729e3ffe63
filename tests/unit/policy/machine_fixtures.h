// SPDX-License-Identifier: Apache-2.0
// The fake machines of tests/fixtures/machine (/proc + /sys trees) and the shipped
// config, for the policy tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernel/procfs.h"
#include "policy/config.h"
#include "policy/policy.h"

namespace fragd::test {

inline const std::string kMachines = std::string(FRAGD_FIXTURES_DIR) + "/machine/";
inline const std::string kShipped = std::string(FRAGD_FIXTURES_DIR) + "/../../configs/fragd.yaml";

inline MachineFacts facts(const std::string& name) {
  auto f = read_machine_facts(kMachines + name + "/proc", kMachines + name + "/sys");
  EXPECT_TRUE(f.ok()) << name << ": " << f.error().message;
  return f.ok() ? *f : MachineFacts{};
}

// Parses `text`, which must be valid, and checks it against fixture `machine`;
// returns the error message ("" when it passes).
inline std::string check_on(const std::string& text, const std::string& machine) {
  auto c = parse_config(text, "f.yaml");
  EXPECT_TRUE(c.ok()) << c.error().message;
  if (!c) return "parse failed";
  auto r = check_policy_on(c->policy, facts(machine), c->source);
  return r ? "" : r.error().message;
}

}  // namespace fragd::test
