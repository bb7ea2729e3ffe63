// SPDX-License-Identifier: Apache-2.0
// The YAML binder (policy/binder.h): the key declarations drive every check
// a single key needs; rules between keys run after their section.
#include "policy/binder.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <type_traits>

#include "base/format.h"
#include "policy/values.h"

namespace fragd {

using namespace values;

namespace {

bool may_be_empty(KeyType t) { return t == KeyType::Section || t == KeyType::Pools || t == KeyType::Words; }

std::string join(std::vector<std::string> names, bool sorted) {
  if (sorted) std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Reads a key's value from a map entry, or nothing when the map lacks it.
YAML::Node entry(const YAML::Node& map, const Key& k) { return map[std::string(key_name(k))]; }

// The hugepage pools: a list of maps of the keys below "<path>[i]".
Result<KeyValue> read_pools(const Key& k, const std::string& file, const YAML::Node& v) {
  const std::string key(k.path);
  if (!v.IsSequence())
    return bad(file, v, key, "expected a list of {size, node, count} entries (or [] for none)");
  const std::vector<const Key*> fields = keys_below(key + "[i]");
  std::set<std::string> known;
  for (const Key* f : fields) known.emplace(key_name(*f));
  auto field = [&](std::string_view name) -> const Key& {
    return **std::find_if(fields.begin(), fields.end(), [&](const Key* f) { return key_name(*f) == name; });
  };
  std::vector<PoolTarget> pools;
  for (size_t i = 0; i < v.size(); ++i) {
    const YAML::Node e = v[i];
    const std::string k = key + "[" + std::to_string(i) + "]";
    if (!e.IsMap()) return bad(file, e, k, "expected a map like {size: 2MB, node: all, count: 512}");
    if (auto r = check_keys(file, e, k + ".", known); !r) return r.error();
    PoolTarget t;
    t.mark = mark_of(e);
    for (const Key* f : fields)
      if (f->required && !entry(e, *f))
        return bad(file, e, k + "." + std::string(key_name(*f)),
                   "missing; a pool needs size and count, e.g. {size: 2MB, node: all, count: 512}");
    auto size = read_key(field("size"), k + ".size", file, e["size"]);
    if (!size) return size.error();
    t.size_kib = std::get<uint64_t>(*size);
    t.size_mark = mark_of(e["size"]);
    if (auto nv = e["node"]) {
      auto ns = read_key(field("node"), k + ".node", file, nv);
      if (!ns) return ns.error();
      t.node = std::get<NodeSet>(*ns);
    } else {
      t.node.mark = t.mark;
    }
    auto count = read_key(field("count"), k + ".count", file, e["count"]);
    if (!count) return count.error();
    t.count = std::get<uint64_t>(*count);
    t.count_mark = mark_of(e["count"]);
    for (size_t j = 0; j < pools.size(); ++j) {
      const PoolTarget& o = pools[j];
      if (o.size_kib != t.size_kib) continue;
      const std::string other = key + "[" + std::to_string(j) + "] at line " + std::to_string(o.mark.line);
      const std::string sz = format_size_kib(t.size_kib, SizeStyle::Config);
      if (o.node.all && t.node.all)
        return bad(file, e, k, "a second pool of " + sz + " pages for all nodes; " + other + " already sets it; keep one");
      if (!o.node.all && !t.node.all && o.node.nodes == t.node.nodes)
        return bad(file, e, k, "a second pool of " + sz + " pages on node " + std::to_string(t.node.nodes[0]) + "; " +
                                   other + " already sets it; keep one");
      if (o.node.all != t.node.all)
        return bad(file, e, k,
                   "pools of " + sz + " pages for all nodes and for node " +
                       std::to_string(o.node.all ? t.node.nodes[0] : o.node.nodes[0]) + " (with " + other +
                       ") would fight over the same pages (the global pool spans every node); use either one pool for "
                       "all nodes or one per node");
    }
    pools.push_back(std::move(t));
  }
  return KeyValue{std::move(pools)};
}

// A section: its own keys first, then the sections below it, then its rule.
Result<void> bind_section(const Key& section, const std::string& file, const YAML::Node& n, Config& c) {
  const std::vector<const Key*> below = keys_below(section.path);
  const std::string prefix = section.path.empty() ? "" : std::string(section.path) + ".";
  std::vector<std::string> names;
  std::set<std::string> known, empty_ok;
  for (const Key* k : below) {
    names.emplace_back(key_name(*k));
    known.emplace(key_name(*k));
    if (may_be_empty(k->type)) empty_ok.emplace(key_name(*k));
  }
  if (!section.path.empty()) {
    if (auto r = expect_section(file, n, std::string(section.path), join(names, section.sorted_hint)); !r) return r;
    if (n.IsNull()) return {};
  }
  if (auto r = check_keys(file, n, prefix, known, empty_ok); !r) return r;
  for (const Key* k : below) {
    const YAML::Node v = entry(n, *k);
    if (!v || k->type == KeyType::Section || v.IsNull()) continue;  // null: a list that may be empty
    auto value = read_key(*k, std::string(k->path), file, v);
    if (!value) return value.error();
    store_key(*k, *value, c);
    if (k->rule)
      if (auto r = k->rule(file, v, c); !r) return r;
  }
  for (const Key* k : below)
    if (const YAML::Node v = entry(n, *k); v && k->type == KeyType::Section)
      if (auto r = bind_section(*k, file, v, c); !r) return r;
  if (section.rule) return section.rule(file, n, c);
  return {};
}

template <class T>
T as(const KeyValue& v) {
  if constexpr (std::is_same_v<T, unsigned>) return static_cast<unsigned>(std::get<uint64_t>(v));
  else return std::get<T>(v);
}

}  // namespace

Result<KeyValue> read_key(const Key& k, const std::string& path, const std::string& file, const YAML::Node& n) {
  auto widen = [](auto r) -> Result<KeyValue> {
    if (!r) return r.error();
    return KeyValue{*r};
  };
  switch (k.type) {
    case KeyType::Bool: return widen(boolean(file, n, path));
    case KeyType::Integer: return widen(integer(file, n, path, k.lo, k.hi));
    case KeyType::Number: return widen(number(file, n, path, k.number_lo, k.number_hi));
    case KeyType::Duration: return widen(duration(file, n, path, k.lo, k.hi));
    case KeyType::Size: return widen(size_kib(file, n, path));
    case KeyType::PageSize: return widen(page_size_kib(file, n, path));
    case KeyType::Text: return widen(scalar(file, n, path));
    case KeyType::NodeList: return widen(node_list(file, n, path));
    case KeyType::Node: return widen(node_scalar(file, n, path));
    case KeyType::Pools: return read_pools(k, file, n);
    case KeyType::Orders: return widen(order_list(file, n, path, k.lo, k.hi));
    case KeyType::Words: return widen(word_list(file, n, path, k.choices));
    case KeyType::Choice: {
      auto s = scalar(file, n, path);
      if (!s) return s.error();
      if (std::find(k.choices.begin(), k.choices.end(), *s) == k.choices.end())
        return bad(file, n, path, "'" + *s + "' " + std::string(k.refusal));
      return KeyValue{*s};
    }
    case KeyType::Section: break;
  }
  return bad(file, n, path, "is a section, not a value");
}

void store_key(const Key& k, const KeyValue& v, Config& c) {
  std::visit(
      [&](auto field) {
        if constexpr (std::is_same_v<decltype(field), std::monostate>) {
          return;
        } else if constexpr (std::is_enum_v<std::remove_reference_t<decltype(field(c))>>) {
          // A choice's word stands for the enum value of its place in `choices`.
          using E = std::remove_reference_t<decltype(field(c))>;
          const auto it = std::find(k.choices.begin(), k.choices.end(), std::get<std::string>(v));
          field(c) = static_cast<E>(it - k.choices.begin());
        } else if constexpr (std::is_same_v<decltype(field), FieldOf<DetailSet>>) {
          DetailSet d;
          for (const auto& w : std::get<std::vector<std::string>>(v))
            d.add(static_cast<Detail>(std::find(k.choices.begin(), k.choices.end(), w) - k.choices.begin()));
          field(c) = d;
        } else {
          using T = std::remove_reference_t<decltype(field(c))>;
          field(c) = as<T>(v);
        }
      },
      k.field);
}

Result<void> bind_config(const std::string& file, const YAML::Node& root, Config& c) {
  return bind_section(*find_key(""), file, root, c);
}

}  // namespace fragd
