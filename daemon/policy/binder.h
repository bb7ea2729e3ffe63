// SPDX-License-Identifier: Apache-2.0
// The YAML binder: walks a config file with the key declarations
// (policy/keys.h) and sets the Config fields they name. Unknown keys, keys
// given twice or without a value, wrong types and values out of range are
// refused from the declarations; every error names file:line:column and the
// key path.
#pragma once

#include <string>

#include "base/result.h"
#include "policy/keys.h"

namespace YAML {
class Node;
}

namespace fragd {

// Binds the top-level map `root` of `file` into `c`, then runs every rule.
Result<void> bind_config(const std::string& file, const YAML::Node& root, Config& c);

// One key's value as its type reads it; `path` is the key path for messages
// ("hugepages.pools[0].size"). No rule runs.
Result<KeyValue> read_key(const Key& k, const std::string& path, const std::string& file, const YAML::Node& n);
// Sets the field `k` names to `v` (a value read_key gave for `k`).
void store_key(const Key& k, const KeyValue& v, Config& c);

}  // namespace fragd
