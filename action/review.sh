#!/bin/sh
# The action's review step: `bounded-review run` in the workspace, with the SARIF log written
# for the upload step. Inside GitHub Actions the run itself appends the Markdown report to the
# step summary and prints the annotations. Its exit status (the gate) becomes the step output
# `status`, so the upload and the comment still run; the action's last step exits by it.
#
#   BOUNDED_REVIEW_BASE         the base revision (empty: as a session would choose)
#   BOUNDED_REVIEW_PYTEST_ARGS  more pytest arguments, split on blanks
#   BOUNDED_REVIEW_SARIF        where the SARIF log goes (default: the state folder, which git
#                               ignores; outputs are written inside the repository only)
set -u
sarif="${BOUNDED_REVIEW_SARIF:-.bounded-review/bounded-review.sarif}"
set -- run --sarif "$sarif"
if [ -n "${BOUNDED_REVIEW_BASE:-}" ]; then
    set -- "$@" --base "$BOUNDED_REVIEW_BASE"
fi
status=0
# shellcheck disable=SC2086 # the extra pytest arguments are split on blanks, on purpose
bounded-review "$@" -- ${BOUNDED_REVIEW_PYTEST_ARGS:-} || status=$?
{
    echo "status=$status"
    [ -f "$sarif" ] && echo "sarif=$sarif"
} >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: run this inside GitHub Actions}"
exit 0
