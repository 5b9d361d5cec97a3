// Whether the client of a request being handled has gone: for replies that
// send nothing until they are complete (non-streamed completions), so that a
// client that gives up stops its generation instead of holding a slot until
// max_tokens.
//
// cpp-httplib 0.11 hands a handler the request, not its socket, and gives no
// "connection closed" query (a stream finds out when a write fails; a
// non-streamed reply writes nothing until the end). The request does carry
// both ends' addresses and ports, which name one TCP connection, and the
// kernel lists every connection of the network namespace with its state in
// /proc/self/net/tcp and tcp6. When the client closes its end, the server's
// side of the connection goes to CLOSE_WAIT (it got the client's FIN); when it
// is reset, the entry goes away. The watch reads that table; it touches no
// file descriptor (scanning the process's sockets instead would race with the
// HTTP threads that accept and close them). A client that half-closes its
// sending side after the request, which HTTP clients do not do, would read as
// gone too.
#pragma once

#include <httplib.h>

#include <array>
#include <cstdint>

namespace serve {

class ConnectionWatch {
 public:
  explicit ConnectionWatch(const httplib::Request& req);

  // Whether the connection was found in the kernel's table when the watch
  // began (false: Gone() is always false).
  bool found() const { return found_; }
  // Whether the client closed the connection (or it was reset).
  bool Gone() const;

  // A connection as the kernel's table shows it: the remote address (16
  // bytes; IPv4 in the first 4) and both ports.
  struct Key {
    bool v6 = false;
    std::array<uint8_t, 16> remote{};
    int remote_port = -1;
    int local_port = -1;
  };
  // The TCP state (1 ESTABLISHED, 8 CLOSE_WAIT, ...) of `key` in a table in
  // /proc/net/tcp's format, or -1 when it is not there. For the tests.
  static int StateIn(const char* table, const Key& key);

 private:
  Key key_;
  bool found_ = false;
};

}  // namespace serve
