// SPDX-License-Identifier: Apache-2.0
// The key declarations and the binder that reads the file with them.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <type_traits>

#include "base/format.h"
#include "policy/binder.h"
#include "policy/config.h"
#include "policy/keys.h"

namespace {

using namespace fragd;

// "a.b.c" and "v" -> "a:\n  b:\n    c: v\n"
std::string yaml_at(std::string_view path, const std::string& value) {
  std::string out, indent;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string_view::npos; start = dot + 1) {
    out += indent + std::string(path.substr(start, dot - start)) + ":\n";
    indent += "  ";
  }
  return out + indent + std::string(path.substr(start)) + ": " + value + "\n";
}

std::string error_of(const std::string& text) {
  auto c = parse_config(text, "f.yaml");
  return c ? "(accepted)" : c.error().message;
}

TEST(Keys, EachPathOnceAndEveryValueKeyDocumented) {
  std::set<std::string_view> seen;
  for (const Key& k : config_keys()) {
    EXPECT_TRUE(seen.insert(k.path).second) << k.path << " declared twice";
    if (k.type == KeyType::Section) continue;
    EXPECT_NE(k.table, KeyTable::None) << k.path;
    EXPECT_FALSE(k.doc.empty()) << k.path;
    const bool list_entry = k.path.find("[i]") != std::string_view::npos;
    EXPECT_EQ(std::holds_alternative<std::monostate>(k.field), list_entry) << k.path << ": a field iff not a list entry";
  }
}

TEST(Binder, UnknownKeyListsTheDeclaredKeysOfItsSection) {
  for (std::string_view section : {"", "bpf", "compaction", "compaction.score", "hugepages"}) {
    std::vector<std::string> names;
    for (const Key* k : keys_below(section)) names.emplace_back(key_name(*k));
    std::sort(names.begin(), names.end());
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    const std::string path = section.empty() ? "bogus" : std::string(section) + ".bogus";
    EXPECT_NE(error_of(yaml_at(path, "1")).find("key '" + path + "': unknown key (known keys here: " + list + ")"),
              std::string::npos)
        << error_of(yaml_at(path, "1"));
  }
  EXPECT_NE(error_of("hugepages:\n  pools:\n    - {size: 2MB, count: 1, bogus: 1}\n")
                .find("key 'hugepages.pools[0].bogus': unknown key (known keys here: count, node, size)"),
            std::string::npos);
}

TEST(Binder, WrongTypeNamesTheExpectedOne) {
  EXPECT_EQ(error_of("compaction:\n  score:\n    high: x\n"),
            "f.yaml:3:11: key 'compaction.score.high': expected an integer, got 'x'");
  EXPECT_EQ(error_of("bpf:\n  track_pollution: 3\n"), "f.yaml:2:20: key 'bpf.track_pollution': expected true or false, got '3'");
  EXPECT_EQ(error_of("tick_interval: [1s]\n"),
            "f.yaml:1:16: key 'tick_interval': expected a single value, not a list or map");
  EXPECT_EQ(error_of("compaction:\n  method: fast\n"),
            "f.yaml:2:11: key 'compaction.method': 'fast' is not a method; use pool (make the blocks a goal "
            "misses), node (write nodeN/compact) or proactiveness (raise vm.compaction_proactiveness for a while)");
}

// Just above its declared range, every integer and duration key is refused with that range.
TEST(Binder, OutOfRangeFromTheDeclaration) {
  int checked = 0;
  for (const Key& k : config_keys()) {
    if ((k.type != KeyType::Integer && k.type != KeyType::Duration) || k.rule || k.path.find('[') != k.path.npos)
      continue;
    const std::string above = std::to_string(k.hi + 1) + (k.type == KeyType::Duration ? "ns" : "");
    const std::string err = error_of(yaml_at(k.path, above));
    const std::string range = k.type == KeyType::Integer
                                  ? std::to_string(k.lo) + ".." + std::to_string(k.hi)
                                  : format_duration(k.lo, DurationStyle::Exact) + ".." +
                                        format_duration(k.hi, DurationStyle::Exact);
    EXPECT_NE(err.find("key '" + std::string(k.path) + "': "), std::string::npos) << err;
    EXPECT_NE(err.find(above + (k.type == KeyType::Duration ? "' is" : " is") + " out of range " + range),
              std::string::npos)
        << err;
    ++checked;
  }
  EXPECT_GE(checked, 15);
  EXPECT_EQ(error_of("compaction:\n  score:\n    high: 101\n"),
            "f.yaml:3:11: key 'compaction.score.high': value 101 is out of range 0..100");
}

// The default as documented, read as the file would give it, is what a default Config holds:
// default_text spells every field's value so that the binder reads it back.
TEST(Keys, DefaultTextReadsBackToTheStructDefaults) {
  Config defaults;
  int checked = 0;
  for (const Key& k : config_keys()) {
    if (k.type == KeyType::Section || k.required) continue;
    const std::string def = default_text(k);
    if (def.empty()) {  // none: the field is empty
      std::visit([&](auto f) {
        if constexpr (std::is_same_v<decltype(f), FieldOf<std::string>>) EXPECT_TRUE(f(defaults).empty()) << k.path;
        else ADD_FAILURE() << k.path << ": no default, but not a string field";
      }, k.field);
      continue;
    }
    auto v = read_key(k, std::string(k.path), "default", YAML::Load(def));
    ASSERT_TRUE(v.ok()) << k.path << ": the default '" << def << "' does not read: " << v.error().message;
    if (std::holds_alternative<std::monostate>(k.field)) continue;
    Config c, d = defaults;
    store_key(k, *v, c);
    std::visit([&](auto f) {
      if constexpr (std::is_same_v<decltype(f), std::monostate>) {
      } else if constexpr (std::is_same_v<decltype(f), FieldOf<NodeSet>>) {
        EXPECT_EQ(f(c).all, f(d).all) << k.path;
        EXPECT_EQ(f(c).nodes, f(d).nodes) << k.path;
      } else if constexpr (std::is_same_v<decltype(f), FieldOf<std::vector<PoolTarget>>>) {
        EXPECT_EQ(f(c).size(), f(d).size()) << k.path;
      } else {
        EXPECT_EQ(f(c), f(d)) << k.path << ": default " << def;
      }
    }, k.field);
    ++checked;
  }
  EXPECT_GE(checked, 35);
}

TEST(Keys, DefaultTextSpellsEachTypeAsTheFileDoes) {
  EXPECT_EQ(default_text(*find_key("tick_interval")), "1s");
  EXPECT_EQ(default_text(*find_key("pagetypeinfo_interval")), "1m");
  EXPECT_EQ(default_text(*find_key("hugepages.guard")), "1GiB");
  EXPECT_EQ(default_text(*find_key("pageblocks.budget")), "0.1");
  EXPECT_EQ(default_text(*find_key("compaction.method")), "pool");
  EXPECT_EQ(default_text(*find_key("metrics.buckets")), "coarse");
  EXPECT_EQ(default_text(*find_key("metrics.orders")), "[1, 4, 9]");
  EXPECT_EQ(default_text(*find_key("metrics.detail")), "[]");
  EXPECT_EQ(default_text(*find_key("compaction.nodes")), "all");
  EXPECT_EQ(default_text(*find_key("hugepages.pools")), "[]");
  EXPECT_EQ(default_text(*find_key("hugepages.pools[i].node")), "all");  // a list entry's: declared
  EXPECT_EQ(default_text(*find_key("socket_group")), "");
}

Config parsed(const std::string& text) {
  auto c = parse_config(text, "f.yaml");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c ? *c : Config{};
}

// A reload keeps the running value of every key read at start and names it; any other key's
// new value is applied, whatever its section.
TEST(Keys, ReloadKeepsTheKeysReadAtStartAndAppliesTheRest) {
  const Config running = parsed("tick_interval: 2s\npageblocks: {interval: 30s, mode: full}\n");
  Config next = parsed(
      "tick_interval: 5s\npageblocks: {interval: 30s, mode: sample, budget: 0.5}\nforecast_window: 20m\n"
      "attribution: {top_cgroups: 7}\nmetrics: {orders: [2, 9]}\ncompaction: {score: {high: 70, low: 60}}\n");
  const std::vector<std::string> restart = keep_restart_keys(running, next);
  EXPECT_EQ(restart, (std::vector<std::string>{"tick_interval", "pageblocks.mode", "pageblocks.budget"}));
  EXPECT_EQ(next.tick_ns, 2'000'000'000ULL);
  EXPECT_EQ(next.scan_mode, "full");
  EXPECT_EQ(next.scan_budget_percent, running.scan_budget_percent);
  EXPECT_EQ(next.scan_ns, 30'000'000'000ULL);
  EXPECT_EQ(next.forecast_window_ns, 1'200'000'000'000ULL);
  EXPECT_EQ(next.top_cgroups, 7u);
  EXPECT_EQ(next.metrics.orders, (std::vector<unsigned>{2, 9}));
  EXPECT_EQ(next.policy.compaction.score.high, 70u);
}

// --listen and --socket win over the file at a reload as at start: not a change to name.
TEST(Keys, ReloadKeepsTheCommandLine) {
  Config running = parsed("listen: 127.0.0.1:9000\n");
  running.listen = running.listen_flag = "127.0.0.1:9100";
  running.socket = running.socket_flag = "/tmp/f.sock";
  running.proc_root = "/scratch/proc";
  running.source = "/etc/fragd/fragd.yaml";
  Config next = parsed("listen: 127.0.0.1:9000\ntick_interval: 3s\n");
  keep_command_line(running, next);
  EXPECT_EQ(next.listen, "127.0.0.1:9100");
  EXPECT_EQ(next.socket, "/tmp/f.sock");
  EXPECT_EQ(next.proc_root, "/scratch/proc");
  EXPECT_EQ(next.source, "/etc/fragd/fragd.yaml");
  EXPECT_EQ(keep_restart_keys(running, next), std::vector<std::string>{"tick_interval"});
}

// Every key read at start, changed alone, is named and kept; the same file again names none.
TEST(Keys, EveryKeyReadAtStartIsKeptByAReload) {
  const Config running;
  Config same = running;
  EXPECT_TRUE(keep_restart_keys(running, same).empty());
  int checked = 0;
  for (const Key& k : config_keys()) {
    if (k.reload != Reload::Restart) continue;
    Config next = running;
    std::visit([&](auto f) {
      if constexpr (std::is_same_v<decltype(f), std::monostate>) {
        ADD_FAILURE() << k.path << ": read at start, but sets no field";
      } else {
        using T = std::remove_reference_t<decltype(f(next))>;
        if constexpr (std::is_same_v<T, std::string>) f(next) += "x";
        else if constexpr (std::is_same_v<T, bool>) f(next) = !f(next);
        else if constexpr (std::is_arithmetic_v<T>) f(next) = f(next) + 1;
        else ADD_FAILURE() << k.path << ": read at start, but not a scalar or a string";
      }
    }, k.field);
    EXPECT_EQ(keep_restart_keys(running, next), std::vector<std::string>{std::string(k.path)});
    EXPECT_TRUE(keep_restart_keys(running, next).empty()) << k.path << ": the running value was not put back";
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

TEST(Keys, DocTablesAreTheDeclarations) {
  const std::string path = std::string(FRAGD_FIXTURES_DIR) + "/../../docs/configuration.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  auto want = with_key_tables(doc);
  ASSERT_TRUE(want.ok()) << want.error().message;
  if (*want != doc) {
    std::istringstream a(doc), b(*want);
    std::string la, lb;
    int line = 0;
    while (std::getline(a, la) && std::getline(b, lb) && ++line && la == lb) {
    }
    ADD_FAILURE() << "docs/configuration.md's key tables differ from the declarations in daemon/policy/keys.cc (first at line "
                  << line << ":\n  doc: " << la << "\n  wanted: " << lb << "\nregenerate them: "
                  << kRegenerateKeyTables;
  }
}

TEST(Keys, DocWithoutMarkersIsAnError) {
  auto r = with_key_tables("# fragd\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("<!-- keys:config begin"), std::string::npos) << r.error().message;
}

}  // namespace
