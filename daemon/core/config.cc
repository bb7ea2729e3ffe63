#include "core/config.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace fragd {
namespace {

std::string where(const std::string& path, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return path;
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

Error bad(const std::string& path, const YAML::Node& n, const std::string& key, const std::string& what) {
  return make_error(where(path, n) + ": key '" + key + "': " + what, EINVAL);
}

Result<void> check_keys(const std::string& path, const YAML::Node& map, const std::string& prefix,
                        const std::set<std::string>& known) {
  for (const auto& kv : map) {
    const std::string k = kv.first.as<std::string>();
    if (known.count(k)) continue;
    std::string list;
    for (const auto& s : known) list += (list.empty() ? "" : ", ") + s;
    return bad(path, kv.first, prefix + k, "unknown key (known keys here: " + list + ")");
  }
  return {};
}

Result<std::string> scalar(const std::string& path, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) return bad(path, n, key, "expected a single value, not a list or map");
  return n.Scalar();
}

Result<uint64_t> integer(const std::string& path, const YAML::Node& n, const std::string& key,
                         uint64_t lo, uint64_t hi) {
  auto s = scalar(path, n, key);
  if (!s) return s.error();
  uint64_t v = 0;
  const std::string& t = *s;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size())
    return bad(path, n, key, "expected an integer, got '" + t + "'");
  if (v < lo || v > hi)
    return bad(path, n, key, "value " + t + " is out of range " + std::to_string(lo) + ".." +
                                 std::to_string(hi));
  return v;
}

Result<uint64_t> duration(const std::string& path, const YAML::Node& n, const std::string& key,
                          uint64_t lo_ns, uint64_t hi_ns) {
  auto s = scalar(path, n, key);
  if (!s) return s.error();
  auto d = parse_duration_ns(*s);
  if (!d) return bad(path, n, key, d.error().message);
  if (*d < lo_ns || *d > hi_ns)
    return bad(path, n, key, "duration '" + *s + "' is out of range (" + std::to_string(lo_ns / 1e6) +
                                 " ms .. " + std::to_string(hi_ns / 1e9) + " s)");
  return *d;
}

}  // namespace

Result<uint64_t> parse_duration_ns(const std::string& text) {
  double v = 0;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p == b || v < 0)
    return make_error("expected a duration like 1s, 500ms, 250us, got '" + text + "'", EINVAL);
  const std::string unit(p, e);
  double mult = 0;
  if (unit.empty() || unit == "s") mult = 1e9;
  else if (unit == "ms") mult = 1e6;
  else if (unit == "us") mult = 1e3;
  else if (unit == "ns") mult = 1;
  else if (unit == "m") mult = 60e9;
  else if (unit == "h") mult = 3600e9;
  else
    return make_error("unknown duration unit '" + unit + "' in '" + text + "' (use ns, us, ms, s, m or h)",
                      EINVAL);
  const double ns = v * mult;
  if (ns > 1e18) return make_error("duration '" + text + "' is too large", EINVAL);
  return static_cast<uint64_t>(ns);
}

Result<void> check_listen_address(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error("listen address '" + text + "' is not ADDR:PORT (e.g. 127.0.0.1:9717)", EINVAL);
  const std::string port = text.substr(colon + 1);
  unsigned v = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535)
    return make_error("listen address '" + text + "' has no valid port 1..65535", EINVAL);
  return {};
}

Result<Config> parse_config(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return make_error(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                          std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg,
                      EINVAL);
  }
  Config c;
  c.source = path;
  if (root.IsNull()) return c;  // an empty file means all defaults
  if (!root.IsMap())
    return make_error(where(path, root) + ": the top level must be a map of keys (mode, listen, ...)",
                      EINVAL);

  try {
    if (auto r = check_keys(path, root, "", {"mode", "listen", "socket", "tick_interval", "pagetypeinfo_interval", "bpf"}); !r)
      return r.error();
    if (auto n = root["mode"]) {
      auto s = scalar(path, n, "mode");
      if (!s) return s.error();
      if (*s != "observe")
        return bad(path, n, "mode", "'" + *s + "' is not supported by this version: use 'observe'");
      c.mode = *s;
    }
    if (auto n = root["listen"]) {
      auto s = scalar(path, n, "listen");
      if (!s) return s.error();
      if (auto r = check_listen_address(*s); !r) return bad(path, n, "listen", r.error().message);
      c.listen = *s;
    }
    if (auto n = root["socket"]) {
      auto s = scalar(path, n, "socket");
      if (!s) return s.error();
      if (s->empty() || (*s)[0] != '/') return bad(path, n, "socket", "expected an absolute path");
      if (s->size() >= 108) return bad(path, n, "socket", "path is longer than a Unix socket allows (107)");
      c.socket = *s;
    }
    if (auto n = root["tick_interval"]) {
      auto d = duration(path, n, "tick_interval", 100'000'000ULL, 3600'000'000'000ULL);
      if (!d) return d.error();
      c.tick_ns = *d;
    }
    if (auto n = root["pagetypeinfo_interval"]) {
      auto d = duration(path, n, "pagetypeinfo_interval", 1'000'000'000ULL, 86400'000'000'000ULL);
      if (!d) return d.error();
      c.pagetypeinfo_ns = *d;
    }
    if (auto b = root["bpf"]) {
      if (!b.IsMap()) return bad(path, b, "bpf", "expected a map (min_order, slow_stall_threshold)");
      if (auto r = check_keys(path, b, "bpf.", {"min_order", "slow_stall_threshold"}); !r) return r.error();
      if (auto n = b["min_order"]) {
        auto v = integer(path, n, "bpf.min_order", 1, 10);
        if (!v) return v.error();
        c.min_order = static_cast<uint32_t>(*v);
      }
      if (auto n = b["slow_stall_threshold"]) {
        auto d = duration(path, n, "bpf.slow_stall_threshold", 1'000ULL, 60'000'000'000ULL);
        if (!d) return d.error();
        c.slow_stall_ns = *d;
      }
    }
  } catch (const YAML::Exception& e) {
    return make_error(path + ": " + e.what(), EINVAL);
  }
  return c;
}

Result<Config> load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return sys_error("cannot read config file " + path + " (pass --config FILE)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path);
}

}  // namespace fragd
