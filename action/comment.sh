#!/bin/sh
# The action's comment step: the Markdown report as the pull request's one bounded-review
# comment. The comment this action's account wrote whose body starts with the hidden marker
# is edited; only when there is none is one created, so every push updates the same comment.
# Comments by anyone else are never touched, whatever they start with. A comment that cannot
# be posted (a fork's read-only token, say) is a warning: the gate decides the job, not this.
# Needs `gh` and GH_TOKEN.
#
#   BOUNDED_REVIEW_COMMENT_AUTHOR  the account the token posts as (default github-actions[bot])
set -u
marker='<!-- bounded-review -->'
author="${BOUNDED_REVIEW_COMMENT_AUTHOR:-github-actions[bot]}"
warn() {
    echo "::warning title=bounded review::$1"
    exit 0
}
pr=$(python -c '
import json, os
event = json.load(open(os.environ["GITHUB_EVENT_PATH"], encoding="utf-8"))
print((event.get("pull_request") or {}).get("number") or "")
') || warn "cannot read the event at GITHUB_EVENT_PATH"
if [ -z "$pr" ]; then
    echo "bounded-review: not a pull request event: no comment"
    exit 0
fi
body=$(mktemp)
trap 'rm -f "$body"' EXIT
bounded-review report --format markdown --max-bytes 65000 > "$body"
if [ ! -s "$body" ]; then
    warn "no report to comment with"
fi
comments="repos/$GITHUB_REPOSITORY/issues/$pr/comments"
filter=".[] | select(.user.login == \"$author\" and (.body | startswith(\"$marker\"))) | .id"
ours=$(gh api "$comments" --paginate --jq "$filter") || warn "cannot list the comments of #$pr"
id=$(printf '%s\n' "$ours" | head -n 1)
if [ -n "$id" ]; then
    gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$body" \
        > /dev/null || warn "cannot edit comment $id"
    echo "bounded-review: comment $id updated"
else
    gh api --method POST "$comments" -F "body=@$body" > /dev/null \
        || warn "cannot comment on #$pr (a fork's token is read-only)"
    echo "bounded-review: comment posted"
fi
