// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/trace.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/hist.h"
#include "protocol/wire.h"

namespace fragd {

std::string trace_header() { return strf("%-8s %-16s %-7s %-5s %-11s %s", "TIME", "COMM", "PID", "ORDER", "RESULT", "MS"); }

Result<std::string> format_trace_line(const nlohmann::json& ev, const std::tm& local) {
  StallEvent e;
  try {
    from_json(ev, e);
  } catch (const Malformed& m) {
    return make_error("malformed trace event from fragd: " + m.what);
  } catch (const nlohmann::json::exception& x) {
    return make_error(std::string("malformed trace event from fragd: ") + x.what());
  }
  char tbuf[16];
  std::strftime(tbuf, sizeof tbuf, "%H:%M:%S", &local);
  return strf("%-8s %-16s %-7llu %-5llu %-11s %.3f", tbuf, printable(e.comm).c_str(),
              static_cast<unsigned long long>(e.pid), static_cast<unsigned long long>(e.order),
              printable(e.result).c_str(), static_cast<double>(e.duration_ns) / 1e6);
}

}  // namespace fragd
