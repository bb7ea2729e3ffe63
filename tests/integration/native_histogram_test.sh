#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Native histograms against a real Prometheus (Debian's, --enable-feature=native-histograms):
# it asks fragd for the protobuf exposition and ingests each latency histogram as one native
# series. With memory fragmented and more 2 MiB huge pages asked for than there are free
# blocks (real stalls, fragd with the shipped config counting every allocation), once the stalls
# are over:
#  - Prometheus holds fragd_alloc_stall_seconds as native histograms (no _bucket series: the
#    protobuf exposition was negotiated) with the default order groups;
#  - for every order group, histogram_count and histogram_sum of the native series equal the
#    text exposition's _count and _sum, and the native histogram's count at or under each of
#    the text's classic bounds (histogram_fraction x count) equals that bucket's count;
#  - the native p50 and p99 lie within the fine BPF bucket that holds them in `fragctl hist`
#    (the full resolution a native histogram carries), and inside the classic bucket the
#    text exposition's counts put them in.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/prometheus_env.sh"
require_root
command -v prometheus >/dev/null || skip_or_fail "prometheus missing (Debian package prometheus)"
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
  skip_or_fail "python3-prometheus-client missing (scripts/install-deps.sh installs it)"

heavy_lock
quiet_memory 0   # stalls on demand only: kcompactd must not tidy up before the write

# The shipped config, every allocation counted from the start: under bpf.allocations adaptive only
# the stalls after the first one's tick are timed, and a slow daemon (a sanitizer's build) may
# attach the counting program after the whole pool write has ended.
sed 's/^  allocations: adaptive$/  allocations: exact/' "$SRC/configs/fragd.yaml" >"$WORK/fragd.yaml"
grep -q '^  allocations: exact$' "$WORK/fragd.yaml" || fail "configs/fragd.yaml has no '  allocations: adaptive' line to change"
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd
fragment 90

prometheus_config "$WORK/prometheus.yml" "$PORT"
start_prometheus "$WORK/prometheus.yml" --enable-feature=native-histograms
# query EXPR: the answer's result as JSON lines "labels<TAB>value".
query() {
  curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1" | /usr/bin/python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    print(json.dumps(r["metric"], sort_keys=True) + "\t" + r["value"][1])'
}
scraped() { [ -n "$(query 'up{job="fragd"} == 1')" ]; }
wait_for 30 scraped || { cat "$WORK/prometheus.log" >&2; fail "Prometheus did not scrape fragd in 30 s"; }

# More huge pages than there are free 2 MiB blocks, so that some must be compacted (they stall).
free2m=$(free_blocks9)
WANT=$((free2m + 500))
log "asking for $WANT x 2 MiB huge pages ($free2m free blocks)"
stall0=$(vmstat compact_stall)
echo "$WANT" > "$HP"
kstalls=$(($(vmstat compact_stall) - stall0))
log "pool holds $(cat "$HP"); the kernel's compact_stall rose by $kstalls"
[ "$kstalls" -gt 0 ] || fail "the pool write of $WANT pages made no direct compaction (compact_stall unchanged): memory was not fragmented as the test needs"

# The stalls are over when two scrapes a tick apart say the same; then Prometheus must catch up.
counts() { scrape | grep '^fragd_alloc_stall_seconds_count'; }
settled() { local a b; a=$(counts); sleep 1.5; b=$(counts); [ -n "$a" ] && [ "$a" = "$b" ]; }
wait_for 60 settled || fail "fragd's stall counts still moved 60 s after the pool write"
# The text exposition and fragctl hist from the same state: a scrape, the hist, and a scrape
# again that says the same (a slow tick, as under ASan, can end a "settled" that was not).
one_state() {
  scrape >"$WORK/text.prom"
  FRAGCTL hist --json >"$WORK/hist.json" || fail "fragctl hist --json failed"
  sleep 1.5
  [ "$(grep '^fragd_alloc_stall_seconds_count' "$WORK/text.prom")" = "$(counts)" ]
}
wait_for 30 one_state || fail "fragd's stall counts still moved around fragctl hist 30 s after they settled"
n9=$(metric "$WORK/text.prom" fragd_alloc_stall_seconds_count 'order="9-10"')
[ "$n9" -gt 0 ] || fail "no stall of orders 9-10 in the text exposition: the scene did not happen"
log "text exposition: $n9 stalls of orders 9-10"

# Prometheus' last sample of each native series must be the settled one.
caught_up() {
  [ "$(query 'histogram_count(fragd_alloc_stall_seconds{order="9-10"})' | cut -f2)" = "$n9" ]
}
wait_for 20 caught_up ||
  fail "Prometheus' native histogram_count for orders 9-10 is '$(query 'histogram_count(fragd_alloc_stall_seconds{order="9-10"})' | cut -f2)', the text exposition says $n9"
[ -z "$(query 'fragd_alloc_stall_seconds_bucket')" ] ||
  fail "Prometheus holds fragd_alloc_stall_seconds_bucket: it scraped the text exposition, not the protobuf one"

# Every query the comparison needs, answered now.
for q in 'histogram_count(fragd_alloc_stall_seconds)' 'histogram_sum(fragd_alloc_stall_seconds)' \
  'histogram_quantile(0.5, fragd_alloc_stall_seconds)' 'histogram_quantile(0.99, fragd_alloc_stall_seconds)'; do
  query "$q" >"$WORK/q-$(printf '%s' "$q" | tr -cs 'a-z0-9' _).tsv"
done
for le in $(awk -F'le="' '/^fragd_alloc_stall_seconds_bucket\{/ { split($2, a, "\""); print a[1] }' "$WORK/text.prom" | sort -u | grep -v Inf); do
  query "histogram_fraction(0, $le, fragd_alloc_stall_seconds) * histogram_count(fragd_alloc_stall_seconds)" >"$WORK/le-$le.tsv"
done

/usr/bin/python3 - "$WORK" <<'PY' || fail "the native histograms and the text exposition disagree (above)"
import glob, json, math, os, sys
from prometheus_client.parser import text_string_to_metric_families
work = sys.argv[1]

def native(name):
    out = {}
    for line in open(os.path.join(work, name)):
        labels, v = line.rstrip("\n").split("\t")
        l = json.loads(labels)
        out[(l["order"], l["result"])] = float(v)
    return out

text = {}
for fam in text_string_to_metric_families(open(os.path.join(work, "text.prom")).read()):
    if fam.name != "fragd_alloc_stall_seconds":
        continue
    for s in fam.samples:
        key = (s.labels["order"], s.labels["result"])
        h = text.setdefault(key, {"buckets": {}})
        if s.name.endswith("_count"):
            h["count"] = s.value
        elif s.name.endswith("_sum"):
            h["sum"] = s.value
        elif s.labels["le"] != "+Inf":
            h["buckets"][float(s.labels["le"])] = s.value
bad = []
count = native("q-histogram_count_fragd_alloc_stall_seconds_.tsv")
total = native("q-histogram_sum_fragd_alloc_stall_seconds_.tsv")
if set(count) != set(text):
    bad.append(f"label sets: native {sorted(count)}, text {sorted(text)}")
bounds = {float(os.path.basename(p)[3:-4]): native(os.path.basename(p)) for p in glob.glob(os.path.join(work, "le-*.tsv"))}
for key, h in sorted(text.items()):
    if count.get(key) != h["count"]:
        bad.append(f"{key}: histogram_count {count.get(key)}, text _count {h['count']}")
    if not math.isclose(total.get(key, -1), h["sum"], rel_tol=1e-9, abs_tol=1e-12):
        bad.append(f"{key}: histogram_sum {total.get(key)}, text _sum {h['sum']}")
    for le, c in sorted(h["buckets"].items()):
        got = next((v.get(key) for b, v in bounds.items() if math.isclose(b, le)), None)
        # An empty histogram's fraction is NaN: nothing to compare but the count, 0.
        if h["count"] > 0 and (got is None or not math.isclose(got, c, abs_tol=1e-6)):
            bad.append(f"{key}: native count at or under {le} s is {got}, the text's bucket says {c}")
    print(f"{key[0]:>5} {key[1]}: {int(h['count'])} stalls, {h['sum']:.6f} s; native count, sum and the count at "
          f"or under each of the {len(h['buckets'])} classic bounds compared")

# Quantiles: in the fine bucket of fragctl hist's merged histogram of the group's orders (its
# buckets are [lower ns, upper ns or null, count]).
hist = json.load(open(os.path.join(work, "hist.json")))
merged = {}  # lower ns -> [upper ns, count]
for o in hist["orders"]:
    if 9 <= o["order"] <= 10:
        stall = o.get("stall", o)
        for part in ("success", "failure"):
            for lo, hi, c in (stall.get(part) or {}).get("buckets", []):
                m = merged.setdefault(lo, [hi, 0])
                m[1] += c
n = sum(c for _, c in merged.values())
if n != text[("9-10", "all")]["count"]:
    bad.append(f"fragctl hist counts {n} stalls of orders 9-10, the text exposition {text[('9-10', 'all')]['count']}")
for q, fname in ((0.5, "q-histogram_quantile_0_5_fragd_alloc_stall_seconds_.tsv"),
                 (0.99, "q-histogram_quantile_0_99_fragd_alloc_stall_seconds_.tsv")):
    got = native(fname).get(("9-10", "all"))
    rank, seen = max(1, math.ceil(q * n)), 0
    for lo_ns in sorted(merged):
        seen += merged[lo_ns][1]
        if seen >= rank:
            break
    lo = lo_ns / 1e9
    hi = merged[lo_ns][0] / 1e9 if merged[lo_ns][0] is not None else lo
    ok = got is not None and lo * 0.995 <= got <= hi * 1.005
    print(f"p{int(q * 100)} of orders 9-10: native {got} s; fragctl hist's fine bucket [{lo}, {hi}) s ({n} stalls)")
    if not ok:
        bad.append(f"native p{int(q * 100)} {got} s is not in the fine bucket [{lo}, {hi}) s that holds rank {rank} of {n}")
    cls = text[("9-10", "all")]["buckets"]
    below = [le for le, c in sorted(cls.items()) if c < rank]
    above = [le for le, c in sorted(cls.items()) if c >= rank]
    if got is not None and ((below and got < below[-1] * 0.995) or (above and got > above[0] * 1.005)):
        bad.append(f"native p{int(q * 100)} {got} s is outside the classic bucket ({below[-1] if below else 0}, "
                   f"{above[0] if above else 'inf'}] the text's counts put rank {rank} in")
for b in bad:
    print("native:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
log "native histograms: counts, sums, classic bounds and quantiles agree with the text exposition and fragctl hist"

stop_prometheus
stop_fragd
log "PASS"
