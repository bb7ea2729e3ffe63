// SPDX-License-Identifier: Apache-2.0
// Tests of core/ctl_format: fragctl's parsing and formatting of control
// socket answers, on fixtures that follow docs/control-protocol.md.
#include "fragctl/render/ctl_format.h"
#include "base/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

// The "hist" example of docs/control-protocol.md, with a second order.
const char* const kHistAnswer = R"({"ok":true, "min_order":1, "uptime_ns":123,
 "hist_scheme":{"sub_bits":3,"min_shift":10,"max_shift":34,"buckets":194},
 "orders":[
  {"order":9, "fast":1418, "stalled":1582, "failed":1300,
   "phase_ns":{"compaction":812345678, "reclaim":0},
   "stall":{"success":{"count":1582,"sum_ns":600000000,"buckets":[[120,3],[121,9]]},
            "failure":{"count":0,"sum_ns":0,"buckets":[]}}},
  {"order":1, "fast":0, "stalled":0, "failed":0,
   "phase_ns":{"compaction":0, "reclaim":0},
   "stall":{"success":{"count":0,"sum_ns":0,"buckets":[]},
            "failure":{"count":0,"sum_ns":0,"buckets":[]}}}
 ]})";

// The "status" example of docs/control-protocol.md, unusable_index filled in.
const char* const kStatusAnswer = R"({"ok":true, "version":"0.1.0", "pid":1234, "tick_ns":1000000000,
 "nodes":[{"node":0, "score":87, "present_pages":6291417,
   "zones":[{"zone":"Normal","present_pages":5505024,"free_pages":212275,"score":91,
             "free_blocks":[5111,3384,1679,786,280,152,138,82,54,37,123],
             "unusable_index":[0.0,0.02,0.05,0.08,0.11,0.14,0.17,0.22,0.27,0.34,0.41],
             "pageblocks":{"Unmovable":58,"Movable":857,"Reclaimable":45,"HighAtomic":0,"Isolate":0}}],
   "hugepages":[{"size_kib":2048,"total":0,"free":0},{"size_kib":1048576,"total":0,"free":0}]}],
 "programs":[{"name":"alloc_page_btf","attached":true}],
 "events_dropped":0,
 "compaction":[{"trigger":"direct","runs":12,"pages_migrated":3400,"pages_failed":2}]})";

// An act-mode answer: kStatusAnswer plus the keys of "status, act mode
// additions" in docs/control-protocol.md.
json act_status(size_t n_actions) {
  json a = json::parse(kStatusAnswer);
  a["policy"] = json::parse(R"({"mode":"act","dry_run":false,"method":"node","source":"/etc/fragd/fragd.yaml",
      "reloads":2,"reload_errors":1,"proactiveness_raised":false,
      "budget_used_ns":1520000000,"budget_ns":6000000000})");
  a["policy_nodes"] = json::parse(R"([{"node":0,"score":4,"hot":false,"floor":null,"misses":0,
      "waiting":"","next_allowed_in_ns":0},
      {"node":1,"score":45,"hot":true,"floor":41,"misses":2,"waiting":"backoff","next_allowed_in_ns":35500000000}])");
  a["pools"] = json::parse(R"([{"node":-1,"size_kib":2048,"target":3000,"reached":3000,"manual":true,
      "last_result":"ok"},{"node":1,"size_kib":1048576,"target":2,"reached":1,"manual":false,
      "last_result":"short"}])");
  a["action_running"] = json::parse(R"({"id":40,"action":"compact","trigger":"score","node":1,
      "reason":"score 45 > high 40"})");
  a["actions"] = json::array();
  for (size_t i = 0; i < n_actions; ++i) {
    a["actions"].push_back(json{{"id", 20 + i}, {"action", "compact"}, {"trigger", "score"}, {"node", 0},
                                {"reason", "score 93 > high 40"}, {"result", "ok"}, {"detail", ""},
                                {"start_unix_ns", 1763700000000000000ULL + i * 60000000000ULL},
                                {"duration_ns", 1520000000}, {"score_before", 93}, {"score_after", 4},
                                {"blocks_before", 12}, {"blocks_after", 8804}, {"pages_migrated", 392114},
                                {"size_kib", 0}, {"target", 0}, {"pool_before", 0}, {"pool_after", 0}});
  }
  return a;
}

const char* const kTraceEvent = R"({"ts_ns":123,"pid":42,"tid":42,"comm":"bash","cgroup_id":1,"order":9,"gfp":3264,
 "duration_ns":12000000,"compact_ns":11000000,"reclaim_ns":0,"result":"success"})";

std::tm noon() {
  std::tm tm{};
  tm.tm_hour = 12;
  tm.tm_min = 3;
  tm.tm_sec = 9;
  return tm;
}

}  // namespace

TEST(CtlFormat, CheckAnswer) {
  EXPECT_TRUE(fragd::check_answer(json::parse(R"({"ok":true})"), "hist").ok());
  auto refused = fragd::check_answer(json::parse(R"({"ok":false,"error":"unknown cmd"})"), "hist");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "fragd refused 'hist': unknown cmd");
  auto no_reason = fragd::check_answer(json::parse(R"({"ok":false})"), "status");
  ASSERT_FALSE(no_reason.ok());
  EXPECT_EQ(no_reason.error().message, "fragd refused 'status': no reason given");
  for (const char* bad : {"[]", "3", R"({"error":"x"})", R"({"ok":"yes"})"}) {
    auto r = fragd::check_answer(json::parse(bad), "hist");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("malformed answer to 'hist' from fragd", 0), 0u) << r.error().message;
  }
}

TEST(CtlFormat, FormatNs) {
  EXPECT_EQ(fragd::format_duration(NAN), "-");
  EXPECT_EQ(fragd::format_duration(850), "850ns");
  EXPECT_EQ(fragd::format_duration(312000), "312us");
  EXPECT_EQ(fragd::format_duration(524288), "524us");
  EXPECT_EQ(fragd::format_duration(12.34e6), "12.3ms");
  EXPECT_EQ(fragd::format_duration(2.5e9), "2.5s");
  EXPECT_EQ(fragd::format_duration(45ULL * 1000000000, fragd::DurationStyle::Age), "45s");
  EXPECT_EQ(fragd::format_duration(725ULL * 1000000000, fragd::DurationStyle::Age), "12m05s");
  EXPECT_EQ(fragd::format_duration(7380ULL * 1000000000, fragd::DurationStyle::Age), "2h03m");
  EXPECT_EQ(fragd::format_duration(273600ULL * 1000000000, fragd::DurationStyle::Age), "3d04h");
  EXPECT_EQ(fragd::format_order_size(9, 4), "2048 KiB");
}

TEST(CtlFormat, ParseHistAnswer) {
  auto r = fragd::parse_hist_answer(json::parse(kHistAnswer));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->min_order, 1u);
  EXPECT_EQ(r->uptime_ns, 123u);
  ASSERT_EQ(r->orders.size(), 2u);
  EXPECT_EQ(r->orders[0].order, 1u);  // sorted
  const fragd::OrderStats* o9 = r->find(9);
  ASSERT_NE(o9, nullptr);
  EXPECT_EQ(o9->fast, 1418u);
  EXPECT_EQ(o9->stalled, 1582u);
  EXPECT_EQ(o9->failed, 1300u);
  EXPECT_EQ(o9->compaction_ns, 812345678u);
  EXPECT_EQ(o9->success.count, 1582u);
  EXPECT_EQ(o9->success.buckets[120], 3u);
  EXPECT_EQ(o9->success.buckets[121], 9u);
  EXPECT_TRUE(o9->failure.empty());
  EXPECT_EQ(r->find(5), nullptr);
}

TEST(CtlFormat, HistSaysWhenAllocationsAreNotCounted) {
  json a = json::parse(kHistAnswer);
  auto plain = fragd::parse_hist_answer(a);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->counting.has_value());
  fragd::HistViewOptions view;
  EXPECT_EQ(fragd::format_hist_text(*plain, view).find("allocation counting"), std::string::npos);

  a["allocations"] = {{"mode", "adaptive"}, {"counting", false}};
  auto off = fragd::parse_hist_answer(a);
  ASSERT_TRUE(off.ok()) << off.error().message;
  ASSERT_TRUE(off->counting.has_value());
  EXPECT_FALSE(*off->counting);
  const std::string text = fragd::format_hist_text(*off, view);
  EXPECT_EQ(text.rfind("allocation counting is off now (bpf.allocations: adaptive, on from the next stall)", 0), 0u)
      << text;
  EXPECT_EQ(fragd::hist_report_json(*off, view)["allocations"]["counting"], false);
  // Carried into an interval.
  EXPECT_FALSE(*fragd::hist_interval(*off, *off).counting);

  a["allocations"]["counting"] = 1;
  EXPECT_FALSE(fragd::parse_hist_answer(a).ok());
}

TEST(CtlFormat, ParseHistRejectsMalformed) {
  const char* bad[] = {
      R"({"ok":true})",
      R"({"ok":true,"orders":{}})",
      R"({"ok":true,"orders":[5]})",
      R"({"ok":true,"orders":[{"fast":1,"stalled":0,"failed":0}]})",
      R"({"ok":true,"orders":[{"order":11,"fast":1,"stalled":0,"failed":0}]})",
      R"({"ok":true,"orders":[{"order":9,"fast":"1","stalled":0,"failed":0}]})",
      R"({"ok":true,"orders":[{"order":9,"fast":1,"stalled":0}]})",
      R"({"ok":true,"orders":[{"order":9,"fast":1,"stalled":0,"failed":0,"phase_ns":[]}]})",
      R"({"ok":true,"orders":[{"order":9,"fast":1,"stalled":0,"failed":0,"phase_ns":{"compaction":-5}}]})",
      R"({"ok":true,"orders":[{"order":9,"fast":1,"stalled":0,"failed":0,"stall":{"success":{"count":1,"sum_ns":1,"buckets":[[200,1]]}}}]})",
      R"({"ok":true,"orders":[{"order":9,"fast":1,"stalled":0,"failed":0,"stall":{"success":[]}}]})",
      R"({"ok":true,"orders":[{"order":9,"fast":1,"stalled":0,"failed":0},{"order":9,"fast":1,"stalled":0,"failed":0}]})",
      R"({"ok":true,"uptime_ns":"x","orders":[]})",
      R"({"ok":true,"hist_scheme":{"sub_bits":4,"min_shift":10,"max_shift":34,"buckets":386},"orders":[]})",
      R"({"ok":true,"hist_scheme":5,"orders":[]})",
      R"({"ok":false,"error":"busy"})",
  };
  for (const char* text : bad) {
    fragd::Result<fragd::HistSnapshot> r = fragd::HistSnapshot{};
    EXPECT_NO_THROW(r = fragd::parse_hist_answer(json::parse(text))) << text;
    EXPECT_FALSE(r.ok()) << text;
  }
  auto scheme = fragd::parse_hist_answer(json::parse(bad[13]));
  ASSERT_FALSE(scheme.ok());
  EXPECT_NE(scheme.error().message.find("histogram scheme"), std::string::npos) << scheme.error().message;
  // What the field table cannot say is checked by hand, and named as the table names fields.
  for (const auto& [i, want] : {std::pair{4, "orders[0].order: 11 above 10"},
                                std::pair{11, "orders[1]: order 9 appears twice"},
                                std::pair{7, "orders[0].phase_ns is not an object"}}) {
    auto r = fragd::parse_hist_answer(json::parse(bad[i]));
    ASSERT_FALSE(r.ok()) << bad[i];
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message << " -- want " << want;
  }
}

TEST(CtlFormat, HistInterval) {
  fragd::HistSnapshot older, newer;
  older.uptime_ns = 1000;
  newer.uptime_ns = 3000;
  fragd::OrderStats a;
  a.order = 9;
  a.fast = 10;
  a.stalled = 2;
  a.compaction_ns = 500;
  a.success.add(300000, 2);
  fragd::OrderStats b = a;
  b.fast = 15;
  b.stalled = 5;
  b.compaction_ns = 900;
  b.success.add(600000, 3);
  older.orders = {a};
  newer.orders = {b};
  fragd::HistSnapshot d = fragd::hist_interval(newer, older);
  EXPECT_EQ(d.uptime_ns, 2000u);
  ASSERT_EQ(d.orders.size(), 1u);
  EXPECT_EQ(d.orders[0].fast, 5u);
  EXPECT_EQ(d.orders[0].stalled, 3u);
  EXPECT_EQ(d.orders[0].compaction_ns, 400u);
  EXPECT_EQ(d.orders[0].success.count, 3u);
  EXPECT_EQ(d.orders[0].success.buckets[fragd_hist_bucket(300000)], 0u);
  EXPECT_EQ(d.orders[0].success.buckets[fragd_hist_bucket(600000)], 3u);

  // fragd restarted: uptime went backwards, the newer answer is the interval.
  newer.uptime_ns = 10;
  fragd::HistSnapshot r = fragd::hist_interval(newer, older);
  EXPECT_EQ(r.orders[0].fast, 15u);
  EXPECT_EQ(r.orders[0].success.count, 5u);
}

TEST(CtlFormat, OrderHeaderAndText) {
  fragd::OrderStats o;
  o.order = 9;
  o.fast = 1418;
  o.stalled = 4;
  o.failed = 1;
  o.compaction_ns = 812345678;
  o.success.buckets[fragd_hist_bucket(300000)] = 4;  // [294912, 327680)
  o.success.count = 4;
  o.failure.add(3000000);  // [2883584, 3145728)
  EXPECT_EQ(fragd::format_order_header(o, 4),
            "order 9 (2048 KiB): fast 1418  stalled 4  failed 1  stall p50 307us p90 324us p99 324us "
            "max 328us  compaction 812.3ms reclaim 0.0ms");

  fragd::HistSnapshot s;
  s.min_order = 1;
  fragd::OrderStats idle;
  idle.order = 3;
  s.orders = {idle, o};
  EXPECT_EQ(fragd::format_hist_text(s, {}),
            fragd::format_order_header(o, 4) + "\n" +
                "     usecs               : count     distribution\n"
                "     262.1 -> 524.3      : 4        |****************************************|\n"
                "  stalls that failed (1):\n"
                "     usecs               : count     distribution\n"
                "    2097.2 -> 4194.3     : 1        |****************************************|\n");
  fragd::HistViewOptions only3;
  only3.order = 3;
  EXPECT_EQ(fragd::format_hist_text(s, only3),
            "order 3 (32 KiB): fast 0  stalled 0  failed 0  stall p50 - p90 - p99 - max -  compaction 0.0ms "
            "reclaim 0.0ms\n");
  fragd::HistViewOptions only0;
  only0.order = 0;
  EXPECT_EQ(fragd::format_hist_text(s, only0), "order 0 is not tracked by fragd (it watches orders 1..10)\n");
  s.orders = {idle};
  EXPECT_EQ(fragd::format_hist_text(s, {}), "no allocation of order 1..10\n");
}

TEST(CtlFormat, HistReportJson) {
  auto r = fragd::parse_hist_answer(json::parse(kHistAnswer));
  ASSERT_TRUE(r.ok());
  r->orders[0].failure.add(1ULL << 35);  // order 1: not shown (no allocation)
  json j = fragd::hist_report_json(*r, {});
  ASSERT_EQ(j["orders"].size(), 1u);  // order 1 had no allocation
  const json& o = j["orders"][0];
  EXPECT_EQ(o["order"], 9);
  EXPECT_EQ(o["size_kib"], 2048);
  EXPECT_EQ(o["fast"], 1418);
  EXPECT_EQ(o["phase_ns"]["compaction"], 812345678);
  const json& ok = o["stall"]["success"];
  EXPECT_EQ(ok["buckets"], json::parse("[[" + std::to_string(fragd_hist_lower(120)) + "," +
                                       std::to_string(fragd_hist_upper(120)) + ",3],[" +
                                       std::to_string(fragd_hist_lower(121)) + "," +
                                       std::to_string(fragd_hist_upper(121)) + ",9]]"));
  EXPECT_TRUE(ok["p50_ns"].is_number());
  EXPECT_DOUBLE_EQ(ok["max_ns"].get<double>(), static_cast<double>(fragd_hist_upper(121)));
  EXPECT_TRUE(o["stall"]["failure"]["p99_ns"].is_null());
  EXPECT_EQ(o["stall"]["failure"]["buckets"], json::array());

  json last = fragd::latency_report_json(r->orders[0].failure);
  EXPECT_EQ(last["buckets"], json::parse("[[17179869184,null,1]]"));
}

TEST(CtlFormat, StatusText) {
  auto r = fragd::format_status(json::parse(kStatusAnswer), 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r,
            "fragd 0.1.0, pid 1234, sampling every 1s\n"
            "\n"
            "node 0: score 87, 6291417 pages present (24.0 GiB)\n"
            "                                       free blocks of order\n"
            "  zone     score free_pages unusable@9    0    1    2   3   4   5   6  7  8  9  10\n"
            "  Normal      91     212275       0.34 5111 3384 1679 786 280 152 138 82 54 37 123\n"
            "           pageblocks: Unmovable 58  Movable 857  Reclaimable 45  HighAtomic 0  Isolate 0\n"
            "  hugepages 2 MiB: 0 free of 0,  1 GiB: 0 free of 0\n"
            "\n"
            "programs attached:\n"
            "  alloc_page_btf                   yes\n"
            "\n"
            "events dropped: 0\n"
            "\n"
            "compaction runs by trigger:\n"
            "  trigger          runs  pages_migrated  pages_failed\n"
            "  direct             12            3400             2\n");
}

TEST(CtlFormat, StatusSaysWhenKswapdGaveUpOnANode) {
  json a = json::parse(kStatusAnswer);
  a["nodes"][0]["unreclaimable"] = true;
  auto r = fragd::format_status(a, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("node 0: score 87, 6291417 pages present (24.0 GiB), kswapd gave up (node_unreclaimable)\n"),
            std::string::npos)
      << *r;
  a["nodes"][0]["unreclaimable"] = false;
  r = fragd::format_status(a, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("node 0: score 87, 6291417 pages present (24.0 GiB)\n"), std::string::npos) << *r;
  a["nodes"][0]["unreclaimable"] = 1;
  EXPECT_FALSE(fragd::format_status(a, 4).ok());
}

TEST(CtlFormat, StatusShowsTheKernelsCompactionSettings) {
  json a = json::parse(kStatusAnswer);
  auto r = fragd::format_status(a, 4);  // an answer without "vm" (an older fragd): no such line
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->find("vm.defrag_mode"), std::string::npos) << *r;
  a["vm"] = {{"compaction_proactiveness", 20}, {"defrag_mode", 1}};
  r = fragd::format_status(a, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("\nvm.compaction_proactiveness 20, vm.defrag_mode 1\n"), std::string::npos) << *r;
  a["vm"].erase("defrag_mode");  // a kernel before 6.15
  r = fragd::format_status(a, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("vm.compaction_proactiveness 20, vm.defrag_mode - (none before Linux 6.15)\n"), std::string::npos)
      << *r;
  a["vm"]["defrag_mode"] = "on";
  EXPECT_FALSE(fragd::format_status(a, 4).ok());
}

TEST(CtlFormat, StatusSaysWhetherAllocationsAreCounted) {
  json a = json::parse(kStatusAnswer);
  a["allocations"] = {{"mode", "adaptive"}, {"counting", false}, {"counting_seconds", 42.4}};
  auto r = fragd::format_status(a, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("allocation counting (bpf.allocations adaptive): off, on for 42 s in all (switches on at the "
                    "next stall); fast and failed allocations are not counted meanwhile\n"),
            std::string::npos)
      << *r;
  a["allocations"] = {{"mode", "exact"}, {"counting", true}};
  r = fragd::format_status(a, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("allocation counting (bpf.allocations exact): on\n"), std::string::npos) << *r;
  a["allocations"]["counting"] = "yes";
  EXPECT_FALSE(fragd::format_status(a, 4).ok());
}

TEST(CtlFormat, CostTable) {
  json c = {{"seconds", 2.0},
            {"page_faults", 1000},
            {"programs",
             {{{"name", "page_alloc_btf"}, {"tracepoint", "kmem:mm_page_alloc"}, {"attached", true},
               {"runs", 1200}, {"run_ns", 24000}, {"recursion_misses", 0}},
              {{"name", "try_to_compact"}, {"tracepoint", "compaction:mm_compaction_try_to_compact_pages"},
               {"attached", true}, {"runs", 0}, {"run_ns", 0}, {"recursion_misses", 1}}}}};
  auto r = fragd::format_cost(c);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // 24000 ns over 1200 runs = 20 ns a run; over 1000 faults = 24 ns a fault; 600 runs/s.
  EXPECT_NE(r->find("page_alloc_btf             kmem:mm_page_alloc                                     1200        600"
                    "        20       24.00       0\n"),
            std::string::npos)
      << *r;
  EXPECT_NE(r->find("\ntotal "), std::string::npos) << *r;
  EXPECT_NE(r->find("over 2.0 s, 1000 page faults"), std::string::npos) << *r;
  c["programs"][0].erase("run_ns");
  auto bad = fragd::format_cost(c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'run_ns'"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(fragd::format_cost(json{{"programs", json::array()}}).ok());
}

TEST(CtlFormat, StatusToleratesMissingFields) {
  auto r = fragd::format_status(json::parse(R"({"ok":true,"nodes":[{"node":1,"zones":[{"zone":"DMA32",
      "free_blocks":[1,2]}]}]})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("node 1: score -\n"), std::string::npos) << *r;
  EXPECT_NE(r->find("  DMA32        -          -          - 1 2 - - - - - - - -  -\n"), std::string::npos) << *r;
  EXPECT_NE(r->find("events dropped: -\n"), std::string::npos) << *r;
}

TEST(CtlFormat, StatusRejectsMalformed) {
  const char* bad[] = {
      R"({"ok":true})",
      R"({"ok":true,"nodes":{}})",
      R"({"ok":true,"nodes":[7]})",
      R"({"ok":true,"nodes":[{"node":"zero"}]})",
      R"({"ok":true,"nodes":[{"node":0,"zones":{}}]})",
      R"({"ok":true,"nodes":[{"node":0,"zones":[{"zone":"Normal","free_blocks":["x"]}]}]})",
      R"({"ok":true,"nodes":[{"node":0,"zones":[{"zone":"Normal","unusable_index":[0,0,0,0,0,0,0,0,0,"x"]}]}]})",
      R"({"ok":true,"nodes":[{"node":0,"zones":[{"zone":"Normal","pageblocks":{"Movable":"many"}}]}]})",
      R"({"ok":true,"nodes":[{"node":0,"hugepages":[3]}]})",
      R"({"ok":true,"nodes":[],"programs":[{"name":"x","attached":"yes"}]})",
      R"({"ok":true,"nodes":[],"compaction":[{"trigger":"direct","runs":-1}]})",
      R"({"ok":true,"nodes":[],"version":5})",
      R"({"ok":false,"error":"busy"})",
  };
  for (const char* text : bad) {
    fragd::Result<std::string> r = std::string();
    EXPECT_NO_THROW(r = fragd::format_status(json::parse(text))) << text;
    EXPECT_FALSE(r.ok()) << text;
  }
}

TEST(CtlFormat, TraceLines) {
  EXPECT_EQ(fragd::trace_header(), "TIME     COMM             PID     ORDER RESULT      MS");
  auto line = fragd::format_trace_line(json::parse(kTraceEvent), noon());
  ASSERT_TRUE(line.ok()) << line.error().message;
  EXPECT_EQ(*line, "12:03:09 bash             42      9     success     12.000");

  json ev = json::parse(kTraceEvent);
  ev["comm"] = "a\x1b[2Jb";
  ev["duration_ns"] = 1234567;
  ev["result"] = "failure";
  auto esc = fragd::format_trace_line(ev, noon());
  ASSERT_TRUE(esc.ok());
  EXPECT_EQ(*esc, "12:03:09 a?[2Jb           42      9     failure     1.235");

  for (const char* key : {"comm", "pid", "order", "duration_ns", "result"}) {
    json e = json::parse(kTraceEvent);
    e.erase(key);
    EXPECT_FALSE(fragd::format_trace_line(e, noon()).ok()) << key;
    e[key] = json::array();
    EXPECT_FALSE(fragd::format_trace_line(e, noon()).ok()) << key;
  }
  EXPECT_FALSE(fragd::format_trace_line(json::array(), noon()).ok());
}

TEST(CtlFormat, StatusActMode) {
  auto plain = fragd::format_status(json::parse(kStatusAnswer), 4, true);
  ASSERT_TRUE(plain.ok());
  auto r = fragd::format_status(act_status(2), 4, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // What an observe-only fragd printed stays first, unchanged.
  ASSERT_EQ(r->rfind(*plain, 0), 0u) << *r;
  EXPECT_EQ(r->substr(plain->size()),
            "\n"
            "policy: mode act, dry_run no, method node, from /etc/fragd/fragd.yaml\n"
            "  reloads 2 (1 failed), compaction budget used 1.52 s of 6.00 s per minute, proactiveness raised no\n"
            "  node score hot floor misses  waiting      next action in\n"
            "  0        4 no      -      0  -            -\n"
            "  1       45 yes    41      2  backoff      35.50 s\n"
            "  hugepage pool targets:\n"
            "    size    node    target  reached  set by   last result\n"
            "    2 MiB   all       3000     3000  fragctl  ok\n"
            "    1 GiB   1            2        1  policy   short\n"
            "  running: #40 compact node 1 (score: score 45 > high 40)\n"
            "  last actions (newest last):\n"
            "    04:40:00 #20 compact node 0: ok, score 93 -> 4, 392114 pages migrated, 1.52 s (score: score 93 > "
            "high 40)\n"
            "    04:41:00 #21 compact node 0: ok, score 93 -> 4, 392114 pages migrated, 1.52 s (score: score 93 > "
            "high 40)\n");
}

TEST(CtlFormat, StatusShowsTheLastTenActions) {
  auto r = fragd::format_status(act_status(14), 4, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("  last 10 of 14 actions (newest last):\n    04:44:00 #24 compact"), std::string::npos) << *r;
  EXPECT_EQ(r->find("#23 "), std::string::npos) << *r;
  EXPECT_NE(r->find("    04:53:00 #33 compact node 0"), std::string::npos) << *r;
  // The newest is last.
  const size_t last_line = r->rfind('\n', r->size() - 2) + 1;
  EXPECT_EQ(r->substr(last_line, 17), "    04:53:00 #33 ") << *r;

  json idle = act_status(0);
  idle["action_running"] = nullptr;
  idle["pools"] = json::array();
  auto i = fragd::format_status(idle, 4, true);
  ASSERT_TRUE(i.ok()) << i.error().message;
  EXPECT_NE(i->find("  hugepage pool targets: none\n  running: none\n  last actions: none\n"), std::string::npos)
      << *i;
}

TEST(CtlFormat, StatusActModePartialAndMalformed) {
  // Only some act-mode keys, and a policy with missing fields: "-".
  json a = json::parse(kStatusAnswer);
  a["policy"] = json::parse(R"({"mode":"observe","source":""})");
  auto r = fragd::format_status(a, 4, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("\npolicy: mode observe, dry_run -, method -, from -\n"
                    "  reloads - (- failed), compaction budget used - of - per minute, proactiveness raised -\n"),
            std::string::npos)
      << *r;
  EXPECT_EQ(r->find("running:"), std::string::npos) << *r;

  const char* bad[] = {
      R"({"policy":5})",
      R"({"policy":{"mode":3}})",
      R"({"policy":{"dry_run":"no"}})",
      R"({"policy":{"budget_ns":-1}})",
      R"({"policy_nodes":{}})",
      R"({"policy_nodes":[1]})",
      R"({"policy_nodes":[{"node":0,"hot":1}]})",
      R"({"policy_nodes":[{"node":0,"floor":"x"}]})",
      R"({"pools":[{"size_kib":"2M"}]})",
      R"({"pools":[{"node":"all"}]})",
      R"({"action_running":"compact"})",
      R"({"action_running":{"id":1,"node":"x"}})",
      R"({"actions":{}})",
      R"({"actions":[{"id":1,"action":"compact","node":0}]})",
      R"({"actions":[{"id":1,"action":"compact","node":0,"result":"ok","score_after":"4"}]})",
  };
  for (const char* extra : bad) {
    json s = json::parse(kStatusAnswer);
    s.update(json::parse(extra));
    fragd::Result<std::string> out = std::string();
    EXPECT_NO_THROW(out = fragd::format_status(s, 4, true)) << extra;
    ASSERT_FALSE(out.ok()) << extra;
    EXPECT_EQ(out.error().message.rfind("malformed answer to 'status' from fragd: ", 0), 0u) << out.error().message;
  }
}
