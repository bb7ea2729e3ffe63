// Reading the config file: YAML text -> the binder (policy/binder.h) -> Config.
#include "policy/config.h"

#include "policy/binder.h"
#include "policy/values.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace fragd {
using values::where;

Result<uint64_t> parse_duration_ns(const std::string& text) {
  double v = 0;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p == b || v < 0 || !std::isfinite(v))
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
  return static_cast<uint64_t>(std::llround(ns));
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
    if (auto r = bind_config(path, root, c); !r) return r.error();
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

Result<Config> load_and_check_config(const std::string& path, const std::string& proc_root,
                                     const std::string& sys_root) {
  auto c = load_config(path);
  if (!c) return c.error();
  auto facts = read_machine_facts(proc_root, sys_root);
  if (!facts)
    return make_error(path + ": cannot check the policy against this machine: " + facts.error().message,
                      facts.error().err);
  if (auto r = check_policy_on(c->policy, *facts, c->source); !r) return r.error();
  return c;
}

}  // namespace fragd
