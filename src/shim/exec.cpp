// Programs a weft thread starts: exec, posix_spawn, system and popen.
//
// A new program starts with the signal mask of the kernel thread that
// started it. On a worker that is the shim's block of the routed signals
// (signals.cpp), which would leave the program with SIGINT, SIGTERM and the
// others blocked for good. Each of these calls therefore runs with the calling
// weft thread's own mask on its kernel thread (program_mask), as glibc would
// pass it; a call that returns (a failed exec, a spawn, system, popen) puts
// the block back. glibc's execl, execvp and the others reach execve inside the
// C library, so each is replaced here, not only execve.
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>

#include "shim/shim.hpp"
#include "shim/signals.hpp"

using namespace weft::shim;

namespace {

// The arguments of execl/execlp/execle after `arg`, up to the null pointer,
// as an argv; *envp_out: the one after that (execle), when asked for.
std::unique_ptr<char* []> gather(const char* arg, va_list ap, char* const** envp_out) {
    va_list count;
    va_copy(count, ap);
    std::size_t n = 1;
    while (va_arg(count, char*) != nullptr) ++n;
    va_end(count);
    std::unique_ptr<char*[]> argv(new char*[n + 1]);
    argv[0] = const_cast<char*>(arg);
    for (std::size_t i = 1; i <= n; ++i) argv[i] = va_arg(ap, char*);  // argv[n]: the null pointer
    if (envp_out != nullptr) *envp_out = va_arg(ap, char* const*);
    return argv;
}

}  // namespace

extern "C" {

int execve(const char* path, char* const argv[], char* const envp[]) {
    program_mask m;
    return real::execve(path, argv, envp);
}
int execv(const char* path, char* const argv[]) {
    program_mask m;
    return real::execv(path, argv);
}
int execvp(const char* file, char* const argv[]) {
    program_mask m;
    return real::execvp(file, argv);
}
int execvpe(const char* file, char* const argv[], char* const envp[]) {
    program_mask m;
    return real::execvpe(file, argv, envp);
}
int fexecve(int fd, char* const argv[], char* const envp[]) {
    program_mask m;
    return real::fexecve(fd, argv, envp);
}
int execl(const char* path, const char* arg, ...) {
    va_list ap;
    va_start(ap, arg);
    auto argv = gather(arg, ap, nullptr);
    va_end(ap);
    return execv(path, argv.get());
}
int execlp(const char* file, const char* arg, ...) {
    va_list ap;
    va_start(ap, arg);
    auto argv = gather(arg, ap, nullptr);
    va_end(ap);
    return execvp(file, argv.get());
}
int execle(const char* path, const char* arg, ...) {
    va_list ap;
    va_start(ap, arg);
    char* const* envp = nullptr;
    auto argv = gather(arg, ap, &envp);
    va_end(ap);
    return execve(path, argv.get(), envp);
}

int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr,
                char* const argv[], char* const envp[]) {
    program_mask m;
    return real::posix_spawn(pid, path, actions, attr, argv, envp);
}
int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr,
                 char* const argv[], char* const envp[]) {
    program_mask m;
    return real::posix_spawnp(pid, file, actions, attr, argv, envp);
}

int system(const char* command) {
    program_mask m;
    return real::system(command);
}
FILE* popen(const char* command, const char* mode) {
    program_mask m;
    return real::popen(command, mode);
}

}  // extern "C"
