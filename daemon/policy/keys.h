// SPDX-License-Identifier: Apache-2.0
// Every key of the config file, declared once: its path, type, range, default,
// unit, the Config field it sets and a one-line doc. The binder
// (policy/binder.h) reads the YAML with these declarations, and docs/configuration.md's key
// tables are printed from them (key_table). What involves several keys (low <
// high, the demand trigger's rules) is a rule run after its section is bound.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.h"
#include "policy/config.h"

namespace YAML {
class Node;
}

namespace fragd {

enum class KeyType {
  Section,   // a map of the keys below it; empty means all their defaults
  Bool,      // true or false
  Integer,   // a plain decimal integer in lo..hi
  Number,    // a plain finite number in number_lo..number_hi
  Duration,  // 1s, 500ms, ...: nanoseconds in lo..hi
  Size,      // 1GiB, 512MiB, ...: KiB
  PageSize,  // 2MB, 1GB: a power-of-two size in KiB
  Choice,    // one of `choices`
  Text,      // a string; its rule checks it
  NodeList,  // all, or a list of node numbers
  Node,      // all, or one node number
  Pools,     // a list of hugepage pool targets, each a map of the keys below "<path>[i]"
  Orders,    // a list of integers in lo..hi, each above the one before
  Words,     // a list of words from `choices`, none twice ([] for none)
};

// The table of docs/configuration.md a key is listed in.
enum class KeyTable { None, Config, Policy };

// What a reload (SIGHUP, fragctl reload) does with a key's new value: applies it at once, or
// keeps the running value and names the key in its reply ("changed but needing a restart").
enum class Reload { Live, Restart };

// A value as read, before it is stored.
using KeyValue = std::variant<bool, uint64_t, double, std::string, NodeSet, std::vector<PoolTarget>,
                              std::vector<unsigned>, std::vector<std::string>>;

// The Config field a key sets: FIELD(policy.dry_run).
template <class T>
using FieldOf = T& (*)(Config&);
using KeyField = std::variant<std::monostate, FieldOf<bool>, FieldOf<unsigned>, FieldOf<uint64_t>, FieldOf<double>,
                              FieldOf<std::string>, FieldOf<NodeSet>, FieldOf<CompactMethod>,
                              FieldOf<std::vector<PoolTarget>>, FieldOf<std::vector<unsigned>>,
                              FieldOf<BucketLayout>, FieldOf<DetailSet>>;
#define FIELD(member) (+[](Config& c) -> auto& { return c.member; })

// Run after a key's value is stored (`n` is the value) or after a section is
// bound (`n` is the section; the whole file for ""): checks that need more than
// the type and range, and fields derived from the value (policy.act, marks).
using KeyRule = Result<void> (*)(const std::string& file, const YAML::Node& n, Config& c);

struct Key {
  std::string_view path{};  // "compaction.score.high"; a list's entries "hugepages.pools[i].size"; "" is the file
  KeyType type = KeyType::Section;
  KeyTable table = KeyTable::None;
  uint64_t lo = 0, hi = 0;                // Integer; Duration in ns
  double number_lo = 0, number_hi = 0;    // Number
  std::vector<std::string_view> choices{};  // Choice, Words: the words, in the order of the enum a field holds
  std::string_view refusal{};             // Choice: the message is "'WORD' " + refusal
  std::string_view def{};                 // a list entry's default, as written; a key with a field has the
                                          // default its Config field is initialised with (default_text)
  bool required = false;                  // a list entry's key that must be given
  std::string_view unit{};                // the scale, where the number alone does not say it
  KeyField field{};
  KeyRule rule = nullptr;
  bool sorted_hint = false;  // Section: "expected a map (...)" lists its keys sorted, not as declared
  Reload reload = Reload::Live;
  std::string_view doc{};    // the tables' "meaning"
};

// Every key in declaration order, each section before its keys: the order of the key tables.
const std::vector<Key>& config_keys();
const Key* find_key(std::string_view path);
// The keys directly below `section` ("" for the top level), in declaration order.
std::vector<const Key*> keys_below(std::string_view section);
// The name of `k` within its section: "high" for "compaction.score.high".
std::string_view key_name(const Key& k);

// A key's default as the file would spell it ("10s", "1GiB", "[1, 4, 9]", "all"): its field's
// value in a default Config, or `def` for a key with no field; "" = none.
std::string default_text(const Key& k);

// A reload: for every Reload::Restart key whose value in `next` differs from `running`'s, puts
// the running value back into `next` and returns the key's path, in declaration order. Every
// other key's new value stays in `next`, to be applied.
std::vector<std::string> keep_restart_keys(Config running, Config& next);

// The table of `table`'s keys (markdown, a line per key).
std::string key_table(KeyTable table);
// `doc` with the text between each table's markers replaced by key_table();
// an error names a marker that is missing.
Result<std::string> with_key_tables(const std::string& doc);
// What regenerates the tables, for messages.
inline constexpr const char* kRegenerateKeyTables = "build/config_keys --update docs/configuration.md";

}  // namespace fragd
