// SPDX-License-Identifier: Apache-2.0
// Minimal leveled logging to stderr (journald adds timestamps under systemd).
#pragma once

#include <string_view>

namespace fragd {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };

void set_log_level(LogLevel level);
void log(LogLevel level, std::string_view message);
inline void log_debug(std::string_view m) { log(LogLevel::Debug, m); }
inline void log_info(std::string_view m) { log(LogLevel::Info, m); }
inline void log_warn(std::string_view m) { log(LogLevel::Warn, m); }
inline void log_error(std::string_view m) { log(LogLevel::Error, m); }

}  // namespace fragd
