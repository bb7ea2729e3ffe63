// SPDX-License-Identifier: Apache-2.0
#include "fragd/programs.h"

#include <unistd.h>

#include <algorithm>

#include "base/log.h"
#include "base/text.h"
#include "fragd/privileges.h"
#include "kernel/procfs.h"
#include "fragd/settings.h"
#include "kernel/memmap.h"
#include "version.h"

namespace fragd {

Result<LoadedPrograms> load_programs(const Config& cfg) {
  if (auto r = check_kernel_btf(); !r) return r.error();
  if (auto r = check_bpf_privileges(); !r) return r.error();
  LoadedPrograms out;
  uint64_t max_pfn = 0;
  const std::string zoneinfo = cfg.proc_root + "/zoneinfo";
  if (auto zi = read_text_file(zoneinfo))
    if (auto sp = parse_zone_spans(*zi, zoneinfo)) out.spans = std::move(*sp);
  for (const auto& z : out.spans) max_pfn = std::max(max_pfn, z.end_pfn);
  auto b = BpfPrograms::create(bpf_options(cfg, static_cast<uint32_t>(getpid()), max_pfn));
  if (!b) return b.error();
  out.programs = std::move(*b);
  out.reader = std::make_unique<BpfReader>(out.programs->map_fds());
  out.start_ns = now_ns();
  return out;
}

void log_programs(const Config& cfg, const BpfPrograms& bpf) {
  for (const auto& p : bpf.programs())
    if (!p.attached && !(p.per_page && cfg.allocations != "exact"))
      log_warn("program " + p.name + " (" + p.tracepoint + ") is not attached: " + p.error);
  std::string absent;
  for (const auto& n : bpf.absent()) absent += (absent.empty() ? "" : ", ") + n;
  if (!absent.empty()) log_info("not loaded, for tracepoints this kernel lacks: " + absent);
  log_info("fragd " FRAGD_VERSION " attached " + std::to_string(bpf.attached_count()) + "/" +
           std::to_string(bpf.programs().size()) + " BPF programs (allocation counting " + cfg.allocations + ": " +
           (bpf.counting() ? "on" : "off") + "); metrics on http://" + cfg.listen + "/metrics, control socket " +
           cfg.socket + ", mode " + cfg.mode);
}

void program_status(const Config& cfg, const BpfPrograms& bpf, StatusReply& r) {
  r.version = FRAGD_VERSION;
  r.pid = static_cast<uint64_t>(getpid());
  r.tick_ns = cfg.tick_ns;
  r.programs.emplace();
  for (const auto& p : bpf.programs()) {
    ProgramStatus ps{p.name, p.tracepoint, p.attached, p.id, std::nullopt};
    if (!p.attached) ps.error = p.error;
    r.programs->push_back(std::move(ps));
  }
}

std::string unready_programs(const std::vector<ProgramState>& programs, const std::string& allocations) {
  std::string out;
  for (const auto& p : programs)
    if (!p.attached && !(p.per_page && allocations != "exact"))
      out += (out.empty() ? "not attached: " : "; ") + p.name + " (" + p.tracepoint + "): " + p.error;
  return out;
}

}  // namespace fragd
