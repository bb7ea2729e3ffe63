// SPDX-License-Identifier: Apache-2.0
// fragctl ensure: make COUNT pages of a size available for a launch that follows, and hold them
// for the named consumer (a lease); fragctl release: end a consumer's leases at once.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/format.h"
#include "fragctl/act_wait.h"
#include "fragctl/page_ask.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "policy/config.h"
#include "protocol/lease.h"
#include "protocol/wire.h"

namespace fragd::ctl {

namespace {

struct EnsureArgs {
  std::vector<std::string> words;
  unsigned order = 0;
  int node = 0;
  std::string within = "5m", hold = "5m";
  std::string consumer;
  bool json = false;
};

fragd::Result<uint64_t> duration_ms(const std::string& text, const char* option) {
  auto ns = fragd::parse_duration_ns(text);
  if (!ns) return fragd::make_error(std::string(option) + ": " + ns.error().message);
  return *ns / 1000000;
}

std::string lease_line(const fragd::LeaseView& l) {
  std::string state = l.state;
  if (l.state == "held")
    state = "held for " + fragd::format_duration(static_cast<double>(l.expires_in_ns), fragd::DurationStyle::Age) + " more";
  return "lease " + std::to_string(l.id) + " for " + l.consumer + ": " + std::to_string(l.count) + " x " +
         fragd::format_size_kib(l.size_kib) + " on " + (l.node ? "node " + std::to_string(*l.node) : std::string("the host")) +
         ", " + state + (l.end.empty() ? "" : " (" + l.end + ")");
}

int cmd_ensure(const std::string& socket_path, const EnsureArgs& a, std::optional<int> node) {
  auto ask = parse_page_ask(a.words, a.order);
  if (!ask) return fail(ask.error());
  auto within = duration_ms(a.within, "--within");
  if (!within) return fail(within.error());
  auto hold = duration_ms(a.hold, "--hold");
  if (!hold) return fail(hold.error());
  const std::string consumer = a.consumer.empty() ? "fragctl:" + std::to_string(getpid()) : a.consumer;
  auto c = open_client(socket_path);
  if (!c) return fail(c.error());
  auto answer = ask_fragd(*c, ControlRequest::ensure(ask->size_kib, ask->order, ask->count, node, consumer, *within,
                                                     ask->size_kib ? std::optional<uint64_t>(*hold) : std::nullopt));
  if (!answer) return fail(answer.error());
  auto r = fragd::read_answer<fragd::EnsureReply>(*answer, "ensure");
  if (!r) return fail(r.error());
  if (!a.json) std::printf("%s\n", r->reason.c_str());
  ActArgs wait;
  wait.timeout_s = static_cast<double>(*within) / 1000.0;
  wait.json = a.json;
  const int rc = r->ids.empty() ? 0 : follow_actions(*c, r->ids, wait);
  if (rc != 0 || !r->lease) return rc;
  // The lease as it stands now that its action ended: fragd records the outcome at its next
  // turn of the loop, so a lease still "making" is asked about again for a moment.
  std::optional<fragd::LeaseView> seen;
  for (int i = 0; i < 50; ++i) {
    auto st = ask_fragd(*c, ControlRequest::of(Command::Status));
    if (st && st->contains("leases"))
      for (const auto& l : (*st)["leases"])
        if (l.value("id", uint64_t{0}) == r->lease->id) seen = l.get<fragd::LeaseView>();
    if (!seen || seen->state != "making" || !sleep_until(mono_ms() + 100)) break;
  }
  if (!seen) return fail("lease " + std::to_string(r->lease->id) + " is not in fragd's status");
  if (!a.json) std::printf("%s\n", lease_line(*seen).c_str());
  if (seen->state != "held") return fail("lease " + std::to_string(seen->id) + " is " + seen->state + ": " + seen->end);
  return 0;
}

int cmd_release(const std::string& socket_path, const std::string& consumer, std::optional<uint64_t> lease, bool json) {
  auto j = request(socket_path, ControlRequest::release(consumer.empty() ? std::nullopt : std::optional(consumer), lease));
  if (!j) return fail(j.error());
  auto r = fragd::read_answer<fragd::ReleaseReply>(*j, "release");
  if (!r) return fail(r.error());
  if (json) {
    std::printf("%s\n", nlohmann::json(*r).dump(2).c_str());
  } else if (r->released.empty()) {
    std::printf("no live lease %s\n", lease ? ("with id " + std::to_string(*lease)).c_str() : ("for " + consumer).c_str());
  } else {
    for (const auto& l : r->released) std::printf("%s\n", lease_line(l).c_str());
  }
  return 0;
}

constexpr const char* kEnsureSynopsis =
    "[--socket PATH] ensure (SIZE COUNT | --order K COUNT) [--node N] [--within DURATION] [--hold DURATION] "
    "[--for NAME] [--json]";
constexpr const char* kReleaseSynopsis = "[--socket PATH] release (--for NAME | --lease ID) [--json]";

const bool registered_ensure = declare_subcommand({74, kEnsureSynopsis, [](CLI::App& app) {
  auto a = std::make_shared<EnsureArgs>();
  auto* e = app.add_subcommand("ensure", "Make COUNT pages available for a launch and hold them for it (a lease)");
  // Two positionals, not one named "SIZE COUNT": CLI11 2.4 (Debian 13) refuses a name with a space.
  // Both land in words, in order; parse_page_ask reads them as before.
  const auto word = [a](const std::string& w) { a->words.push_back(w); };
  e->add_option("SIZE")
      ->description("Hugetlb page size (2MB, 1GB); with --order the COUNT in its place")
      ->required()
      ->each(word);
  e->add_option("COUNT")->description("Pages (or, with --order, free blocks) wanted")->each(word);
  e->add_option("--order", a->order, "Free blocks of this order instead (made, not held)")
      ->type_name("K")
      ->check(CLI::Range(1, 63));
  auto* node_opt = e->add_option("--node", a->node, "The pool of this NUMA node (default: the global pool)")
                       ->type_name("N")
                       ->check(CLI::NonNegativeNumber);
  e->add_option("--within", a->within, "Make them within this time (30s, 5m; default 5m)")->type_name("DURATION");
  e->add_option("--hold", a->hold, "Hold them this long once made (default 5m; at most 7 days)")->type_name("DURATION");
  e->add_option("--for", a->consumer, "Who they are for: libvirt:vm1, slurm:4242, k8s:ns/pod (default fragctl:PID)")
      ->type_name("NAME");
  e->add_flag("--json", a->json, "The outcomes as a JSON array");
  e->footer(std::string("Synopsis:\n  fragctl ") + kEnsureSynopsis +
            "\n\nA hugetlb size grows that pool by COUNT (compacting only what is missing) and holds the pages in\n"
            "it for NAME until --hold is over or `fragctl release --for NAME`; the pool then goes back to the\n"
            "policy's target (pages NAME took stay with it). Refused, with the figure, when no compaction could\n"
            "make them or the node cannot spare them above hugepages.guard. fragd must run with 'mode: act'.\n"
            "Exit status: 0 when the pages are made (and held); 1 otherwise, the reason on stderr.");
  return std::pair{e, Run([a, node_opt](const std::string& socket) {
                     return cmd_ensure(socket, *a, node_opt->count() ? std::optional<int>(a->node) : std::nullopt);
                   })};
}});

const bool registered_release = declare_subcommand({75, kReleaseSynopsis, [](CLI::App& app) {
  auto consumer = std::make_shared<std::string>();
  auto lease = std::make_shared<uint64_t>(0);
  auto json = std::make_shared<bool>(false);
  auto* r = app.add_subcommand("release", "End a consumer's leases now: their pools go back to the policy's target");
  auto* f = r->add_option("--for", *consumer, "Every live lease of this consumer")->type_name("NAME");
  auto* l = r->add_option("--lease", *lease, "The lease with this id")->type_name("ID")->check(CLI::PositiveNumber);
  f->excludes(l);
  r->add_flag("--json", *json, "fragd's answer as JSON");
  r->footer(std::string("Synopsis:\n  fragctl ") + kReleaseSynopsis +
            "\n\nExit status 0 also when the consumer held no lease (a release hook may run twice).");
  return std::pair{r, Run([consumer, lease, json, f, l](const std::string& socket) {
                     if (f->count() == 0 && l->count() == 0) return fail("name the leases: --for NAME or --lease ID");
                     return cmd_release(socket, *consumer, l->count() ? std::optional<uint64_t>(*lease) : std::nullopt,
                                        *json);
                   })};
}});

}  // namespace
}  // namespace fragd::ctl
