// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/map_png.h"
#include "base/text.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <unistd.h>

#include "fragctl/render/cairo_lib.h"
#include "fragctl/render/ctl_format.h"

namespace fragd {

namespace {

using ull = unsigned long long;


// Geometry (px).
constexpr int kGridX = 116;        // left margin: row addresses, y axis labels
constexpr int kGridW = 1024;       // width of the grids and of the plot
constexpr int kRightMargin = 36;
constexpr int kWidth = kGridX + kGridW + kRightMargin;
constexpr int kGridBudget = 480;   // the grids together aim to stay within this height
constexpr int kTitleH = 26, kLineH = 18, kLegendH = 28;
constexpr int kZoneHeadH = 18, kZoneGap = 14;
constexpr int kPlotHeadH = 40, kPlotH = 260, kPlotFootH = 44;
constexpr int kTop = 12, kBottom = 8;

uint64_t zone_rows(const MapZone& z, unsigned cols) {
  const uint64_t last = z.first_block + z.blocks() - 1;
  return last / cols - z.first_block / cols + 1;
}

// Whole blocks between the lowest and highest address of the zones shown.
struct Span {
  uint64_t lo = 0, hi = 1;  // pfns
};
Span pfn_span(const MapView& v) {
  Span s{UINT64_MAX, 0};
  for (const auto& z : v.zones) {
    s.lo = std::min(s.lo, z.first_block << v.pageblock_order);
    s.hi = std::max(s.hi, (z.first_block + z.blocks()) << v.pageblock_order);
  }
  if (s.lo >= s.hi) return Span{0, 1};
  return s;
}

struct Rgb {
  double r, g, b;
};
Rgb rgb(uint32_t c) { return {((c >> 16) & 0xff) / 255.0, ((c >> 8) & 0xff) / 255.0, (c & 0xff) / 255.0}; }

constexpr uint32_t kInk = 0x202020, kMuted = 0x606060, kRule = 0xd0d0d0, kFrame = 0xb0b0b0;

class Painter {
 public:
  Painter(const CairoLib& cl, cairo_t* cr) : cl_(cl), cr_(cr) {}
  void color(uint32_t c) {
    Rgb x = rgb(c);
    cl_.cairo_set_source_rgb(cr_, x.r, x.g, x.b);
  }
  void rect(double x, double y, double w, double h, uint32_t c) {
    color(c);
    cl_.cairo_rectangle(cr_, x, y, w, h);
    cl_.cairo_fill(cr_);
  }
  enum Align { Left, Right, Center };
  // Text with its baseline at y; returns its width.
  double text(double x, double y, const std::string& s, double size, uint32_t c, Align a = Left, bool bold = false,
              bool mono = false) {
    cl_.cairo_select_font_face(cr_, mono ? "DejaVu Sans Mono" : "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cl_.cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cl_.cairo_text_extents(cr_, s.c_str(), &e);
    double left = a == Left ? x : a == Right ? x - e.x_advance : x - e.x_advance / 2;
    color(c);
    cl_.cairo_move_to(cr_, left, y);
    cl_.cairo_show_text(cr_, s.c_str());
    return e.x_advance;
  }
  double text_width(const std::string& s, double size, bool bold = false) {
    cl_.cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cl_.cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cl_.cairo_text_extents(cr_, s.c_str(), &e);
    return e.x_advance;
  }
  // A crisp 1-px line between pixel centres.
  void line(double x0, double y0, double x1, double y1, uint32_t c, bool dashed = false) {
    color(c);
    cl_.cairo_set_line_width(cr_, 1.0);
    if (dashed) {
      const double d[] = {4.0, 3.0};
      cl_.cairo_set_dash(cr_, d, 2, 0);
    }
    cl_.cairo_move_to(cr_, x0, y0);
    cl_.cairo_line_to(cr_, x1, y1);
    cl_.cairo_stroke(cr_);
    cl_.cairo_set_dash(cr_, nullptr, 0, 0);
  }
  cairo_t* cr() { return cr_; }
  const CairoLib& cl() { return cl_; }

 private:
  const CairoLib& cl_;
  cairo_t* cr_;
};

const char* block_size_text(const MapView& v, uint64_t page_kib, std::string& buf) {
  buf = format_size_kib(v.block_pages() * page_kib);
  return buf.c_str();
}

void draw_title(Painter& p, const MapView& v, const MapPngOptions& opt, int& y) {
  const uint64_t page_kib = opt.page_kib;
  std::string title = "Physical memory by pageblock";
  if (!opt.host.empty()) title += " \xe2\x80\x94 " + opt.host;  // em dash
  p.text(kGridX, y + 18, title, 18, kInk, Painter::Left, true);
  y += kTitleH;

  uint64_t blocks = 0, pages = 0, hp_free = 0, hp_comp = 0, hp_poll = 0, cost = 0;
  for (const auto& z : v.zones) {
    blocks += z.blocks();
    pages += z.end_pfn - z.start_pfn;
    hp_free += z.hugepages_free;
    hp_comp += z.hugepages_compaction;
    hp_poll += z.hugepages_polluted;
    cost += z.compaction_cost_pages;
  }
  std::string bs;
  p.text(kGridX, y + 13,
         strf("scan %s (%s ago, took %s); %zu zone%s, %s in %llu blocks of %s", format_realtime(v.time_ns, opt.utc_times).c_str(),
              format_duration(v.age_ns, DurationStyle::Age).c_str(), format_duration(static_cast<double>(v.duration_ns)).c_str(), v.zones.size(),
              v.zones.size() == 1 ? "" : "s", format_size_kib(pages * page_kib).c_str(), ull(blocks),
              block_size_text(v, page_kib, bs)),
         12, kMuted);
  y += kLineH;
  p.text(kGridX, y + 13,
         strf("huge pages of %s: %llu free now, +%llu by compaction (migrating %llu pages, %s), %llu lost to pollution",
              bs.c_str(), ull(hp_free), ull(hp_comp), ull(cost), format_size_kib(cost * page_kib).c_str(), ull(hp_poll)),
         12, kMuted);
  y += kLineH;
  if (v.pollution) {
    const auto& pol = *v.pollution;
    std::string s = strf("pollution tracked (whole host): %llu blocks, %llu pages", ull(pol.tracked_blocks),
                         ull(pol.tracked_pages));
    for (size_t i = 0; i < pol.top.size() && i < 3; ++i)
      s += strf("%s%s (cgroup %llu) %llu blocks", i == 0 ? "; top: " : ", ", pol.top[i].comm.c_str(),
                ull(pol.top[i].cgroup_id), ull(pol.top[i].blocks));
    p.text(kGridX, y + 13, s, 12, kMuted);
    y += kLineH;
  }

  // Legend: a swatch per class with its count over the zones shown.
  y += 6;
  const auto totals = map_class_totals(v);
  double x = kGridX;
  for (size_t c = 0; c < kBlockClasses; ++c) {
    auto cls = static_cast<BlockClass>(c);
    p.rect(x, y, 14, 14, map_class_rgb(cls));
    x += 19;
    x += p.text(x, y + 12, strf("%s %llu", block_class_name(cls), ull(totals[c])), 12, kInk);
    x += 22;
  }
  y += kLegendH - 6;
}

void draw_zone(Painter& p, const MapView& v, const MapPngLayout& L, size_t zi, const MapPngOptions& opt) {
  const MapZone& z = v.zones[zi];
  const uint64_t page_kib = opt.page_kib;
  const unsigned order = v.pageblock_order;
  const int top = L.zone_grid_y[zi];
  std::string head = strf("node %d %s", z.node, z.zone.c_str());
  double w = p.text(kGridX, top - 5, head, 12, kInk, Painter::Left, true);
  p.text(kGridX + w + 10, top - 5,
         strf("0x%llx\xe2\x80\x93" "0x%llx (%s), %llu blocks;  huge pages: %llu free, +%llu by compaction, %llu polluted",
              ull(z.start_pfn * page_kib * 1024), ull(z.end_pfn * page_kib * 1024),
              format_size_kib((z.end_pfn - z.start_pfn) * page_kib).c_str(), ull(z.blocks()), ull(z.hugepages_free),
              ull(z.hugepages_compaction), ull(z.hugepages_polluted)),
         11, kMuted);

  const unsigned cols = L.cols;
  const int cell = L.cell;
  const uint64_t first_row = z.first_block / cols;
  const uint64_t rows = zone_rows(z, cols);
  // Frame around the rows, so partial first and last rows read as such.
  p.cl().cairo_set_antialias(p.cr(), CAIRO_ANTIALIAS_NONE);
  p.rect(kGridX - 1, top - 1, kGridW + 2, static_cast<double>(rows * cell) + 2, kFrame);
  p.rect(kGridX, top, kGridW, static_cast<double>(rows * cell), 0xffffff);
  const int gap = cell >= 6 ? 1 : 0;
  for (uint64_t i = 0; i < z.blocks(); ++i) {
    const uint64_t b = z.first_block + i;
    const int x = kGridX + static_cast<int>(b % cols) * cell;
    const int y = top + static_cast<int>(b / cols - first_row) * cell;
    p.rect(x, y, cell - gap, cell - gap, map_class_rgb(z.classes[i]));
  }
  p.cl().cairo_set_antialias(p.cr(), CAIRO_ANTIALIAS_DEFAULT);

  // Row addresses, as many as fit (at least 13 px apart), on rows that are
  // a power of two apart.
  uint64_t every = 1;
  while (static_cast<int>(every) * cell < 13) every *= 2;
  for (uint64_t r = 0; r < rows; ++r) {
    // The first row always; then aligned rows not too close to it.
    const bool aligned = (first_row + r) % every == 0;
    if (r != 0 && (!aligned || static_cast<int>(r) * cell < 13)) continue;
    const uint64_t addr = ((first_row + r) * cols) << order;
    p.text(kGridX - 6, top + static_cast<double>(r * cell) + (cell >= 13 ? cell / 2.0 + 4 : 8),
           strf("0x%llx", ull(addr * page_kib * 1024)), 10, kMuted, Painter::Right, false, true);
  }
}

// A power-of-two step in bytes giving at most ~12 ticks over `range` bytes.
uint64_t tick_step(uint64_t range) {
  uint64_t step = uint64_t{1} << 20;
  while (range / step > 12) step *= 2;
  return step;
}

void draw_plot(Painter& p, const MapView& v, const MapPngLayout& L, const MapPngOptions& opt) {
  const uint64_t page_kib = opt.page_kib;
  const unsigned order = v.pageblock_order;
  const double bp = static_cast<double>(v.block_pages());
  std::string bs;
  p.text(kGridX, L.plot_y - 22,
         strf("Pages in use in each %s block, by physical address", block_size_text(v, page_kib, bs)), 13, kInk,
         Painter::Left, true);

  const Span span = pfn_span(v);
  const double x0 = L.plot_x, y0 = L.plot_y, W = L.plot_w, H = L.plot_h;
  auto px = [&](double pfn) { return x0 + (pfn - static_cast<double>(span.lo)) / static_cast<double>(span.hi - span.lo) * W; };
  // The points of empty and full blocks stay clear of the frame.
  constexpr double kPad = 4;
  auto py = [&](double used) { return y0 + H - kPad - used / bp * (H - 2 * kPad); };

  // Axes box, horizontal grid at quarters, y labels.
  p.rect(x0, y0, W, H, 0xffffff);
  for (int q = 0; q <= 4; ++q) {
    double yy = std::round(py(bp * q / 4)) + 0.5;
    p.line(x0, yy, x0 + W, yy, kRule);
    p.text(x0 - 6, yy + 4, strf("%llu", ull(v.block_pages() * q / 4)), 10, kMuted, Painter::Right);
  }
  // y axis title, rotated.
  p.cl().cairo_save(p.cr());
  p.cl().cairo_translate(p.cr(), x0 - 44, y0 + H / 2);
  p.cl().cairo_rotate(p.cr(), -M_PI / 2);
  p.text(0, 0, "pages in use", 11, kInk, Painter::Center);
  p.cl().cairo_restore(p.cr());

  // x ticks in GiB (MiB when the span is under 1 GiB).
  const uint64_t page_bytes = page_kib * 1024;
  const uint64_t lo_b = span.lo * page_bytes, hi_b = span.hi * page_bytes;
  const uint64_t step = tick_step(hi_b - lo_b);
  const bool gib = hi_b - lo_b >= (uint64_t{1} << 30);
  for (uint64_t t = (lo_b + step - 1) / step * step; t <= hi_b; t += step) {
    double xx = std::round(px(static_cast<double>(t / page_bytes))) + 0.5;
    p.line(xx, y0 + H, xx, y0 + H + 4, kInk);
    double val = static_cast<double>(t) / static_cast<double>(gib ? (uint64_t{1} << 30) : (uint64_t{1} << 20));
    p.text(xx, y0 + H + 16, strf("%g", val), 10, kMuted, Painter::Center);
  }
  p.text(x0 + W / 2, y0 + H + 34, gib ? "physical address (GiB)" : "physical address (MiB)", 11, kInk,
         Painter::Center);

  // Zone starts: dashed line and name.
  for (const auto& z : v.zones) {
    double xs = std::round(px(static_cast<double>(z.first_block << order))) + 0.5;
    double xe = px(static_cast<double>((z.first_block + z.blocks()) << order));
    if (z.first_block << order > span.lo) p.line(xs, y0, xs, y0 + H, kFrame, true);
    // The zone's name in the strip above the box, where it hides no point.
    std::string name = strf("node %d %s", z.node, z.zone.c_str());
    if (p.text_width(name, 10) + 6 >= xe - xs) name = z.zone;
    if (p.text_width(name, 10) + 6 < xe - xs) {
      p.line(xs, y0 - 10, xs, y0, kFrame);
      p.text(xs + 4, y0 - 3, name, 10, kMuted);
    }
  }

  // Points: one per block, rarer classes drawn last so they stay visible.
  uint64_t blocks = 0;
  for (const auto& z : v.zones) blocks += z.blocks();
  const double dot = blocks <= 256 ? 5 : blocks <= 2048 ? 3 : 2;
  p.cl().cairo_set_antialias(p.cr(), CAIRO_ANTIALIAS_NONE);
  static constexpr std::array<BlockClass, kBlockClasses> kDrawOrder = {
      BlockClass::Free, BlockClass::Movable, BlockClass::Huge, BlockClass::Offline, BlockClass::Hybrid,
      BlockClass::Unmovable};
  for (BlockClass cls : kDrawOrder) {
    p.color(map_class_rgb(cls));
    for (const auto& z : v.zones)
      for (uint64_t i = 0; i < z.blocks(); ++i) {
        if (z.classes[i] != cls) continue;
        double cx = px((static_cast<double>(z.first_block + i) + 0.5) * static_cast<double>(uint64_t{1} << order));
        double cy = py(z.used[i]);
        double x = std::floor(cx - dot / 2), y = std::floor(cy - dot / 2);
        x = std::clamp(x, x0, x0 + W - dot);
        y = std::clamp(y, y0, y0 + H - dot);
        p.cl().cairo_rectangle(p.cr(), x, y, dot, dot);
      }
    p.cl().cairo_fill(p.cr());
  }
  p.cl().cairo_set_antialias(p.cr(), CAIRO_ANTIALIAS_DEFAULT);
  // Frame last, over the points at the edges.
  p.line(x0 + 0.5, y0, x0 + 0.5, y0 + H + 0.5, kInk);
  p.line(x0, y0 + H + 0.5, x0 + W, y0 + H + 0.5, kInk);
  p.line(x0 + W - 0.5, y0, x0 + W - 0.5, y0 + H, kFrame);
  p.line(x0, y0 + 0.5, x0 + W, y0 + 0.5, kFrame);
}

// Where the PNG goes: a file descriptor, the bytes written, the first error.
struct PngSink {
  int fd = -1;
  uint64_t bytes = 0;
  int err = 0;
};

cairo_status_t png_write(void* closure, const unsigned char* data, unsigned int length) {
  auto* s = static_cast<PngSink*>(closure);
  while (length > 0) {
    ssize_t n = ::write(s->fd, data, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      s->err = n < 0 ? errno : EIO;
      return CAIRO_STATUS_WRITE_ERROR;
    }
    data += n;
    length -= static_cast<unsigned int>(n);
    s->bytes += static_cast<uint64_t>(n);
  }
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

uint32_t map_class_rgb(BlockClass c) {
  switch (c) {
    case BlockClass::Free: return 0x7ccf6b;       // green: a huge page now
    case BlockClass::Movable: return 0x3f7fc0;    // blue: compaction can empty it
    case BlockClass::Hybrid: return 0xf29a2e;     // orange: polluted by unmovable pages
    case BlockClass::Unmovable: return 0xc9252c;  // red
    case BlockClass::Huge: return 0x8a56b0;       // purple: a huge page in use
    case BlockClass::Offline: return 0x4a4a4a;    // dark grey: hole
    case BlockClass::Unseen: return 0xdcdcdc;     // light grey: not read yet
  }
  return 0;
}

int MapPngLayout::cell_x(const MapView& v, size_t z, uint64_t i) const {
  const uint64_t b = v.zones[z].first_block + i;
  return grid_x + static_cast<int>(b % cols) * cell + cell / 2;
}

int MapPngLayout::cell_y(const MapView& v, size_t z, uint64_t i) const {
  const uint64_t b = v.zones[z].first_block + i;
  return zone_grid_y[z] + static_cast<int>(b / cols - v.zones[z].first_block / cols) * cell + cell / 2;
}

MapPngLayout map_png_layout(const MapView& v) {
  MapPngLayout L;
  L.width = kWidth;
  L.grid_x = kGridX;
  // Largest cells whose grids fit the budget; 1 px cells for the biggest maps.
  L.cols = 1024;
  for (unsigned cols : {64u, 128u, 256u, 512u}) {
    uint64_t rows = 0;
    for (const auto& z : v.zones) rows += zone_rows(z, cols);
    if (rows * (kGridW / cols) <= kGridBudget) {
      L.cols = cols;
      break;
    }
  }
  L.cell = kGridW / static_cast<int>(L.cols);

  int y = kTop + kTitleH + 2 * kLineH + (v.pollution ? kLineH : 0) + kLegendH;
  for (const auto& z : v.zones) {
    y += kZoneHeadH;
    L.zone_grid_y.push_back(y);
    y += static_cast<int>(zone_rows(z, L.cols)) * L.cell + kZoneGap;
  }
  y += kPlotHeadH;
  L.plot_x = kGridX;
  L.plot_y = y;
  L.plot_w = kGridW;
  L.plot_h = kPlotH;
  y += kPlotH + kPlotFootH + kBottom;
  L.height = y;
  return L;
}

Result<MapPngInfo> write_map_png(const MapView& v, const std::string& path, const MapPngOptions& opt_in) {
  if (!v.scanned) return make_error("no pageblock map to draw: " + v.scan_error);
  if (v.zones.empty()) return make_error("no zone in fragd's pageblock map: nothing to draw into " + path);
  if (v.withheld)
    return make_error("fragd sends the per-block map to root only (it withheld " + printable(*v.withheld) +
                      "): run fragctl map --png as root, or fragctl map for the counts of each zone");
  MapPngOptions opt = opt_in;
  if (opt.page_kib == 0) opt.page_kib = 4;
  const MapPngLayout L = map_png_layout(v);

  auto loaded = load_cairo();
  if (!loaded) return make_error("cannot draw " + path + ": " + loaded.error().message);
  const CairoLib& cl = **loaded;
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
      cl.cairo_image_surface_create(CAIRO_FORMAT_RGB24, L.width, L.height), cl.cairo_surface_destroy);
  if (cl.cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS)
    return make_error(strf("cannot create a %dx%d image for %s: %s", L.width, L.height, path.c_str(),
                           cl.cairo_status_to_string(cl.cairo_surface_status(surface.get()))));
  std::unique_ptr<cairo_t, decltype(&cairo_destroy)> cr(cl.cairo_create(surface.get()), cl.cairo_destroy);
  Painter p(cl, cr.get());
  p.rect(0, 0, L.width, L.height, 0xffffff);

  int y = kTop;
  draw_title(p, v, opt, y);
  for (size_t z = 0; z < v.zones.size(); ++z) draw_zone(p, v, L, z, opt);
  draw_plot(p, v, L, opt);
  cl.cairo_surface_flush(surface.get());
  if (cl.cairo_status(cr.get()) != CAIRO_STATUS_SUCCESS)
    return make_error(strf("drawing the map for %s failed: %s", path.c_str(), cl.cairo_status_to_string(cl.cairo_status(cr.get()))));

  // A new file is created (and removed again if writing fails); an existing
  // path is written in place, so a symlink, FIFO or device stays what it is.
  PngSink sink;
  bool created = true;
  sink.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (sink.fd < 0 && errno == EEXIST) {
    created = false;
    sink.fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  }
  if (sink.fd < 0) {
    const int err = errno;
    return make_error("cannot create " + path + ": " + std::strerror(err) +
                          " (check that its directory exists and is writable)",
                      err);
  }
  cairo_status_t st = cl.cairo_surface_write_to_png_stream(surface.get(), png_write, &sink);
  const int close_err = ::close(sink.fd) == 0 ? 0 : errno;
  if (st != CAIRO_STATUS_SUCCESS || close_err) {
    if (created) ::unlink(path.c_str());
    const std::string left = created ? "" : " (left incomplete)";
    if (sink.err || close_err) {
      const int err = sink.err ? sink.err : close_err;
      return make_error("cannot write " + path + ": " + std::strerror(err) + left, err);
    }
    return make_error("cannot encode the map as PNG into " + path + ": " + cl.cairo_status_to_string(st) + left);
  }
  MapPngInfo info;
  info.width = L.width;
  info.height = L.height;
  info.bytes = sink.bytes;
  return info;
}

}  // namespace fragd
