#include "kernel/procfs.h"

#include "base/text.h"
#include "kernel/source_faults.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>

namespace fragd {
namespace {

// Commas separate tokens in every file parsed here ("Node 0, zone DMA").
std::vector<std::string_view> lex(std::string_view s) { return tokenize(s, true); }

bool parse_node_id(std::string_view tok, int& out) {
  uint64_t v = 0;
  if (!parse_u64(tok, v) || v > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return false;
  out = static_cast<int>(v);
  return true;
}

std::string where(std::string_view path, size_t line) {
  return std::string(path) + ":" + std::to_string(line);
}

void warn(std::vector<std::string>* warnings, std::string_view path, size_t line,
          const std::string& why) {
  if (warnings) warnings->push_back(where(path, line) + ": " + why);
}

bool is_blank(std::string_view s) { return lex(s).empty(); }

// Bad lines of one file: each is warned about, and the first is kept for the
// error returned when nothing in the file parses.
struct BadLines {
  BadLines(std::vector<std::string>* w, std::string_view p) : warnings(w), path(p) {}

  std::vector<std::string>* warnings;
  std::string_view path;
  size_t first_line = 0;
  std::string first_why;

  void skip(size_t line, const std::string& why, std::string_view consequence = "line skipped") {
    if (first_line == 0) {
      first_line = line;
      first_why = why;
    }
    warn(warnings, path, line, why + "; " + std::string(consequence));
  }
};

// Do `toks` begin with exactly these words?
bool starts_with_words(const std::vector<std::string_view>& toks,
                       std::initializer_list<std::string_view> words) {
  if (toks.size() < words.size()) return false;
  size_t i = 0;
  for (std::string_view w : words)
    if (toks[i++] != w) return false;
  return true;
}

// [A-Za-z_][A-Za-z0-9_]*, at most `max_len` chars.
bool is_identifier(std::string_view s, size_t max_len = 128) {
  if (s.empty() || s.size() > max_len) return false;
  const unsigned char c0 = static_cast<unsigned char>(s[0]);
  if (!((c0 >= 'A' && c0 <= 'Z') || (c0 >= 'a' && c0 <= 'z') || c0 == '_')) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

// Zone and migrate type names: an identifier starting with a letter.
bool is_zone_name(std::string_view s) {
  if (!is_identifier(s, 32)) return false;
  const unsigned char c0 = static_cast<unsigned char>(s[0]);
  return (c0 >= 'A' && c0 <= 'Z') || (c0 >= 'a' && c0 <= 'z');
}

// "Node <n>, zone <name>" at the start of `toks`. On failure `why` says what
// was wrong.
struct ZoneHeader {
  int node = 0;
  std::string_view zone;
};

std::optional<ZoneHeader> parse_zone_header(const std::vector<std::string_view>& toks,
                                            std::string& why) {
  ZoneHeader h;
  if (toks.empty() || toks[0] != "Node") {
    why = "expected 'Node <n>, zone <name>' at the start of the line";
    return std::nullopt;
  }
  if (toks.size() < 2 || !parse_node_id(toks[1], h.node)) {
    why = "node number " +
          (toks.size() < 2 ? std::string("missing") : quote(toks[1]) + " is not a number");
    return std::nullopt;
  }
  if (toks.size() < 3 || toks[2] != "zone") {
    why = "expected 'zone' after 'Node " + std::to_string(h.node) + ",'";
    return std::nullopt;
  }
  if (toks.size() < 4 || !is_zone_name(toks[3])) {
    why = "zone name " +
          (toks.size() < 4 ? std::string("missing") : quote(toks[3]) + " is not a zone name");
    return std::nullopt;
  }
  h.zone = toks[3];
  return h;
}

std::string zone_label(int node, std::string_view zone) {
  return "Node " + std::to_string(node) + ", zone " + std::string(zone);
}

// Index of (node, zone) in `zones`, added at the end when absent.
size_t find_or_add(std::vector<ZoneFree>& zones, int node, std::string_view zone) {
  for (size_t i = 0; i < zones.size(); ++i)
    if (zones[i].node == node && zones[i].zone == zone) return i;
  ZoneFree z;
  z.node = node;
  z.zone = std::string(zone);
  zones.push_back(std::move(z));
  return zones.size() - 1;
}

// Parses toks[from..] as counts. A cell ">100000" (pagetypeinfo caps each
// free list walk at 100000) is accepted as 100000 when allow_capped.
bool parse_counts(const std::vector<std::string_view>& toks, size_t from, bool allow_capped,
                  std::vector<uint64_t>& out, std::string& why) {
  out.clear();
  for (size_t i = from; i < toks.size(); ++i) {
    std::string_view t = toks[i];
    if (allow_capped && !t.empty() && t[0] == '>') t.remove_prefix(1);
    uint64_t v = 0;
    if (!parse_u64(t, v)) {
      why = "column " + std::to_string(i - from) + ": " + quote(toks[i]) + " is not a number";
      return false;
    }
    out.push_back(v);
  }
  return true;
}

std::string fix_for(std::string_view path) {
  return "check that " + std::string(path) +
         " is the kernel's file (procfs mounted at the proc root fragd is given)";
}

Error unparsable(std::string_view path, size_t line, std::string_view expected,
                 std::string_view detail) {
  std::string msg = where(path, line) + ": expected " + std::string(expected);
  if (!detail.empty()) msg += " (" + std::string(detail) + ")";
  msg += "; " + fix_for(path);
  return make_error(std::move(msg), EINVAL);
}

Error empty_file(std::string_view path, std::string_view expected) {
  return make_error(where(path, 1) + ": file is empty, expected " + std::string(expected) + "; " +
                        fix_for(path),
                    ENODATA);
}

// First non-blank line number, for error messages.
size_t first_content_line(const std::vector<Line>& lines) {
  for (const Line& l : lines)
    if (!is_blank(l.text)) return l.no;
  return 1;
}

}  // namespace

// ---------------------------------------------------------------------------
// /proc/buddyinfo (frag_show_print in mm/vmstat.c):
//   Node 0, zone   Normal   4351   5688   1389 ...

Result<std::vector<ZoneFree>> parse_buddyinfo(std::string_view text, std::string_view path,
                                              std::vector<std::string>* warnings) {
  static constexpr std::string_view kExpected =
      "'Node <n>, zone <name> <free blocks of order 0> <order 1> ...'";
  const std::vector<Line> lines = split_lines(text);

  struct Parsed {
    size_t line;
    int node;
    std::string_view zone;
    std::vector<uint64_t> counts;
  };
  std::vector<Parsed> parsed;
  BadLines bad{warnings, path};

  bool any_content = false;
  for (const Line& l : lines) {
    const auto toks = lex(l.text);
    if (toks.empty()) continue;
    any_content = true;
    std::string why;
    auto h = parse_zone_header(toks, why);
    if (!h) {
      bad.skip(l.no, why);
      continue;
    }
    Parsed p{l.no, h->node, h->zone, {}};
    if (!parse_counts(toks, 4, false, p.counts, why)) {
      bad.skip(l.no, zone_label(h->node, h->zone) + ": free block count " + why);
      continue;
    }
    if (p.counts.empty()) {
      bad.skip(l.no, zone_label(h->node, h->zone) + ": no free block counts after the zone name");
      continue;
    }
    if (p.counts.size() > kMaxOrders) {
      bad.skip(l.no, zone_label(h->node, h->zone) + ": " + std::to_string(p.counts.size()) +
                    " orders, more than the " + std::to_string(kMaxOrders) + " fragd accepts");
      continue;
    }
    parsed.push_back(std::move(p));
  }

  if (!any_content) return empty_file(path, kExpected);
  if (parsed.empty()) return unparsable(path, bad.first_line, kExpected, bad.first_why);

  // The kernel prints NR_PAGE_ORDERS columns on every line. Take the count
  // most lines agree on (the larger on a tie); a line with another count was
  // truncated or mangled, and a partial row would skew the score.
  std::map<size_t, size_t> votes;
  for (const Parsed& p : parsed) ++votes[p.counts.size()];
  size_t orders = 0, best = 0;
  for (const auto& [n, count] : votes)
    if (count >= best) {
      best = count;
      orders = n;
    }

  std::vector<ZoneFree> zones;
  for (Parsed& p : parsed) {
    if (p.counts.size() != orders) {
      warn(warnings, path, p.line,
           zone_label(p.node, p.zone) + ": " + std::to_string(p.counts.size()) +
               " order columns where the other lines have " + std::to_string(orders) +
               " (truncated or extra columns); line skipped");
      continue;
    }
    bool dup = false;
    for (const ZoneFree& z : zones) dup = dup || (z.node == p.node && z.zone == p.zone);
    if (dup) {
      warn(warnings, path, p.line,
           zone_label(p.node, p.zone) + " appears twice; the later line is skipped");
      continue;
    }
    ZoneFree z;
    z.node = p.node;
    z.zone = std::string(p.zone);
    z.free_blocks = std::move(p.counts);
    zones.push_back(std::move(z));
  }
  return zones;
}

// ---------------------------------------------------------------------------
// /proc/zoneinfo (zoneinfo_show_print in mm/vmstat.c):
//   Node 0, zone   Normal
//     per-node stats          (first zone of each node only)
//         nr_inactive_anon 959
//     pages free     5321067
//           ...
//           spanned  5505024
//           present  5505024
//           managed  5394266

Result<void> parse_zoneinfo(std::string_view text, std::string_view path,
                            std::vector<ZoneFree>& zones, std::vector<std::string>* warnings) {
  static constexpr std::string_view kExpected = "'Node <n>, zone <name>' followed by its counters";
  const std::vector<Line> lines = split_lines(text);

  enum : unsigned { kFree = 1, kSpanned = 2, kPresent = 4, kManaged = 8 };
  struct Seen {
    size_t header_line;
    int node;
    std::string zone;
    unsigned keys = 0;
  };
  std::vector<Seen> seen;  // zones in zoneinfo order
  std::vector<ZoneFree> work = zones;
  long cur = -1;  // index into `seen`; -1 = not inside a usable zone block
  BadLines bad{warnings, path};
  bool any_content = false;

  for (const Line& l : lines) {
    const auto toks = lex(l.text);
    if (toks.empty()) continue;
    any_content = true;

    if (toks[0] == "Node") {
      std::string why;
      auto h = parse_zone_header(toks, why);
      if (!h) {
        bad.skip(l.no, why, "this zone's counters are skipped");
        cur = -1;
        continue;
      }
      const bool dup = std::any_of(seen.begin(), seen.end(), [&](const Seen& s) {
        return s.node == h->node && s.zone == h->zone;
      });
      if (dup) {
        warn(warnings, path, l.no,
             zone_label(h->node, h->zone) + " appears twice; the later block is skipped");
        cur = -1;
        continue;
      }
      seen.push_back({l.no, h->node, std::string(h->zone), 0});
      cur = static_cast<long>(seen.size()) - 1;
      continue;
    }
    if (cur < 0) continue;

    // Only the zone's own counters matter here; per-node stats, watermarks,
    // protection and pagesets are skipped.
    std::string_view key;
    unsigned bit = 0;
    size_t value_at = 0;
    if (toks[0] == "pages" && toks.size() >= 2 && toks[1] == "free") {
      key = "pages free";
      bit = kFree;
      value_at = 2;
    } else if (toks[0] == "spanned" || toks[0] == "present" || toks[0] == "managed") {
      key = toks[0];
      bit = toks[0] == "spanned" ? kSpanned : toks[0] == "present" ? kPresent : kManaged;
      value_at = 1;
    } else {
      continue;
    }
    Seen& s = seen[static_cast<size_t>(cur)];
    uint64_t v = 0;
    if (toks.size() != value_at + 1 || !parse_u64(toks[value_at], v)) {
      const std::string got = toks.size() <= value_at ? std::string("nothing")
                                                      : quote(toks[value_at]);
      warn(warnings, path, l.no,
           zone_label(s.node, s.zone) + ": expected '" + std::string(key) + " <pages>', got " +
               got + (toks.size() > value_at + 1 ? " and extra columns" : "") + "; line skipped");
      continue;
    }
    if (s.keys & bit) {
      warn(warnings, path, l.no,
           zone_label(s.node, s.zone) + ": second '" + std::string(key) + "' line; skipped");
      continue;
    }
    s.keys |= bit;
    ZoneFree& z = work[find_or_add(work, s.node, s.zone)];
    switch (bit) {
      case kFree: z.free_pages = v; break;
      case kSpanned: z.spanned_pages = v; break;
      case kPresent: z.present_pages = v; break;
      case kManaged: z.managed_pages = v; break;
    }
  }

  if (!any_content) return empty_file(path, kExpected);
  if (seen.empty())
    return unparsable(path, bad.first_line ? bad.first_line : first_content_line(lines), kExpected,
                      bad.first_line ? bad.first_why : "no 'Node <n>, zone <name>' line");

  for (const Seen& s : seen) {
    find_or_add(work, s.node, s.zone);  // zones with no counters at all still exist
    if (!(s.keys & kPresent))
      warn(warnings, path, s.header_line,
           zone_label(s.node, s.zone) +
               ": no valid 'present' line (garbled, or file truncated?); present pages taken as 0");
  }
  for (const ZoneFree& z : work) {
    const bool in_file = std::any_of(seen.begin(), seen.end(), [&](const Seen& s) {
      return s.node == z.node && s.zone == z.zone;
    });
    if (!in_file && warnings)
      warnings->push_back(std::string(path) + ": " + zone_label(z.node, z.zone) +
                          " is missing; its present/managed/spanned pages are 0");
  }

  // Kernel zone order within each node, as zoneinfo lists it.
  auto rank = [&](const ZoneFree& z) {
    for (size_t i = 0; i < seen.size(); ++i)
      if (seen[i].node == z.node && seen[i].zone == z.zone) return i;
    return seen.size();
  };
  std::stable_sort(work.begin(), work.end(), [&](const ZoneFree& a, const ZoneFree& b) {
    if (a.node != b.node) return a.node < b.node;
    return rank(a) < rank(b);
  });
  zones = std::move(work);
  return {};
}

// ---------------------------------------------------------------------------
// /proc/pagetypeinfo (pagetypeinfo_show in mm/vmstat.c):
//   Page block order: 9
//   Pages per block:  512
//
//   Free pages count per migrate type at order       0      1 ...
//   Node    0, zone      DMA, type    Unmovable      0      0 ...
//
//   Number of blocks type     Unmovable      Movable  Reclaimable ...
//   Node 0, zone      DMA            1            7            0 ...
// and, with CONFIG_PAGE_OWNER, a "Number of mixed blocks" table (ignored).

Result<void> parse_pagetypeinfo(std::string_view text, std::string_view path,
                                std::vector<ZoneFree>& zones, std::vector<std::string>* warnings,
                                unsigned* pageblock_order) {
  static constexpr std::string_view kExpected =
      "the 'Free pages count per migrate type at order' and 'Number of blocks type' tables";
  const std::vector<Line> lines = split_lines(text);

  enum class Section { None, Free, Blocks, Other };
  Section section = Section::None;
  size_t free_orders = 0;                   // order columns of the Free table
  std::vector<std::string> block_types;     // column names of the Blocks table
  std::vector<ZoneFree> work = zones;
  size_t rows = 0;  // table rows stored
  std::optional<unsigned> pb_order;
  bool any_content = false;
  BadLines bad{warnings, path};

  for (const Line& l : lines) {
    const auto toks = lex(l.text);
    if (toks.empty()) continue;
    any_content = true;

    if (starts_with_words(toks, {"Page", "block", "order:"})) {
      uint64_t v = 0;
      if (toks.size() != 4 || !parse_u64(toks[3], v) || v >= kMaxOrders) {
        bad.skip(l.no, "expected 'Page block order: <n>'");
      } else {
        pb_order = static_cast<unsigned>(v);
      }
      continue;
    }
    if (starts_with_words(toks, {"Pages", "per", "block:"})) continue;
    if (starts_with_words(toks,
                          {"Free", "pages", "count", "per", "migrate", "type", "at", "order"})) {
      section = Section::Free;
      free_orders = toks.size() - 8;
      bool ok = free_orders > 0 && free_orders <= kMaxOrders;
      for (size_t i = 8; ok && i < toks.size(); ++i) {
        uint64_t v = 0;
        ok = parse_u64(toks[i], v) && v == i - 8;
      }
      if (!ok) {
        bad.skip(l.no,
            "expected the order columns '0 1 2 ...' after 'at order'; free-list table skipped");
        section = Section::Other;
      }
      continue;
    }
    if (starts_with_words(toks, {"Number", "of", "blocks", "type"})) {
      section = Section::Blocks;
      block_types.assign(toks.begin() + 4, toks.end());
      if (block_types.empty()) {
        bad.skip(l.no,
            "expected migrate type names after 'Number of blocks type'; pageblock table skipped");
        section = Section::Other;
      }
      continue;
    }
    if (starts_with_words(toks, {"Number", "of", "mixed", "blocks"})) {
      section = Section::Other;  // CONFIG_PAGE_OWNER statistics; not used
      continue;
    }
    if (toks[0] != "Node") {
      bad.skip(l.no, "unrecognised line " + quote(l.text));
      continue;
    }
    if (section == Section::Other) continue;
    if (section == Section::None) {
      bad.skip(l.no, "zone line before any table header");
      continue;
    }

    std::string why;
    auto h = parse_zone_header(toks, why);
    if (!h) {
      bad.skip(l.no, why);
      continue;
    }
    std::vector<uint64_t> counts;
    if (section == Section::Free) {
      if (toks.size() < 6 || toks[4] != "type" || !is_zone_name(toks[5])) {
        bad.skip(l.no,
            zone_label(h->node, h->zone) + ": expected 'type <migratetype>' after the zone name");
        continue;
      }
      if (!parse_counts(toks, 6, true, counts, why)) {
        bad.skip(l.no, zone_label(h->node, h->zone) + " type " + std::string(toks[5]) + ": " + why);
        continue;
      }
      if (counts.size() != free_orders) {
        bad.skip(l.no, zone_label(h->node, h->zone) + " type " + std::string(toks[5]) + ": " +
                      std::to_string(counts.size()) + " order columns where the header has " +
                      std::to_string(free_orders));
        continue;
      }
      ZoneFree& z = work[find_or_add(work, h->node, h->zone)];
      z.free_by_type[std::string(toks[5])] = std::move(counts);
      ++rows;
    } else {  // Section::Blocks
      if (!parse_counts(toks, 4, false, counts, why)) {
        bad.skip(l.no, zone_label(h->node, h->zone) + ": pageblock count " + why);
        continue;
      }
      if (counts.size() != block_types.size()) {
        bad.skip(l.no, zone_label(h->node, h->zone) + ": " + std::to_string(counts.size()) +
                      " pageblock columns where the header names " +
                      std::to_string(block_types.size()) + " migrate types");
        continue;
      }
      ZoneFree& z = work[find_or_add(work, h->node, h->zone)];
      for (size_t i = 0; i < counts.size(); ++i) z.pageblocks[block_types[i]] = counts[i];
      ++rows;
    }
  }

  if (!any_content) return empty_file(path, kExpected);
  if (rows == 0)
    return unparsable(path, bad.first_line ? bad.first_line : first_content_line(lines), kExpected,
                      bad.first_line ? bad.first_why : "no table rows");
  zones = std::move(work);
  if (pageblock_order && pb_order) *pageblock_order = *pb_order;
  return {};
}

// ---------------------------------------------------------------------------
// /proc/vmstat: "nr_free_pages 6096132" per line.

Result<std::map<std::string, uint64_t>> parse_vmstat(std::string_view text, std::string_view path,
                                                     std::vector<std::string>* warnings) {
  static constexpr std::string_view kExpected = "'<counter name> <value>' lines";
  const std::vector<Line> lines = split_lines(text);
  std::map<std::string, uint64_t> out;
  bool any_content = false;
  BadLines bad{warnings, path};

  for (const Line& l : lines) {
    const auto toks = lex(l.text);
    if (toks.empty()) continue;
    any_content = true;
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
  if (!any_content) return empty_file(path, kExpected);
  if (out.empty()) return unparsable(path, bad.first_line, kExpected, bad.first_why);
  return out;
}

// ---------------------------------------------------------------------------
// /proc/meminfo: "MemAvailable:   24247156 kB".

Result<void> parse_meminfo(std::string_view text, std::string_view path, MemSnapshot& out) {
  static constexpr std::string_view kExpected =
      "'MemFree: <n> kB' and 'MemAvailable: <n> kB' lines";
  const std::vector<Line> lines = split_lines(text);
  bool any_content = false, have_free = false, have_avail = false;
  std::vector<std::string> warnings;
  BadLines bad{&warnings, path};

  for (const Line& l : lines) {
    const auto toks = lex(l.text);
    if (toks.empty()) continue;
    any_content = true;
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

  if (!any_content) return empty_file(path, kExpected);
  if (!have_free && !have_avail)
    return unparsable(path, bad.first_line ? bad.first_line : first_content_line(lines), kExpected,
                      bad.first_line ? bad.first_why : "neither MemFree nor MemAvailable found");
  if (!have_free) warnings.push_back(std::string(path) + ": no MemFree line; reported as 0");
  if (!have_avail)
    warnings.push_back(std::string(path) +
                       ": no MemAvailable line (kernel older than 3.14?); reported as 0");
  out.warnings.insert(out.warnings.end(), warnings.begin(), warnings.end());
  return {};
}

// ---------------------------------------------------------------------------
// File access.

Result<std::string> read_text_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot open " + path);
  auto r = read_text_fd(fd, path);
  ::close(fd);
  return r;
}

Result<std::string> read_text_fd(int fd, const std::string& path) {
  // Kernel text files here are a few KB; refuse anything absurd rather than
  // eat memory if pointed at the wrong file.
  constexpr size_t kMaxBytes = 64u << 20;
  if (::lseek(fd, 0, SEEK_SET) < 0) return sys_error("cannot rewind " + path);
  std::string data;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error("cannot read " + path);
    }
    if (n == 0) break;
    if (data.size() + static_cast<size_t>(n) > kMaxBytes)
      return make_error(path + ": larger than " + std::to_string(kMaxBytes >> 20) +
                            " MiB, not a kernel text file; check the path",
                        EFBIG);
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

namespace {

namespace fs = std::filesystem;

std::string join(const std::string& root, std::string_view rel) {
  if (root.empty()) return std::string(rel);
  if (root.back() == '/') return root + std::string(rel);
  return root + "/" + std::string(rel);
}

// The first pool file that failed, and why (an errno name or "format").
struct PoolFault {
  std::string path, cause, message;
};

// A sysfs file holding one number.
std::optional<uint64_t> read_number_file(const std::string& path,
                                         std::vector<std::string>* warnings, bool required,
                                         PoolFault* fault) {
  auto text = read_text_file(path);
  if (!text) {
    if (required && warnings) warnings->push_back(text.error().message);
    if (required && fault && fault->cause.empty())
      *fault = {path, errno_name(text.error().err), text.error().message};
    return std::nullopt;
  }
  const auto toks = lex(*text);
  uint64_t v = 0;
  if (toks.size() != 1 || !parse_u64(toks[0], v)) {
    const std::string msg = path + ":1: expected one number, got " + quote(*text);
    if (warnings) warnings->push_back(msg);
    if (fault && fault->cause.empty()) *fault = {path, "format", msg};
    return std::nullopt;
  }
  return v;
}

// Sorted subdirectory names of `dir` matching `prefix` + digits + `suffix`,
// with the number.
std::vector<std::pair<uint64_t, std::string>> numbered_dirs(const std::string& dir,
                                                            std::string_view prefix,
                                                            std::string_view suffix) {
  std::vector<std::pair<uint64_t, std::string>> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + suffix.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    uint64_t n = 0;
    const std::string_view digits =
        std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (!parse_u64(digits, n)) continue;
    out.emplace_back(n, name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void read_pools(const std::string& dir, int node, std::vector<HugePool>& out,
                std::vector<std::string>* warnings, PoolFault* fault) {
  for (const auto& [size_kib, name] : numbered_dirs(dir, "hugepages-", "kB")) {
    const std::string pool = join(dir, name);
    auto total = read_number_file(join(pool, "nr_hugepages"), warnings, true, fault);
    auto free = read_number_file(join(pool, "free_hugepages"), warnings, true, fault);
    if (!total || !free) continue;
    auto surplus = read_number_file(join(pool, "surplus_hugepages"), warnings, false, fault);
    out.push_back(HugePool{node, size_kib, *total, *free, surplus.value_or(0)});
  }
}

std::vector<HugePool> read_hugepages_noting(const std::string& sys_root, std::vector<std::string>* warnings,
                                            PoolFault* fault) {
  std::vector<HugePool> out;
  const std::string nodes = join(sys_root, "devices/system/node");
  std::error_code ec;
  if (fs::is_directory(nodes, ec)) {
    for (const auto& [n, name] : numbered_dirs(nodes, "node", "")) {
      if (n > static_cast<uint64_t>(std::numeric_limits<int>::max())) continue;
      read_pools(join(join(nodes, name), "hugepages"), static_cast<int>(n), out, warnings, fault);
    }
  } else {
    read_pools(join(sys_root, "kernel/mm/hugepages"), 0, out, warnings, fault);
  }
  return out;
}

}  // namespace

std::vector<HugePool> read_hugepages(const std::string& sys_root,
                                     std::vector<std::string>* warnings) {
  return read_hugepages_noting(sys_root, warnings, nullptr);
}

Result<MemSnapshot> read_snapshot(const std::string& proc_root, const std::string& sys_root,
                                  const MemSnapshot* pageblocks_from) {
  std::vector<SourceRead> report;
  return read_snapshot(proc_root, sys_root, pageblocks_from, {}, report);
}

Result<MemSnapshot> read_snapshot(const std::string& proc_root, const std::string& sys_root,
                                  const MemSnapshot* pageblocks_from, const std::set<std::string>& skip,
                                  std::vector<SourceRead>& report) {
  MemSnapshot snap;
  // Each source read is reported: its error (cause: the errno name, or
  // "format" when it read but did not parse), or the first line it skipped.
  size_t warned_before = 0;
  auto begin = [&] { warned_before = snap.warnings.size(); };
  auto done = [&](const char* source, const std::string& path) {
    SourceRead r{source, path, "", ""};
    if (snap.warnings.size() > warned_before) {
      r.cause = "lines";
      r.message = snap.warnings[warned_before];
      if (const size_t more = snap.warnings.size() - warned_before - 1)
        r.message += " (and " + std::to_string(more) + " more)";
    }
    report.push_back(std::move(r));
  };
  auto failed = [&](const char* source, const std::string& path, const Error& e, bool read_error) {
    report.push_back(SourceRead{source, path, read_error ? errno_name(e.err) : "format", e.message});
  };
  auto required = [&](std::string_view name) -> Result<std::string> {
    const std::string path = join(proc_root, name);
    auto text = read_text_file(path);
    if (!text)
      return Error{text.error().err,
                   text.error().message + "; fragd needs " + path +
                       ": mount procfs there (mount -t proc proc " + proc_root +
                       ") or point fragd at the right proc root (--path.procfs)"};
    return text;
  };

  const std::string buddy_path = join(proc_root, "buddyinfo");
  begin();
  auto buddy_text = required("buddyinfo");
  if (!buddy_text) {
    failed("buddyinfo", buddy_path, buddy_text.error(), true);
    return buddy_text.error();
  }
  auto zones = parse_buddyinfo(*buddy_text, buddy_path, &snap.warnings);
  if (!zones) {
    failed("buddyinfo", buddy_path, zones.error(), false);
    return zones.error();
  }
  snap.zones = std::move(*zones);
  done("buddyinfo", buddy_path);

  const std::string zoneinfo_path = join(proc_root, "zoneinfo");
  begin();
  auto zoneinfo_text = required("zoneinfo");
  if (!zoneinfo_text) {
    failed("zoneinfo", zoneinfo_path, zoneinfo_text.error(), true);
    return zoneinfo_text.error();
  }
  if (auto r = parse_zoneinfo(*zoneinfo_text, zoneinfo_path, snap.zones, &snap.warnings); !r) {
    failed("zoneinfo", zoneinfo_path, r.error(), false);
    return r.error();
  }

  // buddyinfo lists every populated zone; one that zoneinfo says is
  // populated but that has no buddyinfo row lost its line.
  for (const ZoneFree& z : snap.zones)
    if (z.present_pages > 0 && z.free_blocks.empty())
      snap.warnings.push_back(buddy_path + ": no usable line for " + zone_label(z.node, z.zone) +
                              " (" + std::to_string(z.present_pages) +
                              " present pages); its free blocks are unknown and its score reads 0");
  done("zoneinfo", zoneinfo_path);

  const std::string pti_path = join(proc_root, "pagetypeinfo");
  if (pageblocks_from) {
    snap.pageblock_order = pageblocks_from->pageblock_order;
    for (ZoneFree& z : snap.zones)
      for (const ZoneFree& old : pageblocks_from->zones)
        if (old.node == z.node && old.zone == z.zone) {
          z.pageblocks = old.pageblocks;
          z.free_by_type = old.free_by_type;
        }
  } else if (!skip.count("pagetypeinfo")) {
    begin();
    if (auto text = read_text_file(pti_path); !text) {
      const int err = text.error().err;
      const std::string msg =
          text.error().message +
          (err == EACCES || err == EPERM
               ? "; it is readable by root only (mode 0400): run fragd as root to get pageblock "
                 "counts per migrate type"
               : "; pageblock counts per migrate type are not reported");
      snap.warnings.push_back(msg);
      failed("pagetypeinfo", pti_path, Error{err, msg}, true);
    } else if (auto r = parse_pagetypeinfo(*text, pti_path, snap.zones, &snap.warnings,
                                           &snap.pageblock_order);
               !r) {
      const std::string msg = r.error().message + "; pageblock counts are not reported";
      snap.warnings.push_back(msg);
      failed("pagetypeinfo", pti_path, Error{r.error().err, msg}, false);
    } else {
      done("pagetypeinfo", pti_path);
    }
  }

  const std::string vmstat_path = join(proc_root, "vmstat");
  if (!skip.count("vmstat")) {
    begin();
    if (auto text = read_text_file(vmstat_path); !text) {
      const std::string msg = text.error().message + "; vmstat counters are not reported";
      snap.warnings.push_back(msg);
      failed("vmstat", vmstat_path, Error{text.error().err, msg}, true);
    } else if (auto vm = parse_vmstat(*text, vmstat_path, &snap.warnings); !vm) {
      const std::string msg = vm.error().message + "; vmstat counters are not reported";
      snap.warnings.push_back(msg);
      failed("vmstat", vmstat_path, Error{vm.error().err, msg}, false);
    } else {
      snap.vmstat = std::move(*vm);
      done("vmstat", vmstat_path);
    }
  }

  const std::string meminfo_path = join(proc_root, "meminfo");
  if (!skip.count("meminfo")) {
    begin();
    if (auto text = read_text_file(meminfo_path); !text) {
      const std::string msg = text.error().message + "; MemFree/MemAvailable are not reported";
      snap.warnings.push_back(msg);
      failed("meminfo", meminfo_path, Error{text.error().err, msg}, true);
    } else if (auto r = parse_meminfo(*text, meminfo_path, snap); !r) {
      const std::string msg = r.error().message + "; MemFree/MemAvailable are not reported";
      snap.warnings.push_back(msg);
      failed("meminfo", meminfo_path, Error{r.error().err, msg}, false);
    } else {
      done("meminfo", meminfo_path);
    }
  }

  if (!skip.count("hugepages")) {
    begin();
    PoolFault fault;
    snap.hugepages = read_hugepages_noting(sys_root, &snap.warnings, &fault);
    if (!fault.cause.empty()) {
      // Like a source that failed outright (and one skipped while it backs off): no pool at all,
      // rather than pools that come and go.
      snap.hugepages.clear();
      report.push_back(SourceRead{"hugepages", fault.path, fault.cause,
                                  fault.message + "; no hugetlb pool is reported until every pool file reads"});
    } else {
      std::error_code ec;
      const std::string nodes = join(sys_root, "devices/system/node");
      done("hugepages", fs::is_directory(nodes, ec) ? nodes : join(sys_root, "kernel/mm/hugepages"));
    }
  }
  return snap;
}

}  // namespace fragd
