// SPDX-License-Identifier: Apache-2.0
// The YAML readers of the config file (policy/values.h).
#include "policy/values.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "base/format.h"
#include "policy/config.h"

namespace fragd::values {

namespace {

// MAX_NUMNODES is at most 1 << 10.
constexpr uint64_t kMaxPolicyNode = 1023;

// A quoted scalar ('40', "true") is a string in YAML, not a number or a boolean.
bool quoted(const YAML::Node& n) { return n.Tag() == "!"; }

}  // namespace

SourceMark mark_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {};
  return SourceMark{m.line + 1, m.column + 1};
}

std::string where(const std::string& file, const YAML::Node& n) {
  const SourceMark m = mark_of(n);
  if (m.line == 0) return file;
  return file + ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
}

Error bad(const std::string& file, const YAML::Node& n, const std::string& key, const std::string& what) {
  return make_error(where(file, n) + ": key '" + key + "': " + what, EINVAL);
}

Result<void> check_keys(const std::string& file, const YAML::Node& map, const std::string& prefix,
                        const std::set<std::string>& known, const std::set<std::string>& may_be_empty) {
  std::map<std::string, SourceMark> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) return bad(file, kv.first, prefix + "?", "a key must be a plain name");
    const std::string k = kv.first.Scalar();
    if (!known.count(k)) {
      std::string list;
      for (const auto& s : known) list += (list.empty() ? "" : ", ") + s;
      return bad(file, kv.first, prefix + k, "unknown key (known keys here: " + list + ")");
    }
    const SourceMark m = mark_of(kv.first);
    if (auto [it, fresh] = seen.emplace(k, m); !fresh)
      return bad(file, kv.first, prefix + k,
                 "given twice (first at line " + std::to_string(it->second.line) + "); keep one");
    // An empty value (`key:` with nothing after it) reads as null; its mark
    // points past the key, so the message uses the key's position.
    if (kv.second.IsNull() && !may_be_empty.count(k))
      return bad(file, kv.first, prefix + k, "has no value; write a value or remove the key for its default");
  }
  return {};
}

Result<void> expect_section(const std::string& file, const YAML::Node& n, const std::string& key,
                            const std::string& what) {
  if (n.IsNull() || n.IsMap()) return {};
  return bad(file, n, key, "expected a map (" + what + ")");
}

Result<std::string> scalar(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (n.IsNull()) return bad(file, n, key, "has no value; write a value or remove the key for its default");
  if (!n.IsScalar()) return bad(file, n, key, "expected a single value, not a list or map");
  return n.Scalar();
}

Result<uint64_t> integer(const std::string& file, const YAML::Node& n, const std::string& key, uint64_t lo,
                         uint64_t hi) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  const std::string& t = *s;
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (quoted(n)) return bad(file, n, key, "expected an integer, got the string '" + t + "'; remove the quotes");
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    return bad(file, n, key, "value " + t + " is out of range " + range);
  if (ec != std::errc() || p != t.data() + t.size()) {
    int64_t neg = 0;
    auto [q, ec2] = std::from_chars(t.data(), t.data() + t.size(), neg);
    if (ec2 == std::errc() && q == t.data() + t.size() && neg < 0)
      return bad(file, n, key, "value " + t + " is out of range " + range);
    return bad(file, n, key, "expected an integer, got '" + t + "'");
  }
  if (v < lo || v > hi) return bad(file, n, key, "value " + t + " is out of range " + range);
  return v;
}

Result<double> number(const std::string& file, const YAML::Node& n, const std::string& key, double lo,
                      double hi) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  const std::string& t = *s;
  if (quoted(n)) return bad(file, n, key, "expected a number, got the string '" + t + "'; remove the quotes");
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v))
    return bad(file, n, key, "expected a number, got '" + t + "'");
  if (v < lo || v > hi) {
    std::ostringstream r;
    r << "value " << t << " is out of range " << lo << ".." << hi;
    return bad(file, n, key, r.str());
  }
  return v;
}

Result<bool> boolean(const std::string& file, const YAML::Node& n, const std::string& key) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  const std::string& t = *s;
  if (quoted(n))
    return bad(file, n, key, "expected true or false, got the string '" + t + "'; remove the quotes");
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  std::string lower;
  for (char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"yes", "no", "on", "off", "y", "n"})
    if (lower == word)
      return bad(file, n, key,
                 "'" + t + "' is ambiguous (a boolean in YAML 1.1, a string in YAML 1.2); write true or false");
  return bad(file, n, key, "expected true or false, got '" + t + "'");
}

Result<uint64_t> duration(const std::string& file, const YAML::Node& n, const std::string& key,
                          uint64_t lo_ns, uint64_t hi_ns) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  auto d = parse_duration_ns(*s);
  if (!d) return bad(file, n, key, d.error().message);
  if (*d < lo_ns || *d > hi_ns)
    return bad(file, n, key,
               "duration '" + *s + "' is out of range " + format_duration(lo_ns, DurationStyle::Exact) + ".." + format_duration(hi_ns, DurationStyle::Exact));
  return *d;
}

namespace {

// A scalar read with `parse`; its error is the key's.
Result<uint64_t> parsed(const std::string& file, const YAML::Node& n, const std::string& key,
                        Result<uint64_t> (*parse)(const std::string&)) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  auto v = parse(*s);
  if (!v) return bad(file, n, key, v.error().message);
  return *v;
}

}  // namespace

Result<uint64_t> size_kib(const std::string& file, const YAML::Node& n, const std::string& key) {
  return parsed(file, n, key, parse_size_kib);
}

Result<uint64_t> page_size_kib(const std::string& file, const YAML::Node& n, const std::string& key) {
  return parsed(file, n, key, parse_page_size_kib);
}

// `all`, or a node number 0..1023.
Result<NodeSet> node_scalar(const std::string& file, const YAML::Node& n, const std::string& key) {
  NodeSet s;
  s.mark = mark_of(n);
  if (n.IsScalar() && n.Scalar() == "all") return s;
  if (n.IsScalar()) {
    uint64_t v = 0;
    const std::string& t = n.Scalar();
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || n.Tag() == "!")
      return bad(file, n, key, "expected all or a node number (0, 1, ...), got '" + t + "'");
  }
  auto v = integer(file, n, key, 0, kMaxPolicyNode);
  if (!v) return v.error();
  s.all = false;
  s.nodes = {static_cast<int>(*v)};
  s.marks = {s.mark};
  return s;
}

// `all`, or a list of node numbers.
Result<NodeSet> node_list(const std::string& file, const YAML::Node& n, const std::string& key) {
  NodeSet s;
  s.mark = mark_of(n);
  if (n.IsScalar() && n.Scalar() == "all") return s;
  if (!n.IsSequence())
    return bad(file, n, key, "expected all or a list of node numbers like [0, 1]");
  if (n.size() == 0)
    return bad(file, n, key,
               "the list is empty, so no node would ever be compacted; write all, list nodes, or set "
               "compaction.score.enabled and compaction.demand.enabled to false");
  s.all = false;
  std::map<int, SourceMark> seen;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string k = key + "[" + std::to_string(i) + "]";
    auto v = integer(file, n[i], k, 0, kMaxPolicyNode);
    if (!v) return v.error();
    const int node = static_cast<int>(*v);
    if (auto [it, fresh] = seen.emplace(node, mark_of(n[i])); !fresh)
      return bad(file, n[i], k,
                 "node " + std::to_string(node) + " is listed twice (first at line " +
                     std::to_string(it->second.line) + ":" + std::to_string(it->second.column) + "); keep one");
  }
  for (const auto& [node, m] : seen) {
    s.nodes.push_back(node);
    s.marks.push_back(m);
  }
  return s;
}

Result<std::vector<unsigned>> order_list(const std::string& file, const YAML::Node& n, const std::string& key,
                                         uint64_t lo, uint64_t hi) {
  if (!n.IsSequence()) return bad(file, n, key, "expected a list of orders like [1, 4, 9]");
  if (n.size() == 0)
    return bad(file, n, key, "the list is empty; list at least one order (" + std::to_string(lo) + ".." +
                                 std::to_string(hi) + "), e.g. [9]");
  std::vector<unsigned> out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string k = key + "[" + std::to_string(i) + "]";
    auto v = integer(file, n[i], k, lo, hi);
    if (!v) return v.error();
    if (!out.empty() && *v <= out.back())
      return bad(file, n[i], k,
                 "order " + std::to_string(*v) + " does not come after " + std::to_string(out.back()) +
                     "; list each order once, in increasing order");
    out.push_back(static_cast<unsigned>(*v));
  }
  return out;
}

Result<std::vector<std::string>> word_list(const std::string& file, const YAML::Node& n, const std::string& key,
                                           const std::vector<std::string_view>& words) {
  std::string known;
  for (auto w : words) known += (known.empty() ? "" : ", ") + std::string(w);
  if (!n.IsSequence()) return bad(file, n, key, "expected a list of words from " + known + " (or [] for none)");
  std::vector<std::string> out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string k = key + "[" + std::to_string(i) + "]";
    auto w = scalar(file, n[i], k);
    if (!w) return w.error();
    if (std::find(words.begin(), words.end(), *w) == words.end())
      return bad(file, n[i], k, "'" + *w + "' is not one of " + known);
    if (std::find(out.begin(), out.end(), *w) != out.end())
      return bad(file, n[i], k, "'" + *w + "' is listed twice; keep one");
    out.push_back(*w);
  }
  return out;
}

}  // namespace fragd::values
