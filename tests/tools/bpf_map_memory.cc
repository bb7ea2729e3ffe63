// SPDX-License-Identifier: Apache-2.0
// Loads fragd's three BPF objects as fragd does (concerns/programs/programs.h) and prints what each of
// their maps takes by the kernel's own accounting (fdinfo memlock), then unloads them. With
// --ram or --max-pfn the pollution ledger is sized for that physical address range by the
// loader's own sizing function (pollution_ledger_size) instead of this machine's zones, so
// the kernel creates and accounts the map a larger host would get. Root (BPF).
//
//   bpf_map_memory                 this machine
//   bpf_map_memory --ram 1024      a range of 1024 GiB of 4 KiB pages (no PCI hole counted)
//   bpf_map_memory --max-pfn N     a range ending at page frame N
//
// Output: "object map bytes" per entry of fragd_bpf_map_memory_bytes, then "ledger_entries N",
// "possible_cpus N" and "total BYTES".
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

#include "kernel/bpf_memory.h"
#include "concerns/programs/programs.h"

namespace {

bool parse_u64(const char* s, uint64_t& v) {
  const char* end = s + std::strlen(s);
  auto [p, ec] = std::from_chars(s, end, v);
  return *s && ec == std::errc() && p == end;
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--ram GIB | --max-pfn PFN]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fragd;
  BpfOptions opts;
  opts.count_allocations = false;  // nothing on mm_page_alloc while this runs
  opts.self_tgid = static_cast<uint32_t>(getpid());
  if (argc == 3) {
    uint64_t v = 0;
    if (!parse_u64(argv[2], v) || v == 0) return usage(argv[0]);
    if (std::strcmp(argv[1], "--ram") == 0) {
      const long page = sysconf(_SC_PAGESIZE);
      if (page <= 0) return 1;
      opts.max_pfn = (v << 30) / static_cast<uint64_t>(page);
    } else if (std::strcmp(argv[1], "--max-pfn") == 0) {
      opts.max_pfn = v;
    } else {
      return usage(argv[0]);
    }
  } else if (argc != 1) {
    return usage(argv[0]);
  }
  if (auto r = check_bpf_privileges(); !r) {
    std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return 1;
  }
  auto progs = BpfPrograms::create(opts);
  if (!progs) {
    std::fprintf(stderr, "%s\n", progs.error().message.c_str());
    return 1;
  }
  const auto maps = (*progs)->map_memory();
  if (maps.empty()) {
    std::fprintf(stderr, "cannot read the maps' memory (see the warning above)\n");
    return 1;
  }
  uint64_t total = 0, ledger = 0;
  for (const auto& m : maps) {
    std::printf("%s %s %llu\n", m.object.c_str(), m.map.c_str(), static_cast<unsigned long long>(m.bytes));
    total += m.bytes;
  }
  // The ledger's size as the loader chose it (the kernel map's max_entries).
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd((*progs)->map_fds().pollution.polluted_blocks, &info, &len) == 0) ledger = info.max_entries;
  std::printf("ledger_entries %llu\n", static_cast<unsigned long long>(ledger));
  std::printf("possible_cpus %d\n", libbpf_num_possible_cpus());
  std::printf("total %llu\n", static_cast<unsigned long long>(total));
  return 0;
}
