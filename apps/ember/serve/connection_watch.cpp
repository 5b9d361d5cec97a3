#include "serve/connection_watch.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace serve {
namespace {

constexpr int kCloseWait = 8;

// An address as the table prints it: 32-bit words in hex, each the word's
// bytes as they are in memory read as a host-order integer.
bool ParseAddress(const std::string& hex, bool v6, std::array<uint8_t, 16>* out) {
  const size_t words = v6 ? 4 : 1;
  if (hex.size() != 8 * words) return false;
  out->fill(0);
  for (size_t w = 0; w < words; ++w) {
    char* end = nullptr;
    const std::string part = hex.substr(8 * w, 8);
    const uint32_t v = static_cast<uint32_t>(std::strtoul(part.c_str(), &end, 16));
    if (end != part.c_str() + 8) return false;
    std::memcpy(out->data() + 4 * w, &v, 4);
  }
  return true;
}

std::string ReadTable(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

int ConnectionWatch::StateIn(const char* table, const Key& key) {
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    const size_t lc = local.find(':'), rc = remote.find(':');
    if (lc == std::string::npos || rc == std::string::npos) continue;
    if (std::strtol(local.c_str() + lc + 1, nullptr, 16) != key.local_port ||
        std::strtol(remote.c_str() + rc + 1, nullptr, 16) != key.remote_port) {
      continue;
    }
    std::array<uint8_t, 16> addr{};
    if (!ParseAddress(remote.substr(0, rc), key.v6, &addr) || addr != key.remote) continue;
    return static_cast<int>(std::strtol(state.c_str(), nullptr, 16));
  }
  return -1;
}

ConnectionWatch::ConnectionWatch(const httplib::Request& req) {
  key_.remote_port = req.remote_port;
  key_.local_port = req.local_port;
  if (key_.remote_port < 0 || key_.local_port < 0) return;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, req.remote_addr.c_str(), &v4) == 1) {
    std::memcpy(key_.remote.data(), &v4, 4);
  } else if (inet_pton(AF_INET6, req.remote_addr.c_str(), &v6) == 1) {
    key_.v6 = true;
    std::memcpy(key_.remote.data(), &v6, 16);
  } else {
    return;
  }
  found_ =
      StateIn(ReadTable(key_.v6 ? "/proc/self/net/tcp6" : "/proc/self/net/tcp").c_str(), key_) >= 0;
}

bool ConnectionWatch::Gone() const {
  if (!found_) return false;
  const int state =
      StateIn(ReadTable(key_.v6 ? "/proc/self/net/tcp6" : "/proc/self/net/tcp").c_str(), key_);
  return state < 0 || state == kCloseWait;
}

}  // namespace serve
