// SPDX-License-Identifier: Apache-2.0
// The contract of fragctl's --json output (tests/contract/fragctl-json.txt) for unit tests:
// expect_contract(command, printed) checks the key paths of what fragctl prints for
// `command` against the list, by the rules of tests/contract/keypaths.py.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace contract {

using nlohmann::json;

inline const std::string kSource = std::string(FRAGD_FIXTURES_DIR) + "/..";

inline json answer(const std::string& name) {
  std::ifstream f(std::string(FRAGD_FIXTURES_DIR) + "/answers/" + name);
  EXPECT_TRUE(f) << name;
  return json::parse(f);
}

struct Listed {
  std::set<std::string> all, optional, maps;
};

inline Listed listed(const std::string& command) {
  std::ifstream f(kSource + "/contract/fragctl-json.txt");
  EXPECT_TRUE(f) << "tests/contract/fragctl-json.txt";
  Listed l;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string cmd, path, mark;
    if (!(in >> cmd >> path) || cmd[0] == '#' || cmd != command) continue;
    l.all.insert(path);
    if (in >> mark && mark == "optional") l.optional.insert(path);
    if (path.size() > 2 && path.compare(path.size() - 2, 2, "{}") == 0) l.maps.insert(path);
  }
  return l;
}

inline void walk(const json& v, const std::string& p, const std::set<std::string>& maps, std::set<std::string>& out) {
  if (v.is_object()) {
    if (maps.count(p + "{}")) {
      out.insert(p + "{}");
      for (const auto& x : v) walk(x, p + "{}", maps, out);
      return;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      out.insert(p + "." + it.key());
      walk(it.value(), p + "." + it.key(), maps, out);
    }
  } else if (v.is_array()) {
    for (const auto& x : v) {
      out.insert(p + "[]");
      walk(x, p + "[]", maps, out);
    }
  }
}

// Every path printed is listed, and every listed path not marked optional is printed.
inline void expect_contract(const std::string& command, const std::vector<json>& printed) {
  const Listed l = listed(command);
  ASSERT_FALSE(l.all.empty()) << "the list names no path of " << command;
  std::set<std::string> got;
  for (const auto& doc : printed) walk(doc, "", l.maps, got);
  for (const auto& p : got) {
    EXPECT_TRUE(l.all.count(p)) << command << " " << p << ": printed, but not in the list";
  }
  for (const auto& p : l.all) {
    if (l.optional.count(p)) continue;
    EXPECT_TRUE(got.count(p)) << command << " " << p << ": in the list, but not printed";
  }
}

}  // namespace contract
