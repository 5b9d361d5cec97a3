#!/usr/bin/env bash
# Debian's arm64 / armhf libraries that a full ARM cross build of ember links
# (the runtime, libember.so and the ember CLI), unpacked into a folder: the
# "deps sysroot" that cmake/toolchains/*.cmake take as EMBER_DEPS_SYSROOT.
#
#   scripts/cross-sysroot.sh ARCH DIR              ARCH: arm64 | armhf
#   scripts/cross-sysroot.sh --root ARCH DIR DEB... a clean root: the .deb files
#                                                  and, from Debian, exactly the
#                                                  closure of their Depends
#
# Why not `dpkg --add-architecture` and `apt-get install foo:arm64`: Debian's
# libcpp-httplib-dev and libedit-dev are not co-installable
# with their amd64 twins (Multi-Arch: none), and an installed libc6:arm64 makes
# programs under qemu-user hang (../shared/DEPS.md). So nothing is installed:
# apt runs with a private state (its own package lists for ARCH, an empty dpkg
# status) under the cache folder, downloads the packages (kept there for the
# next run) and `dpkg -x` unpacks them. The host's apt and dpkg are untouched;
# root is not needed.
#
# DIR also gets a dpkg database of what it holds (DIR/var/lib/dpkg: status,
# file lists, shlibs and symbols files), so that dpkg-shlibdeps, run with
# DPKG_ADMINDIR=DIR/var/lib/dpkg, computes the Depends of ARM binaries just as
# it does natively (cmake/EmberPackage.cmake).
#
# Cache: ${EMBER_DEB_CACHE:-$HOME/.cache/ember/debs}/ARCH.
set -euo pipefail

root_mode=0
if [ "${1:-}" = "--root" ]; then
  root_mode=1
  shift
fi
if [ $# -lt 2 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
arch="$1" dir="$(realpath -m "$2")"
shift 2
case "$arch" in
  arm64) triplet=aarch64-linux-gnu ;;
  armhf) triplet=arm-linux-gnueabihf ;;
  amd64) triplet=x86_64-linux-gnu ;;
  *) echo "cross-sysroot: unknown architecture '$arch' (arm64, armhf, amd64)" >&2; exit 2 ;;
esac

cache="${EMBER_DEB_CACHE:-$HOME/.cache/ember/debs}/$arch"
mkdir -p "$cache/lists/partial" "$cache/archives/partial"
touch "$cache/status"  # an empty dpkg status: apt resolves from nothing installed
apt_opts=(-q -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
  -o "Dir::State::Lists=$cache/lists" -o "Dir::State::status=$cache/status"
  -o "Dir::Cache=$cache" -o "Dir::Cache::archives=$cache/archives"
  -o Debug::NoLocking=1 -o APT::Sandbox::User=root)

# The package lists, once a day at most.
if [ -z "$(find "$cache/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
  echo "cross-sysroot: apt-get update ($arch lists under $cache)"
  if ! apt-get "${apt_opts[@]}" update >"$cache/update.log" 2>&1; then
    # A list that fails (the armhf security list's size mismatch on this mirror,
    # ../shared/DEPS.md) leaves the others usable: go on while the main one is there.
    if ls "$cache/lists/"*"_main_binary-${arch}_Packages"* >/dev/null 2>&1; then
      echo "cross-sysroot: warning: apt-get update failed for some lists; using those it got:" >&2
      grep -E "^(Err|E:|W:)" "$cache/update.log" | head -n 5 >&2 || true
    else
      cat "$cache/update.log" >&2
      exit 1
    fi
  fi
fi

# Prints the packages apt would install for "$@" (names, or ./file.deb) on an
# empty system, in dependency order.
closure() {
  apt-get "${apt_opts[@]}" -s install --no-install-recommends "$@" 2>&1 |
    awk '/^Inst /{print $2}' | sed 's/:.*//'
}

# Downloads packages into the cache (apt skips those already there) and prints
# the cache paths of the .deb files of the named packages.
fetch() {
  apt-get "${apt_opts[@]}" install -d -y --no-install-recommends "$@" >"$cache/fetch.log" 2>&1 ||
    { cat "$cache/fetch.log" >&2; exit 1; }
}
deb_of() {  # package -> its .deb in the cache (the candidate version)
  local pkg="$1" ver
  ver="$(apt-cache "${apt_opts[@]}" show --no-all-versions "$pkg" | awk '/^Version:/{print $2; exit}')"
  ver="${ver//:/%3a}"
  ls "$cache/archives/${pkg}_${ver}_"*.deb
}

# Unpacks a .deb into $dir and records it in $dir/var/lib/dpkg, with the file
# list under $dir (what dpkg-query --search matches for dpkg-shlibdeps).
admin="$dir/var/lib/dpkg"
unpack() {  # .deb [root to unpack into: $dir]
  local deb="$1" into="${2:-$dir}" pkg ctl
  pkg="$(dpkg-deb -f "$deb" Package)"
  dpkg-deb -x "$deb" "$into"
  ctl="$(mktemp -d)"
  dpkg-deb -e "$deb" "$ctl"
  local name="$pkg"
  if [ "$(dpkg-deb -f "$deb" Multi-Arch)" = same ]; then
    name="$pkg:$(dpkg-deb -f "$deb" Architecture)"
  fi
  dpkg-deb -c "$deb" | awk '{print $6}' | sed -e 's|^\./|/|' -e 's|/$||' -e '/^$/d' |
    sed "s|^|$into|" >"$admin/info/$name.list"
  for f in shlibs symbols; do
    if [ -f "$ctl/$f" ]; then cp "$ctl/$f" "$admin/info/$name.$f"; fi
  done
  rm -rf "$ctl"
  { dpkg-deb -f "$deb" Package Version Architecture Multi-Arch Source Depends Maintainer
    echo "Status: install ok installed"
    dpkg-deb -f "$deb" Description | sed -n '1s/^/Description: /p'
    echo; } | sed '/^[A-Za-z-]*: *$/d' >>"$admin/status"
}

rm -rf "$dir"
mkdir -p "$admin/info" "$admin/updates"
: >"$admin/status"
printf '%s\n' "$arch" >"$admin/arch"
echo 1 >"$admin/info/format"  # info files named pkg:arch for Multi-Arch: same packages

if [ "$root_mode" = 1 ]; then
  # A clean root: the given packages plus the closure of their Depends.
  debs=()
  for d in "$@"; do debs+=("$(realpath "$d")"); done
  mapfile -t pkgs < <(closure "${debs[@]}")
  ours=()
  for d in "${debs[@]}"; do ours+=("$(dpkg-deb -f "$d" Package)"); done
  deps=()
  for p in "${pkgs[@]}"; do
    case " ${ours[*]} " in *" $p "*) ;; *) deps+=("$p") ;; esac
  done
  if [ ${#deps[@]} -gt 0 ]; then fetch "${deps[@]}"; fi
  for p in "${deps[@]}"; do unpack "$(deb_of "$p")"; done
  for d in "${debs[@]}"; do unpack "$d"; done
  echo "cross-sysroot: $dir: $(basename -a "${debs[@]}" | tr '\n' ' ')+ ${#deps[@]} Debian packages (${deps[*]})"
else
  # What the build links: the -dev packages (headers, .so links, static
  # archives for EMBER_STATIC_CLI) and the closure of the runtime libraries.
  # The C and C++ runtime (libc6, libstdc++6, libgcc-s1, libgomp1) come with
  # the closure: the compiler links the cross toolchain's own, but
  # dpkg-shlibdeps needs these packages' symbols files. They go to DIR/crt,
  # out of the compiler's and linker's sight.
  dev=(libedit-dev libbsd-dev libmd-dev libncurses-dev
    libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev nlohmann-json3-dev)
  runtime=(libedit2 libcpp-httplib0.11 libgomp1 libstdc++6
    libncurses6 libncursesw6)
  crt=" libc6 libgcc-s1 libstdc++6 libgomp1 gcc-12-base "
  mapfile -t pkgs < <({ printf '%s\n' "${dev[@]}"; closure "${runtime[@]}"; } | sort -u)
  fetch "${pkgs[@]}"
  for p in "${pkgs[@]}"; do
    case "$crt" in
      *" $p "*) unpack "$(deb_of "$p")" "$dir/crt" ;;
      *) unpack "$(deb_of "$p")" ;;
    esac
  done
  echo "cross-sysroot: $dir: ${#pkgs[@]} Debian $arch packages"
fi

# Absolute symbolic links (libfoo.so -> /lib/<triplet>/libfoo.so.N) would
# point into the host: make them relative, inside $dir.
for into in "$dir/crt" "$dir"; do
  [ -d "$into" ] || continue
  prune="$dir/crt"
  [ "$into" = "$dir/crt" ] && prune=/nonexistent
  find "$into" -path "$prune" -prune -o -type l -lname '/*' -print | while read -r link; do
    target="$(readlink "$link")"
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$into$target")" "$link"
  done
done
