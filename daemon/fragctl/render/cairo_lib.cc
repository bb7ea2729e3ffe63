// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/cairo_lib.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace fragd {

Result<const CairoLib*> load_cairo() {
  static std::once_flag once;
  static CairoLib lib;
  static std::string error;
  std::call_once(once, [] {
    void* h = ::dlopen(kCairoSoname, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = ::dlerror();
      error = std::string("drawing a PNG needs ") + kCairoSoname + ", which cannot be loaded (" +
              (why ? why : "unknown reason") + "): install it (Debian: apt-get install libcairo2)";
      return;
    }
#define FRAGD_CAIRO_RESOLVE(f)                                                                              \
  if (error.empty()) {                                                                                      \
    lib.f = reinterpret_cast<decltype(lib.f)>(::dlsym(h, #f));                                              \
    if (lib.f == nullptr) error = std::string(kCairoSoname) + " has no " #f ": a cairo older than fragctl needs"; \
  }
    FRAGD_CAIRO_FUNCTIONS(FRAGD_CAIRO_RESOLVE)
#undef FRAGD_CAIRO_RESOLVE
  });
  if (!error.empty()) return make_error(error);
  return &lib;
}

}  // namespace fragd
