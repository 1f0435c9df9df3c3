#!/bin/sh
# `sbemu filter` through the built binary: exit codes, stdout, stderr.
# usage: tests/cli/test_filter_cli.sh path/to/bin/sbemu
# Prints one line per failure and "N passed, N failed" last; exits 1 on failure.
set -u

SBEMU=${1:?usage: $0 path/to/bin/sbemu}
if [ ! -x "$SBEMU" ]; then
    echo "not executable: $SBEMU" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
passed=0
failed=0

MSG='{"system": {"MessageId": "m1", "Label": "x"}, "properties": {"color": "red", "qty": 5}}'

# check NAME WANT_RC WANT_STDOUT WANT_STDERR_PART STDIN -- ARGS...
# WANT_STDOUT is compared exactly ("*" skips it); WANT_STDERR_PART must
# appear in stderr ("" means stderr must be empty).
check() {
    name=$1 want_rc=$2 want_out=$3 want_err=$4 input=$5
    shift 6
    printf '%s' "$input" | "$SBEMU" filter "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
    problem=""
    [ "$rc" = "$want_rc" ] || problem="exit $rc, want $want_rc"
    if [ -z "$problem" ] && [ "$want_out" != "*" ] && [ "$out" != "$want_out" ]; then
        problem="stdout [$out], want [$want_out]"
    fi
    if [ -z "$problem" ]; then
        if [ -z "$want_err" ]; then
            [ -z "$err" ] || problem="unexpected stderr [$err]"
        else
            case $err in
            *"$want_err"*) ;;
            *) problem="stderr [$err] lacks [$want_err]" ;;
            esac
        fi
    fi
    if [ -z "$problem" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $name: $problem"
    fi
}

NL='
'

check "match" 0 "match" "" "$MSG" -- "color = 'red' AND qty > 4"
check "no match" 0 "no match" "" "$MSG" -- "color = 'blue'"
check "unknown is no match" 0 "no match" "" "$MSG" -- "missing = 1"
check "system property" 0 "match" "" "$MSG" -- "sys.Label LIKE 'x%' AND sys.MessageId IN ('m1', 'm2')"
check "action output" 0 "match${NL}{\"system\":{\"MessageId\":\"m1\",\"Label\":\"routed\"},\"properties\":{\"qty\":10,\"source\":\"orders\"}}" "" "$MSG" -- \
    --action "SET qty = qty * 2; SET sys.Label = 'routed'; REMOVE color; SET source = @src" --param '@src="orders"' "qty = 5"
check "action skipped without match" 0 "no match" "" "$MSG" -- --action "SET a = 1" "qty = 6"
check "parameters" 0 "match" "" "$MSG" -- --param @c='"red"' --param min=3 "color = @c AND qty > @min"
check "syntax error" 1 "" "expected ')' at column 7" "$MSG" -- "(a = 1"
check "unset string system property is null" 0 "no match" "" "$MSG" -- "sys.To = 'x'"
check "evaluation error" 1 "" "system property 'sys.LockToken' is not set at column 1" "$MSG" -- "sys.LockToken = newid()"
check "action syntax error" 1 "" "action: expected '=' at column 6" "$MSG" -- --action "SET a" "TRUE"
check "missing expression" 2 "" "missing EXPRESSION" "$MSG" --
check "bad option" 2 "" "unknown option" "$MSG" -- --bogus "TRUE"
check "bad json" 2 "" "stdin: line 1" "{" -- "TRUE"
check "help" 0 "*" "" "" -- --help

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
