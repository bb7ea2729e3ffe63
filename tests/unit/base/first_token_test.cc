// SPDX-License-Identifier: Apache-2.0
// first_token: tokenize's first token, without lexing the rest of the line.
#include <gtest/gtest.h>

#include <string_view>

#include "base/text.h"

namespace {

TEST(FirstToken, IsTokenizesFirst) {
  for (std::string_view s : {"Node 0, zone Normal", "  \tpages free 12", ",cpu: 1", "word", "  ", "", ",,"}) {
    for (bool commas : {false, true}) {
      const auto toks = fragd::tokenize(s, commas);
      EXPECT_EQ(fragd::first_token(s, commas), toks.empty() ? std::string_view() : toks.front())
          << "'" << s << "' commas " << commas;
    }
  }
  EXPECT_EQ(fragd::first_token("Node, 0", false), "Node,");
  EXPECT_EQ(fragd::first_token("Node, 0", true), "Node");
}

}  // namespace
