// SPDX-License-Identifier: Apache-2.0
// The one error type of fragd: a value or an Error carrying errno and a
// message that says what failed, on what, and what to do.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace fragd {

struct Error {
  int err = 0;          // errno-style code, 0 when not from a system call
  std::string message;  // what failed, on what, and the fix
};

inline Error make_error(std::string message, int err = 0) {
  return Error{err, std::move(message)};
}

// "message: strerror(err)"
inline Error sys_error(std::string what, int err = errno) {
  return Error{err, std::move(what) + ": " + std::strerror(err)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)), ok_(false) {}
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

}  // namespace fragd
