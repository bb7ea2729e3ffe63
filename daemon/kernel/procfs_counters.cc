// SPDX-License-Identifier: Apache-2.0
#include "kernel/procfs.h"

#include <optional>

#include "kernel/kernel_text.h"

// The counter files: /proc/vmstat, /proc/meminfo, /proc/pressure/memory.
namespace fragd {

// ---------------------------------------------------------------------------
// /proc/vmstat: "nr_free_pages 6096132" per line.

Result<std::map<std::string, uint64_t>> parse_vmstat(std::string_view text, std::string_view path,
                                                     std::vector<std::string>* warnings) {
  static constexpr std::string_view kExpected = "'<counter name> <value>' lines";
  const std::vector<LexedLine> lines = content_lines(text);
  if (lines.empty()) return empty_file(path, kExpected);
  std::map<std::string, uint64_t> out;
  BadLines bad{warnings, path};

  for (const LexedLine& l : lines) {
    const auto& toks = l.toks;
    std::string why;
    uint64_t v = 0;
    if (toks.size() != 2) {
      why = "expected '<name> <value>', got " + std::to_string(toks.size()) + " columns";
    } else if (!is_identifier(toks[0])) {
      why = "counter name " + quote(toks[0]) + " is not an identifier";
    } else if (!parse_u64(toks[1], v)) {
      why = std::string(toks[0]) + ": value " + quote(toks[1]) + " is not a number";
    } else if (!out.emplace(std::string(toks[0]), v).second) {
      warn(warnings, path, l.no,
           std::string(toks[0]) + " appears twice; the later line is skipped");
      continue;
    } else {
      continue;
    }
    bad.skip(l.no, why);
  }
  if (out.empty()) return unparsable(path, bad.first_line, kExpected, bad.first_why);
  return out;
}

// ---------------------------------------------------------------------------
// /proc/pressure/memory (psi_show in kernel/sched/psi.c):
//   some avg10=0.00 avg60=0.00 avg300=0.00 total=12345
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=6789

Result<MemoryPressure> parse_pressure(std::string_view text, std::string_view path,
                                      std::vector<std::string>* warnings) {
  static constexpr std::string_view kExpected = "'some ... total=<microseconds>' and 'full ... total=<microseconds>'";
  const std::vector<LexedLine> lines = content_lines(text);
  if (lines.empty()) return empty_file(path, kExpected);
  std::optional<uint64_t> some, full;
  BadLines bad{warnings, path};
  for (const LexedLine& l : lines) {
    const auto& toks = l.toks;
    std::optional<uint64_t>* slot = toks[0] == "some" ? &some : toks[0] == "full" ? &full : nullptr;
    if (!slot) {
      bad.skip(l.no, "expected a line starting with 'some' or 'full', got " + quote(toks[0]));
      continue;
    }
    std::optional<uint64_t> total;
    std::string why;
    for (size_t i = 1; i < toks.size() && why.empty(); ++i) {
      const std::string_view t = toks[i];
      const size_t eq = t.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        why = std::string(toks[0]) + ": expected 'name=value', got " + quote(t);
      } else if (t.substr(0, eq) == "total") {
        uint64_t v = 0;
        if (!parse_u64(t.substr(eq + 1), v)) why = std::string(toks[0]) + ": total " + quote(t.substr(eq + 1)) + " is not a number";
        else total = v;
      }
    }
    if (why.empty() && !total) why = std::string(toks[0]) + ": no 'total=<microseconds>'";
    if (why.empty() && *slot) {
      warn(warnings, path, l.no, std::string(toks[0]) + " appears twice; the later line is skipped");
      continue;
    }
    if (!why.empty()) {
      bad.skip(l.no, why);
      continue;
    }
    *slot = total;
  }
  if (!some)
    return unparsable(path, bad.first_line ? bad.first_line : lines.front().no, kExpected,
                      bad.first_line ? bad.first_why : "no 'some' line");
  return MemoryPressure{*some, full};
}

// ---------------------------------------------------------------------------
// /proc/meminfo: "MemAvailable:   24247156 kB".

Result<void> parse_meminfo(std::string_view text, std::string_view path, MemSnapshot& out) {
  static constexpr std::string_view kExpected =
      "'MemFree: <n> kB' and 'MemAvailable: <n> kB' lines";
  const std::vector<LexedLine> lines = content_lines(text);
  if (lines.empty()) return empty_file(path, kExpected);
  bool have_free = false, have_avail = false;
  std::vector<std::string> warnings;
  BadLines bad{&warnings, path};

  for (const LexedLine& l : lines) {
    const auto& toks = l.toks;
    std::string why;
    uint64_t v = 0;
    if (toks[0].size() < 2 || toks[0].back() != ':') {
      why = "expected '<Name>: <value> [kB]', got " + quote(l.text);
    } else if (toks.size() < 2 || toks.size() > 3 || (toks.size() == 3 && toks[2] != "kB")) {
      why = std::string(toks[0]) + " expected '<value> [kB]' after the name";
    } else if (!parse_u64(toks[1], v)) {
      why = std::string(toks[0]) + " value " + quote(toks[1]) + " is not a number";
    } else {
      const std::string_view name = toks[0].substr(0, toks[0].size() - 1);
      bool* have = name == "MemFree" ? &have_free : name == "MemAvailable" ? &have_avail : nullptr;
      if (!have) continue;
      if (*have) {
        warnings.push_back(where(path, l.no) + ": " + std::string(name) +
                           " appears twice; the later line is skipped");
        continue;
      }
      *have = true;
      (name == "MemFree" ? out.mem_free_kib : out.mem_available_kib) = v;
      continue;
    }
    bad.skip(l.no, why);
  }

  if (!have_free && !have_avail)
    return unparsable(path, bad.first_line ? bad.first_line : lines.front().no, kExpected,
                      bad.first_line ? bad.first_why : "neither MemFree nor MemAvailable found");
  if (!have_free) warnings.push_back(std::string(path) + ": no MemFree line; reported as 0");
  if (!have_avail)
    warnings.push_back(std::string(path) +
                       ": no MemAvailable line (kernel older than 3.14?); reported as 0");
  out.warnings.insert(out.warnings.end(), warnings.begin(), warnings.end());
  return {};
}

}  // namespace fragd
