"""The main conformance corpus, as data: bash commands (and a few Write/Edit calls) × rule sets × modes.

The case format is ``builder.py``'s; the workspace is ``template.py``'s. Every command is harmless where it
runs: payloads only leave a ``PWNED`` sentinel, and anything that writes writes inside the throwaway run
directory or the jail's ``/tmp``.
"""

from __future__ import annotations

from typing import Any

from tests.fsm.policy.conformance.builder import THREE, Corpus

__all__ = ["CASES"]

_corpus = Corpus()
bash, write = _corpus.bash, _corpus.write
CASES: list[dict[str, Any]] = _corpus.cases
EVERY = ("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk")

# -- everyday commands a user expects to run -----------------------------------------------------------------
SAFE = [
    "ls",
    "ls -la",
    "ls src",
    "pwd",
    "git status",
    "git log --oneline -5",
    "git diff",
    "git diff HEAD -- src",
    "git show --stat HEAD",
    "git branch",
    "cat README.md",
    "head -5 src/app.py",
    "tail -n 2 notes.txt",
    "wc -l README.md src/app.py",
    "grep -rn main src",
    "grep -c demo README.md",
    "find src -name '*.py'",
    "sort notes.txt",
    "diff README.md notes.txt",
    "stat README.md",
    "du -sh src",
    "echo hello",
    "cat src/app.py | grep def",
    "ls src && cat README.md",
    "git log --oneline | head -3",
    "file README.md",
    "which git",
    "uniq notes.txt",
    "cut -c1-4 notes.txt",
    "tr a-z A-Z < notes.txt",
]
bash("safe", SAFE, modes=("default", "acceptEdits"), safe=True)
bash("safe-rule", ["npm test", "npm run test"], allow=["Bash(npm test)", "Bash(npm run test)"], safe=True)
bash("safe-rule", ["make", "make all"], allow=["Bash(make:*)"], safe=True)
bash("safe-rule", ["python3 -c 'print(1)'"], allow=["Bash(python3:*)"], safe=True)
bash(
    "safe-rule",
    ["git add notes.txt", "git commit -qm wip --allow-empty"],
    allow=["Bash(git add:*)", "Bash(git commit:*)"],
    safe=True,
    solo=True,
)
bash(
    "safe-rule",
    ["mkdir -p build", "touch build/out.txt", "cp notes.txt build/"],
    modes=("acceptEdits",),
    safe=True,
    solo=True,
)

# -- wrappers in front of a ruled command ---------------------------------------------------------------------
WRAPPED = [
    "timeout 5 git diff",
    "nice git diff",
    "nice -n 5 git diff",
    "nohup git diff",
    "time git diff",
    "env git diff",
    "env -i git diff",
    "command git diff",
    "stdbuf -o0 git diff",
    "exec git diff",
    "sh -c 'git diff'",
    "bash -c 'git diff'",
    "eval git diff",
    "xargs git diff < /dev/null",
    "git diff; touch PWNED",
    "git diff && touch PWNED",
    "git diff || touch PWNED",
    "git diff | sh",
    "git diff & touch PWNED",
    "(git diff)",
    "{ git diff; }",
    "git diff $(touch PWNED)",
    "git diff `touch PWNED`",
    "git diff\ntouch PWNED",
]
bash("wrap", WRAPPED, allow=["Bash(git diff:*)"])
bash("wrap", ["timeout 5 ls", "nice ls", "env ls", "command ls", "nohup ls", "time ls", "xargs ls < /dev/null"])

# -- leading assignments ----------------------------------------------------------------------------------------
ASSIGNED = [
    "GIT_EXTERNAL_DIFF=./scripts/build.sh git diff",
    "GIT_PAGER=./scripts/build.sh git diff",
    "GIT_CONFIG_PARAMETERS=\"'core.pager=touch PWNED'\" git diff",
    "LC_ALL=C git diff",
    "FOO=1 git diff",
    "PATH=scripts:$PATH git diff",
]
bash("assign", ASSIGNED, allow=["Bash(git diff:*)"])
bash(
    "assign",
    [
        "PATH=scripts:$PATH ls",
        "LC_ALL=C ls",
        "FOO=bar ls",
        "LD_PRELOAD=./nothing.so ls",
        "BASH_ENV=scripts/build.sh ls",
    ],
)
bash(
    "assign",
    ["NODE_OPTIONS='--require ./src/app.py' npm test", "npm_config_script_shell=./scripts/build.sh npm test"],
    allow=["Bash(npm test)"],
)
bash("assign", ["X=1", "X=$(touch PWNED)", "export X=1"])

# -- paths: ~, $HOME, ${HOME}, globs, --opt=PATH, outside the workspace ------------------------------------------
PATHS = [
    "cat ~/.ssh/id_rsa",
    "cat $HOME/.ssh/id_rsa",
    'cat "${HOME}"/.ssh/id_rsa',
    "cat ${HOME}/.ssh/id_rsa",
    "cat ~/notes.txt",
    "ls ~",
    "ls ..",
    "cat ../home/notes.txt",
    "ls /",
    "cat /etc/hostname",
    "cat /etc/passwd",
    "head -1 ~/.bashrc",
    "grep -r key ~/.ssh",
    "find ~ -name id_rsa",
    "ls ~/.ssh",
    "wc -c ~/.ssh/id_rsa",
    "cat ~root/.bashrc",
    "cat /proc/self/environ",
    "cd .. && ls",
    "cd ~ && cat notes.txt",
    "cat src/../../home/notes.txt",
    "cat /*/hostname",
    "ls ../*",
    "cat ~/.*rc",
    "grep --file=$HOME/notes.txt README.md",
    "diff --from-file=$HOME/notes.txt README.md",
    "sort --output=$HOME/out.txt notes.txt",
    "sort -o ~/out.txt notes.txt",
    "ls --directory=~",
    "cat -- ~/.ssh/id_rsa",
]
bash("path", PATHS, modes=("default", "acceptEdits"))
bash("path", ["cat ~/.ssh/id_rsa", "cat $HOME/.ssh/id_rsa", "cat ~/notes.txt"], allow=["Bash(cat:*)"])

# -- Read/Edit deny rules --------------------------------------------------------------------------------------
SECRET_READS = [
    "cat secrets/key.txt",
    "cat ./secrets/key.txt",
    "cat sec*/key.txt",
    "cat s?crets/key.txt",
    "cat secrets/*",
    "cat {secrets,src}/key.txt",
    "cat secrets//key.txt",
    "cat src/../secrets/key.txt",
    "head secrets/key.txt",
    "grep -r key secrets",
    "grep -r not-a-real .",
    "cd secrets && cat key.txt",
    "base64 secrets/key.txt",
    "cp secrets/key.txt /tmp/k",
    "tar cf /tmp/s.tar secrets",
    "cat < secrets/key.txt",
    "ls secrets",
    "git show HEAD:secrets/key.txt",
    "git diff --no-index secrets/key.txt README.md",
    "sort secrets/key.txt",
]
bash("read-deny", SECRET_READS, deny=["Read(./secrets/**)"])
bash(
    "read-deny",
    ["cat ~/.ssh/id_rsa", "cat $HOME/.ssh/id_rsa", "ls ~/.ssh", "cat ~/notes.txt"],
    deny=["Read(~/.ssh/**)"],
    allow=["Bash(cat:*)", "Bash(ls:*)"],
)
EDIT_DENIED = [
    "echo x > src/app.py",
    "echo x >> src/util.py",
    "sed -i s/main/x/ src/app.py",
    "cp notes.txt src/app.py",
    "touch src/new.py",
    "rm src/util.py",
    "mv src/util.py src/u.py",
    "tee src/app.py < notes.txt",
]
bash("edit-deny", EDIT_DENIED, modes=("acceptEdits", "bypassPermissions"), deny=["Edit(./src/**)"], solo=True)

# -- redirections, here-strings, process substitution -------------------------------------------------------
REDIRECTS = [
    "echo hi > out.txt",
    "echo hi >> notes.txt",
    "echo hi > ~/out.txt",
    "echo hi > /tmp/out.txt",
    "ls > /dev/null",
    "ls 2>/dev/null",
    "ls 2>&1",
    "ls &> out.txt",
    "ls >| out.txt",
    "> notes.txt",
    ": > notes.txt",
    "> ~/notes.txt",
    "ls && > notes.txt",
    "ls; > ~/notes.txt",
    ">> notes.txt",
    "cat <<< hello",
    "cat <<< $HOME",
    "cat <<EOF\nhello\nEOF",
    "cat < README.md",
    "cat < ~/notes.txt",
    "cat <(ls)",
    "diff <(ls) <(ls src)",
    "echo x | tee out.txt",
    "echo x | tee ~/out.txt",
    "exec 3> out.txt",
    "ls > out.txt 2>&1",
]
bash("redirect", REDIRECTS, modes=THREE, solo=True)
bash(
    "redirect",
    ["npm test > ~/.bashrc", "npm test > out.txt", "npm test 2>&1", "npm test > /dev/null"],
    allow=["Bash(npm test)"],
    solo=True,
)
bash(
    "redirect",
    ["git diff > out.txt", "git diff > ~/out.txt", "git diff > .git/hooks/pre-commit"],
    allow=["Bash(git diff:*)"],
    solo=True,
)
bash(
    "redirect",
    ["echo hi > out.txt", "echo hi > ~/.bashrc", "echo '{}' > .claude/settings.local.json"],
    allow=["Bash(echo:*)"],
    solo=True,
)

# -- protected files ---------------------------------------------------------------------------------------
PROTECTED = [
    "echo x >> .git/config",
    "echo x > .git/hooks/pre-commit",
    "echo x > .git/info/attributes",
    "echo '{}' > .claude/settings.local.json",
    "echo '{}' > .claude/settings.json",
    "echo '{}' > .mcp.json",
    "echo '{}' > .vscode/tasks.json",
    "echo X=1 >> .env",
    "echo X=1 > .env.local",
    "echo x >> ~/.bashrc",
    "echo x >> ~/.profile",
    "echo x > .bashrc",
    "echo x > ~/.zshrc",
    "echo x > ~/.gitconfig",
    "cp notes.txt .git/hooks/post-checkout",
    "mv notes.txt .claude/settings.json",
    "sed -i s/main/x/ .git/config",
    "git config core.pager cat",
    "git config --global core.pager cat",
    "echo x | tee -a .git/config",
    "ln -s ../../notes.txt .git/hooks/pre-commit",
    "touch .env.production",
    "mkdir .idea",
    "touch .claude/new.md",
]
bash("protected", PROTECTED, modes=THREE, solo=True)
bash(
    "protected",
    ["echo x >> .git/config", "echo '{}' > .claude/settings.local.json", "echo x >> ~/.bashrc"],
    allow=["Bash(echo:*)"],
    modes=("default", "bypassPermissions"),
    solo=True,
)

# -- read-only look-alikes -------------------------------------------------------------------------------------
LOOKALIKES = [
    "[[ 'a[$(touch PWNED)]' -eq 0 ]]",
    "[ 'a[$(touch PWNED)]' -eq 0 ]",
    "test -v 'a[$(touch PWNED)]'",
    "printf -v 'a[$(touch PWNED)]' x",
    "printf -v x hello",
    "hostname -F notes.txt",
    "hostname",
    "date --file=notes.txt",
    "date -f ~/notes.txt",
    "date",
    "wc --files0-from=notes.txt",
    "du --files0-from=notes.txt",
    "git diff --no-index ~/.ssh/id_rsa README.md",
    "git diff --no-index README.md notes.txt",
    "git diff --output=out.txt",
    "git diff --output=$HOME/out.txt",
    "git log --output=out.txt",
    "git -c core.pager='touch PWNED' log",
    "git -c diff.external=./scripts/build.sh diff",
    "git diff --ext-diff",
    "git -C .. status",
    "git --git-dir=.git log -1",
    "git log --format=%H -1",
    "sort --compress-program=./scripts/build.sh notes.txt",
    "find . -name x -exec touch PWNED \\;",
    "find . -fprint out.txt",
    "sed -n 'w out.txt' README.md",
    "sed -n 1p README.md",
    "awk '{print}' README.md",
    "awk 'BEGIN{system(\"touch PWNED\")}'",
    "xargs -a notes.txt echo",
    "man -P 'touch PWNED' ls",
    "less README.md",
    "git grep -O'touch PWNED' main",
    "rg --pre ./scripts/build.sh main",
    "tree -o out.txt",
]
bash("lookalike", LOOKALIKES, modes=("default", "plan"), solo=True)
bash(
    "lookalike",
    [
        "git diff --output=out.txt",
        "git diff --no-index ~/.ssh/id_rsa README.md",
        "git -c diff.external=./scripts/build.sh diff",
        "git diff --ext-diff",
    ],
    allow=["Bash(git diff:*)"],
    solo=True,
)

# -- basename tricks -------------------------------------------------------------------------------------------
BASENAME = [
    "./scripts/git diff",
    "scripts/git diff",
    "$PWD/scripts/git diff",
    "/usr/bin/git diff",
    '"git" diff',
    "g\\it diff",
    "'git' diff",
]
bash("basename", BASENAME, allow=["Bash(git diff:*)"], solo=True)
bash("basename", ["./scripts/ls", "scripts/ls -la", "/bin/ls", "./scripts/build.sh"], solo=True)

# -- exact, prefix and wildcard rules; ask and deny rules -------------------------------------------------
bash(
    "rule-exact",
    [
        "npm test",
        "npm test --watch",
        "npm testx",
        "npm test && touch PWNED",
        "npm test; touch PWNED",
        "npm test | cat",
        "npm  test",
        "npm run test",
    ],
    allow=["Bash(npm test)"],
)
bash(
    "rule-prefix",
    ["npm run test", "npm run build", "npm run-script test", "npm run", "npm runx"],
    allow=["Bash(npm run:*)"],
)
bash(
    "rule-wild",
    ["git log --oneline", "git log -1 --oneline", "git log", "git log --oneline && touch PWNED"],
    allow=["Bash(git log * --oneline)", "Bash(git log --oneline)"],
)
bash(
    "rule-wild",
    ["echo hi", "echo hi && touch PWNED", "echo $(touch PWNED)", "echo hi > out.txt"],
    allow=["Bash(echo *)"],
    solo=True,
)
bash("rule-wild", ["python3 -c 'print(1)'", "python3 scripts/build.sh", "python3"], allow=["Bash(python3 -c *)"])
bash(
    "rule-deny",
    [
        "rm -f notes.txt",
        "/bin/rm -f notes.txt",
        "command rm -f notes.txt",
        "env rm -f notes.txt",
        "timeout 5 rm -f notes.txt",
        "sh -c 'rm -f notes.txt'",
        "echo notes.txt | xargs rm -f",
        "find . -name notes.txt -delete",
        "unlink notes.txt",
        "ls && rm -f notes.txt",
    ],
    modes=("default", "bypassPermissions"),
    deny=["Bash(rm:*)"],
    solo=True,
)
bash(
    "rule-deny",
    ["git push", "git push origin main", "git  push", "git -C . push", "cd . && git push"],
    modes=("default", "bypassPermissions"),
    deny=["Bash(git push:*)"],
)
bash(
    "rule-ask",
    ["git status", "git status --short", "git status && ls", "ls; git status"],
    modes=("default", "bypassPermissions"),
    ask=["Bash(git status:*)"],
)
bash("rule-ask", ["git diff", "git diff HEAD"], allow=["Bash(git diff:*)"], ask=["Bash(git diff HEAD)"])
bash(
    "rule-mixed",
    ["git add notes.txt", "git add .", "git add -A && git commit -m x"],
    allow=["Bash(git add:*)"],
    deny=["Bash(git commit:*)"],
    solo=True,
)

# -- plan and dontAsk modes ---------------------------------------------------------------------------------
bash(
    "mode",
    [
        "ls",
        "git status",
        "cat README.md",
        "echo hi > out.txt",
        "touch new.txt",
        "npm test",
        "cat ~/.ssh/id_rsa",
        "git diff",
    ],
    modes=("plan", "dontAsk"),
    solo=True,
)
bash("mode", ["npm test", "touch new.txt"], modes=("dontAsk",), allow=["Bash(npm test)"], solo=True)

# -- the file tools on protected and ordinary paths ------------------------------------------------------------
write(
    "file",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        ".claude/settings.local.json",
        ".mcp.json",
        ".vscode/tasks.json",
        ".env",
        "~/.bash_profile",
        ".bashrc",
    ],
)
write("file", ["src/new.py", "notes.txt"], safe=True)
write("file", ["README.md"], tool="Edit", old="# demo", new="# Demo", safe=True)
write("file", [".git/config"], tool="Edit", old="[core]", new="[core]\n\tpager = cat")
write("file", [".vscode/settings.json"], tool="Edit", old="{}", new='{"a": 1}')
write("file", [".git/config"], modes=("acceptEdits", "bypassPermissions"), allow=["Edit(./.git/config)"])
write("file", ["src/app.py"], modes=("acceptEdits", "bypassPermissions"), deny=["Edit(./src/**)"])

# -- more everyday commands -------------------------------------------------------------------------------------
bash(
    "safe2",
    [
        "git log --graph --oneline -5",
        "git show HEAD --name-only",
        "git rev-parse HEAD",
        "git remote -v",
        "git tag",
        "git stash list",
        "git blame README.md",
        "git ls-files",
        "git diff --cached",
        "git shortlog -sn HEAD",
        "git describe --always",
        "git log -p -1 -- src/app.py",
        "ls -R src",
        "ls -lh",
        "ls -d */",
        "find . -type f -name '*.py'",
        "find . -maxdepth 1 -type d",
        "grep -ri todo .",
        "grep -l def src/*.py",
        "grep -rn --include='*.py' def .",
        "head -20 README.md src/app.py",
        "tail -5 src/app.py",
        "wc -c notes.txt",
        "sort -u notes.txt",
        "cat -n src/app.py",
        "nl src/app.py",
        "basename src/app.py",
        "dirname src/app.py",
        "realpath README.md",
        "readlink -f README.md",
        "md5sum README.md",
        "sha256sum README.md",
        "cmp README.md notes.txt",
        "diff -u README.md notes.txt",
        "stat -c %s README.md",
        "du -a src",
        "python3 --version",
        "node --version",
        "git --version",
        "uname -a",
        "whoami",
        "id",
        "printenv HOME",
        "echo $HOME",
        "df -h .",
        "type git",
        "command -v git",
        "test -f README.md && echo yes",
        "[ -d src ] && echo dir",
        "true",
        "date +%Y",
        "seq 1 3",
        "expr 1 + 2",
        "ls | wc -l",
        "git status && git diff --stat",
        "cd src && ls",
        "cat package.json | head -3",
        "jq . package.json",
        "column -t notes.txt",
        "sed -n 2p README.md",
    ],
    safe=True,
)
bash("safe2", ["npm run test"], allow=["Bash(npm run test:*)"], safe=True)
bash("safe2", ["pytest -q"], allow=["Bash(pytest:*)"], safe=True)
bash("safe2", ["python3 -m pytest -q"], allow=["Bash(python3 -m pytest:*)"], safe=True)
bash("safe2", ["cargo test"], allow=["Bash(cargo test:*)"], safe=True)
bash("safe2", ["go test ./..."], allow=["Bash(go test:*)"], safe=True)
bash("safe2", ["ruff check ."], allow=["Bash(ruff check:*)"], safe=True)
bash("safe2", ["./scripts/build.sh"], allow=["Bash(./scripts/build.sh)"], safe=True, solo=True)
bash(
    "safe2", ["git add -A", "git commit -qm wip"], allow=["Bash(git add:*)", "Bash(git commit:*)"], safe=True, solo=True
)

# -- broad prefix rules and what they let through -----------------------------------------------------------------
bash(
    "rule-broad",
    [
        "git -c core.pager='touch PWNED' log",
        "git diff --output=out.txt",
        "git --output=out.txt diff",
        "git config core.fsmonitor 'touch PWNED'",
        "git log && touch PWNED",
        "git status > out.txt",
    ],
    allow=["Bash(git:*)"],
    solo=True,
)
bash(
    "rule-broad",
    ["ls; touch PWNED", "ls $(touch PWNED)", "ls > out.txt", "ls ~/.ssh", "ls -la ..", "ls | sh"],
    allow=["Bash(ls:*)"],
    solo=True,
)
bash(
    "rule-broad",
    ["cat secrets/key.txt > /tmp/x", "cat README.md | sh", "cat /etc/hostname", "cat .env"],
    allow=["Bash(cat:*)"],
    solo=True,
)
bash(
    "rule-broad",
    ["find . -name x -exec touch PWNED \\;", "find src -name '*.pyc' -delete", "find ~ -name id_rsa"],
    allow=["Bash(find:*)"],
    solo=True,
)
bash("rule-broad", ["grep -r key ~/.ssh", "grep -r key .", "grep key secrets/key.txt"], allow=["Bash(grep:*)"])
bash(
    "rule-broad",
    ["grep -r key .", "grep key secrets/key.txt", "grep -r key secrets"],
    allow=["Bash(grep:*)"],
    deny=["Read(./secrets/**)"],
)
bash(
    "rule-broad",
    ["npm run test -- && touch PWNED", "npm run test > out.txt"],
    allow=["Bash(npm run:*)"],
    solo=True,
)
bash(
    "rule-deny2",
    [
        "curl --version",
        "/usr/bin/curl --version",
        "command curl --version",
        "env curl --version",
        "c\\url --version",
        "timeout 5 curl --version",
        "$(echo curl) --version",
        "bash -c 'curl --version'",
    ],
    modes=("default", "bypassPermissions"),
    deny=["Bash(curl:*)"],
)
bash(
    "rule-ask2",
    ["npm version patch --no-git-tag-version", "npm version", "npm test"],
    allow=["Bash(npm:*)"],
    ask=["Bash(npm version:*)"],
    solo=True,
)
