// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "policy/config.h"

using fragd::parse_config;
using fragd::parse_duration_ns;

TEST(Config, EmptyFileMeansDefaults) {
  auto c = parse_config("", "f.yaml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->mode, "observe");
  EXPECT_EQ(c->listen, "127.0.0.1:9717");
  EXPECT_EQ(c->min_order, 1u);
  EXPECT_EQ(c->slow_stall_ns, 10'000'000u);
}

TEST(Config, ShippedDefaultParses) {
  auto c = fragd::load_config(std::string(FRAGD_FIXTURES_DIR) + "/../../configs/fragd.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->mode, "observe");
  EXPECT_EQ(c->listen, "127.0.0.1:9717");
  EXPECT_FALSE(c->policy.act);
  EXPECT_FALSE(c->policy.dry_run);
}

TEST(Config, ModeActAndDryRun) {
  auto c = parse_config("mode: act\ndry_run: true\n", "f.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->mode, "act");
  EXPECT_TRUE(c->policy.act);
  EXPECT_TRUE(c->policy.dry_run);
  auto o = parse_config("mode: observe\ndry_run: false\n", "f.yaml");
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->mode, "observe");
  EXPECT_FALSE(o->policy.act);
  EXPECT_FALSE(o->policy.dry_run);
  // YAML 1.2 spellings of the booleans.
  EXPECT_TRUE(parse_config("dry_run: True\n", "f.yaml")->policy.dry_run);
  EXPECT_FALSE(parse_config("dry_run: FALSE\n", "f.yaml")->policy.dry_run);
}

TEST(Config, EmptySectionsMeanDefaults) {
  auto c = parse_config("bpf:\ncompaction:\nhugepages:\n", "f.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->min_order, 1u);
  EXPECT_EQ(c->policy.compaction.score.high, 90u);
  EXPECT_EQ(c->policy.compaction.method, fragd::CompactMethod::Pool);
  EXPECT_EQ(c->policy.compaction.reserve.memory_percent, 25u);
  EXPECT_EQ(c->policy.hugepages.guard_kib, 1024u * 1024u);
}

TEST(Config, AllKeys) {
  auto c = parse_config(
      "mode: observe\nlisten: 127.0.0.1:9999\nsocket: /tmp/x.sock\ntick_interval: 500ms\n"
      "pagetypeinfo_interval: 5m\n"
      "bpf:\n  min_order: 3\n  slow_stall_threshold: 2ms\n  track_pollution: false\n"
      "pageblocks:\n  scan: false\n  interval: 10m\n  threads: 2\n",
      "f.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->listen, "127.0.0.1:9999");
  EXPECT_EQ(c->socket, "/tmp/x.sock");
  EXPECT_EQ(c->tick_ns, 500'000'000u);
  EXPECT_EQ(c->pagetypeinfo_ns, 300'000'000'000u);
  EXPECT_EQ(c->min_order, 3u);
  EXPECT_EQ(c->slow_stall_ns, 2'000'000u);
  EXPECT_FALSE(c->track_pollution);
  EXPECT_FALSE(c->scan_pageblocks);
  EXPECT_EQ(c->scan_ns, 600'000'000'000u);
  EXPECT_EQ(c->scan_threads, 2u);
  auto d = parse_config("pageblocks:\n", "f.yaml");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->scan_pageblocks);
  EXPECT_TRUE(d->track_pollution);
  EXPECT_EQ(d->scan_ns, 60'000'000'000u);
  EXPECT_EQ(d->scan_threads, 1u);
}

TEST(Config, AllocationCounting) {
  auto d = parse_config("", "f.yaml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->allocations, "adaptive");  // no program on the per-page path while memory is healthy
  EXPECT_EQ(d->adaptive_hold_ns, 300'000'000'000u);
  EXPECT_EQ(d->adaptive_free_blocks, 0u);
  EXPECT_EQ(d->scan_max_age_ns, 600'000'000'000u);
  auto c = parse_config("bpf:\n  allocations: exact\n  adaptive_hold: 30s\n  adaptive_free_blocks: 64\n"
                        "pageblocks:\n  interval: 2m\n  max_age: 1h\n",
                        "f.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->allocations, "exact");
  EXPECT_EQ(c->adaptive_hold_ns, 30'000'000'000u);
  EXPECT_EQ(c->adaptive_free_blocks, 64u);
  EXPECT_EQ(c->scan_max_age_ns, 3600'000'000'000u);
  EXPECT_EQ(parse_config("bpf:\n  allocations: 'off'\n", "f.yaml")->allocations, "off");
  // Off in observe mode, or with the p99 check off, is fine.
  EXPECT_TRUE(parse_config("bpf:\n  allocations: 'off'\nmode: act\ncompaction:\n  demand:\n    stall_p99: 0\n",
                           "f.yaml")
                  .ok());
}

struct BadCase {
  const char* text;
  const char* expect;  // substring of the message
};

class ConfigErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigErrors, NamesFileLineColumnAndKey) {
  auto c = parse_config(GetParam().text, "f.yaml");
  ASSERT_FALSE(c.ok()) << GetParam().text;
  EXPECT_NE(c.error().message.find(GetParam().expect), std::string::npos) << c.error().message;
  EXPECT_EQ(c.error().message.rfind("f.yaml", 0), 0u) << c.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, ConfigErrors,
    ::testing::Values(BadCase{"mode: observe\nlisen: 1.2.3.4:5\n", "f.yaml:2:1: key 'lisen': unknown key"},
                      BadCase{"bpf:\n  min_ordr: 2\n", "f.yaml:2:3: key 'bpf.min_ordr': unknown key"},
                      BadCase{"bpf:\n  min_order: x\n", "key 'bpf.min_order': expected an integer, got 'x'"},
                      BadCase{"bpf:\n  min_order: 11\n", "out of range 1..10"},
                      BadCase{"bpf:\n  min_order: 0\n", "out of range 1..10"},
                      BadCase{"bpf:\n  min_order: [1]\n", "expected a single value"},
                      BadCase{"bpf: 3\n", "key 'bpf': expected a map"},
                      BadCase{"tick_interval: 5parsecs\n", "unknown duration unit 'parsecs'"},
                      BadCase{"tick_interval: 1ms\n", "out of range"},
                      BadCase{"listen: localhost\n", "has no port; write IPV4-ADDRESS:PORT"},
                      BadCase{"listen: 127.0.0.1:70000\n", "no valid port"},
                      BadCase{"socket: relative.sock\n", "expected an absolute path"},
                      BadCase{"mode: fast\n", "f.yaml:1:7: key 'mode': 'fast' is not a mode; use 'observe'"},
                      BadCase{"dry_run: yes\n", "f.yaml:1:10: key 'dry_run': 'yes' is ambiguous"},
                      BadCase{"dry_run: 1\n", "f.yaml:1:10: key 'dry_run': expected true or false, got '1'"},
                      BadCase{"mode:\n", "f.yaml:1:1: key 'mode': has no value"},
                      BadCase{"mode: observe\nmode: act\n", "f.yaml:2:1: key 'mode': given twice (first at line 1)"},
                      BadCase{"bpf:\n  min_order: '3'\n", "key 'bpf.min_order': expected an integer, got the string '3'"},
                      BadCase{"bpf:\n  min_order: -1\n", "key 'bpf.min_order': value -1 is out of range 1..10"},
                      BadCase{"- a\n- b\n", "the top level must be a map"},
                      BadCase{"mode: [observe\n", "not valid YAML"},
                      BadCase{"pageblocks:\n  interval: 100ms\n", "key 'pageblocks.interval'"},
                      BadCase{"pageblocks:\n  threads: 0\n", "key 'pageblocks.threads': value 0 is out of range 1..64"},
                      BadCase{"pageblocks:\n  scna: true\n", "f.yaml:2:3: key 'pageblocks.scna': unknown key"},
                      BadCase{"bpf:\n  allocations: sometimes\n",
                              "f.yaml:2:16: key 'bpf.allocations': 'sometimes' is not a counting mode; use 'adaptive'"},
                      BadCase{"bpf:\n  adaptive_hold: 0s\n", "key 'bpf.adaptive_hold'"},
                      BadCase{"bpf:\n  adaptive_free_blocks: -3\n", "key 'bpf.adaptive_free_blocks'"},
                      BadCase{"pageblocks:\n  interval: 10m\n  max_age: 5m\n",
                              "f.yaml:3:12: key 'pageblocks.max_age': pageblocks.max_age 5m is below pageblocks.interval 10m"},
                      BadCase{"mode: act\nbpf:\n  allocations: 'off'\n",
                              "f.yaml:3:16: key 'bpf.allocations': compaction.demand.stall_p99 needs the stall times"}));

TEST(Duration, Units) {
  EXPECT_EQ(*parse_duration_ns("1s"), 1'000'000'000u);
  EXPECT_EQ(*parse_duration_ns("1.5"), 1'500'000'000u);
  EXPECT_EQ(*parse_duration_ns("250us"), 250'000u);
  EXPECT_EQ(*parse_duration_ns("2m"), 120'000'000'000u);
  EXPECT_EQ(*parse_duration_ns("7ns"), 7u);
  EXPECT_EQ(*parse_duration_ns("1h"), 3600'000'000'000u);
  EXPECT_EQ(*parse_duration_ns("0"), 0u);
  EXPECT_FALSE(parse_duration_ns("inf").ok());
  EXPECT_FALSE(parse_duration_ns("").ok());
  EXPECT_FALSE(parse_duration_ns("-1s").ok());
  EXPECT_FALSE(parse_duration_ns("s").ok());
}

TEST(Duration, Format) {
  EXPECT_EQ(fragd::format_duration(0, fragd::DurationStyle::Exact), "0s");
  EXPECT_EQ(fragd::format_duration(250, fragd::DurationStyle::Exact), "250ns");
  EXPECT_EQ(fragd::format_duration(500'000'000, fragd::DurationStyle::Exact), "500ms");
  EXPECT_EQ(fragd::format_duration(1'500'000'000, fragd::DurationStyle::Exact), "1500ms");
  EXPECT_EQ(fragd::format_duration(10'000'000'000, fragd::DurationStyle::Exact), "10s");
  EXPECT_EQ(fragd::format_duration(600'000'000'000, fragd::DurationStyle::Exact), "10m");
  EXPECT_EQ(fragd::format_duration(86400'000'000'000, fragd::DurationStyle::Exact), "24h");
}
