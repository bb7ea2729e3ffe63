// SPDX-License-Identifier: Apache-2.0
#include "kernel/procfs.h"

#include <algorithm>
#include <cerrno>
#include <initializer_list>
#include <limits>
#include <optional>

#include "kernel/kernel_text.h"

// The zone files: /proc/buddyinfo, /proc/zoneinfo, /proc/pagetypeinfo.
namespace fragd {
namespace {

bool parse_node_id(std::string_view tok, int& out) {
  uint64_t v = 0;
  if (!parse_u64(tok, v) || v > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return false;
  out = static_cast<int>(v);
  return true;
}

// Do `toks` begin with exactly these words?
bool starts_with_words(const std::vector<std::string_view>& toks,
                       std::initializer_list<std::string_view> words) {
  if (toks.size() < words.size()) return false;
  size_t i = 0;
  for (std::string_view w : words)
    if (toks[i++] != w) return false;
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

}  // namespace

// ---------------------------------------------------------------------------
// /proc/buddyinfo (frag_show_print in mm/vmstat.c):
//   Node 0, zone   Normal   4351   5688   1389 ...

Result<std::vector<ZoneFree>> parse_buddyinfo(std::string_view text, std::string_view path,
                                              std::vector<std::string>* warnings) {
  static constexpr std::string_view kExpected =
      "'Node <n>, zone <name> <free blocks of order 0> <order 1> ...'";
  const std::vector<LexedLine> lines = content_lines(text);
  if (lines.empty()) return empty_file(path, kExpected);

  struct Parsed {
    size_t line;
    int node;
    std::string_view zone;
    std::vector<uint64_t> counts;
  };
  std::vector<Parsed> parsed;
  BadLines bad{warnings, path};

  for (const LexedLine& l : lines) {
    const auto& toks = l.toks;
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
//           ...
//       nr_free_pages_blocks 5189632   (Linux 6.15+: free pages in free blocks of pageblock order and up)
//     node_unreclaimable:  0   (the node's; in each populated zone)

std::map<int, bool> nodes_unreclaimable(const std::vector<ZoneFree>& zones) {
  std::map<int, bool> out;
  for (const ZoneFree& z : zones)
    if (z.node_unreclaimable >= 0) out[z.node] = out[z.node] || z.node_unreclaimable == 1;
  return out;
}

namespace {

// The zone counters parse_zoneinfo reads, one bit each; per-node stats, watermarks, protection
// and pagesets are skipped.
enum : unsigned { kFree = 1, kSpanned = 2, kPresent = 4, kManaged = 8, kUnreclaimable = 16, kFreeBlocks = 32 };
struct ZoneCounterKey {
  std::string_view word, second;  // the line's first words ("pages", "free"); second empty: one word
  unsigned bit;
};
constexpr ZoneCounterKey kZoneCounterKeys[] = {
    {"pages", "free", kFree},
    {"spanned", "", kSpanned},
    {"present", "", kPresent},
    {"managed", "", kManaged},
    {"nr_free_pages_blocks", "", kFreeBlocks},
    {"node_unreclaimable:", "", kUnreclaimable},
};

// A zone block met in zoneinfo, in file order, and the counters it gave.
struct ZoneSeen {
  size_t header_line;
  int node;
  std::string zone;
  unsigned keys = 0;
};

// Zones with no counters still exist; a zone without 'present', or one `zones` held that the
// file lacks, is warned about; then the zones in the kernel's order within each node.
void finish_zoneinfo(const std::vector<ZoneSeen>& seen, std::vector<ZoneFree>& work, std::string_view path,
                     std::vector<std::string>* warnings) {
  for (const ZoneSeen& s : seen) {
    find_or_add(work, s.node, s.zone);
    if (!(s.keys & kPresent))
      warn(warnings, path, s.header_line,
           zone_label(s.node, s.zone) +
               ": no valid 'present' line (garbled, or file truncated?); present pages taken as 0");
  }
  for (const ZoneFree& z : work) {
    const bool in_file = std::any_of(seen.begin(), seen.end(), [&](const ZoneSeen& s) {
      return s.node == z.node && s.zone == z.zone;
    });
    if (!in_file && warnings)
      warnings->push_back(std::string(path) + ": " + zone_label(z.node, z.zone) +
                          " is missing; its present/managed/spanned pages are 0");
  }
  auto rank = [&](const ZoneFree& z) {
    for (size_t i = 0; i < seen.size(); ++i)
      if (seen[i].node == z.node && seen[i].zone == z.zone) return i;
    return seen.size();
  };
  std::stable_sort(work.begin(), work.end(), [&](const ZoneFree& a, const ZoneFree& b) {
    if (a.node != b.node) return a.node < b.node;
    return rank(a) < rank(b);
  });
}

}  // namespace

Result<void> parse_zoneinfo(std::string_view text, std::string_view path,
                            std::vector<ZoneFree>& zones, std::vector<std::string>* warnings) {
  static constexpr std::string_view kExpected = "'Node <n>, zone <name>' followed by its counters";
  // Only the zone headers and the counters read here are lexed.
  size_t first = 0;
  const std::vector<LexedLine> lines = content_lines(
      text,
      [](std::string_view w) {
        return w == "Node" || std::any_of(std::begin(kZoneCounterKeys), std::end(kZoneCounterKeys),
                                          [w](const ZoneCounterKey& c) { return w == c.word; });
      },
      first);
  if (first == 0) return empty_file(path, kExpected);

  std::vector<ZoneSeen> seen;  // zones in zoneinfo order
  std::vector<ZoneFree> work = zones;
  long cur = -1;  // index into `seen`; -1 = not inside a usable zone block
  BadLines bad{warnings, path};

  for (const LexedLine& l : lines) {
    const auto& toks = l.toks;

    if (toks[0] == "Node") {
      std::string why;
      auto h = parse_zone_header(toks, why);
      if (!h) {
        bad.skip(l.no, why, "this zone's counters are skipped");
        cur = -1;
        continue;
      }
      const bool dup = std::any_of(seen.begin(), seen.end(), [&](const ZoneSeen& s) {
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

    const auto k = std::find_if(std::begin(kZoneCounterKeys), std::end(kZoneCounterKeys), [&](const ZoneCounterKey& c) {
      return toks[0] == c.word && (c.second.empty() || (toks.size() >= 2 && toks[1] == c.second));
    });
    if (k == std::end(kZoneCounterKeys)) continue;
    const std::string key = k->second.empty() ? std::string(k->word) : std::string(k->word) + " " + std::string(k->second);
    const unsigned bit = k->bit;
    const size_t value_at = k->second.empty() ? 1 : 2;
    ZoneSeen& s = seen[static_cast<size_t>(cur)];
    uint64_t v = 0;
    if (toks.size() != value_at + 1 || !parse_u64(toks[value_at], v) || (bit == kUnreclaimable && v > 1)) {
      const std::string got = toks.size() <= value_at ? std::string("nothing")
                                                      : quote(toks[value_at]);
      warn(warnings, path, l.no,
           zone_label(s.node, s.zone) + ": expected '" + std::string(key) +
               (bit == kUnreclaimable ? " <0 or 1>', got " : " <pages>', got ") +
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
      case kUnreclaimable: z.node_unreclaimable = static_cast<int>(v); break;
      case kFreeBlocks: z.free_pages_blocks = v; break;
    }
  }

  if (seen.empty())
    return unparsable(path, bad.first_line ? bad.first_line : first, kExpected,
                      bad.first_line ? bad.first_why : "no 'Node <n>, zone <name>' line");

  finish_zoneinfo(seen, work, path, warnings);
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

namespace {

// Where a /proc/pagetypeinfo reading is: which table its rows belong to and that table's columns.
struct PagetypeTables {
  enum class Section { None, Free, Blocks, Other };
  Section section = Section::None;
  size_t free_orders = 0;                // order columns of the Free table
  std::vector<std::string> block_types;  // column names of the Blocks table
  std::optional<unsigned> pb_order;
};

// A line that is not a zone row: the block order, or a table's header. False for any other line.
bool pagetypeinfo_header(const LexedLine& l, PagetypeTables& t, BadLines& bad) {
  using Section = PagetypeTables::Section;
  const auto& toks = l.toks;
  if (starts_with_words(toks, {"Page", "block", "order:"})) {
    uint64_t v = 0;
    if (toks.size() != 4 || !parse_u64(toks[3], v) || v >= kMaxOrders) bad.skip(l.no, "expected 'Page block order: <n>'");
    else t.pb_order = static_cast<unsigned>(v);
    return true;
  }
  if (starts_with_words(toks, {"Pages", "per", "block:"})) return true;
  if (starts_with_words(toks, {"Free", "pages", "count", "per", "migrate", "type", "at", "order"})) {
    t.section = Section::Free;
    t.free_orders = toks.size() - 8;
    bool ok = t.free_orders > 0 && t.free_orders <= kMaxOrders;
    for (size_t i = 8; ok && i < toks.size(); ++i) {
      uint64_t v = 0;
      ok = parse_u64(toks[i], v) && v == i - 8;
    }
    if (!ok) {
      bad.skip(l.no, "expected the order columns '0 1 2 ...' after 'at order'; free-list table skipped");
      t.section = Section::Other;
    }
    return true;
  }
  if (starts_with_words(toks, {"Number", "of", "blocks", "type"})) {
    t.section = Section::Blocks;
    t.block_types.assign(toks.begin() + 4, toks.end());
    if (t.block_types.empty()) {
      bad.skip(l.no, "expected migrate type names after 'Number of blocks type'; pageblock table skipped");
      t.section = Section::Other;
    }
    return true;
  }
  if (starts_with_words(toks, {"Number", "of", "mixed", "blocks"})) {
    t.section = Section::Other;  // CONFIG_PAGE_OWNER statistics; not used
    return true;
  }
  return false;
}

// A zone row of the table `t` is in, stored in `work`; false (said in `bad`) when skipped.
bool pagetypeinfo_row(const LexedLine& l, const ZoneHeader& h, const PagetypeTables& t, std::vector<ZoneFree>& work,
                      BadLines& bad) {
  const auto& toks = l.toks;
  std::string why;
  std::vector<uint64_t> counts;
  const std::string zone = zone_label(h.node, h.zone);
  if (t.section == PagetypeTables::Section::Free) {
    if (toks.size() < 6 || toks[4] != "type" || !is_zone_name(toks[5])) {
      bad.skip(l.no, zone + ": expected 'type <migratetype>' after the zone name");
      return false;
    }
    const std::string type(toks[5]);
    if (!parse_counts(toks, 6, true, counts, why)) {
      bad.skip(l.no, zone + " type " + type + ": " + why);
      return false;
    }
    if (counts.size() != t.free_orders) {
      bad.skip(l.no, zone + " type " + type + ": " + std::to_string(counts.size()) +
                         " order columns where the header has " + std::to_string(t.free_orders));
      return false;
    }
    work[find_or_add(work, h.node, h.zone)].free_by_type[type] = std::move(counts);
    return true;
  }
  if (!parse_counts(toks, 4, false, counts, why)) {
    bad.skip(l.no, zone + ": pageblock count " + why);
    return false;
  }
  if (counts.size() != t.block_types.size()) {
    bad.skip(l.no, zone + ": " + std::to_string(counts.size()) + " pageblock columns where the header names " +
                       std::to_string(t.block_types.size()) + " migrate types");
    return false;
  }
  ZoneFree& z = work[find_or_add(work, h.node, h.zone)];
  for (size_t i = 0; i < counts.size(); ++i) z.pageblocks[t.block_types[i]] = counts[i];
  return true;
}

}  // namespace

Result<void> parse_pagetypeinfo(std::string_view text, std::string_view path,
                                std::vector<ZoneFree>& zones, std::vector<std::string>* warnings,
                                unsigned* pageblock_order) {
  using Section = PagetypeTables::Section;
  static constexpr std::string_view kExpected =
      "the 'Free pages count per migrate type at order' and 'Number of blocks type' tables";
  const std::vector<LexedLine> lines = content_lines(text);
  if (lines.empty()) return empty_file(path, kExpected);

  PagetypeTables t;
  std::vector<ZoneFree> work = zones;
  size_t rows = 0;  // table rows stored
  BadLines bad{warnings, path};
  for (const LexedLine& l : lines) {
    if (pagetypeinfo_header(l, t, bad)) continue;
    if (l.toks[0] != "Node") {
      bad.skip(l.no, "unrecognised line " + quote(l.text));
      continue;
    }
    if (t.section == Section::Other) continue;
    if (t.section == Section::None) {
      bad.skip(l.no, "zone line before any table header");
      continue;
    }
    std::string why;
    auto h = parse_zone_header(l.toks, why);
    if (!h) bad.skip(l.no, why);
    else rows += pagetypeinfo_row(l, *h, t, work, bad);
  }

  if (rows == 0)
    return unparsable(path, bad.first_line ? bad.first_line : lines.front().no, kExpected,
                      bad.first_line ? bad.first_why : "no table rows");
  zones = std::move(work);
  if (pageblock_order && t.pb_order) *pageblock_order = *t.pb_order;
  return {};
}

std::string zone_label(int node, std::string_view zone) {
  return "Node " + std::to_string(node) + ", zone " + std::string(zone);
}

}  // namespace fragd
