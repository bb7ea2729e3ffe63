// SPDX-License-Identifier: Apache-2.0
// The kernel's base page size, as it reports it (sysconf(_SC_PAGESIZE): the auxiliary vector's
// AT_PAGESZ). 4 KiB on x86-64; 4, 16 or 64 KiB on arm64 and 64 KiB on ppc64le, by the kernel's
// build. Every pfn, order and pool size fragd computes is in these pages: /proc/kpageflags and
// /proc/buddyinfo count them, and a hugepage of `size_kib` is of order log2(size_kib / page_kib).
#pragma once

#include <cstdint>

namespace fragd {

uint64_t kernel_page_bytes();
inline uint64_t kernel_page_kib() { return kernel_page_bytes() / 1024; }

// log2(size_kib / page_kib), rounded down: 9 for 2 MiB with 4 KiB pages, 5 with 64 KiB.
unsigned order_of(uint64_t size_kib, uint64_t page_kib);

// The order of a 1 GiB range: 18 with 4 KiB pages (x86-64's PUD order), 16 with 16 KiB, 14 with 64 KiB.
inline unsigned gigantic_order(uint64_t page_kib) { return order_of(1024 * 1024, page_kib); }

}  // namespace fragd
