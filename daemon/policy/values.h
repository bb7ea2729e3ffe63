// SPDX-License-Identifier: Apache-2.0
// The YAML readers of the config file: one per kind of value. The binder
// (policy/binder.h) picks one by a key's declared type. `file` names the file
// in messages, `key` is the full key path ("hugepages.pools[1].size"); errors
// read "file:line:column: key 'K': what; fix".
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/policy.h"

namespace YAML {
class Node;
}

namespace fragd::values {

SourceMark mark_of(const YAML::Node& n);
std::string where(const std::string& file, const YAML::Node& n);
Error bad(const std::string& file, const YAML::Node& n, const std::string& key, const std::string& what);

// `map` must be a YAML map. Rejects a key not in `known` (listing them), a key
// given twice and a key without a value, except keys in `may_be_empty`
// (sections: an empty section means all its defaults).
Result<void> check_keys(const std::string& file, const YAML::Node& map, const std::string& prefix,
                        const std::set<std::string>& known, const std::set<std::string>& may_be_empty = {});
// `n` must be a map or empty (null); `what` lists its keys for the message.
Result<void> expect_section(const std::string& file, const YAML::Node& n, const std::string& key,
                            const std::string& what);

Result<std::string> scalar(const std::string& file, const YAML::Node& n, const std::string& key);
// A plain (unquoted) decimal integer in lo..hi.
Result<uint64_t> integer(const std::string& file, const YAML::Node& n, const std::string& key, uint64_t lo,
                         uint64_t hi);
// A plain (unquoted) finite number in lo..hi.
Result<double> number(const std::string& file, const YAML::Node& n, const std::string& key, double lo,
                      double hi);
// Plain true/false (also True/TRUE/False/FALSE). yes/no/on/off are refused: YAML
// 1.1 reads them as booleans, YAML 1.2 as strings.
Result<bool> boolean(const std::string& file, const YAML::Node& n, const std::string& key);
// parse_duration_ns, in lo_ns..hi_ns.
Result<uint64_t> duration(const std::string& file, const YAML::Node& n, const std::string& key,
                          uint64_t lo_ns, uint64_t hi_ns);
// parse_size_kib / parse_page_size_kib (policy/policy.h), in KiB.
Result<uint64_t> size_kib(const std::string& file, const YAML::Node& n, const std::string& key);
Result<uint64_t> page_size_kib(const std::string& file, const YAML::Node& n, const std::string& key);
// `all`, or a node number 0..1023.
Result<NodeSet> node_scalar(const std::string& file, const YAML::Node& n, const std::string& key);
// `all`, or a list of node numbers (not empty, none twice).
Result<NodeSet> node_list(const std::string& file, const YAML::Node& n, const std::string& key);
// A list of plain integers in lo..hi, not empty, each above the one before.
Result<std::vector<unsigned>> order_list(const std::string& file, const YAML::Node& n, const std::string& key,
                                         uint64_t lo, uint64_t hi);
// A list of words from `words`, none twice; [] is an empty list.
Result<std::vector<std::string>> word_list(const std::string& file, const YAML::Node& n, const std::string& key,
                                           const std::vector<std::string_view>& words);

}  // namespace fragd::values
