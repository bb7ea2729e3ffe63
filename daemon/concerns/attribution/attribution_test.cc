// SPDX-License-Identifier: Apache-2.0
// Who stalls, who pays, where: the consumer rules on recorded stacks and flags for
// every class, the call site past the allocator's frames, kallsyms naming, cgroup
// paths by inode, and the top-K series: bounded at K + "other", monotonic, a
// deleted cgroup folded into "other", sums equal to the stall totals.
#include "concerns/attribution/attribution.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "concerns/attribution/classify.h"
#include "concerns/attribution/metrics.h"

namespace fragd {
namespace {

stall_site_key site(uint64_t gfp, int32_t stack, uint32_t order, uint32_t kind = FRAGD_TASK_USER) {
  stall_site_key k{};
  k.gfp = gfp;
  k.stack_id = stack;
  k.order = order;
  k.task_kind = kind;
  return k;
}

// Stacks as the kernel records them at mm_compaction_try_to_compact_pages (innermost first),
// taken on this machine's 6.18 kernel and from the same paths on others.
const std::vector<std::string> kHugetlbPool = {"try_to_compact_pages", "__alloc_pages_direct_compact",
                                               "__alloc_pages_slowpath", "__alloc_frozen_pages_noprof",
                                               "only_alloc_fresh_hugetlb_folio", "alloc_pool_huge_folio",
                                               "set_max_huge_pages", "nr_hugepages_store_common", "proc_sys_call_handler"};
const std::vector<std::string> kThpFault = {"try_to_compact_pages", "__alloc_pages_direct_compact",
                                            "__alloc_pages_slowpath", "__alloc_frozen_pages_noprof", "alloc_pages_mpol",
                                            "folio_alloc_mpol_noprof", "vma_alloc_folio_noprof",
                                            "vma_alloc_anon_folio_pmd", "do_huge_pmd_anonymous_page",
                                            "__handle_mm_fault", "handle_mm_fault", "do_user_addr_fault"};
const std::vector<std::string> kKhugepaged = {"try_to_compact_pages", "__alloc_pages_slowpath",
                                              "__alloc_frozen_pages_noprof", "__folio_alloc_noprof",
                                              "alloc_charge_folio", "collapse_huge_page", "hpage_collapse_scan_pmd",
                                              "khugepaged_scan_mm_slot", "khugepaged", "kthread"};
const std::vector<std::string> kSlab = {"try_to_compact_pages", "__alloc_pages_slowpath", "__alloc_frozen_pages_noprof",
                                        "alloc_pages_mpol", "allocate_slab", "___slab_alloc",
                                        "__kmalloc_cache_noprof", "seq_read_iter", "vfs_read"};
const std::vector<std::string> kNetViaSlab = {"try_to_compact_pages", "__alloc_pages_slowpath",
                                              "__alloc_frozen_pages_noprof", "allocate_slab", "___slab_alloc",
                                              "__kmalloc_node_track_caller_noprof", "kmalloc_reserve", "__alloc_skb",
                                              "tcp_stream_alloc_skb", "tcp_sendmsg_locked"};
const std::vector<std::string> kNetFrag = {"try_to_compact_pages", "__alloc_pages_slowpath",
                                           "__alloc_frozen_pages_noprof", "skb_page_frag_refill",
                                           "sk_page_frag_refill", "tcp_sendmsg_locked", "tcp_sendmsg"};
const std::vector<std::string> kPageCache = {"try_to_compact_pages", "__alloc_pages_slowpath",
                                             "__alloc_frozen_pages_noprof", "alloc_pages_mpol", "folio_alloc_noprof",
                                             "filemap_alloc_folio_noprof", "page_cache_ra_order", "filemap_fault"};

constexpr uint64_t kThpGfp = kGfpMovable | kGfpComp | kGfpNomemalloc;
constexpr uint64_t kHugetlbGfp = kGfpMovable | kGfpComp | kGfpRetryMayfail;

TEST(Consumer, EveryClassFromItsStack) {
  EXPECT_EQ(classify_consumer(site(kHugetlbGfp, 1, 9), kHugetlbPool), "hugetlb");
  // Linux 6.1 names them pages, not folios; flags that say nothing still give hugetlb.
  EXPECT_EQ(classify_consumer(site(0, 1, 9), {"try_to_compact_pages", "__alloc_pages_slowpath", "alloc_buddy_huge_page",
                                              "alloc_fresh_huge_page", "alloc_pool_huge_page", "set_max_huge_pages"}),
            "hugetlb");
  EXPECT_EQ(classify_consumer(site(kThpGfp, 2, 9), kThpFault), "thp_fault");
  EXPECT_EQ(classify_consumer(site(kThpGfp, 3, 9, FRAGD_TASK_KTHREAD), kKhugepaged), "khugepaged");
  EXPECT_EQ(classify_consumer(site(kGfpComp, 4, 3, FRAGD_TASK_USER), kSlab), "slab");
  // Slab frames innermost, the network further out: the network pays.
  EXPECT_EQ(classify_consumer(site(kGfpComp, 5, 3), kNetViaSlab), "net");
  EXPECT_EQ(classify_consumer(site(kGfpComp, 6, 3), kNetFrag), "net");
  // Movable compound without __GFP_NOMEMALLOC, from the page cache's readahead.
  EXPECT_EQ(classify_consumer(site(kGfpMovable | kGfpComp, 7, 4), kPageCache), "page_cache");
}

TEST(Consumer, FlagsDecideWithoutAStackOrSymbols) {
  const std::vector<std::string> none;
  EXPECT_EQ(classify_consumer(site(kHugetlbGfp, -1, 9), none), "hugetlb");
  EXPECT_EQ(classify_consumer(site(kThpGfp, -1, 9), none), "thp_fault");
  EXPECT_EQ(classify_consumer(site(kThpGfp, -1, 9, FRAGD_TASK_KHUGEPAGED), none), "khugepaged");
  EXPECT_EQ(classify_consumer(site(kThpGfp, -1, 9, FRAGD_TASK_KTHREAD), none), "page_cache");
  EXPECT_EQ(classify_consumer(site(kGfpMovable | kGfpComp, -1, 4), none), "page_cache");
  EXPECT_EQ(classify_consumer(site(kGfpComp | kGfpReclaimable, -1, 3), none), "slab");
  EXPECT_EQ(classify_consumer(site(0, -1, 2), none), "other");
  // Unnamed frames (no symbols) fall back on the flags too.
  EXPECT_EQ(classify_consumer(site(kThpGfp, 9, 9), {"", "", ""}), "thp_fault");
}

TEST(CallSite, FirstFrameOutsideTheAllocator) {
  EXPECT_EQ(call_site(kHugetlbPool), "only_alloc_fresh_hugetlb_folio");
  EXPECT_EQ(call_site(kThpFault), "vma_alloc_anon_folio_pmd");
  EXPECT_EQ(call_site(kSlab), "allocate_slab");
  EXPECT_EQ(call_site({"try_to_compact_pages", "__alloc_pages_slowpath"}), "unknown");
  EXPECT_EQ(call_site({}), "unknown");
}

TEST(Kallsyms, NamesTheTextSymbolAtOrBelowEachAddress) {
  const std::string text =
      "ffffffff81000000 T _stext\n"
      "ffffffff81001000 t foo.isra.0\n"
      "ffffffff81001800 D some_data\n"  // not text: never a name
      "ffffffff81002000 T bar\n"
      "ffffffffc0a00000 t modfn\t[mymod]\n";
  const auto n = KernelSymbols::name_addresses(
      text, {0xffffffff81001010, 0xffffffff81001900, 0xffffffff81002004, 0xffffffffc0a00010, 0xffffffffc0f00000, 0x10});
  EXPECT_EQ(n.at(0xffffffff81001010), "foo");  // suffix dropped
  EXPECT_EQ(n.at(0xffffffff81001900), "foo");  // data symbols skipped
  EXPECT_EQ(n.at(0xffffffff81002004), "bar");
  EXPECT_EQ(n.at(0xffffffffc0a00010), "modfn");
  EXPECT_EQ(n.at(0xffffffffc0f00000), "");  // 5 MiB past the last symbol: a module loaded since
  EXPECT_EQ(n.at(0x10), "");
}

// A kallsyms file with `text`, removed at the end of the test; KernelSymbols reads it by fd.
struct TempKallsyms {
  explicit TempKallsyms(const std::string& text) {
    fd = mkstemp(path);
    ok = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }
  ~TempKallsyms() { unlink(path); }
  char path[32] = "/tmp/fragd-kallsyms.XXXXXX";
  int fd = -1;
  bool ok = false;
};

TEST(Kallsyms, ZeroAddressesMeanNoSymbols) {
  TempKallsyms k("0000000000000000 T _stext\n0000000000000000 t foo\n");
  ASSERT_TRUE(k.ok);
  KernelSymbols s(k.fd, k.path);
  s.resolve({0xffffffff81000010});
  EXPECT_FALSE(s.usable());
  EXPECT_NE(s.why_not().find("CAP_SYSLOG"), std::string::npos) << s.why_not();
  EXPECT_EQ(s.name(0xffffffff81000010), "");
}

TEST(Kallsyms, ReadsTheFileInPiecesAcrossLineBreaks) {
  // 20000 symbols, 16 bytes apart: over 64 KiB, so lines straddle the reads.
  std::string text;
  char line[96];
  for (int i = 0; i < 20000; i++) {
    std::snprintf(line, sizeof line, "%016llx t fn_%d\n", 0xffffffff81000000ULL + 16ULL * i, i);
    text += line;
  }
  ASSERT_GT(text.size(), 65536u * 4);
  TempKallsyms k(text);
  ASSERT_TRUE(k.ok);
  KernelSymbols s(k.fd, k.path);
  std::vector<uint64_t> want;
  for (int i = 0; i < 20000; i += 997) want.push_back(0xffffffff81000000ULL + 16ULL * i + 3);
  s.resolve(want);
  EXPECT_TRUE(s.usable()) << s.why_not();
  EXPECT_EQ(s.passes(), 1u);
  for (size_t k = 0; k < want.size(); k++) EXPECT_EQ(s.name(want[k]), "fn_" + std::to_string(k * 997));
  s.resolve(want);  // named already: no second pass
  EXPECT_EQ(s.passes(), 1u);
}

TEST(CgroupPathsTest, IdsAreDirectoryInodes) {
  char tmpl[] = "/tmp/fragd-cg.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string sys = tmpl;
  namespace fs = std::filesystem;
  fs::create_directories(sys + "/fs/cgroup/unified/kubepods.slice/pod1");
  std::ofstream(sys + "/fs/cgroup/unified/cgroup.controllers") << "memory\n";
  struct stat st {};
  ASSERT_EQ(stat((sys + "/fs/cgroup/unified/kubepods.slice/pod1").c_str(), &st), 0);
  CgroupPaths p(sys);
  EXPECT_EQ(p.root(), sys + "/fs/cgroup/unified");  // hybrid: no cgroup.controllers in fs/cgroup
  EXPECT_EQ(p.path(st.st_ino).value_or("?"), "/kubepods.slice/pod1");
  EXPECT_TRUE(p.exists(st.st_ino, "/kubepods.slice/pod1"));
  fs::remove(sys + "/fs/cgroup/unified/kubepods.slice/pod1");
  EXPECT_FALSE(p.exists(st.st_ino, "/kubepods.slice/pod1"));
  p.new_round();
  EXPECT_FALSE(p.path(st.st_ino).has_value());
  fs::remove_all(sys);
}

// The walk that names new cgroups is bounded: none again until 100 times the last walk's time
// has passed, however many rounds ask, and at most max_dirs directories a walk.
TEST(CgroupPathsTest, WalksAreSpacedByTheirCostAndCappedInDirectories) {
  char tmpl[] = "/tmp/fragd-cg.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string sys = tmpl;
  namespace fs = std::filesystem;
  const std::string root = sys + "/fs/cgroup";
  for (int i = 0; i < 20; i++) fs::create_directories(root + "/delegated/c" + std::to_string(i));
  std::ofstream(root + "/cgroup.controllers") << "memory\n";
  // Each reading of the clock moves it 20 ms on: a walk takes 20 ms.
  uint64_t now = 1'000'000'000'000ULL;
  CgroupPaths p(sys, CgroupPaths::kMaxDirs, [&now] { return now += 20'000'000ULL; });
  const uint64_t unknown = ~0ULL;
  for (int round = 0; round < 50; round++) {
    p.new_round();
    EXPECT_FALSE(p.path(unknown).has_value());
  }
  EXPECT_EQ(p.walks(), 1u) << "a cgroup id no walk finds made every round walk the tree";
  now += 3'000'000'000ULL;  // 100 x 20 ms since the walk ended
  p.new_round();
  EXPECT_FALSE(p.path(unknown).has_value());
  EXPECT_EQ(p.walks(), 2u);
  EXPECT_FALSE(p.truncated());
  CgroupPaths small(sys, 5);
  struct stat st {};
  ASSERT_EQ(stat((root + "/delegated/c19").c_str(), &st), 0);
  (void)small.path(st.st_ino);
  EXPECT_TRUE(small.truncated()) << "a walk read more than its 5 directories";
  fs::remove_all(sys);
}

// A cgroup tree in memory: ids to paths; deleting one makes it vanish.
struct FakeCgroups : CgroupLookup {
  std::map<uint64_t, std::string> paths;
  bool hierarchy = true;
  bool available() const override { return hierarchy; }
  std::optional<std::string> path(uint64_t id) override {
    auto it = paths.find(id);
    return it == paths.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  bool exists(uint64_t id, const std::string& p) override { return paths.count(id) && paths[id] == p; }
};

struct Round {
  std::vector<SiteCount> sites;
  std::vector<CgroupCount> cgroups;
  alloc_stats st{};
  // Adds `e` entries and `ns` to cgroup `cg` at a site of `order`, and to the per-CPU totals.
  void add(uint64_t cg, uint64_t e, uint64_t ns, int32_t stack = 1, uint32_t order = 9) {
    bool found = false;
    for (auto& c : cgroups)
      if (c.cgroup_id == cg) {
        c.attr.entries += e;
        c.attr.ns += ns;
        found = true;
      }
    if (!found) cgroups.push_back({cg, {e, ns}});
    found = false;
    for (auto& s : sites)
      if (s.key.stack_id == stack && s.key.order == order) {
        s.attr.entries += e;
        s.attr.ns += ns;
        found = true;
      }
    if (!found) sites.push_back({site(kHugetlbGfp, stack, order), {e, ns}});
    st.direct_entries[order][FRAGD_PHASE_COMPACTION] += e;
    st.phase_ns[order][FRAGD_PHASE_COMPACTION] += ns;
  }
};

const StallAttribution::StackReader kStacks = [](int32_t id) -> Result<std::vector<uint64_t>> {
  return std::vector<uint64_t>{0x1000u + static_cast<uint64_t>(id)};
};

Attr sum(const std::vector<std::pair<std::string, Attr>>& v) {
  Attr a;
  for (const auto& [_, x] : v) a += x;
  return a;
}
Attr find(const std::vector<std::pair<std::string, Attr>>& v, const std::string& label) {
  for (const auto& [l, x] : v)
    if (l == label) return x;
  return Attr{~0ull, ~0ull};
}

// A stack whose frames kallsyms cannot name (fragd opened it without CAP_SYSLOG, or
// kptr_restrict hides the addresses): the frames are counted and left out, and no address
// reaches a stack, a call site or a consumer; the ones it names are kept, innermost first.
TEST(Stacks, FramesWithoutASymbolAreCountedNeverShown) {
  TempKallsyms k("ffffffff81000000 T try_to_compact_pages\nffffffff81001000 T alloc_pool_huge_folio\n");
  ASSERT_TRUE(k.ok);
  KernelSymbols named(k.fd, k.path);
  KernelSymbols none(-1, "/proc/kallsyms");
  // Frame 2 is beyond any symbol (5 MiB past the last one), frame 3 is in the user half.
  const StallAttribution::StackReader stack = [](int32_t) -> Result<std::vector<uint64_t>> {
    return std::vector<uint64_t>{0xffffffff81000010, 0xffffffff81001020, 0xffffffffc0f00000, 0x7f0012345678};
  };
  for (KernelSymbols* syms : {&named, &none, static_cast<KernelSymbols*>(nullptr)}) {
    FakeCgroups cg;
    cg.paths[7] = "/a";
    StallAttribution a(5, 5);
    Round r;
    r.add(7, 3, 3000, 42);
    a.update(r.sites, r.cgroups, r.st, stack, syms, cg, true);
    const auto& v = a.view();
    ASSERT_EQ(v.stacks.size(), 1u);
    const StackView& sv = v.stacks[0];
    if (syms == &named) {
      EXPECT_EQ(sv.frames, (std::vector<std::string>{"try_to_compact_pages", "alloc_pool_huge_folio"}));
      EXPECT_EQ(sv.unnamed_frames, 2u);
      EXPECT_EQ(sv.callsite, "alloc_pool_huge_folio");
      EXPECT_EQ(sv.consumer, "hugetlb");
    } else {
      EXPECT_TRUE(sv.frames.empty());
      EXPECT_EQ(sv.unnamed_frames, 4u);
      EXPECT_EQ(sv.callsite, "unknown");
    }
    std::vector<std::string> shown = sv.frames;
    shown.push_back(sv.callsite);
    shown.push_back(sv.consumer);
    for (const auto& [c, x] : v.callsites) shown.push_back(c);
    for (const auto& n : shown) EXPECT_EQ(n.find("0x"), std::string::npos) << n;
  }
}

TEST(TopK, BoundedMonotonicAndSumsToTheTotals) {
  FakeCgroups cg;
  StallAttribution a(3, 2);
  Round r;
  // 200 cgroups, each stalling once with a different time; 3 get series, 197 are "other".
  for (uint64_t id = 100; id < 300; id++) {
    cg.paths[id] = "/pod" + std::to_string(id);
    r.add(id, 1, id * 1000, static_cast<int32_t>(id % 5));
  }
  a.update(r.sites, r.cgroups, r.st, kStacks, nullptr, cg, true);
  auto v = a.view();
  ASSERT_EQ(v.cgroups.size(), 4u);
  EXPECT_EQ(v.cgroups.back().first, "other");
  // The three with the most stall time.
  EXPECT_EQ(find(v.cgroups, "/pod299").ns, 299000u);
  EXPECT_EQ(find(v.cgroups, "/pod298").ns, 298000u);
  EXPECT_EQ(find(v.cgroups, "/pod297").ns, 297000u);
  EXPECT_EQ(sum(v.cgroups).entries, 200u);
  // No symbol table here: every stack's call site is "unknown" (one series), then "other".
  ASSERT_EQ(v.callsites.size(), 2u);
  EXPECT_EQ(find(v.callsites, "unknown").entries, 200u);
  Attr consumers;
  for (const auto& [k, x] : v.consumers) consumers += x;
  EXPECT_EQ(consumers.entries, 200u);
  EXPECT_EQ(sum(v.callsites).ns, consumers.ns);
  const Attr other1 = find(v.cgroups, "other");

  // A cgroup from "other" with a burst now: no slot is free, it stays in "other".
  r.add(150, 10, 10'000'000);
  a.update(r.sites, r.cgroups, r.st, kStacks, nullptr, cg, false);
  v = a.view();
  EXPECT_EQ(v.cgroups.size(), 4u);
  EXPECT_GE(find(v.cgroups, "other").ns, other1.ns);
  EXPECT_EQ(sum(v.cgroups).entries, 210u);

  // /pod299 is deleted: its series goes, its counts to "other"; /pod150 takes the slot from
  // what it showed in the last round on (that stays in "other").
  const Attr other2 = find(v.cgroups, "other");
  cg.paths.erase(299);
  r.add(150, 1, 1000);
  a.update(r.sites, r.cgroups, r.st, kStacks, nullptr, cg, false);
  v = a.view();
  EXPECT_EQ(find(v.cgroups, "/pod299").entries, ~0ull);
  EXPECT_EQ(find(v.cgroups, "/pod150").entries, 1u);
  EXPECT_EQ(find(v.cgroups, "/pod150").ns, 1000u);
  EXPECT_GE(find(v.cgroups, "other").ns, other2.ns);
  EXPECT_EQ(sum(v.cgroups).entries, 211u);
  EXPECT_EQ(v.cgroups_removed, 1u);
  EXPECT_EQ(a.take_forgotten(), std::vector<uint64_t>{299});
  // The BPF entry is gone (the caller deleted it): the sums hold.
  r.cgroups.erase(std::remove_if(r.cgroups.begin(), r.cgroups.end(), [](const CgroupCount& c) { return c.cgroup_id == 299; }),
                  r.cgroups.end());
  a.update(r.sites, r.cgroups, r.st, kStacks, nullptr, cg, false);
  EXPECT_EQ(sum(a.view().cgroups).entries, 211u);
  EXPECT_GE(find(a.view().cgroups, "other").ns, find(v.cgroups, "other").ns);
}

TEST(TopK, WithoutAHierarchyNoCgroupIsTakenForDeleted) {
  FakeCgroups cg;  // no path for any id, as in a guest without a cgroup2 mount
  cg.hierarchy = false;
  StallAttribution a(5, 5);
  Round r;
  r.add(7, 2, 200);
  a.update(r.sites, r.cgroups, r.st, kStacks, nullptr, cg, true);
  EXPECT_TRUE(a.take_forgotten().empty());
  EXPECT_EQ(a.view().cgroups_removed, 0u);
  EXPECT_EQ(find(a.view().cgroups, "other").entries, 2u);
}

TEST(TopK, FullMapsGoToOtherAndTheSumsHold) {
  FakeCgroups cg;
  cg.paths[7] = "/a";
  StallAttribution a(5, 5);
  Round r;
  r.add(7, 4, 4000);
  // Events whose site and cgroup found their maps full: per-CPU counters only.
  r.st.direct_entries[9][FRAGD_PHASE_RECLAIM] += 3;
  r.st.phase_ns[9][FRAGD_PHASE_RECLAIM] += 300;
  r.st.sites_full_entries[9] = 3;
  r.st.sites_full_ns[9] = 300;
  r.st.cgroups_full_entries = 3;
  r.st.cgroups_full_ns = 300;
  a.update(r.sites, r.cgroups, r.st, kStacks, nullptr, cg, true);
  const auto& v = a.view();
  EXPECT_EQ(find(v.cgroups, "other").entries, 3u);
  EXPECT_EQ(find(v.cgroups, "/a").entries, 4u);
  EXPECT_EQ(find(v.callsites, "unknown").entries, 7u);  // no symbols here: the named site is unknown too
  EXPECT_EQ(v.consumers.at({9u, "other"}).entries, 3u);
  EXPECT_EQ(v.consumers.at({9u, "hugetlb"}).entries, 4u);
  EXPECT_EQ(v.consumers.size(), std::size(kConsumers));  // every consumer of order 9, zeros included
  Families fs;
  attribution_metrics(v, widest_plan(1), fs);
  std::set<std::string> names;
  for (const auto& f : fs) names.insert(f.name);
  for (const char* n : {"fragd_stalls_total", "fragd_stall_seconds_total", "fragd_cgroup_stalls_total",
                        "fragd_cgroup_stall_seconds_total", "fragd_stall_callsite_seconds_total",
                        "fragd_attribution_map_full_total", "fragd_cgroups_removed_total"})
    EXPECT_TRUE(names.count(n)) << n;
}

// A stack that found its bucket of stall_stacks taken (bpf_get_stackid: -EEXIST): its stalls
// count under stack id -17, never read as a stack, shown with no stack, and in
// fragd_stall_stacks_lost_total with the per-CPU count the BPF side kept.
TEST(TopK, LostStacksAreUnknownAndCounted) {
  FakeCgroups cg;
  cg.paths[7] = "/a";
  StallAttribution a(5, 5);
  Round r;
  r.add(7, 4, 4000, 1);          // a stack of its own
  r.add(7, 6, 600, -EEXIST);     // no room for its stack
  r.st.stacks_lost = 6;
  std::set<int32_t> asked;
  const StallAttribution::StackReader reader = [&](int32_t id) -> Result<std::vector<uint64_t>> {
    asked.insert(id);
    return std::vector<uint64_t>{0x1000u + static_cast<uint64_t>(id)};
  };
  a.update(r.sites, r.cgroups, r.st, reader, nullptr, cg, true);
  const auto& v = a.view();
  EXPECT_EQ(asked, std::set<int32_t>{1});
  EXPECT_EQ(v.stacks_lost, 6u);
  ASSERT_EQ(v.stacks.size(), 1u);
  EXPECT_EQ(v.stacks[0].stack_id, 1);
  EXPECT_EQ(v.stacks[0].attr.entries + v.stacks_lost, 10u);  // every stall: under its stack or lost
  Families fs;
  attribution_metrics(v, widest_plan(1), fs);
  bool seen = false;
  for (const auto& f : fs)
    if (f.name == "fragd_stall_stacks_lost_total") {
      seen = true;
      ASSERT_EQ(f.metric.size(), 1u);
      EXPECT_EQ(f.metric[0].counter.value, 6.0);
    }
  EXPECT_TRUE(seen) << "fragd_stall_stacks_lost_total not exported";
}


// Failed allocations (map failure_sites): named by the consumer rules, split by whether they could
// sleep, kept out of the stall views; what the map missed is "other", so each (order group,
// can_sleep) sums to the per-CPU failure count.
TEST(Failures, ByConsumerAndSleepSumToTheCounts) {
  FakeCgroups cg;
  StallAttribution a(5, 5);
  Round r;
  // 5 GFP_NOWAIT compound order-2 failures (slab by their flags: no symbols here), 3 more the map missed.
  r.sites.push_back({site(kGfpComp, 4, 2), {5, 0}, true});
  r.st.failures[2][0] = 8;
  // 2 order-0 failures that could sleep, of a movable compound page (page_cache).
  r.sites.push_back({site(FRAGD_GFP_DIRECT_RECLAIM | kGfpMovable | kGfpComp, 5, 0), {2, 0}, true});
  r.st.failures[0][1] = 2;
  a.update(r.sites, r.cgroups, r.st, kStacks, nullptr, cg, true);
  const auto& v = a.view();
  EXPECT_EQ(v.failures.size(), 2u);
  EXPECT_EQ(v.failures.at({2u, false, "slab"}), 5u);
  EXPECT_EQ(v.failures.at({0u, true, "page_cache"}), 2u);
  EXPECT_TRUE(v.consumers.empty());  // no stall: failures stay out of fragd_stalls_total
  EXPECT_TRUE(v.stacks.empty());
  Families fs;
  attribution_metrics(v, widest_plan(1), fs);
  std::map<std::string, double> got;  // "order/can_sleep/consumer" -> value
  for (const auto& f : fs)
    if (f.name == "fragd_alloc_failures_by_consumer_total")
      for (const auto& m : f.metric) {
        std::map<std::string, std::string> l;
        for (const auto& p : m.label) l[p.name] = p.value;
        got[l["order"] + "/" + l["can_sleep"] + "/" + l["consumer"]] = m.counter.value;
      }
  const std::map<std::string, double> want = {
      {"2/false/slab", 5}, {"2/false/other", 3}, {"0/true/page_cache", 2}};
  EXPECT_EQ(got, want);

  // No failure: no family.
  StallAttribution quiet(5, 5);
  Round none;
  none.add(7, 1, 100);
  quiet.update(none.sites, none.cgroups, none.st, kStacks, nullptr, cg, true);
  Families fq;
  attribution_metrics(quiet.view(), widest_plan(1), fq);
  for (const auto& f : fq) EXPECT_NE(f.name, "fragd_alloc_failures_by_consumer_total");
}

}  // namespace
}  // namespace fragd
