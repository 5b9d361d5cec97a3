// Whether the client of a request being handled has gone: for replies that
// send nothing until they are complete (non-streamed completions), so that a
// client that gives up stops its generation instead of holding a slot until
// max_tokens.
//
// cpp-httplib 0.11 hands a handler the request, not its socket, and gives no
// "connection closed" query (a stream finds out when a write fails; a
// non-streamed reply writes nothing until the end). The request does carry
// both ends' addresses and ports, which name one TCP connection: the watch
// finds the process's socket with that pair (getsockname / getpeername over
// /proc/self/fd, once per request) and then peeks at it. A peer that closed
// its end reads as end of file. (A client that half-closes its sending side
// after the request, which HTTP clients do not do, would read as gone too.)
#pragma once

#include <httplib.h>

namespace serve {

class ConnectionWatch {
 public:
  explicit ConnectionWatch(const httplib::Request& req);

  // Whether the socket was found (false: PeerClosed is always false).
  bool found() const { return fd_ >= 0; }
  // Whether the client closed the connection (end of file on a peek that
  // does not wait), or it broke.
  bool PeerClosed() const;

 private:
  int fd_ = -1;
};

}  // namespace serve
