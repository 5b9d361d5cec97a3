#!/usr/bin/env bash
# Installs the Debian packages ember's build and tests need. Idempotent: a
# package already installed is not fetched again. Works as root or via sudo.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config catch2 libgomp1
  ccache  # scripts/test.sh: the builds of a fresh clone from the cache
  nlohmann-json3-dev  # chat templates: messages and tools as JSON
  python3-jinja2  # scripts/render_templates.py: the expected chat template renderings
  libdnnl-dev ocl-icd-opencl-dev libxnnpack-dev libpthreadpool-dev
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user-static
  clang-format python3 python3-pip
  libsimde-dev  # ember_kernel_tests_avx512emu: the AVX-512 kernels tested on AVX2 hosts
  time  # /usr/bin/time -v: peak RSS in bench/compare.sh
  llvm-14  # llvm-mca-14: bench/mca/mca_arm.py (ARM kernel cost on paper)
  libedit-dev  # ember chat: line editing and history
  tmux  # tests that drive ember chat as a person would
  libcpp-httplib-dev  # ember serve: HTTP (nlohmann-json3-dev above: its JSON)
  nginx  # tests/serve/nginx_lb_test.py: ember serve behind a load balancer (docs/DEPLOY.md)
  chromium  # tests/serve/browser_test.py: the chat page of ember serve, headless
  clang-14 libclang-rt-14-dev libfuzzer-14-dev libomp-14-dev  # the fuzz targets (tests/fuzz)
  # The Debian packages (cpack, scripts/package-smoke.sh): dpkg-shlibdeps,
  # file, gzip for the man page. ARM builds get Debian's arm64/armhf libraries
  # from scripts/cross-sysroot.sh (apt-get download, no install).
  dpkg-dev file gzip
  libncurses-dev libbsd-dev libmd-dev  # EMBER_STATIC_CLI: libedit's static dependencies
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

install_python_packages() {
  # The server's Python test (tests/serve/openai_client_test.py) talks to
  # `ember serve` with the openai client and checks JSON with jsonschema, both
  # from PyPI; scripts/validate.sh (not CI) computes its per-position KL with
  # numpy when it is there (pure Python over a 150k vocabulary took minutes per
  # text instead of seconds). Debian 12's python3 is "externally managed": pip
  # then needs --break-system-packages (a pyenv or venv python does not).
  if python3 -c "import openai, jsonschema, numpy" 2>/dev/null; then
    echo "setup: python packages openai, jsonschema and numpy are installed"
    return 0
  fi
  echo "setup: pip install openai jsonschema numpy"
  python3 -m pip install --quiet openai jsonschema numpy 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages openai jsonschema numpy ||
    echo "setup: warning: pip could not install openai/jsonschema/numpy; the server's Python test will be skipped" >&2
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  install_python_packages
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "setup: error: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
"${SUDO[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
install_python_packages
