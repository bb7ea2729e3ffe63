// SPDX-License-Identifier: Apache-2.0
// A minimal HTTP/1.0 client over loopback for the unit tests of fragd's HTTP endpoint.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace fragd_test {

// A loopback port free at the time of the call.
inline int free_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

struct HttpResponse {
  int status = -1;  // -1: no connection, or no status line
  std::string content_type, body;
};

// GET `path` with the given extra header lines ("Accept: ...\r\n"), read until the server closes.
inline HttpResponse http_get(int port, const std::string& path, const std::string& headers = "") {
  HttpResponse r;
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(s);
    r.body = "connect failed";
    return r;
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\n" + headers + "\r\n";
  (void)!write(s, req.data(), req.size());
  std::string resp;
  char buf[4096];
  for (ssize_t n; (n = read(s, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<size_t>(n));
  close(s);
  if (resp.size() < 12) {
    r.body = resp;
    return r;
  }
  r.status = std::stoi(resp.substr(9, 3));
  const auto head_end = resp.find("\r\n\r\n");
  const std::string head = resp.substr(0, head_end);
  const auto ct = head.find("Content-Type: ");
  if (ct != std::string::npos) r.content_type = head.substr(ct + 14, head.find("\r\n", ct) - ct - 14);
  r.body = head_end == std::string::npos ? "" : resp.substr(head_end + 4);
  return r;
}

}  // namespace fragd_test
