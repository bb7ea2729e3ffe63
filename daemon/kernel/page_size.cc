// SPDX-License-Identifier: Apache-2.0
#include "kernel/page_size.h"

#include <unistd.h>

namespace fragd {

uint64_t kernel_page_bytes() {
  static const uint64_t bytes = [] {
    const long page = sysconf(_SC_PAGESIZE);
    return page >= 4096 ? static_cast<uint64_t>(page) : uint64_t{4096};
  }();
  return bytes;
}

unsigned order_of(uint64_t size_kib, uint64_t page_kib) {
  uint64_t pages = page_kib == 0 ? 0 : size_kib / page_kib;
  unsigned order = 0;
  while (pages > 1) {
    pages >>= 1;
    ++order;
  }
  return order;
}

}  // namespace fragd
