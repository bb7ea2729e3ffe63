// SPDX-License-Identifier: Apache-2.0
// fragctl: command-line client of fragd's control socket.
//
//   fragctl [--socket PATH] hist [--order N] [--interval SEC [--count N]] [--json]
//   fragctl [--socket PATH] status [--json]
//   fragctl [--socket PATH] trace [--json]
//   fragctl [--socket PATH] top [--interval SEC] [--count N | --once] [--sort time|stalls] [--limit N] [--stacks] [--json]
//   fragctl [--socket PATH] map [--node N] [--zone Z] [--max-age SEC] [--blocks N] [--png FILE] [--json]
//   fragctl [--socket PATH] compact [--node N] [--timeout SEC] [--json]
//   fragctl [--socket PATH] pool set SIZE COUNT [--node N] [--timeout SEC] [--json]
//   fragctl [--socket PATH] reload
//   fragctl [--socket PATH] cost [--seconds N] [--json]   (root)
//   fragctl policy check FILE
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

#include <CLI/CLI.hpp>

#include "fragctl/commands.h"
#include "fragctl/session.h"
#include "fragd_common.h"
#include "version.h"

using namespace fragd::ctl;

namespace {

// --timeout and --json of the acting commands (compact, pool set).
void add_wait_options(CLI::App* cmd, ActArgs& args) {
  cmd->add_option("--timeout", args.timeout_s, "Wait at most SEC seconds for the outcome")
      ->type_name("SEC")
      ->check(CLI::Range(0.1, 604800.0))
      ->capture_default_str();
  cmd->add_flag("--json", args.json, "The outcomes as a JSON array");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fragctl: query and drive fragd, the memory fragmentation and allocation-stall daemon"};
  app.footer(
      "Synopsis:\n"
      "  fragctl [--socket PATH] hist [--order N] [--interval SEC [--count N]] [--json]\n"
      "  fragctl [--socket PATH] status [--json]\n"
      "  fragctl [--socket PATH] trace [--json]\n"
      "  fragctl [--socket PATH] top [--interval SEC] [--count N | --once] [--sort time|stalls] [--limit N] [--stacks] [--json]\n"
      "  fragctl [--socket PATH] map [--node N] [--zone Z] [--max-age SEC] [--blocks N] [--png FILE] [--json]\n"
      "  fragctl [--socket PATH] compact [--node N] [--timeout SEC] [--json]\n"
      "  fragctl [--socket PATH] pool set SIZE COUNT [--node N] [--timeout SEC] [--json]\n"
      "  fragctl [--socket PATH] reload\n"
      "  fragctl policy check FILE\n"
      "'fragctl COMMAND --help' tells more. Exit status: 0 success, 1 error, 2 usage error, 130 interrupted.");
  app.set_version_flag("-V,--version", std::string("fragctl ") + FRAGD_VERSION);
  app.require_subcommand(1);

  std::string socket_path = "/run/fragd/fragd.sock";
  app.add_option("--socket", socket_path, "fragd's control socket")
      ->envname("FRAGD_SOCKET")
      ->type_name("PATH")
      ->capture_default_str();

  HistArgs hist_args;
  unsigned order = 0;
  auto* hist = app.add_subcommand("hist", "High-order allocations and their stall latency histograms");
  auto* order_opt = hist->add_option("--order", order, "Only this order")
                        ->type_name("N")
                        ->check(CLI::Range(0, FRAGD_NR_ORDERS - 1));
  auto* interval_opt = hist->add_option("--interval", hist_args.interval_s,
                                        "Print the figures of each interval of SEC seconds instead of cumulative ones")
                           ->type_name("SEC")
                           ->check(CLI::Range(0.1, 86400.0));
  hist->add_option("--count", hist_args.count, "Number of intervals (default: until Ctrl-C)")
      ->type_name("N")
      ->needs(interval_opt)
      ->check(CLI::PositiveNumber);
  hist->add_flag("--json", hist_args.json, "One JSON object per interval");
  hist->footer("");

  bool status_json = false;
  auto* status = app.add_subcommand("status", "Fragmentation scores, free blocks, hugepages, programs");
  status->add_flag("--json", status_json, "fragd's answer as JSON");
  status->footer("In act mode also the policy: its state per node, pool targets, the action running and the last "
                 "actions.");

  TopArgs top_args;
  auto* top = app.add_subcommand("top", "Who stalls, who pays, where: cgroups, consumers and call sites by stall time");
  top->add_option("--interval", top_args.interval_s, "Seconds between screens (default 2)")
      ->check(CLI::Range(0.1, 3600.0))
      ->type_name("SEC");
  top->add_option("--count", top_args.count, "Number of screens (default: until Ctrl-C)")->type_name("N");
  top->add_flag("--once", top_args.once, "One screen of the totals since fragd started, then exit");
  top->add_option("--sort", top_args.sort, "Sort rows by stall time or by number of stalls")
      ->check(CLI::IsMember({"time", "stalls"}))
      ->capture_default_str();
  top->add_option("--limit", top_args.limit, "Rows per table")->check(CLI::Range(1, 1000))->capture_default_str();
  top->add_flag("--stacks", top_args.stacks, "Also the whole kernel stacks of the stalls");
  top->add_flag("--json", top_args.json, "fragd's answer as JSON (with --interval: one object per interval)");
  top->footer(
      "Each screen shows the interval just past (and the %CPU its stall time is of one CPU); --once the totals "
      "since fragd started. Cgroups and call sites are those with a series of their own in fragd's metrics "
      "(attribution.top_cgroups, attribution.top_callsites), the rest summed as other.");
  bool trace_json = false;
  auto* trace = app.add_subcommand("trace", "Stream slow allocation stalls as they happen");
  trace->add_flag("--json", trace_json, "fragd's events as JSON lines");
  trace->footer("");

  MapArgs map_args;
  int map_node = 0;
  std::string map_zone;
  auto* map = app.add_subcommand(
      "map", "Physical memory map: the class of every pageblock, and pages in use per block");
  auto* map_node_opt = map->add_option("--node", map_node, "Only the zones of this NUMA node")
                           ->type_name("N")
                           ->check(CLI::NonNegativeNumber);
  auto* map_zone_opt = map->add_option("--zone", map_zone, "Only zones of this name (DMA, DMA32, Normal, Movable)")
                           ->type_name("Z");
  auto* map_png_opt = map->add_option("--png", map_args.png,
                                      "Also draw the map and the pages-in-use plot into this PNG file")
                          ->type_name("FILE");
  map->add_flag("--json", map_args.json, "fragd's answer as JSON (only the zones selected)")->excludes(map_png_opt);
  map->add_option("--max-age", map_args.max_age_s,
                  "Use fragd's last scan if it is at most SEC old, else scan now (default 5; 0 = always scan; "
                  "fragd holds non-root callers to 5)")
      ->type_name("SEC")
      ->check(CLI::Range(0.0, 86400.0));
  map->add_option("--blocks", map_args.blocks,
                  "List up to N blocks of the pollution ledger, most pages first (default 256, at most " +
                      std::to_string(fragd::kMaxMapBlocks) + ": compare with tracked_blocks to see all were listed)")
      ->type_name("N")
      ->check(CLI::Range(uint64_t{1}, fragd::kMaxMapBlocks));
  map->footer(
      "Classes: . free  m movable  x hybrid (movable, polluted by unmovable pages)  U unmovable  H huge  - offline.\n"
      "Text: per zone a header (blocks per class, huge pages free now, by compaction and lost to pollution) and\n"
      "rows of 64 blocks, each after the physical address of its first block; then the pollution fragd tracked.\n"
      "Exit status: 1 when fragd has no map (its scanner needs root and /proc/kpageflags) or no zone matches.");

  // compact and pool set: ask fragd to act, then wait for the outcome.
  const char* const act_footer =
      "fragd must run with 'mode: act' in its policy (with 'dry_run: true' it decides and logs, writes nothing),\n"
      "and answers only root. Exit status: 0 if every action ended ok or dry_run; 1 otherwise (the reason on\n"
      "stderr), also when --timeout passed first (the action goes on in fragd: see 'fragctl status').";
  ActArgs compact_args;
  int compact_node = 0;
  auto* compact = app.add_subcommand(
      "compact", "Compact memory now: one synchronous compaction per node, and wait for the outcome");
  compact->footer(act_footer);
  auto* compact_node_opt = compact->add_option("--node", compact_node,
                                               "Only this NUMA node (default: every node of the policy's scope)")
                               ->type_name("N")
                               ->check(CLI::NonNegativeNumber);
  add_wait_options(compact, compact_args);

  auto* pool = app.add_subcommand("pool", "Hugetlb pools managed by fragd");
  pool->require_subcommand(1);
  pool->footer("Synopsis:\n  fragctl [--socket PATH] pool set SIZE COUNT [--node N] [--timeout SEC] [--json]");
  ActArgs pool_args;
  int pool_node = 0;
  std::string pool_size, pool_count;
  auto* pool_set = pool->add_subcommand(
      "set", "Set a pool's target (until the next reload) and wait until fragd has reached it or given up");
  pool_set->footer(std::string("fragd compacts when free blocks are short, allocates, reads back, retries while it\n"
                               "makes progress, never goes beyond COUNT nor below its MemAvailable guard, and\n"
                               "shrinks the pool when COUNT is lower.\n") +
                   act_footer);
  pool_set->add_option("SIZE", pool_size, "Page size: 2MB, 2M, 2MiB, 2048kB, 1GB, 1G, 1GiB")->required();
  pool_set->add_option("COUNT", pool_count, "Hugepages wanted in the pool")->required();
  auto* pool_node_opt = pool_set->add_option("--node", pool_node, "The pool of this NUMA node (default: the global pool)")
                            ->type_name("N")
                            ->check(CLI::NonNegativeNumber);
  add_wait_options(pool_set, pool_args);

  auto* reload = app.add_subcommand(
      "reload", "Make fragd re-read its config file (like SIGHUP); a bad file leaves the running policy in place");
  reload->footer("Root only. Exit status: 0 when fragd took the new policy; 1 otherwise (the reason on stderr).");

  double cost_seconds = 10;
  bool cost_json = false;
  auto* cost = app.add_subcommand("cost", "What fragd's BPF programs cost: runs and ns per event and per page fault");
  cost->add_option("--seconds", cost_seconds, "Measure over this many seconds")
      ->type_name("N")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cost->add_flag("--json", cost_json, "The measurement as JSON");
  cost->footer("Root only: turns the kernel's BPF run-time statistics on for the window (BPF_ENABLE_STATS, "
               "CAP_SYS_ADMIN) and off again.");

  auto* policy = app.add_subcommand("policy", "Policy files");
  policy->require_subcommand(1);
  policy->footer("Synopsis:\n  fragctl policy check FILE");
  std::string policy_file;
  auto* policy_check = policy->add_subcommand(
      "check", "Validate a config file against this machine, without fragd and without privileges");
  policy_check->footer(
      "Exit status: 0 when the file is valid; 1 otherwise, with file:line:column and the key on stderr.");
  policy_check->add_option("FILE", policy_file, "fragd's YAML config file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  setvbuf(stdout, nullptr, _IOLBF, 0);
  setup_signals();

  if (hist->parsed()) {
    if (order_opt->count() > 0) hist_args.order = order;
    return cmd_hist(socket_path, hist_args);
  }
  if (status->parsed()) return cmd_status(socket_path, status_json);
  if (trace->parsed()) return cmd_trace(socket_path, trace_json);
  if (top->parsed()) return cmd_top(socket_path, top_args);
  if (map->parsed()) {
    if (map_node_opt->count() > 0) map_args.filter.node = map_node;
    if (map_zone_opt->count() > 0) map_args.filter.zone = map_zone;
    return cmd_map(socket_path, map_args);
  }
  if (compact->parsed()) {
    if (compact_node_opt->count() > 0) compact_args.node = compact_node;
    return run_actions(socket_path, fragd::ControlRequest::compact(compact_args.node, timeout_ms(compact_args)), compact_args);
  }
  if (pool_set->parsed()) {
    if (pool_node_opt->count() > 0) pool_args.node = pool_node;
    return cmd_pool_set(socket_path, pool_size, pool_count, pool_args);
  }
  if (reload->parsed()) return cmd_reload(socket_path);
  if (cost->parsed()) return cmd_cost(socket_path, cost_seconds, cost_json);
  if (policy_check->parsed()) return cmd_policy_check(policy_file);
  return 1;
}

