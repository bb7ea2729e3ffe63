// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "policy/config.h"
#include "protocol/request.h"

using fragd::Access;
using fragd::parse_request;

TEST(Request, ReadCommands) {
  for (const char* cmd : {"hist", "status", "trace"}) {
    auto r = parse_request(std::string("{\"cmd\":\"") + cmd + "\"}");
    ASSERT_TRUE(r.ok()) << cmd << ": " << r.error().message;
    EXPECT_EQ(fragd::command_name(r->cmd), cmd);
    EXPECT_EQ(r->access, Access::Read);
  }
  auto m = parse_request(R"({"cmd":"map","max_age_ns":0})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->access, Access::Read);
  EXPECT_EQ(m->max_age_ns, 0);
  EXPECT_FALSE(m->max_blocks);
  auto all = parse_request(R"({"cmd":"map","max_age_ns":0,"max_blocks":32768})");
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->max_blocks, fragd::kMaxMapBlocks);
  auto a = parse_request(R"({"cmd":"action","id":7})");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->access, Access::Read);
  EXPECT_EQ(a->id, 7u);
}

TEST(Request, ActCommandsAreMarkedAct) {
  auto c = parse_request(R"({"cmd":"compact","node":1})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->access, Access::Act);
  EXPECT_EQ(c->node, 1);
  auto all = parse_request(R"({"cmd":"compact"})");
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->node.has_value());
  auto p = parse_request(R"({"cmd":"pool","size_kib":2048,"count":3000})");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->access, Access::Act);
  EXPECT_EQ(p->size_kib, 2048u);
  EXPECT_EQ(p->count, 3000u);
  auto r = parse_request(R"({"cmd":"reload"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->access, Access::Act);
}

TEST(Request, MalformedOnesSayWhy) {
  struct Case {
    const char* line;
    const char* says;
  } cases[] = {
      {"", "not JSON"},
      {"status", "not JSON"},
      {"{\"cmd\":\"status\"", "not JSON"},
      {"[1,2]", "JSON object with a string \"cmd\""},
      {"{\"cmd\":7}", "JSON object with a string \"cmd\""},
      {"{}", "JSON object with a string \"cmd\""},
      {"{\"cmd\":\"shutdown\"}", "unknown command \"shutdown\""},
      {"{\"cmd\":\"status\",\"path\":\"/etc/shadow\"}", "'status' takes no field \"path\""},
      {"{\"cmd\":\"compact\",\"node\":\"0\"}", "\"node\" must be an integer 0..4095"},
      {"{\"cmd\":\"compact\",\"node\":-1}", "\"node\" is -1, out of range 0..4095"},
      {"{\"cmd\":\"compact\",\"node\":4096}", "out of range"},
      {"{\"cmd\":\"compact\",\"node\":1.5}", "must be an integer"},
      {"{\"cmd\":\"pool\",\"size_kib\":2048}", "\"pool\" needs \"size_kib\" and \"count\""},
      {"{\"cmd\":\"pool\",\"size_kib\":2,\"count\":1}", "out of range 4.."},
      {"{\"cmd\":\"pool\",\"size_kib\":2048,\"count\":18446744073709551615}", "out of range"},
      {"{\"cmd\":\"action\"}", "\"action\" needs \"id\""},
      {"{\"cmd\":\"map\",\"max_age_ns\":-5}", "out of range"},
      {"{\"cmd\":\"compact\",\"timeout_ms\":99}", "\"timeout_ms\" is 99, out of range 100..604800000"},
      {"{\"cmd\":\"pool\",\"size_kib\":2048,\"count\":1,\"timeout_ms\":604800001}", "out of range"},
      {"{\"cmd\":\"status\",\"timeout_ms\":1000}", "'status' takes no field \"timeout_ms\""},
      {"{\"cmd\":\"map\",\"max_blocks\":0}", "\"max_blocks\" is 0, out of range 1..32768"},
      {"{\"cmd\":\"map\",\"max_blocks\":32769}", "out of range 1..32768"},
      {"{\"cmd\":\"status\",\"max_blocks\":5}", "takes no field"},
  };
  for (const auto& c : cases) {
    auto r = parse_request(c.line);
    ASSERT_FALSE(r.ok()) << "accepted: " << c.line;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos)
        << c.line << " -> " << r.error().message << " (want: " << c.says << ")";
  }
}

TEST(Request, LongAndHostileStringsAreShortenedInErrors) {
  const std::string cmd(5000, 'x');
  auto r = parse_request("{\"cmd\":\"" + cmd + "\"}");
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.error().message.size(), 200u);
  auto ctl = parse_request("{\"cmd\":\"\\u001b[2J\"}");
  ASSERT_FALSE(ctl.ok());
  EXPECT_EQ(ctl.error().message.find('\x1b'), std::string::npos) << "a control character reached the message";
}

TEST(Request, SizeIsBounded) {
  std::string line = R"({"cmd":"status","x":")" + std::string(fragd::kMaxRequestBytes, 'a') + "\"}";
  auto r = parse_request(line);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("longer than the limit"), std::string::npos) << r.error().message;
}

TEST(Config, SocketGroupResolvesOrNamesTheFix) {
  auto ok = fragd::parse_config("socket_group: root\n", "f.yaml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->socket_group, "root");
  ASSERT_TRUE(ok->socket_gid.has_value());
  EXPECT_EQ(*ok->socket_gid, 0u);
  auto none = fragd::parse_config("socket: /run/x.sock\n", "f.yaml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->socket_gid.has_value()) << "the socket must stay root's alone by default";
  auto bad = fragd::parse_config("socket_group: no-such-group-fragd\n", "f.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("f.yaml:1:15: key 'socket_group'"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("groupadd no-such-group-fragd"), std::string::npos) << bad.error().message;
}

TEST(Config, PathsInThePolicyAreRejected) {
  // fragd builds every kernel path itself from numbers; a policy cannot name one.
  struct Case {
    const char* yaml;
    const char* key;
  } cases[] = {
      {"hugepages:\n  pools:\n    - {size: 2MB, node: /sys/devices/system/node/node0, count: 1}\n",
       "hugepages.pools[0].node"},
      {"hugepages:\n  pools:\n    - {size: ../../../etc/passwd, node: all, count: 1}\n", "hugepages.pools[0].size"},
      {"compaction:\n  nodes: [\"/proc/sys/vm/compact_memory\"]\n", "compaction.nodes"},
      {"compaction:\n  path: /proc/sys/vm/compact_memory\n", "compaction.path"},
  };
  for (const auto& c : cases) {
    auto r = fragd::parse_config(c.yaml, "p.yaml");
    ASSERT_FALSE(r.ok()) << "accepted: " << c.yaml;
    EXPECT_NE(r.error().message.find(c.key), std::string::npos) << r.error().message << " (want key " << c.key << ")";
  }
}
