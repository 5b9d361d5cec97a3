#include "serve/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "support/test_paths.h"

namespace ember::test {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Stop(10);
}

bool ServerProcess::Start(const std::vector<std::string>& args, std::string* error,
                          double timeout_s, const std::function<void(int port)>& on_listening) {
  log_path_ = TempPath("serve.log");
  // EMBER_SERVE_BIN runs another build of `ember` (e.g. one with sanitizers).
  const char* bin = std::getenv("EMBER_SERVE_BIN");
  std::vector<std::string> argv = {bin && *bin ? std::string(bin) : CliPath(), "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--host", "127.0.0.1", "--port", "0"});
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    *error = "fork failed";
    return false;
  }
  if (pid == 0) {
    const int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  pid_ = pid;
  const auto start = Clock::now();
  while (Seconds(start) < timeout_s) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = "the server exited before it was ready; its log:\n" + Log();
      return false;
    }
    if (port_ == 0) {
      const std::string log = Log();
      const std::string mark = "listening on http://127.0.0.1:";
      const size_t at = log.find(mark);
      if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
        port_ = std::atoi(log.c_str() + at + mark.size());
        if (port_ > 0 && on_listening) on_listening(port_);
      }
    }
    if (port_ > 0) {
      httplib::Client c("127.0.0.1", port_);
      c.set_connection_timeout(1, 0);
      auto r = c.Get("/health");
      if (r && r->status == 200) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *error = "the server was not ready in time; its log:\n" + Log();
  Stop(5);
  return false;
}

std::unique_ptr<httplib::Client> ServerProcess::Client() const {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
  c->set_connection_timeout(5, 0);
  c->set_read_timeout(300, 0);
  c->set_write_timeout(60, 0);
  return c;
}

int ServerProcess::Stop(double timeout_s) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const auto start = Clock::now();
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (Seconds(start) > timeout_s) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::string ServerProcess::Log() const { return FileExists(log_path_) ? ReadFile(log_path_) : ""; }

}  // namespace ember::test
