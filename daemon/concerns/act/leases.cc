// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/leases.h"

#include <set>

#include "base/format.h"
#include "base/text.h"

namespace fragd {

const char* lease_state_name(LeaseState s) {
  switch (s) {
    case LeaseState::Making: return "making";
    case LeaseState::Held: return "held";
    case LeaseState::Ended: return "ended";
  }
  return "ended";
}

Result<Lease> Leases::add(std::string consumer, int node, uint64_t size_kib, uint64_t count, uint64_t hold_ns,
                          uint64_t now_ns, uint64_t id) {
  for (const auto& [lid, l] : live_)
    if (l.consumer == consumer && l.node == node && l.size_kib == size_kib)
      return make_error(strf("ensure refused: %s already holds lease %llu on the %s pool of %s (%llu pages, %s): "
                             "release it first (fragctl release --for %s) or name another consumer",
                             consumer.c_str(), static_cast<unsigned long long>(lid),
                             format_size_kib(size_kib).c_str(), node < 0 ? "the host" : strf("node %d", node).c_str(),
                             static_cast<unsigned long long>(l.count), lease_state_name(l.state), consumer.c_str()),
                        EBUSY);
  Lease l;
  l.id = id;
  l.consumer = std::move(consumer);
  l.node = node < 0 ? -1 : node;
  l.size_kib = size_kib;
  l.count = count;
  l.hold_ns = hold_ns;
  l.asked_ns = now_ns;
  live_[id] = l;
  return l;
}

void Leases::set_action(uint64_t lease_id, uint64_t action_id) {
  if (auto it = live_.find(lease_id); it != live_.end()) it->second.action_id = action_id;
}

uint64_t Leases::leased(const PoolKey& pool) const {
  uint64_t n = 0;
  for (const auto& [id, l] : live_)
    if (l.node == pool.first && l.size_kib == pool.second) n += l.count;
  return n;
}

std::vector<PoolKey> Leases::pools() const {
  std::set<PoolKey> s;
  for (const auto& [id, l] : live_) s.insert({l.node, l.size_kib});
  return {s.begin(), s.end()};
}

void Leases::finish(Lease& l, const std::string& why, uint64_t now_ns) {
  l.state = LeaseState::Ended;
  l.end = why;
  l.ended_ns = now_ns;
  ended_.push_back(l);
  while (ended_.size() > kKeepEnded) ended_.pop_front();
}

std::optional<Lease> Leases::made(uint64_t action_id, bool ok, const std::string& why, uint64_t now_ns) {
  for (auto it = live_.begin(); it != live_.end(); ++it) {
    Lease& l = it->second;
    if (l.action_id != action_id || l.state != LeaseState::Making) continue;
    if (ok) {
      l.state = LeaseState::Held;
      l.held_ns = now_ns;
      l.expires_ns = now_ns + l.hold_ns;
      return l;
    }
    finish(l, why, now_ns);
    Lease out = l;
    live_.erase(it);
    return out;
  }
  return std::nullopt;
}

std::vector<Lease> Leases::expire(uint64_t now_ns) {
  std::vector<Lease> out;
  for (auto it = live_.begin(); it != live_.end();) {
    Lease& l = it->second;
    if (l.state == LeaseState::Held && now_ns >= l.expires_ns) {
      finish(l, "hold of " + format_duration(static_cast<double>(l.hold_ns)) + " over", now_ns);
      out.push_back(l);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<Lease> Leases::release(const std::optional<std::string>& consumer, std::optional<uint64_t> lease_id,
                                   const std::string& why, uint64_t now_ns) {
  std::vector<Lease> out;
  for (auto it = live_.begin(); it != live_.end();) {
    Lease& l = it->second;
    if ((consumer && l.consumer == *consumer) || (lease_id && l.id == *lease_id)) {
      finish(l, why, now_ns);
      out.push_back(l);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<Lease> Leases::end_all(const std::string& why, uint64_t now_ns) {
  std::vector<Lease> out;
  for (auto& [id, l] : live_) {
    finish(l, why, now_ns);
    out.push_back(l);
  }
  live_.clear();
  return out;
}

std::vector<Lease> Leases::live() const {
  std::vector<Lease> v;
  for (const auto& [id, l] : live_) v.push_back(l);
  return v;
}

std::optional<Lease> Leases::find(uint64_t lease_id) const {
  if (auto it = live_.find(lease_id); it != live_.end()) return it->second;
  for (const auto& l : ended_)
    if (l.id == lease_id) return l;
  return std::nullopt;
}

}  // namespace fragd
