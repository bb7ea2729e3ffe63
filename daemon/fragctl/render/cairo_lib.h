// SPDX-License-Identifier: Apache-2.0
// libcairo, opened when `fragctl map --png` first draws: the rest of fragctl, and the
// container image that carries it, need no graphics stack (the .deb recommends libcairo2).
// Types and constants come from cairo.h at build time; the functions from the library
// at run time, each with the type cairo.h declares.
#pragma once

#include <cairo.h>

#include "base/result.h"

namespace fragd {

#define FRAGD_CAIRO_FUNCTIONS(X)                                                                          \
  X(cairo_create) X(cairo_destroy) X(cairo_fill) X(cairo_image_surface_create) X(cairo_line_to)          \
  X(cairo_move_to) X(cairo_rectangle) X(cairo_restore) X(cairo_rotate) X(cairo_save)                     \
  X(cairo_select_font_face) X(cairo_set_antialias) X(cairo_set_dash) X(cairo_set_font_size)              \
  X(cairo_set_line_width) X(cairo_set_source_rgb) X(cairo_show_text) X(cairo_status)                     \
  X(cairo_status_to_string) X(cairo_stroke) X(cairo_surface_destroy) X(cairo_surface_flush)              \
  X(cairo_surface_status) X(cairo_surface_write_to_png_stream) X(cairo_text_extents) X(cairo_translate)

struct CairoLib {
#define FRAGD_CAIRO_MEMBER(f) decltype(&::f) f = nullptr;
  FRAGD_CAIRO_FUNCTIONS(FRAGD_CAIRO_MEMBER)
#undef FRAGD_CAIRO_MEMBER
};

// The soname opened.
inline constexpr const char* kCairoSoname = "libcairo.so.2";

// libcairo.so.2 with every function above, opened once (never closed). The Error names the
// library, what the loader said, and the Debian package that provides it.
Result<const CairoLib*> load_cairo();

}  // namespace fragd
