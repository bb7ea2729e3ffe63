#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The kernel's own count of free pages in free pageblocks (nr_free_pages_blocks in /proc/zoneinfo,
# Linux 6.15+; fragd_zone_free_pageblock_pages) against fragd's own free lists (fragd_free_blocks,
# /proc/buddyinfo: the pages in free blocks of pageblock order and up), zone by zone, at the same
# moment: both come from one tick of fragd, whose buddyinfo and zoneinfo reads follow each other.
#
# How far apart they may be, from how the kernel counts (mm/page_alloc.c): a block's 2^order pages
# are added to NR_FREE_PAGES_BLOCKS when it goes on a buddy free list at order >= pageblock_order
# and taken off when it leaves one (__add_to_free_list, __del_page_from_free_list,
# move_to_free_list): the lists whose lengths buddyinfo prints (free_area[order].nr_free), with one
# difference: blocks on the MIGRATE_ISOLATE list (alloc_contig_range for CMA and gigantic pages,
# memory offlining) are in buddyinfo but not in the count. The per-CPU lists (pcp, which also cache
# order-9 THP pages) are in neither. The count is a zone vmstat item, but each change is 512 pages
# or more, above any per-CPU stat threshold (125 at most), so every change reaches the zone's
# counter at once: it carries no per-CPU drift. At one instant, then,
#   0 <= buddyinfo's pages at order >= pageblock_order - nr_free_pages_blocks <= isolated pages,
# and the isolated pages are at most /proc/pagetypeinfo's Isolate pageblocks x pageblock pages.
# fragd's two reads are microseconds apart: a block allocated, freed or split between them moves
# the difference by one block of at most 2^max_order pages. So each scrape must lie within
# [-2^max_order, isolated + 2^max_order] and most of them (on a quiet host, all) within
# [0, isolated]. Negative controls show the bound has power here: the same scrape compared with
# the wrong zone, or with the order-9 blocks left out or order-8 ones taken in, must miss it.
# On a kernel without the count the family must be absent (no series of zeros), and the test ends
# there.
source "$(dirname "$0")/lib.sh"
require_root

# Another test or benchmark churning memory moves blocks between the two reads all the time.
heavy_lock

if ! grep -q nr_free_pages_blocks /proc/zoneinfo; then
  FRAGD_CONFIG="$SRC/configs/fragd.yaml" start_fragd
  wait_scored || fail "no node score 30 s after the start"
  ! scrape | grep -q '^fragd_zone_free_pageblock_pages' ||
    fail "this kernel has no nr_free_pages_blocks, yet fragd exports fragd_zone_free_pageblock_pages"
  stop_fragd
  log "PASS (kernel $(uname -r) has no nr_free_pages_blocks: the family is absent, as it must be)"
  exit 0
fi

# Every order apart and every zone apart: the free blocks of order 9 and 10 by zone.
printf 'metrics: {orders: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], detail: [zones]}\n' >"$WORK/fragd.yaml"
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd
wait_scored || fail "no node score 30 s after the start"

# The Isolate column of pagetypeinfo's "Number of blocks type" table, summed over its zones (a row
# has "Node N, zone Z" where the header has "Number of blocks type": the columns line up).
isolate_blocks() {
  awk '/^Number of blocks type/ { for (i = 1; i <= NF; i++) if ($i == "Isolate") col = i; on = 1; next }
    on && /^Node/ { s += $col; next } { on = 0 } END { print s + 0 }' /proc/pagetypeinfo
}
PB_ORDER=$(awk '/^Page block order:/ { print $4 }' /proc/pagetypeinfo)
[ -n "$PB_ORDER" ] || fail "/proc/pagetypeinfo names no page block order"
iso_before=$(isolate_blocks)
N=10
for i in $(seq 1 $N); do
  scrape >"$WORK/s$i.prom"
  sleep 1
done
iso_after=$(isolate_blocks)
iso=$((iso_before > iso_after ? iso_before : iso_after))
log "pageblock order $PB_ORDER; Isolate pageblocks $iso_before before, $iso_after after the scrapes"

/usr/bin/python3 - "$WORK" "$N" "$PB_ORDER" "$iso" <<'PY' || fail "fragd_zone_free_pageblock_pages and fragd_free_blocks disagree beyond the bound (above)"
import re, sys
work, n, pb, iso_blocks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
isolated = iso_blocks << pb  # free pages the count may lack: at most every isolated block's

def parse(path):
    kernel, blocks = {}, {}
    for line in open(path):
        m = re.match(r'(fragd_zone_free_pageblock_pages|fragd_free_blocks)\{([^}]*)\} (\S+)$', line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        zone = (labels["node"], labels["zone"])
        if m.group(1) == "fragd_zone_free_pageblock_pages":
            kernel[zone] = int(float(m.group(3)))
        else:
            blocks.setdefault(zone, {})[int(labels["order"])] = int(float(m.group(3)))
    return kernel, blocks

def buddy_pages(orders, min_order):
    return sum(count << o for o, count in orders.items() if o >= min_order)

scrapes = [parse(f"{work}/s{i}.prom") for i in range(1, n + 1)]
max_order = max(o for _, blocks in scrapes for orders in blocks.values() for o in orders)
gap = 1 << max_order  # one block moved between fragd's buddyinfo and zoneinfo reads

def verdict(kernel, buddy):
    """'exact' within [0, isolated], 'near' within one block more either way, else 'miss'."""
    d = buddy - kernel
    return "exact" if 0 <= d <= isolated else "near" if -gap <= d <= isolated + gap else "miss"

bad, exact, total = [], 0, 0
for i, (kernel, blocks) in enumerate(scrapes, 1):
    if not kernel:
        bad.append(f"scrape {i}: no fragd_zone_free_pageblock_pages although /proc/zoneinfo has nr_free_pages_blocks")
    for zone, k in sorted(kernel.items()):
        if zone not in blocks:
            bad.append(f"scrape {i}: zone {zone} has the kernel's count but no fragd_free_blocks")
            continue
        b = buddy_pages(blocks[zone], pb)
        v = verdict(k, b)
        total += 1
        exact += v == "exact"
        if i == 1 or v != "exact":
            print(f"    scrape {i} node {zone[0]} zone {zone[1]}: kernel {k}, free lists at order >= {pb} {b}, "
                  f"difference {b - k} ({v})")
        if v == "miss":
            bad.append(f"scrape {i} node {zone[0]} zone {zone[1]}: free lists {b} - kernel {k} = {b - k} "
                       f"outside [-{gap}, {isolated} + {gap}]")
if total and exact * 2 <= total:
    bad.append(f"only {exact} of {total} zone readings within [0, {isolated}]: the two reads disagree more "
               f"than blocks moving between them would explain")

# Negative controls on the first scrape: a wrong zone or a wrong order must miss the bound.
kernel, blocks = scrapes[0]
controls, told = [], 0
zones = sorted(z for z in kernel if z in blocks)
for z in zones:
    for other in zones:
        if other != z:
            controls.append((f"kernel's {z[1]} against the free lists of {other[1]}", kernel[z], buddy_pages(blocks[other], pb)))
    if blocks[z].get(pb, 0):
        controls.append((f"{z[1]} without its order-{pb} blocks", kernel[z], buddy_pages(blocks[z], pb + 1)))
    if blocks[z].get(pb - 1, 0):
        controls.append((f"{z[1]} with its order-{pb - 1} blocks", kernel[z], buddy_pages(blocks[z], pb - 1)))
for what, k, b in controls:
    v = verdict(k, b)
    told += v == "miss"
    print(f"    control: {what}: difference {b - k}: {'caught' if v == 'miss' else 'NOT caught (' + v + ')'}")
if controls and told == 0:
    bad.append("no negative control missed the bound: on this host the comparison cannot tell a wrong zone or order")
for b in bad:
    print("free_pageblocks:", b, file=sys.stderr)
print(f"    {exact} of {total} zone readings exact (within [0, {isolated}]), bound +-{gap}; "
      f"{told} of {len(controls)} negative controls caught")
sys.exit(1 if bad else 0)
PY
stop_fragd
log "PASS"
