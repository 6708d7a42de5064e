#!/usr/bin/env bash
# weft/rpc.hpp refuses types that cannot cross a node boundary at compile
# time, with a message that says what is allowed: each case below is a small
# program that must fail to compile (-fsyntax-only) with its static_assert's
# text, and a last one that uses every supported type must compile.
#
# Environment (optional): WEFT_SOURCE_DIR (default: two levels above this
# script), CXX (default c++).
set -euo pipefail

src="${WEFT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cxx="${CXX:-c++}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

compile() {  # compile FILE -> 0 if it compiles; its messages in $work/out
    "$cxx" -std=c++20 -fsyntax-only -I"$src/include" "$1" >"$work/out" 2>&1
}

# case NAME DECLARATION CALL EXPECTED-TEXT
case_fails() {
    local name=$1 decl=$2 call=$3 want=$4
    cat >"$work/$name.cpp" <<CPP
#include "weft/rpc.hpp"
struct svc { $decl };
template <> struct weft::rpc::interface<svc> : weft::rpc::functions<&svc::f> {};
void g(weft_port_id_t p) { $call; }
CPP
    if compile "$work/$name.cpp"; then
        echo "FAIL $name: compiled, but must not"
        exit 1
    fi
    if ! grep -q -- "$want" "$work/out"; then
        echo "FAIL $name: no \"$want\" in the compiler's messages:"
        cat "$work/out"
        exit 1
    fi
    echo "ok   $name"
}

case_fails pointer_param 'int f(int* p);' 'weft::rpc::call(p, &svc::f, nullptr)' 'a parameter type must be a trivially copyable value'
case_fails mutable_ref 'int f(int& x);' 'int x = 0; weft::rpc::call(p, &svc::f, x)' 'not a non-const reference'
case_fails span_result 'std::span<const int> f();' 'weft::rpc::call(p, &svc::f)' 'a result type must be void'
case_fails vector_of_strings 'int f(std::vector<std::string> v);' 'weft::rpc::call(p, &svc::f, std::vector<std::string>{})' 'a parameter type must be'
case_fails not_listed 'int f(int); int h(long);' 'weft::rpc::call(p, &svc::h, 1L)' 'no function of this type is listed'

cat >"$work/ok.cpp" <<'CPP'
#include <array>
#include "weft/rpc.hpp"
struct point { double x, y; };
struct svc {
    std::vector<point> f(int, const std::string&, std::vector<double>, std::span<const point>, std::array<int, 3>);
    void v() const;
};
template <> struct weft::rpc::interface<svc> : weft::rpc::functions<&svc::f, &svc::v> {};
void g(weft_port_id_t p) {
    std::vector<point> pts{{1, 2}};
    auto r = weft::rpc::call(p, &svc::f, 1, "name", std::vector<double>{1.0}, pts, std::array<int, 3>{});
    weft::rpc::call(p, &svc::v);
    (void)r;
}
CPP
if ! compile "$work/ok.cpp"; then
    echo "FAIL supported types: did not compile:"
    cat "$work/out"
    exit 1
fi
echo "ok   supported types compile"
