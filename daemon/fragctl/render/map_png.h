// SPDX-License-Identifier: Apache-2.0
// The physical memory map of `fragctl map --png FILE`, drawn with cairo:
// a title (host, scan time, totals) and a legend of the block classes with
// their counts; per zone a grid with one cell per pageblock, coloured by
// class, rows aligned to physical addresses; below, the pages in use of every
// pageblock (2 MiB region on x86) against its physical address, one point per
// block coloured by class, over all zones shown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fragctl/render/map_view.h"
#include "base/result.h"

namespace fragd {

struct MapPngOptions {
  std::string host;        // shown in the title when not empty
  uint64_t page_kib = 4;   // page size, for addresses and sizes
  bool utc_times = false;  // scan time in UTC instead of local time
};

// Where things are in the picture, decided before drawing. Cells are square;
// `cols` blocks per grid row (64 to 1024, fewer for big maps so the grids
// stay a few hundred pixels tall), each row starting at a multiple of `cols`
// blocks.
struct MapPngLayout {
  int width = 0, height = 0;
  int cell = 0;       // px per block
  unsigned cols = 0;  // blocks per grid row
  int grid_x = 0;     // left edge of every grid
  std::vector<int> zone_grid_y;  // top edge of each zone's grid (its first row)
  int plot_x = 0, plot_y = 0, plot_w = 0, plot_h = 0;  // the pages-in-use plot's axes box
  // Pixel in the middle of block `i` of zone `z`'s cell.
  int cell_x(const MapView& v, size_t z, uint64_t i) const;
  int cell_y(const MapView& v, size_t z, uint64_t i) const;
};

MapPngLayout map_png_layout(const MapView& v);

// 0xRRGGBB of a class in the picture.
uint32_t map_class_rgb(BlockClass c);

struct MapPngInfo {
  int width = 0, height = 0;
  uint64_t bytes = 0;  // size of the file written
};

// Draws `v` (which must have a scan with its blocks: not "withheld") and writes it to
// `path` as a PNG. The Error names the path (cannot create or write it) or the cairo failure.
Result<MapPngInfo> write_map_png(const MapView& v, const std::string& path, const MapPngOptions& opt = {});

}  // namespace fragd
