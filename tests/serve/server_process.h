// Runs `ember serve` (test::CliPath()) as a child process for the server's
// tests: on a free loopback port (--port 0; the port is read from the
// "listening on" line of its log), ready once /health answers 200, and always
// stopped: SIGTERM, then SIGKILL if it has not exited in time, also from the
// destructor, so that a failing test never leaves a server behind or hangs.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <httplib.h>

namespace ember::test {

class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts `ember serve ARGS --port 0 --host 127.0.0.1` and waits up to
  // `timeout_s` for /health to answer 200. On failure returns false with
  // `*error` saying why (the log included).
  // `on_listening`, when given, runs once as soon as the port is known (the
  // model may still be loading), before the wait for /health's 200.
  bool Start(const std::vector<std::string>& args, std::string* error, double timeout_s = 120,
             const std::function<void(int port)>& on_listening = nullptr);

  int port() const { return port_; }
  // A client of the server with generous timeouts (sanitizer builds are slow).
  std::unique_ptr<httplib::Client> Client() const;

  // SIGTERM, wait up to timeout_s, then SIGKILL. Returns the exit status
  // (128 + signal when killed by one), or -1 when it was not running.
  int Stop(double timeout_s = 30);
  bool running() const { return pid_ > 0; }
  std::string Log() const;  // what the server wrote to stdout and stderr

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

}  // namespace ember::test
