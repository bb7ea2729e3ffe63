// SPDX-License-Identifier: Apache-2.0
// Leases (`fragctl ensure`): hugetlb pages made for a named consumer ahead of its launch and held
// in the pool for it, so that nothing else takes them and free page reporting cannot hand them to
// a hypervisor. Pure bookkeeping, no I/O and no clock of its own: the Engine asks it what each
// pool's target is and tells it what became of each action; the unit tests drive it directly.
//
// A lease's life:
//   making  its pool action is queued or running: the pool's target is base + the counts of
//           every lease of that pool (making or held);
//   held    the action reached the target (result ok): the lease holds until held_ns + hold_ns,
//           then ends ("hold over");
//   ended   released by its consumer (`fragctl release`), its hold over, its action short of the
//           target (short, guard, cut, error, refused, abandoned: the pages it made go back), or
//           the policy reloaded into observe mode. Its count leaves the pool's target, and the
//           Engine shrinks the pool back: what the consumer already took stays in use (the kernel
//           keeps pages in use as surplus and frees them when they are released).
// A pool's base is the policy's target for it when the policy names the pool, else its size when
// the first lease of it was made (the pages already there stay with whoever had them: a lease
// adds its count). One consumer holds at most one lease per pool; two consumers never share
// pages, since each adds its own count.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace fragd {

enum class LeaseState { Making, Held, Ended };
const char* lease_state_name(LeaseState s);  // making, held, ended

struct Lease {
  uint64_t id = 0;
  std::string consumer;      // who asked: "libvirt:vm1", "slurm:4242", ...
  int node = -1;             // the pool's node; < 0: the global pool
  uint64_t size_kib = 0;     // the pool's page size
  uint64_t count = 0;        // pages it adds to the pool
  uint64_t hold_ns = 0;
  uint64_t asked_ns = 0;     // CLOCK_MONOTONIC, when asked
  uint64_t held_ns = 0;      // when its action reached the target (0: not yet)
  uint64_t expires_ns = 0;   // held_ns + hold_ns (0: not held yet)
  uint64_t ended_ns = 0;
  uint64_t action_id = 0;    // the pool action that makes it
  LeaseState state = LeaseState::Making;
  std::string end;           // why it ended
};

using PoolKey = std::pair<int, uint64_t>;  // (node or -1, size_kib)

class Leases {
 public:
  // A new lease, making. Error: the consumer already holds one on that pool (named, with its id).
  Result<Lease> add(std::string consumer, int node, uint64_t size_kib, uint64_t count, uint64_t hold_ns,
                    uint64_t now_ns, uint64_t id);
  // Its pool action's id, once queued.
  void set_action(uint64_t lease_id, uint64_t action_id);
  // The pages the live leases (making, held) add to a pool.
  uint64_t leased(const PoolKey& pool) const;
  // Pools with a live lease.
  std::vector<PoolKey> pools() const;
  // An action that made a lease ended: ok holds it from `now_ns` for its hold; anything else ends
  // it with `why`. Returns the lease, if one was making with that action.
  std::optional<Lease> made(uint64_t action_id, bool ok, const std::string& why, uint64_t now_ns);
  // Held leases whose hold is over at `now_ns`, ended.
  std::vector<Lease> expire(uint64_t now_ns);
  // Ends the live leases of `consumer` (or the one with id `lease_id`); returns them.
  std::vector<Lease> release(const std::optional<std::string>& consumer, std::optional<uint64_t> lease_id,
                             const std::string& why, uint64_t now_ns);
  // Ends every live lease (mode observe).
  std::vector<Lease> end_all(const std::string& why, uint64_t now_ns);

  std::vector<Lease> live() const;
  // The last kKeepEnded ended leases, newest last.
  const std::deque<Lease>& ended() const { return ended_; }
  std::optional<Lease> find(uint64_t lease_id) const;

  static constexpr size_t kKeepEnded = 20;

 private:
  void finish(Lease& l, const std::string& why, uint64_t now_ns);
  std::map<uint64_t, Lease> live_;  // by id
  std::deque<Lease> ended_;
};

}  // namespace fragd
