// weft-bench harness — child processes: spawning with a piped stdout, waiting.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace weft::bench {

// A child process whose stdout is a pipe to this one.
struct piped_child {
    pid_t pid = -1;
    int out_fd = -1;  // the pipe's reading end (close-on-exec); the caller closes it
};
// Starts `exe` with `args` (args[0] is argv[0]) and this process's environment
// with `env` applied in order: "NAME=value" sets NAME, "NAME" removes it. The
// child's stdout is the pipe, its stderr this process's. Dies naming `exe` if
// it cannot be started.
piped_child spawn_piped(std::string const& exe, std::vector<std::string> const& args,
                        std::vector<std::string> const& env);
// Reads `fd` to its end (retrying on EINTR) and closes it: a child's whole
// output.
std::string read_all(int fd);
// Waits for the child `pid` to end (retrying on EINTR); returns its waitpid
// status.
int wait_child(pid_t pid);
// spawn_piped, then the child's whole stdout, then wait_child: returns the
// output and sets *status to the waitpid status.
std::string run_piped(std::string const& exe, std::vector<std::string> const& args, std::vector<std::string> const& env,
                      int* status);
// run_with_timeout's statuses beside a program's own: it ran past its time
// (and was stopped), it could not be started.
inline constexpr int status_timeout = 124;
inline constexpr int status_not_found = 127;
// Runs `args` (PATH lookup for args[0]) with this process's environment and
// waits for it; `quiet` sends its stdout and stderr to /dev/null. Returns its
// exit status, 128+signal if it was killed, status_timeout after `timeout_s`
// seconds (0: no limit; it is then sent SIGTERM, SIGKILL 2 s later), or
// status_not_found.
int run_with_timeout(std::vector<std::string> const& args, double timeout_s, bool quiet);
// In a child's output that holds weft's statistics (WEFT_STATS=1): the number
// after `key` ("most threads live"), or -1 when `key` is not there; the
// "(peak N)" of the line that starts with `key` ("stack bytes mapped", "heap
// bytes"), or -1 when the line is not there.
double number_after(std::string const& out, char const* key);
long long peak_on_line(std::string const& out, char const* key);

}  // namespace weft::bench
