// SPDX-License-Identifier: Apache-2.0
// fragctl reload: fragd re-reads its config file, as on SIGHUP.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "fragctl/render/actions.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "protocol/request.h"

namespace fragd::ctl {
namespace {

int cmd_reload(const std::string& socket_path) {
  auto c = open_client(socket_path);
  if (!c) return fail(c.error());
  auto answer = ask_fragd(*c, ControlRequest::of(Command::Reload));
  if (!answer) return fail(answer.error());
  auto msg = fragd::parse_reload_answer(*answer);
  if (!msg) return fail(msg.error());
  std::printf("%s\n", msg->c_str());
  return 0;
}

const bool registered_reload = declare_subcommand({80, "[--socket PATH] reload", [](CLI::App& app) {
  auto* reload = app.add_subcommand(
      "reload", "Make fragd re-read its config file (like SIGHUP); a bad file leaves the running policy in place");
  reload->footer("Root only. Exit status: 0 when fragd took the new policy; 1 otherwise (the reason on stderr).");
  return std::pair{reload, Run([](const std::string& socket) { return cmd_reload(socket); })};
}});

}  // namespace
}  // namespace fragd::ctl
