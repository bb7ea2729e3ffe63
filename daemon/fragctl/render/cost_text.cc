// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/cost_text.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/wire.h"

namespace fragd {

using wire::is_u64;
using wire::to_u64;

Result<std::string> format_cost(const nlohmann::json& cost) {
  if (!cost.is_object() || !cost.contains("seconds") || !cost["seconds"].is_number())
    return make_error("cost answer: no number 'seconds'");
  if (!cost.contains("programs") || !cost["programs"].is_array())
    return make_error("cost answer: no array 'programs'");
  const double secs = cost["seconds"].get<double>();
  const bool have_faults = cost.contains("page_faults") && is_u64(cost["page_faults"]);
  const uint64_t faults = have_faults ? to_u64(cost["page_faults"]) : 0;
  std::string out = strf("BPF run time of fragd's programs over %.1f s", secs);
  out += have_faults ? strf(", %llu page faults\n", static_cast<unsigned long long>(faults)) : std::string("\n");
  out += strf("%-26s %-46s %12s %10s %9s %11s %7s\n", "PROGRAM", "TRACEPOINT", "RUNS", "RUNS/S", "NS/RUN",
              "NS/FAULT", "MISSES");
  uint64_t total_ns = 0, total_runs = 0;
  for (const auto& p : cost["programs"]) {
    for (const char* k : {"runs", "run_ns", "recursion_misses"})
      if (!p.is_object() || !p.contains(k) || !is_u64(p[k]))
        return make_error(std::string("cost answer: program without '") + k + "'");
    const uint64_t runs = to_u64(p["runs"]), ns = to_u64(p["run_ns"]);
    total_ns += ns;
    total_runs += runs;
    const std::string name = p.value("name", std::string("?")) + (p.value("attached", true) ? "" : " (detached)");
    out += strf("%-26s %-46s %12llu %10.0f %9s %11s %7llu\n", name.c_str(), p.value("tracepoint", std::string("?")).c_str(),
                static_cast<unsigned long long>(runs), secs > 0 ? runs / secs : 0.0,
                runs ? strf("%.0f", static_cast<double>(ns) / runs).c_str() : "-",
                faults ? strf("%.2f", static_cast<double>(ns) / faults).c_str() : "-",
                static_cast<unsigned long long>(to_u64(p["recursion_misses"])));
  }
  out += strf("%-26s %-46s %12llu %10.0f %9s %11s\n", "total", "", static_cast<unsigned long long>(total_runs),
              secs > 0 ? total_runs / secs : 0.0,
              total_runs ? strf("%.0f", static_cast<double>(total_ns) / total_runs).c_str() : "-",
              faults ? strf("%.2f", static_cast<double>(total_ns) / faults).c_str() : "-");
  out += "Run time is what the programs' bodies took; each run also pays the kernel's dispatch to the program\n"
         "(tens of ns with retpolines), which BPF statistics do not see: bench/run.sh measures both.\n";
  return out;
}

}  // namespace fragd
