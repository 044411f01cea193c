#!/usr/bin/env bash
# Build the reference C++ CORELS command-line tool without GMP, outside this repository.
#
#   bash bench/peers/build_cpp_corels.sh CORELS_SOURCE_TREE OUTPUT_DIR
#
# CORELS_SOURCE_TREE is a checkout of https://github.com/corels/corels (its root, or its src/);
# OUTPUT_DIR receives the binary OUTPUT_DIR/corels, built in OUTPUT_DIR/build (a copy of src/, so
# the checkout is left as it was). Then: bench/corels_compas.py --cpp-corels OUTPUT_DIR/corels.
#
# Why without GMP (NGMP=1): the default GMP build misreads the .minor file (it drops leading
# zeros), never certifies COMPAS and still prints "OPTIMAL" at its node cap (see "The search
# beside C++ CORELS" in docs/maintainers/corels-measurements.md). CORELS is GPL-3.0: none of its
# source enters this repository; this script only compiles a checkout the maintainer has, and the
# bench only runs the binary.
set -euo pipefail

usage="usage: $0 CORELS_SOURCE_TREE OUTPUT_DIR (e.g. git clone https://github.com/corels/corels /tmp/corels-src; $0 /tmp/corels-src /work/peers/corels)"
if [ "$#" -ne 2 ]; then
    echo "$usage" >&2
    exit 2
fi
source_tree=$1
output_dir=$2

if [ -f "$source_tree/src/GNUmakefile" ]; then
    src=$source_tree/src
elif [ -f "$source_tree/GNUmakefile" ] && [ -f "$source_tree/main.cc" ]; then
    src=$source_tree
else
    echo "$0: no CORELS source tree at '$source_tree' (expected src/GNUmakefile and src/main.cc of" \
        "https://github.com/corels/corels); clone it first: git clone https://github.com/corels/corels DIR" >&2
    exit 1
fi
cxx=${CXX:-g++}
for tool in "$cxx" make; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$0: '$tool' not found; install a C++ compiler and make (Debian: apt-get install g++ make)," \
            "or name another compiler with CXX=..." >&2
        exit 1
    fi
done

mkdir -p "$output_dir"
build=$output_dir/build
rm -rf "$build"
mkdir -p "$build"
cp -R "$src"/. "$build"/
# NGMP=1: the tool's own switch for the build without GMP; only the corels target (not its tests).
make -C "$build" NGMP=1 CXX="$cxx -std=c++11" corels
cp "$build/corels" "$output_dir/corels"
echo "built $output_dir/corels (without GMP) from $src"
