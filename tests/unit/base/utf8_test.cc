// SPDX-License-Identifier: Apache-2.0
// Names made valid UTF-8 (base/text.h): what RFC 3629 allows passes unchanged, every byte
// that starts no well-formed sequence becomes \xnn; and a label value built from such a
// name (base/family.h) is UTF-8 in both expositions of /metrics.
#include <gtest/gtest.h>

#include <string>

#include "base/family.h"
#include "base/text.h"

namespace fragd {
namespace {

TEST(Utf8, WellFormedPassesUnchanged) {
  for (const std::string& s : {std::string(), std::string("/"), std::string("/kubepods.slice/pod-1.slice"),
                              std::string("caf\xc3\xa9"), std::string("\xe6\x97\xa5\xe6\x9c\xac"),
                              std::string("\xf0\x9f\x98\x80"), std::string("\xf4\x8f\xbf\xbf"),  // U+10FFFF
                              std::string("\xed\x9f\xbf"), std::string("\xee\x80\x80"),  // around the surrogates
                              std::string("\xc2\xa0")}) {  // U+00A0, the first after C1
    EXPECT_TRUE(is_utf8(s)) << s;
    EXPECT_EQ(utf8_escaped(s), s);
  }
}

TEST(Utf8, EveryByteOfABrokenSequenceIsEscaped) {
  const struct {
    std::string in, out;
  } cases[] = {
      {"/fragd-attr-c\xff\xfe", "/fragd-attr-c\\xff\\xfe"},
      {"\x80", "\\x80"},                                   // a continuation byte alone
      {"\xc0\xaf", "\\xc0\\xaf"},                          // overlong '/'
      {"\xc1\xbf", "\\xc1\\xbf"},                          // overlong
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},                 // overlong, 3 bytes
      {"\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"},        // overlong, 4 bytes
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                 // a surrogate (U+D800)
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},        // past U+10FFFF
      {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80"},
      {"a\xe2\x82", "a\\xe2\\x82"},                        // cut short at the end
      {"\xe2\x82" "a", "\\xe2\\x82a"},                     // cut short by an ASCII byte
      {"\xc3\xa9\xff\xc3\xa9", "\xc3\xa9\\xff\xc3\xa9"},   // the good around a bad byte kept
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(is_utf8(c.in)) << c.out;
    EXPECT_EQ(utf8_escaped(c.in), c.out);
    EXPECT_TRUE(is_utf8(utf8_escaped(c.in))) << c.out;
  }
}

// Two different names never give one text: the backslash is escaped too (systemd's own
// escapes in unit names, literal text, come out with it doubled), and control characters,
// C0, DEL and C1 (well-formed UTF-8 that a terminal obeys), never pass.
TEST(Utf8, TheEscapedTextIsUnambiguousAndHoldsNoControlCharacter) {
  EXPECT_NE(utf8_escaped("a\\xff"), utf8_escaped("a\xff"));
  EXPECT_EQ(utf8_escaped("a\\xff"), "a\\\\xff");
  EXPECT_EQ(utf8_escaped("a\xff"), "a\\xff");
  EXPECT_EQ(utf8_escaped("/system.slice/dev-disk-by\\x2duuid.swap"), "/system.slice/dev-disk-by\\\\x2duuid.swap");
  EXPECT_EQ(utf8_escaped(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(utf8_escaped("\x1b[31m\x7f"), "\\x1b[31m\\x7f");
  EXPECT_EQ(utf8_escaped("x\xc2\x9b" "31m"), "x\\u009b31m");  // CSI as C1
  EXPECT_EQ(utf8_escaped("\xc2\x80\xc2\x9f\xc2\xa0"), "\\u0080\\u009f\xc2\xa0");
  EXPECT_NE(utf8_escaped("\xc2\x85"), utf8_escaped("\\u0085"));
}

TEST(Utf8, LabelValuesAreEscapedWhereFamiliesAreBuilt) {
  FamilyBuilder b("fragd_cgroup_stalls_total", "h", MetricType::Counter);
  b.counter({{"cgroup", "/fragd-attr-c\xff\xfe"}}, 3);
  b.counter({{"cgroup", "/caf\xc3\xa9"}}, 1);
  const auto f = b.take();
  ASSERT_EQ(f.metric.size(), 2u);
  EXPECT_EQ(f.metric[0].label[0].name, "cgroup");
  EXPECT_EQ(f.metric[0].label[0].value, "/fragd-attr-c\\xff\\xfe");
  EXPECT_EQ(f.metric[1].label[0].value, "/caf\xc3\xa9");
}

}  // namespace
}  // namespace fragd
