// SPDX-License-Identifier: Apache-2.0
// fragctl: command-line client of fragd's control socket. Its commands are declared in
// fragctl/commands/, one file each (fragctl/subcommand.h); `fragctl --help` lists them with
// their synopsis, and docs/man/fragctl.1 tells more.
//
// Exit status: 0 on success (and when Ctrl-C/SIGTERM ends `trace` or `hist
// --interval`), 1 on any error (fragd not running, refused request,
// malformed answer, fragd went away during `trace`, no pageblock map (fragd's
// scanner is off), no zone matching `map --node/--zone`, a PNG that cannot be
// written, an action whose result is neither ok nor dry_run, a wait that
// timed out, an invalid policy file), 2 on a usage error, 130 when a signal
// interrupts a one-shot request or a wait.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "version.h"

using namespace fragd::ctl;

int main(int argc, char** argv) {
  CLI::App app{"fragctl: query and drive fragd, the memory fragmentation and allocation-stall daemon"};
  std::string synopsis = "Synopsis:\n";
  for (const Subcommand* s : subcommands()) synopsis += "  fragctl " + s->synopsis + "\n";
  app.footer(synopsis +
             "'fragctl COMMAND --help' tells more. Exit status: 0 success, 1 error, 2 usage error, 130 interrupted.");
  app.set_version_flag("-V,--version", std::string("fragctl ") + FRAGD_VERSION);
  app.require_subcommand(1);

  std::string socket_path = "/run/fragd/fragd.sock";
  app.add_option("--socket", socket_path, "fragd's control socket")
      ->envname("FRAGD_SOCKET")
      ->type_name("PATH")
      ->capture_default_str();

  std::vector<std::pair<CLI::App*, Run>> commands;
  for (const Subcommand* s : subcommands()) commands.push_back(s->add(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  setvbuf(stdout, nullptr, _IOLBF, 0);
  setup_signals();
  for (const auto& [cmd, run] : commands)
    if (cmd->parsed()) return run(socket_path);
  return 1;
}
