# Sourced by CI steps that try the project as a newcomer would.

# fresh_clone DEST: clones the commit checked out here (uncommitted changes are not in it) into DEST.
fresh_clone() {
  local dest=$1
  git clone --quiet --no-checkout --no-hardlinks "$PWD" "$dest"
  git -C "$dest" checkout --quiet --detach "$(git rev-parse HEAD)"
}

# bare_path DIR: fills DIR with links to Node, npm, a shell and `locale` (which the embedded PostgreSQL asks
# for the system's locales) only, and prints it, for a PATH that holds no browser, no compiler (cc, g++,
# make) and no python3. (/usr/bin cannot be on such a PATH: Debian's chromium and the compilers live there.)
# Shebangs still find /usr/bin/env by its absolute path.
bare_path() {
  local dir=$1 node_bin
  node_bin=$(dirname "$(command -v node)")
  mkdir -p "$dir"
  for tool in node npm npx; do ln -sf "$(readlink -f "$node_bin/$tool")" "$dir/$tool"; done
  for tool in sh bash locale; do ln -sf "$(readlink -f "$(command -v "$tool")")" "$dir/$tool"; done
  for tool in chromium cc gcc g++ c++ make python3; do
    if [ -e "$dir/$tool" ]; then
      echo "bare_path: $dir/$tool should not exist" >&2
      return 1
    fi
  done
  printf '%s\n' "$dir"
}
