#!/bin/sh
# The action's comment step: the Markdown report as the pull request's one bounded-review
# comment. The comment whose body starts with the hidden marker is edited; only when there is
# none is one created, so every push updates the same comment. Needs `gh` and GH_TOKEN.
set -eu
marker='<!-- bounded-review -->'
pr=$(python -c '
import json, os
event = json.load(open(os.environ["GITHUB_EVENT_PATH"], encoding="utf-8"))
print((event.get("pull_request") or {}).get("number") or "")
')
if [ -z "$pr" ]; then
    echo "bounded-review: not a pull request event: no comment"
    exit 0
fi
body=$(mktemp)
trap 'rm -f "$body"' EXIT
bounded-review report --format markdown --max-bytes 65000 > "$body" || true
if [ ! -s "$body" ]; then
    echo "bounded-review: no report to comment with"
    exit 0
fi
comments="repos/$GITHUB_REPOSITORY/issues/$pr/comments"
id=$(gh api "$comments" --paginate \
    --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
if [ -n "$id" ]; then
    gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$body" > /dev/null
    echo "bounded-review: comment $id updated"
else
    gh api --method POST "$comments" -F "body=@$body" > /dev/null
    echo "bounded-review: comment posted"
fi
