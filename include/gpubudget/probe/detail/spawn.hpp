// gpubudget/probe/detail/spawn.hpp — run a program with a modified environment and capture its
// stdout (POSIX posix_spawn + pipe). Used to re-run the probe as a child with
// CUDA_MODULE_LOADING set before its CUDA context exists. No CUDA here.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;  // POSIX: the current process's environment

namespace gpubudget::probe::detail {

/// Set `name` to `value` in the child's environment, or remove it when `value` is empty.
struct env_override {
  std::string name;
  std::optional<std::string> value;
};

struct spawn_result {
  bool started = false;
  int exit_code = -1;  // 128 + signal number when the child was killed by a signal
  std::string output;  // the child's stdout
  std::string error;   // why it did not start
};

/// The current environment with `overrides` applied.
inline std::vector<std::string> make_environment(const std::vector<env_override>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv{*e};
    const std::string_view name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& o : overrides) replaced = replaced || o.name == name;
    if (!replaced) env.emplace_back(kv);
  }
  for (const auto& o : overrides)
    if (o.value) env.push_back(o.name + "=" + *o.value);
  return env;
}

/// Runs `exe args...` with the environment changed by `overrides`, waits for it, and returns
/// its stdout and exit code. stderr is inherited.
inline spawn_result run_and_capture(const std::string& exe, const std::vector<std::string>& args,
                                    const std::vector<env_override>& overrides) {
  spawn_result r;
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::string("pipe2: ") + std::strerror(errno);
    return r;
  }
  std::vector<std::string> argv_s{exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = make_environment(overrides);
  std::vector<char*> argv, envp;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    r.error = "posix_spawn " + exe + ": " + std::strerror(rc);
    return r;
  }
  r.started = true;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) r.output.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      r.error = std::string("waitpid: ") + std::strerror(errno);
      return r;
    }
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

/// Path of the running executable (Linux /proc), or empty.
inline std::string self_executable() {
  std::string path(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= path.size()) return {};
  path.resize(static_cast<std::size_t>(n));
  return path;
}

}  // namespace gpubudget::probe::detail
