// SPDX-License-Identifier: Apache-2.0
// fragctl pool set: a hugetlb pool's target, and fragd's outcome in reaching it.
#include <charconv>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "fragctl/act_wait.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "policy/config.h"
#include "protocol/request.h"

namespace fragd::ctl {
namespace {

// COUNT of `pool set`: a decimal number of pages, nothing else.
fragd::Result<uint64_t> parse_count(const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end)
    return fragd::make_error("COUNT '" + text + "' is not a number of hugepages (a decimal integer >= 0)");
  return v;
}

int cmd_pool_set(const std::string& socket_path, const std::string& size_text, const std::string& count_text,
                 const ActArgs& a) {
  auto size = fragd::parse_page_size_kib(size_text);
  if (!size) return fail(size.error());
  auto count = parse_count(count_text);
  if (!count) return fail(count.error());
  return run_actions(socket_path, ControlRequest::pool(*size, *count, a.node, timeout_ms(a)), a);
}

struct PoolArgs {
  ActArgs act;
  int node = 0;
  std::string size, count;
};

// The synopsis of `pool`, and of its one command.
constexpr const char* kPoolSynopsis = "[--socket PATH] pool set SIZE COUNT [--node N] [--timeout SEC] [--json]";

const bool registered_pool = declare_subcommand({70, kPoolSynopsis, [](CLI::App& app) {
  auto a = std::make_shared<PoolArgs>();
  auto* pool = app.add_subcommand("pool", "Hugetlb pools managed by fragd");
  pool->require_subcommand(1);
  pool->footer(std::string("Synopsis:\n  fragctl ") + kPoolSynopsis);
  auto* set = pool->add_subcommand(
      "set", "Set a pool's target (until the next reload) and wait until fragd has reached it or given up");
  set->footer(std::string("fragd compacts when free blocks are short, allocates, reads back, retries while it\n"
                          "makes progress, never goes beyond COUNT nor below its MemAvailable guard, and\n"
                          "shrinks the pool when COUNT is lower.\n") +
              kActFooter);
  set->add_option("SIZE", a->size, "Page size: 2MB, 2M, 2MiB, 2048kB, 1GB, 1G, 1GiB")->required();
  set->add_option("COUNT", a->count, "Hugepages wanted in the pool")->required();
  auto* node_opt = set->add_option("--node", a->node, "The pool of this NUMA node (default: the global pool)")
                       ->type_name("N")
                       ->check(CLI::NonNegativeNumber);
  add_wait_options(set, a->act);
  return std::pair{set, Run([a, node_opt](const std::string& socket) {
                     if (node_opt->count() > 0) a->act.node = a->node;
                     return cmd_pool_set(socket, a->size, a->count, a->act);
                   })};
}});

}  // namespace
}  // namespace fragd::ctl
