// SPDX-License-Identifier: Apache-2.0
// fragctl status: scores, free blocks, hugepages and programs; in act mode the policy's state.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "fragctl/render/status.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "kernel/page_size.h"

namespace fragd::ctl {
namespace {

int cmd_status(const std::string& socket_path, bool as_json) {
  auto j = request(socket_path, ControlRequest::of(Command::Status));
  if (!j) return fail(j.error());
  if (as_json) {
    std::printf("%s\n", fragd::status_output_json(*j).dump(2).c_str());
    return 0;
  }
  auto text = fragd::format_status(*j, fragd::kernel_page_kib());
  if (!text) return fail(text.error());
  std::fputs(text->c_str(), stdout);
  return 0;
}

const bool registered_status = declare_subcommand({20, "[--socket PATH] status [--json]", [](CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* status = app.add_subcommand("status", "Fragmentation scores, free blocks, hugepages, programs");
  status->add_flag("--json", *json, "fragd's answer as JSON");
  status->footer("In act mode also the policy: its state per node, pool targets, the action running and the last "
                 "actions.");
  return std::pair{status, Run([json](const std::string& socket) { return cmd_status(socket, *json); })};
}});

}  // namespace
}  // namespace fragd::ctl
