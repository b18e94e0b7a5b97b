#!/bin/sh
# Fills fuzz/corpus/<target>/ with the repository's fixtures (not committed), so
# that the fuzzers start from realistic inputs. Run from anywhere.
set -eu
cd "$(dirname "$0")/.."
out=fuzz/corpus
mkdir -p $out/rust_frontend $out/yaml_frontend $out/config $out/suppress
# Each file under a name made of its path, so that equal base names do not collide.
copy() { # DIR FILE...
    dir=$1
    shift
    for f in "$@"; do cp "$f" "$out/$dir/$(echo "$f" | tr / _)"; done
}
copy rust_frontend $(find fixtures examples -name '*.rs' -size -64k)
copy yaml_frontend $(find fixtures examples \( -name '*.yml' -o -name '*.yaml' \) -size -64k)
copy config $(find fixtures tests/data rules -name '*.toml' ! -name Cargo.toml -size -64k)
# The config example of docs/configuration.md, and the API packs' own tables as `[apis]` lists.
sed -n '/^```toml$/,/^```$/p' docs/configuration.md | grep -v '^```' > $out/config/readme.toml
copy suppress $(grep -rl 'msgaudit:allow' fixtures tests src)
copy suppress $(find fixtures -name '*.yml' -size -16k | head -20)
for t in rust_frontend yaml_frontend config suppress; do
    echo "$t: $(ls $out/$t | wc -l) seeds"
done
