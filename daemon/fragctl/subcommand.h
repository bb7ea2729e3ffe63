// SPDX-License-Identifier: Apache-2.0
// fragctl's subcommands, each declared once: a file of fragctl/commands/ holds one command's
// options, help and what it runs, and adds it to the list main() builds the command line from.
// A new command is that file (and its answer's renderer in fragctl/render/); main.cc does not
// change.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace fragd::ctl {

// Runs a parsed command against fragd's socket; returns fragctl's exit status (main.cc).
using Run = std::function<int(const std::string& socket_path)>;

struct Subcommand {
  int place = 0;         // its place in --help and in the synopsis
  std::string synopsis;  // its line of the synopsis, after "fragctl "
  // Adds the subcommand, its options bound to state of its own, to `app`; returns the CLI11
  // command that is parsed when it was given (`pool set`: the inner one), and what runs it.
  std::function<std::pair<CLI::App*, Run>(CLI::App& app)> add;
};

// For `const bool registered = declare_subcommand({...});` at namespace scope in its file
// (fragctl's own objects are all linked: none is dropped). true.
bool declare_subcommand(Subcommand s);
// Every declared subcommand, in place order.
std::vector<const Subcommand*> subcommands();

}  // namespace fragd::ctl
