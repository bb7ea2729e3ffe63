// SPDX-License-Identifier: Apache-2.0
// fragctl policy check: a config file validated here, without fragd and without privileges.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "policy/config.h"
#include "policy/policy.h"

namespace fragd::ctl {
namespace {

// Validates a policy file here, without fragd and without privileges.
int cmd_policy_check(const std::string& path) {
  auto cfg = fragd::load_and_check_config(path);
  if (!cfg) return fail(cfg.error());
  const fragd::Policy& p = cfg->policy;
  std::printf("%s: OK (mode %s%s, method %s, %zu pool target%s)\n", path.c_str(), p.act ? "act" : "observe",
              p.dry_run ? " with dry_run" : "", fragd::method_name(p.compaction.method), p.hugepages.pools.size(),
              p.hugepages.pools.size() == 1 ? "" : "s");
  return 0;
}

const bool registered_policy = declare_subcommand({100, "policy check FILE", [](CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* policy = app.add_subcommand("policy", "Policy files");
  policy->require_subcommand(1);
  policy->footer("Synopsis:\n  fragctl policy check FILE");
  auto* check = policy->add_subcommand(
      "check", "Validate a config file against this machine, without fragd and without privileges");
  check->footer("Exit status: 0 when the file is valid; 1 otherwise, with file:line:column and the key on stderr.");
  check->add_option("FILE", *file, "fragd's YAML config file")->required();
  // A file read here: no socket.
  return std::pair{check, Run([file](const std::string&) { return cmd_policy_check(*file); })};
}});

}  // namespace
}  // namespace fragd::ctl
