// SPDX-License-Identifier: Apache-2.0
// fragctl compact: one synchronous compaction per node, and its outcome.
#include <memory>

#include <CLI/CLI.hpp>

#include "fragctl/act_wait.h"
#include "fragctl/subcommand.h"
#include "protocol/request.h"

namespace fragd::ctl {
namespace {

const bool registered_compact = declare_subcommand(
    {60, "[--socket PATH] compact [--node N] [--timeout SEC] [--json]", [](CLI::App& app) {
       auto a = std::make_shared<ActArgs>();
       auto node = std::make_shared<int>(0);
       auto* compact = app.add_subcommand(
           "compact", "Compact memory now: one synchronous compaction per node, and wait for the outcome");
       compact->footer(kActFooter);
       auto* node_opt =
           compact->add_option("--node", *node, "Only this NUMA node (default: every node of the policy's scope)")
               ->type_name("N")
               ->check(CLI::NonNegativeNumber);
       add_wait_options(compact, *a);
       return std::pair{compact, Run([a, node, node_opt](const std::string& socket) {
                          if (node_opt->count() > 0) a->node = *node;
                          return run_actions(socket, ControlRequest::compact(a->node, timeout_ms(*a)), *a);
                        })};
     }});

}  // namespace
}  // namespace fragd::ctl
