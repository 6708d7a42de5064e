// weft-bench harness — child processes: spawning with a piped stdout, waiting (harness/child.hpp).
#include "harness/child.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/clock.hpp"
#include "harness/failure.hpp"
#include "harness/table.hpp"

namespace weft::bench {

piped_child spawn_piped(std::string const& exe, std::vector<std::string> const& args,
                        std::vector<std::string> const& env) {
    std::vector<std::string> vars;
    for (char** e = environ; *e != nullptr; ++e) vars.emplace_back(*e);
    for (std::string const& change : env) {
        std::string const name = change.substr(0, change.find('='));
        std::erase_if(vars, [&](std::string const& v) {
            return v.size() > name.size() && v[name.size()] == '=' && v.compare(0, name.size(), name) == 0;
        });
        if (change.size() > name.size()) vars.push_back(change);
    }
    std::vector<std::string> argv_text = args;
    std::vector<char*> argv, envp;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) die("pipe: %s", std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = 0;
    int const rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) die("cannot start '%s': %s", exe.c_str(), std::strerror(rc));
    return {pid, fds[0]};
}

std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t const got = read(fd, buf, sizeof buf);
        if (got > 0)
            out.append(buf, static_cast<std::size_t>(got));
        else if (got == 0 || errno != EINTR)
            break;
    }
    close(fd);
    return out;
}

int wait_child(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid(%d): %s", static_cast<int>(pid), std::strerror(errno));
    return status;
}

std::string run_piped(std::string const& exe, std::vector<std::string> const& args, std::vector<std::string> const& env,
                      int* status) {
    piped_child const child = spawn_piped(exe, args, env);
    std::string out = read_all(child.out_fd);
    *status = wait_child(child.pid);
    return out;
}

int run_with_timeout(std::vector<std::string> const& args, double timeout_s, bool quiet) {
    std::vector<char*> argv;
    for (auto const& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = 0;
    int const rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return status_not_found;

    std::uint64_t const deadline = timeout_s > 0 ? now_ns() + static_cast<std::uint64_t>(timeout_s * 1e9) : UINT64_MAX;
    int status = 0;
    for (;;) {
        pid_t const r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return status_not_found;
        if (now_ns() > deadline) {
            std::fprintf(stderr, "weft-bench: '%s' still running after %.0f s: stopping it\n", join(args, " ").c_str(),
                         timeout_s);
            kill(pid, SIGTERM);
            for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(20000);
            if (waitpid(pid, &status, WNOHANG) == 0) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
            }
            return status_timeout;
        }
        usleep(10000);
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

double number_after(std::string const& out, char const* key) {
    auto const at = out.find(key);
    if (at == std::string::npos) return -1;
    return std::strtod(out.c_str() + at + std::strlen(key), nullptr);
}

long long peak_on_line(std::string const& out, char const* key) {
    auto const at = out.find(key);
    if (at == std::string::npos) return -1;
    auto const eol = out.find('\n', at);
    auto const peak = out.find("(peak ", at);
    if (peak == std::string::npos || (eol != std::string::npos && peak > eol)) return -1;
    return std::strtoll(out.c_str() + peak + 6, nullptr, 10);
}

}  // namespace weft::bench
