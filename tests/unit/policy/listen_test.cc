// SPDX-License-Identifier: Apache-2.0
// check_listen_address: the `listen` key and fragd's --listen flag. The host is an IPv4
// address (Debian's civetweb serves no IPv6), the port 1..65535; each refusal says what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "policy/config.h"

namespace {

TEST(Listen, AddressesCivetwebCanBind) {
  for (const char* ok : {"127.0.0.1:9717", "0.0.0.0:1", "10.1.2.3:65535"})
    EXPECT_TRUE(fragd::check_listen_address(ok).ok()) << ok;
}

TEST(Listen, BadPortsAreRefused) {
  for (const char* bad : {"127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:+80",
                          "127.0.0.1:80 ", "9717"}) {
    auto r = fragd::check_listen_address(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(Listen, BadHostsAreRefusedWithTheReason) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"127.0.0:9717", "not an IPv4 address"},
           {"300.0.0.1:9717", "not an IPv4 address"},
           {"localhost:9717", "not an IPv4 address"},
           {"::1:9717", "IPv6 address in brackets"},
           {"[::1:9717", "IPv6 address in brackets"},
           {"[::1]9717", "IPv6 address in brackets"},
           {"[127.0.0.1]:9717", "not an IPv6 address"},
           {"[]:9717", "not an IPv6 address"},
           {":9717", "no host"},
           {"[::1]:9717", "serves IPv4 only"},
       }) {
    auto r = fragd::check_listen_address(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.text << ": " << r.error().message;
    EXPECT_NE(r.error().message.find(c.text), std::string::npos) << "the message names the address";
  }
}

}  // namespace
