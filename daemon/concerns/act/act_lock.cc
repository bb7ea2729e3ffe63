// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/act_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/text.h"
#include "kernel/procfs.h"

namespace fragd {

ActLock::~ActLock() { close(fd_); }

Result<std::unique_ptr<ActLock>> ActLock::acquire(const std::string& path, const std::string& what) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return sys_error("cannot open the act lock " + path + (errno == ELOOP ? " (a symbolic link: remove it)" : ""));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    close(fd);
    return make_error("the act lock " + path + " is not a regular file owned by uid " + std::to_string(geteuid()) +
                          ": remove it",
                      EPERM);
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = "another process";
    if (err == EWOULDBLOCK)
      if (auto t = read_text_fd(fd, path)) {
        const auto toks = tokenize(*t);
        uint64_t pid = 0;
        if (toks.size() == 1 && parse_u64(toks[0], pid)) holder = "fragd pid " + std::to_string(pid);
      }
    close(fd);
    if (err != EWOULDBLOCK) return sys_error("cannot lock " + path, err);
    return make_error("cannot " + what + ": " + holder + " runs in act mode on this host and holds " + path +
                          ". One fragd acts per host (both would change the same kernel settings); stop that one "
                          "(systemctl stop fragd, or kill " +
                          (holder == "another process" ? std::string("it") : holder.substr(10)) +
                          ") or run this one with mode: observe, which may run beside it",
                      EWOULDBLOCK);
  }
  // Ours now: the pid for the message above.
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    close(fd);
    return sys_error("cannot write fragd's pid to " + path, err);
  }
  return std::unique_ptr<ActLock>(new ActLock(fd));
}

}  // namespace fragd
