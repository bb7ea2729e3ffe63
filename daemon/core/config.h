// fragd's configuration file (YAML): parsed into plain structs, then validated.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace fragd {

struct Config {
  std::string mode = "observe";              // observe: watch and export, change nothing
  std::string listen = "127.0.0.1:9717";     // Prometheus /metrics
  std::string socket = "/run/fragd/fragd.sock";
  uint64_t tick_ns = 1'000'000'000;          // collector tick
  uint64_t pagetypeinfo_ns = 60'000'000'000; // /proc/pagetypeinfo is read this often (it stalls the allocator)
  uint32_t min_order = 1;                    // allocations below this order are not traced
  uint64_t slow_stall_ns = 10'000'000;       // stalls at least this long go to `fragctl trace`
  std::string source;                        // file it came from, for messages
};

// Parses and validates `path`. Every error names file:line:column and the key path.
Result<Config> load_config(const std::string& path);
// The same on text already read (path only used in messages).
Result<Config> parse_config(const std::string& text, const std::string& path);

// "1s", "500ms", "250us", "100ns", "2m", "1h", or a bare number of seconds.
Result<uint64_t> parse_duration_ns(const std::string& text);

// "ADDR:PORT" with a numeric port 1..65535; "[::1]:9717" accepted.
Result<void> check_listen_address(const std::string& text);

}  // namespace fragd
