# shellcheck shell=bash
# What scripts/setup, scripts/test, scripts/tour and scripts/sanitize share; sourced, not run.
#   say / warn / die             messages that start with the calling script's name
#   cuda_home                    the CUDA Toolkit prefix: $CUDA_HOME, else /usr/local/cuda
#   configure_build DIR [OPT...] `meson setup` of a new build folder, `--reconfigure` of an existing
#                                one; always with -Dtoolkit_prefix=$cuda_home, so a changed CUDA_HOME
#                                reaches the build folder, and with the development parts on (tests,
#                                examples, benchmarks where Google Benchmark is found), which a plain
#                                `meson setup` leaves off; OPT... come after and win
#   need_deb / install_debs      system packages: each found by what it provides (a command, a header,
#                                a pkg-config module), installed with apt only when missing and only
#                                where apt-get exists; elsewhere the missing ones are named
#   pip_install PIN...           PyPI packages, into the python3 that runs meson
#   unpack_wheel ...             a pinned wheel's files unpacked into .deps/ (nothing installed)

streamlike_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
script_name="scripts/$(basename "$0")"

say() { echo "$script_name: $*"; }
warn() { echo "$script_name: WARNING: $*" >&2; }
die() {
  echo "$script_name: $*" >&2
  exit 1
}

cuda_home=${CUDA_HOME:-/usr/local/cuda}
cuda_home=${cuda_home%/}
# Meson's dependency('cuda') reads CUDA_HOME itself: give it the same prefix as -Dtoolkit_prefix.
# Meson finds the CUDA compiler on PATH (and a build folder keeps calling it by the name found), so
# the toolkit's bin/ goes first: configure and build use this toolkit's nvcc.
export CUDA_HOME=$cuda_home
export PATH="$cuda_home/bin:$PATH"

# --- Configuring a build folder ---------------------------------------------------------------

# The value of a build option in a configured build folder (empty if unknown).
build_option() { # BUILD NAME
  meson introspect "$1" --buildoptions 2>/dev/null | python3 -c '
import json, sys
for option in json.load(sys.stdin):
    if option["name"] == sys.argv[1]:
        print(option["value"])' "$2" 2>/dev/null || true
}

# The CUDA compiler a configured build folder uses (empty if none).
build_nvcc() { # BUILD
  meson introspect "$1" --compilers 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get("host", {}).get("cuda", {}).get("exelist", [""])[0])' \
      2>/dev/null || true
}

# Configures BUILD with the given meson options and -Dtoolkit_prefix=$cuda_home: `meson setup` the
# first time (quiet unless it fails if configure_quiet=true), `meson setup --reconfigure` after
# (quiet unless it fails), which also applies a changed CUDA_HOME. Meson records the CUDA compiler
# the first time: found on PATH it is called by name (`nvcc`), so it follows CUDA_HOME through PATH
# above; a build folder that was given another toolkit's nvcc by its full path gets a warning
# saying how to switch.
configure_quiet=false
configure_build() { # BUILD [MESON OPTION...]
  local build=$1 output
  shift
  # The development parts, off in a plain `meson setup` (meson_options.txt); the caller's options
  # come after these, and Meson takes the last value given.
  local options=(-Dtoolkit_prefix="$cuda_home" -Dtests=enabled -Dexamples=enabled -Dbenchmarks=auto "$@")
  if [ -f "$build/build.ninja" ]; then
    local before
    before=$(build_option "$build" toolkit_prefix)
    [ "$before" = "$cuda_home" ] || say "$build/: toolkit_prefix ${before:-?} -> $cuda_home (CUDA_HOME)"
    if ! output=$(meson setup --reconfigure "$build" "${options[@]}" 2>&1); then
      echo "$output"
      die "meson setup --reconfigure $build failed (output above)"
    fi
    local nvcc
    nvcc=$(build_nvcc "$build")
    case $nvcc in */*) ;; ?*) nvcc=$(command -v "$nvcc" || echo "$nvcc") ;; esac # found on PATH
    if [ -n "$nvcc" ] && [ "$(realpath "$nvcc" 2>/dev/null)" != "$(realpath "$cuda_home/bin/nvcc" 2>/dev/null)" ]; then
      warn "$build/ compiles CUDA with $nvcc, chosen when it was first configured, not $cuda_home/bin/nvcc;" \
           "'meson setup --wipe $build' (or a new build folder) switches it"
    fi
  elif [ "$configure_quiet" = true ]; then
    if ! output=$(meson setup "$build" "${options[@]}" 2>&1); then
      echo "$output"
      die "meson setup $build failed (output above)"
    fi
  else
    meson setup "$build" "${options[@]}" || die "meson setup $build failed (output above)"
  fi
}

# --- System packages ----------------------------------------------------------------------------

# Each need is "PACKAGE|LEVEL|WHAT|CHECK": the Debian package that provides it, required or
# optional, what it is for (said to the user) and a shell test that succeeds when it is present.
# Presence is tested directly (command -v, a header the compiler finds, a pkg-config module), not
# through dpkg, so anything installed by any means, on any system, counts.
debian_needs=()
need_deb() { # PACKAGE required|optional WHAT CHECK
  debian_needs+=("$1|$2|$3|$4")
}
has_command() { command -v "$1" >/dev/null 2>&1; }
has_header() { printf '#include <%s>\n' "$1" | "${CXX:-c++}" -E -x c++ - >/dev/null 2>&1; }
has_pkgconfig() { pkg-config --exists "$1" 2>/dev/null; }

# The needs whose check fails, as "PACKAGE|LEVEL|WHAT|CHECK" lines.
missing_debs() {
  local need check
  for need in "${debian_needs[@]}"; do
    check=${need##*|}
    eval "$check" >/dev/null 2>&1 || echo "$need"
  done
}

# Installs what is missing with apt (one line per package says so), or, without apt-get, names
# what to install. Then checks again: dies if a required one is still missing, warns for an
# optional one (its tests skip). Sets debs_installed to the number of packages installed.
# shellcheck disable=SC2034 # read by the caller
debs_installed=0
install_debs() {
  local missing=() need package level what
  mapfile -t missing < <(missing_debs)
  [ "${#missing[@]}" -eq 0 ] && return 0
  local packages=()
  for need in "${missing[@]}"; do
    IFS='|' read -r package level what _ <<<"$need"
    packages+=("$package")
  done
  if has_command apt-get; then
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
      has_command sudo || die "installing ${packages[*]} needs root: run as root, or install them yourself"
      sudo=(sudo)
    fi
    for need in "${missing[@]}"; do
      IFS='|' read -r package level what _ <<<"$need"
      say "installing $package with apt into the system: $what"
    done
    if "${sudo[@]}" apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}"; then
      # shellcheck disable=SC2034
      debs_installed=${#packages[@]}
    else
      warn "apt-get could not install ${packages[*]}"
    fi
    mapfile -t missing < <(missing_debs)
  else
    say "no apt-get here: install these with your system's package manager:"
    for need in "${missing[@]}"; do
      IFS='|' read -r package level what _ <<<"$need"
      say "  missing ($level): $what [Debian: $package]"
    done
  fi
  local fatal=0
  for need in "${missing[@]}"; do
    IFS='|' read -r package level what _ <<<"$need"
    if [ "$level" = required ]; then
      echo "$script_name: missing: $what [Debian: $package]" >&2
      fatal=1
    else
      warn "missing: $what [Debian: $package]; the tests that need it will SKIP"
    fi
  done
  [ "$fatal" = 0 ] || die "cannot continue without the required packages above"
}

# --- Python packages ----------------------------------------------------------------------------

python3_path() { python3 -c 'import sys; print(sys.executable)'; }

# Installs PINs (name==version) from PyPI into the python3 on PATH, one line per pin saying so.
pip_install() { # PIN...
  local python pin
  python=$(python3_path)
  for pin; do say "installing ${pin%%==*} ${pin#*==} from PyPI into $python"; done
  python3 -m pip install -q --disable-pip-version-check "$@"
}

# Unpacks folder FOLDER_IN_WHEEL of the wheel PACKAGE==VERSION (downloaded from PyPI, nothing
# installed into Python) to .deps/DEST, and records the pin in .deps/DEST/.pin. A pin already in
# place is not fetched again. Returns 0 when it was there already (sets wheel_unpacked=0) or was
# unpacked (wheel_unpacked=1); a failed download warns and returns 1.
unpack_wheel() { # WHAT PACKAGE VERSION FOLDER_IN_WHEEL DEST
  local what=$1 pin="$2==$3" folder=$4 dest="$streamlike_root/.deps/$5" tmp status
  # shellcheck disable=SC2034 # read by the caller
  wheel_unpacked=0
  [ "$(cat "$dest/.pin" 2>/dev/null)" = "$pin" ] && return 0
  say "unpacking $what (the $2 $3 wheel from PyPI) into .deps/$5"
  tmp=$(mktemp -d)
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: "$pin" -d "$tmp" &&
    python3 -m zipfile -e "$tmp"/*.whl "$tmp/unpacked" &&
    rm -rf "$dest" && mkdir -p "$(dirname "$dest")" && mv "$tmp/unpacked/$folder" "$dest" &&
    echo "$pin" >"$dest/.pin"
  status=$?
  rm -rf "$tmp"
  if [ "$status" != 0 ]; then
    warn "could not unpack $pin into .deps/$5; the tests that need it will SKIP"
    return 1
  fi
  # shellcheck disable=SC2034
  wheel_unpacked=1
}
