// SPDX-License-Identifier: Apache-2.0
#include "fragctl/page_ask.h"

#include <charconv>

#include "policy/policy.h"

namespace fragd::ctl {

fragd::Result<PageAsk> parse_page_ask(const std::vector<std::string>& words, unsigned order) {
  PageAsk a;
  const size_t want = order ? 1 : 2;
  if (words.size() != want)
    return fragd::make_error(order ? "with --order give COUNT alone (fragctl preflight --order 12 8)"
                                   : "give SIZE and COUNT (fragctl preflight 2MB 1024), or --order K and COUNT");
  if (order) {
    a.order = order;
  } else {
    auto size = fragd::parse_page_size_kib(words[0]);
    if (!size) return size.error();
    a.size_kib = *size;
  }
  const std::string& c = words.back();
  auto [ptr, ec] = std::from_chars(c.data(), c.data() + c.size(), a.count);
  if (c.empty() || ec != std::errc() || ptr != c.data() + c.size() || a.count == 0)
    return fragd::make_error("COUNT '" + c + "' is not a number of pages (a decimal integer >= 1)");
  return a;
}

}  // namespace fragd::ctl
