// SPDX-License-Identifier: Apache-2.0
// Reading the config file: YAML text -> the binder (policy/binder.h) -> Config.
#include "policy/config.h"

#include "policy/binder.h"
#include "policy/values.h"

#include <arpa/inet.h>
#include <netinet/in.h>

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
  const auto refuse = [&](const std::string& why) {
    return make_error("listen address '" + text + "' " + why +
                          "; write IPV4-ADDRESS:PORT, such as 127.0.0.1:9717",
                      EINVAL);
  };
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) return refuse("opens an IPv6 address in brackets and does not close them");
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return refuse("has an IPv6 address in brackets without ':PORT' right after them");
  }
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return refuse("has no port");
  if (colon == 0) return refuse("has no host");
  const std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  unsigned v = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535)
    return refuse("has no valid port 1..65535");
  unsigned char addr[sizeof(in6_addr)];
  if (host.front() == '[' || host.back() == ']' || host.find(':') != std::string::npos) {
    if (host.size() < 2 || host.front() != '[' || host.back() != ']')
      return refuse("names an IPv6 address without its brackets: write the IPv6 address in brackets before the port");
    if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), addr) != 1)
      return refuse("has '" + host + "', which is not an IPv6 address");
    // Debian's civetweb, fragd's HTTP server, is built without IPv6 (mg_check_feature(8) is 0):
    // refused here rather than at start.
    return refuse("is an IPv6 address: fragd's HTTP server (Debian's civetweb) serves IPv4 only");
  }
  if (inet_pton(AF_INET, host.c_str(), addr) != 1)
    return refuse("has '" + host + "', which is not an IPv4 address (dotted, such as 127.0.0.1; host names are "
                  "not looked up)");
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

void keep_command_line(const Config& running, Config& next) {
  next.source = running.source;
  next.proc_root = running.proc_root;
  next.sys_root = running.sys_root;
  next.kallsyms_path = running.kallsyms_path;
  next.listen_flag = running.listen_flag;
  next.socket_flag = running.socket_flag;
  if (!next.listen_flag.empty()) next.listen = next.listen_flag;
  if (!next.socket_flag.empty()) next.socket = next.socket_flag;
}

}  // namespace fragd
