#!/usr/bin/env bash
# Hostile files beside mlasim's outputs and in golden folders, as `run`, `check --dry-run` and
# `golden update` meet them: journals forged with a valid checksum (relative, absolute and
# outside-the-outputs paths), a symlinked journal, a symlinked temporary, FIFOs named like
# journals, another user's journal, a symlinked staging folder, and a config.json that is a FIFO.
# After each command a watched sentinel tree outside the named outputs is byte for byte and entry
# for entry as it was, nothing hangs (every command runs under a 60 s timeout), and a note names
# what was left alone.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
make_scratch
scenario="$root/scenarios/seed/lone_one_token_prompt.yaml"
name=lone_one_token_prompt
victim="$scratch/victim"
work="$scratch/work"
gone=999999999

sentinel() {  # every entry under the victim tree: path, type, owner, link target, and file hashes
  (cd "$victim" && find . -printf '%P %y %U %l\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
setup() {  # a fresh victim tree and work folder; the victim's snapshot in $before
  rm -rf "$victim" "$work"
  mkdir -p "$victim/sub" "$work"
  printf 'root:x:0:0\n' >"$victim/passwd"
  printf 'precious\n' >"$victim/sub/data"
  printf 'old\n' >"$work/run.json"
  before=$(sentinel)
}
victim_unchanged() {  # victim_unchanged NAME
  if [[ "$(sentinel)" != "$before" ]]; then echo "FAIL $1: the sentinel tree changed"; diff <(echo "$before") <(sentinel) | head; fail=1; fi
}
# seal FILE: appends mlasim's checksum line (FNV-1a 64 of the contents) as a forger would.
seal() {
  python3 - "$1" <<'EOF'
import sys
p = sys.argv[1]
data = open(p, 'rb').read()
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
open(p, 'ab').write(b'checksum %016x\n' % h)
EOF
}
entry() { printf '%d:%s\n' "${#1}" "$1"; }  # a journal entry: <length>:<path>
run_json() {  # run_json NAME RC: `mlasim run --dry-run --json $work/run.json` under a timeout
  check "$1" "$2" timeout 60 "$mlasim" run "$scenario" --dry-run --table none --json "$work/run.json"
}

# 1. A forged journal beside run.json naming a file outside (absolute, then relative), checksum valid.
for target in "$victim/passwd" "../victim/passwd"; do
  setup
  printf 'attacker\n' >"$victim/passwd.tmp.$gone"
  before=$(sentinel)
  { echo "mlasim-publish-journal 2"; entry "$target.tmp.$gone"; entry "$target"; echo end; } >"$work/run.json.publish.$gone"
  seal "$work/run.json.publish.$gone"
  run_json "forged journal $target" 0
  contains "forged journal $target" "note: left $work/run.json.publish.$gone alone: a journal of process $gone, but it names"
  victim_unchanged "forged journal $target"
  grep -q '"scenario"' "$work/run.json" || { echo "FAIL forged journal $target: run.json not written"; fail=1; }
done

# 2. A journal that is a symbolic link to a valid journal, and a temporary that is a link.
setup
{ echo "mlasim-publish-journal 2"; entry "$work/run.json.tmp.$gone"; entry "$work/run.json"; echo end; } >"$victim/j"
seal "$victim/j"
before=$(sentinel)
ln -s "$victim/j" "$work/run.json.publish.$gone"
ln -s "$victim/passwd" "$work/run.json.tmp.$gone"
run_json "symlinked journal and temporary" 0
contains "symlinked journal and temporary" "named like a journal but a symbolic link"
contains "symlinked journal and temporary" "named like a temporary of mlasim's but a symbolic link"
victim_unchanged "symlinked journal and temporary"
[[ -f "$work/run.json" && ! -L "$work/run.json" ]] || { echo "FAIL symlinked temporary: run.json became a link"; fail=1; }

# 3. FIFOs named like a journal and a temporary: no hang, left alone.
setup
mkfifo "$work/run.json.publish.$gone" "$work/run.json.tmp.$gone"
run_json "FIFO journal" 0
contains "FIFO journal" "named like a journal but a FIFO"
[[ -p "$work/run.json.publish.$gone" ]] || { echo "FAIL FIFO journal: the FIFO was removed"; fail=1; }
victim_unchanged "FIFO journal"

# 4. Another user's journal (as root only: a file can be given away).
if [[ $(id -u) -eq 0 ]]; then
  setup
  printf 'new\n' >"$work/run.json.tmp.$gone"
  { echo "mlasim-publish-journal 2"; entry "$work/run.json.tmp.$gone"; entry "$work/run.json"; echo end; } >"$work/run.json.publish.$gone"
  seal "$work/run.json.publish.$gone"
  chown 12345:12345 "$work/run.json.publish.$gone" "$work/run.json.tmp.$gone"
  run_json "another user's journal" 0
  contains "another user's journal" "owned by another user (uid 12345)"
  [[ -f "$work/run.json.tmp.$gone" ]] || { echo "FAIL another user's journal: its temporary was removed"; fail=1; }
  victim_unchanged "another user's journal"
else
  echo "note: not root: the another-user case is skipped"
fi

# 5. Golden folders: a forged journal naming ../victim, an absolute path; a FIFO journal; a
#    symlinked staging folder. check --dry-run and golden update both meet them.
golden_setup() {
  setup
  rm -rf "$scratch/g"
  mkdir -p "$scratch/g"
  cp -r "$root/golden/$name" "$scratch/g/$name"
  golden_before=$(cd "$scratch/g/$name" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
golden_unchanged() {
  [[ "$(cd "$scratch/g/$name" && find . -type f -print0 | sort -z | xargs -0 sha256sum)" == "$golden_before" ]] ||
    { echo "FAIL $1: the golden changed"; fail=1; }
  [[ -d "$scratch/g/$name" && ! -L "$scratch/g/$name" ]] || { echo "FAIL $1: the golden is no longer a folder"; fail=1; }
}
for forged in "../victim" "$victim" ".."; do
  golden_setup
  { echo "mlasim-golden-update-journal 2"; echo "$forged"; echo end; } >"$scratch/g/.golden-update.$gone"
  seal "$scratch/g/.golden-update.$gone"
  check "golden journal $forged" 0 timeout 60 "$mlasim" check "$scenario" --golden-dir "$scratch/g" --dry-run
  contains "golden journal $forged" "alone: named like a \`golden update\` journal but a name in it"
  victim_unchanged "golden journal $forged"
  golden_unchanged "golden journal $forged"
done
golden_setup
mkfifo "$scratch/g/.golden-update.$gone"
check "golden FIFO journal" 0 timeout 60 "$mlasim" check "$scenario" --golden-dir "$scratch/g" --dry-run
contains "golden FIFO journal" "named like a \`golden update\` journal but a FIFO"
golden_setup
touch "$victim/.staged-by-golden-update.$gone"
before=$(sentinel)
{ echo "mlasim-golden-update-journal 2"; echo "$name"; echo end; } >"$scratch/g/.golden-update.$gone"
seal "$scratch/g/.golden-update.$gone"
ln -s "$victim" "$scratch/g/.$name.new.$gone"
check "symlinked staging folder" 0 timeout 60 "$mlasim" golden update "$scenario" --golden-dir "$scratch/g"
contains "symlinked staging folder" "not a staging folder mlasim finished (a symbolic link)"
victim_unchanged "symlinked staging folder"
[[ -d "$scratch/g/$name" && ! -L "$scratch/g/$name" ]] || { echo "FAIL symlinked staging folder: the golden is a link"; fail=1; }
check "golden after update" 0 "$mlasim" check "$scenario" --golden-dir "$scratch/g"

# 6. A config.json that is a FIFO with no writer: deploy, run and check answer at once (exit 2).
setup
mkfifo "$work/config.json"
check "deploy FIFO config" 2 timeout 60 "$mlasim" deploy --hf-config "$work/config.json"
contains "deploy FIFO config" "is a FIFO, not a regular file"
sed "s|../hf_configs/glm-5.json|$work/config.json|" "$root/scenarios/deploy/glm5_dsa_h200_tp8.yaml" >"$work/fifo.yaml"
check "run FIFO config" 2 timeout 60 "$mlasim" run "$work/fifo.yaml" --dry-run
contains "run FIFO config" "is a FIFO, not a regular file"
check "check FIFO config" 2 timeout 60 "$mlasim" check "$work/fifo.yaml" --dry-run
contains "check FIFO config" "is a FIFO, not a regular file"

# 7. A FIFO where a golden's split.txt should be: check answers at once.
golden_setup
rm "$scratch/g/$name/split.txt"
mkfifo "$scratch/g/$name/split.txt"
check "FIFO split golden" 2 timeout 60 "$mlasim" check "$scenario" --golden-dir "$scratch/g" --dry-run
contains "FIFO split golden" "is a FIFO, not a regular file"

[[ $fail -eq 0 ]] && echo "hostile journals: all passed"
exit $fail
