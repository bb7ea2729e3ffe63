// SPDX-License-Identifier: Apache-2.0
// fragctl map: the class of every pageblock and the pages in use in each, as text, JSON or a PNG,
// with the pollution fragd tracked.
#include <cstdio>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/format.h"
#include "fragctl/render/cairo_lib.h"
#include "fragctl/render/map_png.h"
#include "fragctl/render/map_view.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "kernel/page_size.h"
#include "protocol/request.h"

namespace fragd::ctl {
namespace {

struct MapArgs {
  fragd::MapFilter filter;
  std::string png;  // empty: no picture
  bool json = false;
  double max_age_s = 5;  // a scan older than this is redone first
  std::optional<uint64_t> blocks;  // ledger blocks to list (absent: fragd's default, 256)
};

// The pageblock map: text (default), the answer as JSON, or a PNG plus the
// summary lines of the text.
int cmd_map(const std::string& socket_path, const MapArgs& a) {
  // Before asking fragd for a scan: without libcairo there is nothing to draw with.
  if (!a.png.empty())
    if (auto c = fragd::load_cairo(); !c) return fail("--png " + a.png + ": " + c.error().message);
  // A scan reads every page's flags (~0.6 s for 24 GiB here); allow for a large host.
  auto j = request(socket_path, ControlRequest::map(static_cast<int64_t>(a.max_age_s * 1e9), a.blocks, a.filter.node),
                   60000);
  if (!j) return fail(j.error());
  auto view = fragd::parse_map_answer(*j);
  if (!view) return fail(view.error());
  if (view->note && !a.json) std::fprintf(stderr, "fragctl: %s\n", view->note->c_str());
  if (auto f = fragd::filter_map(*view, a.filter); !f) return fail(f.error());
  const std::string no_scan = "fragd has no pageblock map: " + view->scan_error;
  if (a.json) {
    if (auto f = fragd::filter_map_answer(*j, a.filter); !f) return fail(f.error());
    std::printf("%s\n", j->dump().c_str());
    return view->scanned ? 0 : fail(no_scan);
  }
  if (!view->scanned) return fail(no_scan);

  fragd::MapTextOptions text;
  text.page_kib = fragd::kernel_page_kib();
  if (!a.png.empty()) {
    fragd::MapPngOptions png;
    png.host = host_name();
    png.page_kib = text.page_kib;
    auto info = fragd::write_map_png(*view, a.png, png);
    if (!info) return fail(info.error());
    std::printf("map written to %s (%dx%d px, %s)\n", a.png.c_str(), info->width, info->height,
                fragd::format_size_kib((info->bytes + 1023) / 1024).c_str());
    text.rows = false;
  }
  std::fputs(fragd::format_map_text(*view, text).c_str(), stdout);
  return 0;
}

const bool registered_map = declare_subcommand({
    50, "[--socket PATH] map [--node N] [--zone Z] [--max-age SEC] [--blocks N] [--png FILE] [--json]",
    [](CLI::App& app) {
      auto a = std::make_shared<MapArgs>();
      auto node = std::make_shared<int>(0);
      auto zone = std::make_shared<std::string>();
      auto* map =
          app.add_subcommand("map", "Physical memory map: the class of every pageblock, and pages in use per block");
      auto* node_opt = map->add_option("--node", *node, "Only the zones of this NUMA node")
                           ->type_name("N")
                           ->check(CLI::NonNegativeNumber);
      auto* zone_opt =
          map->add_option("--zone", *zone, "Only zones of this name (DMA, DMA32, Normal, Movable)")->type_name("Z");
      auto* png_opt =
          map->add_option("--png", a->png, "Also draw the map and the pages-in-use plot into this PNG file")
              ->type_name("FILE");
      map->add_flag("--json", a->json, "fragd's answer as JSON (only the zones selected)")->excludes(png_opt);
      map->add_option("--max-age", a->max_age_s,
                      "Use fragd's last scan if it is at most SEC old, else scan now (default 5; 0 = always scan). "
                      "Root only, the full scans asked for held to pageblocks.full_scan_budget across all clients: "
                      "else, and for members of the socket group, fragd answers with the map its sampled rounds "
                      "keep and says how old it is")
          ->type_name("SEC")
          ->check(CLI::Range(0.0, 86400.0));
      map->add_option("--blocks", a->blocks,
                      "List up to N blocks of the pollution ledger, most pages first (default 256, at most " +
                          std::to_string(fragd::kMaxMapBlocks) +
                          ": compare with tracked_blocks to see all were listed)")
          ->type_name("N")
          ->check(CLI::Range(uint64_t{1}, fragd::kMaxMapBlocks));
      map->footer(
          "Classes: . free  m movable  x hybrid (movable, polluted by unmovable pages)  U unmovable  H huge  - "
          "offline.\n"
          "Text: per zone a header (blocks per class, huge pages free now, by compaction and lost to pollution) and\n"
          "rows of 64 blocks, each after the physical address of its first block; then the pollution fragd "
          "tracked.\n"
          "Exit status: 1 when fragd has no map (its scanner needs root and /proc/kpageflags) or no zone matches.");
      return std::pair{map, Run([a, node, zone, node_opt, zone_opt](const std::string& socket) {
                         if (node_opt->count() > 0) a->filter.node = *node;
                         if (zone_opt->count() > 0) a->filter.zone = *zone;
                         return cmd_map(socket, *a);
                       })};
    }});

}  // namespace
}  // namespace fragd::ctl
