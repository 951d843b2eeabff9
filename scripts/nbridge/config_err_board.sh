#!/bin/sh
# config_err_board.sh COORDS error|renew
#
# The leaf-switch fault script of seed 003 (section 5): shield a failed leaf
# switch LSW(COORDS) ("error": the roots attached to it misroute transit
# traffic around it) or restore it ("renew": those roots get back their exact
# pre-fault rules), acting on a running N-Bridge fabric through its
# controller (controller/nbridge/app.py). COORDS as the paper writes them,
# highest dimension first: 13,2 or LSW(13,2).
#
# DCFABRIC_REST overrides the controller's REST address (default
# http://127.0.0.1:8080). Exit status: 0 done, 1 refused by the controller
# (bad coordinates, wrong state), 2 usage, 3 controller unreachable.
set -u
usage() {
    echo "usage: $0 COORDS error|renew   (e.g. $0 13,2 error)" >&2
    exit 2
}
[ $# -eq 2 ] || usage
coords=$(printf '%s' "$1" | tr -d ' ()' | sed 's/^[Ll][Ss][Ww]//')
verb=$2
case "$verb" in
    error|renew) ;;
    *) echo "$0: unknown action '$verb': use error (shield the leaf) or renew (restore it)" >&2; usage ;;
esac
case "$coords" in
    ''|*[!0-9,]*|,*|*,|*,,*) echo "$0: bad coordinates '$1': expected integers like 13,2" >&2; exit 2 ;;
esac
rest=${DCFABRIC_REST:-http://127.0.0.1:8080}
body=$(mktemp) || exit 3
trap 'rm -f "$body"' EXIT
status=$(curl -s -o "$body" -w '%{http_code}' -X POST "$rest/nbridge/leaf/$coords/$verb") || {
    echo "$0: no N-Bridge controller at $rest (start one, or set DCFABRIC_REST)" >&2; exit 3; }
if [ "$status" = 200 ]; then
    cat "$body"
    exit 0
fi
echo "$0: controller refused ($status): $(cat "$body")" >&2
[ "$status" = 404 ] && echo "$0: is the controller at $rest an N-Bridge one?" >&2
exit 1
