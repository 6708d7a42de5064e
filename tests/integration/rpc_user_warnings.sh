#!/usr/bin/env bash
# A user's program that includes weft/rpc.hpp compiles without a warning at
# -O2 -Wall -Wextra -Werror: a server and calls with every kind of string
# argument (a literal converted to std::string, an rvalue std::string, an
# lvalue), whose packing GCC 12 once flagged with -Wstringop-overflow in the
# user's code.
#
# Environment (optional): WEFT_SOURCE_DIR (default: two levels above this
# script), CXX (default c++).
set -euo pipefail

src="${WEFT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cxx="${CXX:-c++}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/user.cpp" <<'CPP'
#include <string>
#include <vector>
#include "weft/rpc.hpp"
struct greeter {
    std::string greet(const std::string& who) { return "hello " + who; }
    int len(std::string s) { return int(s.size()); }
    std::size_t total(std::string a, const std::string& b, std::vector<char> c) { return a.size() + b.size() + c.size(); }
};
template <> struct weft::rpc::interface<greeter>
    : weft::rpc::functions<&greeter::greet, &greeter::len, &greeter::total> {};
int main() {
    weft::net::job job(2);
    greeter g;
    weft::rpc::server<greeter> srv(g, 1);
    std::string name = "name";
    std::string r = weft::rpc::call(srv.port(), &greeter::greet, "world");
    int n = weft::rpc::call(srv.port(), &greeter::len, std::string("abc"));
    n += weft::rpc::call(srv.port(), &greeter::len, name);
    std::size_t t = weft::rpc::call(srv.port(), &greeter::total, std::string("x"), name, std::vector<char>{'y'});
    return int(r.size() + t) + n;
}
CPP
for opt in -O2 -O3; do
    if ! "$cxx" -std=c++20 "$opt" -Wall -Wextra -Werror -c -I"$src/include" "$work/user.cpp" -o "$work/user.o" \
        >"$work/out" 2>&1; then
        echo "FAIL $opt: a user's program that includes weft/rpc.hpp does not compile warning-free:"
        cat "$work/out"
        exit 1
    fi
    echo "ok   $opt -Wall -Wextra -Werror"
done
