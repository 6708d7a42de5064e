// weft-bench io: the Go anchor, a goroutine per connection (bench/io_echo.go),
// built with the Go toolchain when one is found and run as a process of its
// own (io_echo.hpp).
#include <arpa/inet.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "harness.hpp"
#include "io_echo.hpp"

namespace weft::bench::io {
namespace {

namespace fs = std::filesystem;

// `go` on PATH, else the official tarball's place.
std::string find_go() {
    if (const char* path = std::getenv("PATH")) {
        std::string p = path;
        for (std::size_t at = 0; at <= p.size();) {
            std::size_t end = p.find(':', at);
            if (end == std::string::npos) end = p.size();
            fs::path cand = fs::path(p.substr(at, end - at)) / "go";
            if (access(cand.c_str(), X_OK) == 0) return cand.string();
            at = end + 1;
        }
    }
    if (access("/usr/local/go/bin/go", X_OK) == 0) return "/usr/local/go/bin/go";
    return {};
}

std::string find_source() {
    std::error_code ec;
#ifdef WEFT_SOURCE_DIR
    if (auto p = fs::path(WEFT_SOURCE_DIR) / "bench" / "io_echo.go"; fs::is_regular_file(p, ec)) return p.string();
#endif
    if (fs::path here(__FILE__); here.is_absolute())
        if (auto p = here.parent_path() / "io_echo.go"; fs::is_regular_file(p, ec)) return p.string();
    return {};
}

std::string binary;  // built once per process
std::string why_not;
bool tried = false;

// The build's directory, removed when weft-bench exits (the forked clients
// leave through _exit and do not remove it).
struct build_dir {
    fs::path path;
    ~build_dir() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
} made;

int run_command(const std::string& cmd) {
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

void build() {
    tried = true;
    std::string go = find_go();
    if (go.empty()) {
        why_not = "no Go toolchain: `go` is not on PATH nor in /usr/local/go/bin";
        return;
    }
    std::string src = find_source();
    if (src.empty()) {
        why_not = "bench/io_echo.go is not found (no source tree beside this weft-bench)";
        return;
    }
    const char* tmp = std::getenv("TMPDIR");
    fs::path dir =
        fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / ("weft-bench-io-go." + std::to_string(getpid()));
    std::error_code ec;
    fs::create_directories(dir, ec);
    made.path = dir;
    binary = (dir / "io_echo").string();
    // GOCACHE needs a home; GOFLAGS and modules off: one file, the standard library only.
    std::string env = "GO111MODULE=off GOFLAGS= ";
    if (std::getenv("GOCACHE") == nullptr && std::getenv("HOME") == nullptr)
        env += "GOCACHE='" + (dir / "cache").string() + "' ";
    std::string cmd =
        env + "'" + go + "' build -o '" + binary + "' '" + src + "' >'" + (dir / "build.log").string() + "' 2>&1";
    if (run_command(cmd) != 0) {
        std::string log;
        if (std::FILE* f = std::fopen((dir / "build.log").c_str(), "r")) {
            char line[256];
            if (std::fgets(line, sizeof line, f) != nullptr) log = line;
            std::fclose(f);
            if (!log.empty() && log.back() == '\n') log.pop_back();
        }
        why_not = "`go build` of bench/io_echo.go failed: " + log;
        binary.clear();
    }
}

ssize_t plain_read(int fd, void* p, std::size_t n) { return read(fd, p, n); }

}  // namespace

std::string go_unavailable() {
    if (!tried) build();
    return why_not;
}

server_run run_go(int workers, int n, int requests, std::size_t size) {
    if (!go_unavailable().empty()) die("io: go server: %s", why_not.c_str());
    piped_child const server =
        spawn_piped(binary, {binary, std::to_string(size)}, {"GOMAXPROCS=" + std::to_string(workers)});
    pid_t pid = server.pid;
    char line[32] = {};
    std::size_t got = 0;
    while (got + 1 < sizeof line) {
        ssize_t r = read(server.out_fd, line + got, 1);
        if (r <= 0 || line[got] == '\n') break;
        ++got;
    }
    close(server.out_fd);
    int port = std::atoi(line);
    if (port <= 0) die("io: the go server did not print its port");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    server_run out;
    out.rss_before = rss_bytes(pid);
    client_process client = start_client(addr, n, requests, size);
    out.client = finish_client(client, plain_read, pid);
    kill(pid, SIGKILL);
    wait_child(pid);
    if (!out.client.error.empty()) die("io: go server, %d connections: %s", n, out.client.error.c_str());
    return out;
}

}  // namespace weft::bench::io
