// SPDX-License-Identifier: Apache-2.0
// fragctl preflight: may this host (or node N) supply COUNT pages of a size now? Its exit status
// is the verdict (0 ready, 3 makeable, 4 no, 1 an error), for a launcher's shell script.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "fragctl/page_ask.h"
#include "fragctl/render/preflight.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "policy/config.h"
#include "protocol/preflight.h"
#include "protocol/wire.h"

namespace fragd::ctl {

namespace {

struct PreflightArgs {
  std::vector<std::string> words;
  unsigned order = 0;
  int node = 0;
  bool json = false;
};

int cmd_preflight(const std::string& socket_path, const PreflightArgs& a, std::optional<int> node) {
  auto ask = parse_page_ask(a.words, a.order);
  if (!ask) return fail(ask.error());
  auto j = request(socket_path, ControlRequest::preflight(ask->size_kib, ask->order, ask->count, node));
  if (!j) return fail(j.error());
  auto s = fragd::read_answer<fragd::Supply>(*j, "preflight");
  if (!s) return fail(s.error());
  if (a.json) std::printf("%s\n", nlohmann::json(*s).dump(2).c_str());
  else std::fputs(fragd::format_preflight(*s).c_str(), stdout);
  return fragd::verdict_exit_status(s->verdict);
}

constexpr const char* kSynopsis = "[--socket PATH] preflight (SIZE COUNT | --order K COUNT) [--node N] [--json]";

const bool registered_preflight = declare_subcommand({72, kSynopsis, [](CLI::App& app) {
  auto a = std::make_shared<PreflightArgs>();
  auto* pf = app.add_subcommand("preflight", "May this host (or node N) supply COUNT pages of a size now?");
  // Two positionals, not one named "SIZE COUNT": CLI11 2.4 (Debian 13) refuses a name with a space.
  // Both land in words, in order; parse_page_ask reads them as before.
  const auto word = [a](const std::string& w) { a->words.push_back(w); };
  pf->add_option("SIZE")
      ->description("Page size (2MB, 1GB, ...); with --order the COUNT in its place")
      ->required()
      ->each(word);
  pf->add_option("COUNT")->description("Pages (or, with --order, free blocks) wanted")->each(word);
  pf->add_option("--order", a->order, "Free blocks of this order instead of a hugetlb size (a driver's buffers)")
      ->type_name("K")
      ->check(CLI::Range(1, 63));
  auto* node_opt = pf->add_option("--node", a->node, "Only this NUMA node (default: the whole host)")
                       ->type_name("N")
                       ->check(CLI::NonNegativeNumber);
  pf->add_flag("--json", a->json, "fragd's answer as JSON");
  pf->footer(std::string("Synopsis:\n  fragctl ") + kSynopsis +
             "\n\nAnswered from what fragd holds (the last tick's free lists and hugetlb pools, the last pageblock\n"
             "scan or sampled round), never by a scan of its own. Free: pool pages and free blocks now;\n"
             "makeable: what one compaction could add, with its 95% interval. Exit status: 0 ready, 3 makeable,\n"
             "4 no, 1 an error. Readers of socket_group may ask.");
  return std::pair{pf, Run([a, node_opt](const std::string& socket) {
                     return cmd_preflight(socket, *a, node_opt->count() ? std::optional<int>(a->node) : std::nullopt);
                   })};
}});

}  // namespace
}  // namespace fragd::ctl
