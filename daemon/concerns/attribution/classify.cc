// SPDX-License-Identifier: Apache-2.0
#include "concerns/attribution/classify.h"

#include <string_view>

namespace fragd {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool any_prefix(const std::string& fn, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes)
    if (starts(fn, p)) return true;
  return false;
}

bool is_khugepaged(const std::string& fn) {
  return any_prefix(fn, {"khugepaged", "collapse_huge_page", "hpage_collapse_", "collapse_file", "alloc_charge_folio",
                         "collapse_pte_mapped_thp"});
}
bool is_hugetlb(const std::string& fn) {
  return any_prefix(fn, {"alloc_buddy_hugetlb_folio", "alloc_fresh_hugetlb_folio", "only_alloc_fresh_hugetlb_folio",
                         "alloc_pool_huge_folio", "alloc_surplus_hugetlb_folio", "alloc_hugetlb_folio",
                         "alloc_buddy_frozen_folio", "set_max_huge_pages", "alloc_migrate_hugetlb_folio",
                         // Linux 6.1 (before folios): *_huge_page
                         "alloc_buddy_huge_page", "alloc_fresh_huge_page", "alloc_pool_huge_page",
                         "alloc_surplus_huge_page", "alloc_migrate_huge_page"});
}
bool is_net(const std::string& fn) {
  return any_prefix(fn, {"skb_page_frag_refill", "sk_page_frag_refill", "page_pool_", "__page_pool_", "napi_alloc",
                         "__napi_alloc", "__netdev_alloc", "netdev_alloc", "alloc_skb", "__alloc_skb", "kmalloc_reserve",
                         "sock_alloc_send", "skb_", "tcp_", "udp_", "netlink_", "page_frag_alloc", "__page_frag_"});
}
bool is_slab(const std::string& fn) {
  return any_prefix(fn, {"allocate_slab", "new_slab", "___slab_alloc", "__slab_alloc", "___kmalloc_large",
                         "__kmalloc_large", "kmalloc_large"});
}
bool is_thp_fault(const std::string& fn) {
  return any_prefix(fn, {"do_huge_pmd_anonymous_page", "vma_alloc_anon_folio_pmd", "alloc_anon_folio",
                         "shmem_alloc_and_add_folio", "shmem_alloc_folio", "shmem_get_folio", "do_huge_pmd_wp_page",
                         "__do_huge_pmd_anonymous_page"});
}
bool is_page_cache(const std::string& fn) {
  return any_prefix(fn, {"filemap_alloc_folio", "page_cache_ra_order", "page_cache_ra_unbounded", "ractl_alloc_folio",
                         "__filemap_get_folio", "filemap_create_folio", "ra_alloc_folio"});
}

}  // namespace

bool allocator_frame(const std::string& fn) {
  return fn.empty() ||
         any_prefix(fn, {"try_to_compact_pages", "compact_zone", "__alloc_pages", "alloc_pages", "__alloc_frozen_pages",
                         "alloc_frozen_pages", "__folio_alloc", "folio_alloc", "alloc_pages_mpol", "folio_alloc_mpol",
                         "vma_alloc_folio", "get_page_from_freelist", "__perform_reclaim", "try_to_free_pages",
                         "do_try_to_free_pages", "shrink_", "__get_free_pages", "get_free_pages", "alloc_pages_node",
                         "__alloc_pages_node", "alloc_pages_exact", "perf_trace_", "trace_event_raw_event_",
                         "__traceiter_", "__bpf_trace_", "bpf_", "__bpf_", "___bpf_", "__do_trace_", "trace_call_bpf",
                         "perf_tp_event", "__alloc_pages_slowpath", "__alloc_pages_direct_compact",
                         "__alloc_pages_direct_reclaim", "__alloc_pages_may_oom", "alloc_frozen_pages_nolock"});
}

std::string call_site(const std::vector<std::string>& frames) {
  for (const std::string& fn : frames)
    if (!allocator_frame(fn)) return fn;
  return "unknown";
}

std::string classify_consumer(const stall_site_key& key, const std::vector<std::string>& frames) {
  if (key.task_kind == FRAGD_TASK_KHUGEPAGED) return "khugepaged";
  // Each class over the whole stack, in this order: a slab page allocated for an skb is the
  // network's, found further out than the slab frames.
  struct Rule {
    bool (*match)(const std::string&);
    const char* consumer;
  };
  static const Rule kRules[] = {{is_khugepaged, "khugepaged"}, {is_hugetlb, "hugetlb"},     {is_net, "net"},
                                {is_slab, "slab"},             {is_thp_fault, "thp_fault"}, {is_page_cache, "page_cache"}};
  for (const Rule& r : kRules)
    for (const std::string& fn : frames)
      if (!allocator_frame(fn) && r.match(fn)) return r.consumer;
  const uint64_t g = key.gfp;
  if ((g & kGfpComp) && (g & kGfpRetryMayfail)) return "hugetlb";
  if ((g & kGfpMovable) && (g & kGfpComp) && (g & kGfpNomemalloc) && key.task_kind == FRAGD_TASK_USER)
    return "thp_fault";
  if ((g & kGfpMovable) && (g & kGfpComp)) return "page_cache";
  if (g & kGfpComp) return "slab";
  return "other";
}

}  // namespace fragd
