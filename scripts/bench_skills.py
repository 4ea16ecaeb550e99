"""Benchmark skills: what compaction saves by naming invoked skills instead of
re-sending their bodies, and what the listing in the Skill tool's description costs.

(a) Compaction. An in-process session against the fake Anthropic server (real SDK, real SSE)
in a repository with two ~4 KB skills in `.claude/skills`: the model loads both with the Skill
tool, the conversation is compacted (`/compact`'s code path), and one more message is sent.
Two versions of the request after the compaction, counted by the fake server's
`count_tokens` (its estimate: a quarter of the canonical JSON length):
- as claude-mini sends it: the summary and one note naming the skills;
- the same request with the note replaced by the bodies, re-attached the way Claude Code
  2.1.332 does: each body as it was injected, newest first, at most 5,000 tokens each
  (cut to 20,000 characters less a note) and 25,000 in total (skills that do not fit left out).

(b) The listing. The Skill tool's description for 10, 50 and 200 skills with names and
descriptions like real repositories' skills (varied lengths, some with `when_to_use`), at the
default budget for a 200K-token window (1% of the window in characters, Claude Code's rule):
its tokens, and how many entries were shortened to their names to fit.

Prints figures only; it asserts nothing about them.

    uv run python scripts/bench_skills.py
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import anthropic  # noqa: E402
from fake_anthropic import FakeAnthropic, Reply  # noqa: E402

from claude_mini.config import load_config  # noqa: E402
from claude_mini.config.layers import merge  # noqa: E402
from claude_mini.llm.anthropic_client import AnthropicClient  # noqa: E402
from claude_mini.runtime import build_runtime  # noqa: E402
from claude_mini.skills.catalog import build_listing, entry_line, listing_budget, load_catalog  # noqa: E402
from claude_mini.skills.tool import describe  # noqa: E402

WINDOW = 200_000
NOTE_MARK = "Skills loaded earlier in this session"

# Claude Code 2.1.332 re-attaches each invoked skill's text after a compaction, under a short
# header saying they ran before the summary and are context, not a new request; 5,000 tokens per
# skill, 25,000 in all, about 4 characters a token. Our own wording of similar length stands in
# for its text: only the size matters here.
CC_PER_SKILL_TOKENS = 5_000
CC_TOTAL_TOKENS = 25_000
CC_HEADER = (
    "These skills were loaded earlier in this session, before the conversation was summarised, "
    "and not in the current turn. Their text is repeated below only as background, so the "
    "guidance they gave still applies.\n\nDo not run them again and do not act on arguments "
    "that appear inside them: those belong to the past, they are not requests now. Keep "
    "following only the guidance that is still relevant."
)
CC_CUT_NOTE = "\n\n[... the rest of this skill was cut to fit the compaction budget; Read its file for all of it]"

TERRAFORM_REVIEW = """\
# Reviewing a Terraform plan

Use this before anyone runs `terraform apply` in `infra/`. The goal is to catch changes that
destroy or replace stateful resources, widen network access, or drift from what the PR says.

## 1. Produce the plan the same way CI does

```bash
cd infra/envs/$ENV
terraform init -input=false -backend-config=backend.hcl
terraform plan -input=false -lock-timeout=120s -out=plan.bin
terraform show -json plan.bin > plan.json
```

Never review a plan produced with `-refresh=false` or `-target`: both hide changes.

## 2. Read the summary line first

`Plan: X to add, Y to change, Z to destroy.` Any destroy in `prod` stops the review until the
PR description explains it. Replacements (`-/+`) count as destroys.

## 3. Look for the dangerous resource types

Run `python scripts/plan_risks.py plan.json`; it lists changes to these, which need a second
reviewer from the platform team:

- `aws_db_instance`, `aws_rds_cluster`: a change to `engine_version`, `storage_type`,
  `instance_class` or `availability_zone` can restart or replace the database. Check
  `apply_immediately`; in prod it must be false.
- `aws_s3_bucket*`: a destroy deletes data if `force_destroy` is true. Versioning and the
  public access block must stay on.
- `aws_security_group_rule`, `aws_vpc_security_group_ingress_rule`: no `0.0.0.0/0` or `::/0`
  ingress except on the load balancers' 443.
- `aws_iam_*`: no `"*"` actions or resources in new statements; `iam:PassRole` must name roles.
- `aws_kms_key`: a destroy schedules deletion of every secret it encrypts.
- `kubernetes_*` and `helm_release`: a changed `chart` version gets its changelog linked.

## 4. Check for drift

If the plan changes a resource the PR does not touch, someone changed it by hand. Do not
"fix" drift in the same PR: open a ticket with the `drift` label, name the resource and the
attribute, and either import the change into code or revert it in a separate PR.

## 5. Tags, names and costs

Every new resource carries the tags from `locals.tf` (`owner`, `service`, `env`,
`cost-center`). Names follow `<service>-<env>-<purpose>`. Run `infracost diff --path plan.json`
and paste the monthly delta into the PR; more than $500/month needs the service owner's OK.

## 6. Write the review

Post one comment with:

1. the summary line;
2. each risky change from step 3, with the attribute that changes and why it is safe (or not);
3. drift found, with the ticket number;
4. the cost delta;
5. a verdict: apply, apply after changes, or do not apply.

Do not run `terraform apply` yourself, and never with `-auto-approve`. The on-call engineer
applies from CI after the review is approved.

## Common findings, and what to ask for

| Finding | Ask for |
|---|---|
| `lifecycle { prevent_destroy = true }` removed | a reason in the PR, and a second approver |
| a new `count` or `for_each` on an existing resource | `moved` blocks, so nothing is re-created |
| a provider version bump in the same PR as resource changes | two PRs: the bump first |
| `ignore_changes = all` | the attribute that really drifts, named |
| a hard-coded account id or region | the variable from `envs/<env>/terraform.tfvars` |
| a module sourced from a branch | a tag or a commit hash |
| secrets in `*.tfvars` | a reference to Secrets Manager or SSM instead |

## State operations

`terraform state mv`, `state rm` and `import` change state without a plan to review. They are
done only by the platform team, from a ticket that lists the exact commands, after
`terraform state pull > backup-$(date +%s).tfstate`. If the PR needs one, say so in the review
and leave it out of the apply.

## When the plan is too big to read

More than 50 changed resources: ask for the PR to be split by module. A plan that only
reorders tags or changes `description` fields can be skimmed with
`jq '.resource_changes[] | select(.change.actions != ["no-op"]) | .address' plan.json`, but
read every destroy and replace in full, whatever the size.
"""

ONCALL_HANDOFF = """\
# On-call handoff

Write the handoff at the end of a shift, for the next on-call engineer. It must be readable in
two minutes and answer: what is broken now, what might break, and what did I promise anyone.

## Gather

1. Open incidents: `pd incident list --statuses triggered,acknowledged --team platform`.
   For each, note the service, the severity, when it started and who is working on it.
2. Alerts that fired during the shift, grouped: `python scripts/alert_digest.py --since 12h`.
   An alert that fired more than three times is flapping; say so, even if it resolved.
3. Deploys during the shift: `git log --since=12.hours --merges origin/main --format='%h %s'`
   and the deploy channel. Mark any that were rolled back.
4. Silences and maintenance windows still active: `amtool silence query`. A silence without an
   end time or a ticket is a bug: end it or give it both.
5. Promises: anything you told a team you would follow up on, with the channel link.

## Write

Use this template in the #oncall-handoff channel:

```
Shift: <start>-<end> UTC, <your name>
Open: <incident id> <service> SEV<n> since <time>: <one line of status> (owner: <name>)
Watch: <service>: <what might break and the signal to look at>
Deploys: <sha> <title> (<rolled back?>)
Silences: <matcher> until <time>, <ticket>
Promised: <who>: <what> by <when>
```

Keep every line factual. No "should be fine": say what you checked and what you saw. Times in
UTC, always with the date if the shift crossed midnight.

## Severity reminders

- SEV1: customer-facing outage or data loss. Page the incident commander; status page within
  15 minutes.
- SEV2: degraded for some customers, or an internal system down with no workaround.
- SEV3: degraded internal system with a workaround; fix in working hours.

If an open incident's severity no longer matches, change it before you hand off and say why.

## Hand over

Mention the next on-call by handle in the post, and wait for their acknowledgement before you
go. If they do not acknowledge within 15 minutes, page them with `pd page --user <handle>`.
Stay reachable for an hour after the handoff for questions about open incidents.

Never hand off in the middle of a SEV1: stay until the incident commander releases you.

## What good looks like

```
Shift: 2026-03-02 08:00-20:00 UTC, @dana
Open: INC-4411 checkout SEV2 since 17:42: card auths failing for one PSP, traffic moved to
  the backup PSP at 18:05, error rate back under 0.5% (owner: @li, PSP ticket 88213)
Watch: search: index build took 3h10 (usual 1h40), next one at 02:00; look at
  search-indexer-duration on the search dashboard
Deploys: 9f3c2e1 Bump payments client to 4.2 (not rolled back)
  71ab0d4 Remove legacy coupon path (rolled back at 15:20, see #deploys)
Silences: alertname=DiskSpaceLow host=db-replica-3 until 2026-03-03 09:00, OPS-1902
Promised: @marketing: confirm the newsletter send window is clear by 10:00 tomorrow
```

## What to leave out

- Alerts that fired once and resolved with no action: they are in the digest already.
- Guesses about causes: write "cause unknown" and what you ruled out.
- Anything about people's performance: the handoff is read by the whole team.

## After the handoff

Update the on-call calendar if you swapped shifts, and file a ticket for every alert you
silenced or found noisy, with the `alert-quality` label, so the next review of alerts sees it.
If a runbook was wrong or missing during the shift, say which one in the handoff and open a PR
to fix it the next working day.

## Checklist

- [ ] Every open incident has an owner who is awake and knows they own it.
- [ ] Every active silence has an end time and a ticket.
- [ ] Rolled-back deploys are marked, and the author knows.
- [ ] The next on-call acknowledged the post.
- [ ] Your pager is handed over in PagerDuty (`pd oncall list --team platform` shows them).
"""

BIG_SKILLS = {
    "terraform-plan-review": (
        "Review a Terraform plan before apply: destroys, risky resource types, drift, tags and cost",
        TERRAFORM_REVIEW,
    ),
    "oncall-handoff": (
        "Write the end-of-shift on-call handoff: open incidents, alerts, deploys, silences, promises",
        ONCALL_HANDOFF,
    ),
}


def write_skill(root: Path, name: str, description: str, body: str, when_to_use: str = "") -> None:
    folder = root / ".claude" / "skills" / name
    folder.mkdir(parents=True)
    extra = f"when_to_use: {json.dumps(when_to_use)}\n" if when_to_use else ""
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}\n{extra}---\n{body}")


def count(server: FakeAnthropic, body: dict[str, Any]) -> int:
    """Input tokens of a request, by the fake server's count_tokens endpoint."""
    client = anthropic.Anthropic(base_url=server.base_url, api_key="bench")
    params = {k: body[k] for k in ("model", "system", "tools", "messages") if k in body}
    return client.messages.count_tokens(**params).input_tokens


# -- (a) compaction


def injected_texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(skill name, text injected) for every Skill call of a request's conversation, in call order."""
    calls: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use" and block["name"] == "Skill":
                calls[block["id"]] = block["input"]["skill"]
            elif block.get("type") == "tool_result" and block["tool_use_id"] in calls:
                content = block["content"]
                text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                out.append((calls[block["tool_use_id"]], text))
    return out


def claude_code_attachment(invoked: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The bodies as Claude Code 2.1.332 re-attaches them after a compaction: newest first, each cut
    to 5,000 tokens, 25,000 in total; the text and the names it left out."""
    parts, left_out, used = [], [], 0
    for name, text in reversed(invoked):
        if len(text) > CC_PER_SKILL_TOKENS * 4:
            text = text[: CC_PER_SKILL_TOKENS * 4 - len(CC_CUT_NOTE)] + CC_CUT_NOTE
        part = f"### Skill: {name}\nPath: projectSettings:{name}\n\n{text}"
        if used + len(part) // 4 > CC_TOTAL_TOKENS:
            left_out.append(name)
            continue
        used += len(part) // 4
        parts.append(part)
    return CC_HEADER + "\n\n" + "\n\n---\n\n".join(parts), left_out


def with_bodies(body: dict[str, Any], attachment: str) -> dict[str, Any]:
    """`body` with claude-mini's note (names only) replaced by `attachment`, in the same place."""
    out = copy.deepcopy(body)
    blocks = [
        b
        for m in out["messages"]
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == "text" and NOTE_MARK in b["text"]
    ]
    if len(blocks) != 1:
        raise SystemExit(f"bench_skills: expected one compaction note naming the skills, found {len(blocks)}")
    blocks[0]["text"] = f"<system-reminder>\n{attachment}\n</system-reminder>"
    return out


async def compacting_session(repo: Path, server: FakeAnthropic) -> None:
    config = load_config(repo)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})
    rt = build_runtime(config, client=AnthropicClient(base_url=server.base_url, api_key="bench"))
    await rt.start(source="startup", dream=False)
    try:
        for text in ("Review the infra plan for payments and write my on-call handoff.",):
            async for _ in rt.agent.run(text):
                pass
        await rt.compactor.compact()
        async for _ in rt.agent.run("Anything else before I hand over?"):
            pass
    finally:
        await rt.close()


def bench_compaction() -> None:
    print("(a) Compaction after a session that loaded two ~4 KB skills")
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic() as server,
        mock.patch.dict(
            os.environ, {"CLAUDE_MINI_HOME": str(Path(tmp) / "home"), "CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
        ),
    ):
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        for name, (description, body) in BIG_SKILLS.items():
            write_skill(repo, name, description, body)
            print(f"  skill {name}: SKILL.md body {len(body.encode()):,} bytes")
        server.on(Reply.tool("Skill", {"skill": "terraform-plan-review", "args": "infra/envs/prod"}), purpose="main")
        server.on(Reply.tool("Skill", {"skill": "oncall-handoff"}), purpose="main")
        server.on(Reply.text("The plan replaces nothing; the handoff is posted."), purpose="main")
        server.on(
            Reply.text(
                "<summary>The user asked for a review of the prod Terraform plan for payments "
                "(no destroys, cost +$40/month, approved) and the on-call handoff (posted in "
                "#oncall-handoff; one SEV3 open).</summary>"
            ),
            purpose="compact",
        )
        server.on(Reply.text("Nothing else: the SEV3 is in the handoff."), purpose="main")
        asyncio.run(compacting_session(repo, server))

        mains = server.requests_for("main")
        before, after = mains[-2].body, mains[-1].body
        invoked = injected_texts(before)
        if [n for n, _ in invoked] != list(BIG_SKILLS) or any(BIG_SKILLS[n][1][:40] not in t for n, t in invoked):
            raise SystemExit(f"bench_skills: the two skills' bodies did not reach the model ({invoked})")
        if any(BIG_SKILLS[n][1][:40] in json.dumps(after["messages"]) for n in BIG_SKILLS):
            raise SystemExit("bench_skills: a body is still in the conversation after the compaction")
        attachment, left_out = claude_code_attachment(invoked)
        names_only, bodies = count(server, after), count(server, with_bodies(after, attachment))
        usage = mains[-1].usage or {}
        reported = sum(
            usage.get(k, 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
        print(f"  injected when loaded: {', '.join(f'{n} {len(t):,} characters' for n, t in invoked)}")
        print(
            f"  request after the compaction, claude-mini (names only):          {names_only:>7,} input tokens "
            f"(the API usage reported: {reported:,})"
        )
        print(
            f"  the same with the bodies re-attached as Claude Code 2.1.332 does: {bodies:>7,} input tokens"
            f"{f' (left out: {left_out})' if left_out else ''}"
        )
        print(
            f"  saved per request after each compaction: {bodies - names_only:,} tokens "
            f"({100 * (bodies - names_only) / bodies:.1f}% of the Claude Code-style request)"
        )


# -- (b) the listing

# Skills like real repositories carry: what the skill does, often when to use it and the phrases
# that should trigger it. Lengths vary from a few words to a long paragraph, as they do.
HANDWRITTEN: list[tuple[str, str, str]] = [
    (
        "pdf",
        "Extract text and tables from PDFs, fill PDF forms, merge and split documents, and add "
        "watermarks. Use when the user mentions a .pdf file, a form to fill, or wants pages combined "
        "or pulled apart. Handles scanned PDFs through OCR (ocrmypdf) when there is no text layer, keeps "
        "form field names when filling, and never flattens a form unless asked. For large files, works page "
        "by page with pypdf and reports which pages failed instead of stopping.",
        "",
    ),
    ("docx", "Create and edit Word documents with tracked changes, comments and styles preserved", ""),
    (
        "xlsx",
        "Read, write and analyse spreadsheets: formulas, pivot tables, charts, conditional "
        "formatting. Recalculate formulas with LibreOffice after editing so cached values are right.",
        "When the user attaches or names an .xlsx/.csv file or asks for a spreadsheet",
    ),
    ("pptx", "Build slide decks from an outline using the company template; speaker notes included", ""),
    ("release-notes", "Draft release notes from CHANGELOG.md for a new version", ""),
    ("changelog-entry", "Add an entry under Unreleased in CHANGELOG.md in Keep a Changelog format", ""),
    (
        "db-migration",
        "Write and review an Alembic migration: batched backfills, concurrent indexes, a tested "
        "downgrade, and the lock each statement takes. Use for any change under app/models or "
        "migrations/.",
        "",
    ),
    (
        "sql-query-review",
        "Review SQL for correctness and performance: EXPLAIN ANALYZE, missing indexes, N+1 patterns from the ORM",
        "When a PR touches raw SQL or a query is reported slow",
    ),
    (
        "api-endpoint",
        "Add a REST endpoint to the FastAPI service: route, schema, service layer, tests and the OpenAPI example",
        "",
    ),
    (
        "openapi-sync",
        "Regenerate openapi.json from the FastAPI app and check every documented example still validates",
        "",
    ),
    (
        "graphql-schema",
        "Change the GraphQL schema safely: deprecations instead of removals, schema "
        "check against the registry, resolver tests",
        "",
    ),
    (
        "react-component",
        "Scaffold a React component with its test, story and CSS module, following src/components/Button",
        "",
    ),
    ("storybook-story", "Write Storybook stories with controls and interaction tests", ""),
    (
        "accessibility-audit",
        "Audit a page or component for WCAG 2.2 AA: keyboard navigation, focus order, "
        "contrast, ARIA roles and labels, reduced motion. Use when the user asks about "
        "a11y, screen readers, or a failing axe check.",
        "",
    ),
    ("css-refactor", "Move styles to design tokens and remove dead CSS", ""),
    (
        "i18n-strings",
        "Extract hard-coded UI strings into the translation catalog and add the keys to "
        "every locale file with a TODO marker for translators",
        "",
    ),
    (
        "e2e-playwright",
        "Write and debug Playwright end-to-end tests: stable locators, no fixed waits, "
        "traces on failure. Use when a UI test is flaky or a new user flow needs coverage.",
        "",
    ),
    (
        "webapp-testing",
        "Test the local web app in a real browser: start the dev server, capture screenshots "
        "and console logs, and check a flow works end to end",
        "",
    ),
    ("unit-test-writer", "Write pytest unit tests for a module: fixtures, parametrize, no network", ""),
    (
        "flaky-test-triage",
        "Find why a test is flaky: rerun it 50 times with random order, look for shared "
        "state, time, ordering and network; quarantine with a ticket if it cannot be fixed "
        "today",
        "When CI fails on a test that passes locally or on a retry",
    ),
    ("coverage-gaps", "Find untested branches with coverage.py and propose the tests that matter most", ""),
    ("mutation-testing", "Run mutmut on a module and report surviving mutants worth a test", ""),
    (
        "pr-review",
        "Review a pull request for correctness, tests, naming and what the description leaves out; "
        "cite file:line for each finding and separate blocking from optional",
        "When the user asks for a review, pastes a PR link or number, or says 'look at my changes' or 'is this "
        "ready to merge'; not for reviewing prose or designs",
    ),
    ("commit-message", "Write a conventional commit message for the staged diff", ""),
    ("git-bisect", "Find the commit that introduced a regression with git bisect run and a minimal check script", ""),
    (
        "rebase-helper",
        "Rebase a branch onto main and resolve conflicts, keeping both sides' intent; never force-push a shared branch",
        "",
    ),
    (
        "dependency-upgrade",
        "Upgrade a dependency across the monorepo: read its changelog for breaking changes, "
        "update lock files, run the affected tests, and note deprecations to fix later. Use "
        "for Dependabot or Renovate PRs that fail CI.",
        "",
    ),
    (
        "security-review",
        "Review a change for security issues: injection, authz checks, secrets, unsafe deserialisation, SSRF",
        "When a PR touches auth, input parsing, file paths or outbound requests",
    ),
    (
        "secret-rotation",
        "Rotate a leaked or expiring credential: issue the new one, deploy it, revoke the "
        "old one, and confirm nothing still uses it",
        "",
    ),
    ("threat-model", "Write a STRIDE threat model for a new service or feature", ""),
    (
        "terraform-plan-review",
        "Review a Terraform plan before apply: destroys and replacements, risky resource types, drift, tags and cost",
        "",
    ),
    (
        "k8s-manifest",
        "Write Kubernetes manifests with resource requests, probes, PodDisruptionBudget and NetworkPolicy",
        "",
    ),
    ("helm-chart-bump", "Bump a Helm chart version and check the rendered diff with helm diff", ""),
    (
        "dockerfile-optimize",
        "Make a Dockerfile smaller and faster to build: multi-stage, cache mounts, a "
        "non-root user, pinned base image digests",
        "",
    ),
    (
        "ci-pipeline",
        "Change the GitHub Actions workflows: reusable workflows, caching, required checks, and "
        "least-privilege permissions for GITHUB_TOKEN",
        "",
    ),
    (
        "incident-postmortem",
        "Write a blameless postmortem: a UTC timeline, impact in numbers, root cause as a "
        "chain, action items with owners and dates",
        "",
    ),
    ("oncall-handoff", "Write the end-of-shift on-call handoff", ""),
    ("runbook-writer", "Turn an incident's fix into a runbook with the alert, the checks and the commands", ""),
    (
        "log-query",
        "Query logs in Loki or CloudWatch Insights for a request id, a user, or an error spike, "
        "and summarise what happened",
        "When the user pastes an error, a request id or a trace id",
    ),
    ("grafana-dashboard", "Build or change a Grafana dashboard as code (grafonnet)", ""),
    ("slo-report", "Compute SLO burn for a service over a window and say whether the error budget holds", ""),
    (
        "data-pipeline-debug",
        "Debug a failed Airflow DAG run: the task log, upstream data, retries, and whether a backfill is safe",
        "",
    ),
    (
        "dbt-model",
        "Add or change a dbt model with tests, docs and an exposure; run dbt build for it and its children only",
        "",
    ),
    ("notebook-cleanup", "Turn a Jupyter notebook into a tested Python module", ""),
    (
        "csv-analysis",
        "Analyse a CSV with pandas: profile columns, find outliers, answer the question asked, and show the code used",
        "",
    ),
    ("chart-maker", "Make a clear chart from data: the right chart type, labelled axes, no chartjunk", ""),
    ("ml-experiment", "Set up a reproducible training run: config, seed, data version, metrics to MLflow", ""),
    ("prompt-eval", "Evaluate a prompt change against the golden set and report regressions per category", ""),
    (
        "mcp-builder",
        "Build an MCP server in Python or TypeScript: tools with clear schemas, errors as "
        "results, tested with the inspector. Use when the user wants to connect an API or "
        "service to an agent.",
        "",
    ),
    (
        "skill-creator",
        "Create or improve a skill: a trigger-focused description, a short SKILL.md, details "
        "in references/ and scripts/",
        "",
    ),
    ("brand-guidelines", "Apply the company's colours, type and tone of voice to documents and slides", ""),
    # Some repositories pack every trigger phrase into the description (this one is over the
    # 1,536-character cap of one entry, so it is cut).
    (
        "frontend-design",
        "Create distinctive, production-grade frontend interfaces with high design quality. "
        "Use this skill when the user asks to build web components, pages, dashboards, landing "
        "pages, marketing sites, admin panels, settings screens, onboarding flows, pricing "
        "tables, forms, modals, navigation bars, sidebars, data tables, charts embedded in "
        "pages, empty states, error pages, or to restyle, theme, or beautify an existing UI. "
        "Also use it for requests like 'make it look better', 'this looks generic', 'modernise "
        "the design', 'add dark mode', 'make it responsive', 'match our brand', or 'turn this "
        "Figma into code'. It covers typography pairing, spacing scales, colour systems with "
        "accessible contrast, motion that respects prefers-reduced-motion, layout with CSS grid "
        "and container queries, and component states (hover, focus, active, disabled, loading, "
        "error). It works with React, Vue, Svelte, plain HTML and CSS, Tailwind, CSS modules "
        "and styled-components, and it reads the repository's existing tokens and components "
        "first so the result fits in. Do not use it for backend work, for pure copy edits, or "
        "for changes to build tooling. When the user gives a screenshot, start from its layout "
        "and name what you changed and why. Prefer fewer, stronger choices over many small "
        "decorations; avoid the purple-gradient-on-white look and default system fonts unless "
        "the brand uses them. Always check the result at 320, 768 and 1440 pixels wide, in light and dark "
        "mode, with keyboard only, and with the browser zoomed to 200%; list anything that "
        "breaks at one of those and fix it before you call the work done.",
        "",
    ),
    (
        "internal-comms",
        "Write internal announcements, status updates and FAQ pages in the house style: short, "
        "plain, what changes for the reader first",
        "",
    ),
    ("meeting-notes", "Turn a meeting transcript into decisions, action items and open questions", ""),
    ("adr", "Write an architecture decision record: context, options considered, decision, consequences", ""),
    (
        "design-doc",
        "Draft a design doc from a problem statement with goals, non-goals, alternatives and a rollout plan",
        "",
    ),
    ("estimate-breakdown", "Break an epic into tickets with estimates and dependencies", ""),
    (
        "customer-reply",
        "Draft a reply to a customer support ticket: acknowledge, answer, next step, no promises about dates",
        "",
    ),
    ("legal-review-prep", "Prepare a contract for legal review: summarise unusual clauses and open points", ""),
    ("invoice-reconcile", "Reconcile Stripe payouts against the ledger and list mismatches", ""),
    (
        "perf-profile",
        "Profile a slow endpoint or script with py-spy or cProfile and explain the hot path",
        "When something is slow and the cause is not known",
    ),
    ("memory-leak", "Find a memory leak in a long-running Python service with tracemalloc snapshots", ""),
    (
        "go-service",
        "Conventions for Go services here: errors wrapped with %w, context first, table tests, no globals",
        "",
    ),
    ("rust-crate", "Work on the Rust crates: clippy clean, no unwrap in library code, errors with thiserror", ""),
    ("ios-release", "Ship the iOS app: bump the build, fastlane beta, TestFlight notes, phased release", ""),
    ("android-release", "Ship the Android app: versionCode bump, signed bundle, Play Console staged rollout", ""),
    ("feature-flag", "Add, roll out or remove a feature flag in LaunchDarkly, with the cleanup ticket", ""),
    ("cron-job", "Add a scheduled job with a lock, a timeout, metrics and an alert when it does not run", ""),
    ("email-template", "Build a transactional email template that renders in Outlook and Gmail", ""),
    ("openapi-client", "Generate the typed API client from openapi.json and fix the call sites it breaks", ""),
    (
        "bug-report-triage",
        "Triage a bug report: reproduce it, find the component, set severity and label, "
        "and ask the reporter for what is missing",
        "When a new issue arrives without labels",
    ),
    ("regex-helper", "Write and test a regular expression against examples, and explain it", ""),
    ("shell-script", "Write a POSIX shell script with set -eu, quoting, and shellcheck clean", ""),
    ("makefile", "Add Makefile targets with help text and .PHONY", ""),
    ("monorepo-ownership", "Find who owns a path from CODEOWNERS and the service catalog", ""),
    ("load-test", "Write a k6 load test for an endpoint with realistic traffic shape and thresholds", ""),
    (
        "cache-invalidation",
        "Design cache keys and invalidation for a read-heavy endpoint; measure the hit rate before and after",
        "",
    ),
    ("queue-consumer", "Write an idempotent queue consumer with retries, backoff and a dead-letter path", ""),
    ("timezone-bugs", "Fix date and time-zone bugs: store UTC, convert at the edges, test DST changes", ""),
    ("sql-to-orm", "Rewrite raw SQL with the SQLAlchemy 2.0 query API without changing the plan", ""),
    (
        "changelog-from-commits",
        "Summarise commits since the last tag into a draft changelog grouped by conventional-commit type",
        "",
    ),
    (
        "gdpr-request",
        "Handle a data subject request: find the user's data in every store, export or delete it, and log the request",
        "",
    ),
]

SERVICES = [
    "payments",
    "billing",
    "checkout",
    "search",
    "catalog",
    "inventory",
    "shipping",
    "notifications",
    "auth",
    "accounts",
    "recommendations",
    "pricing",
    "ledger",
    "fraud",
    "reporting",
    "media",
    "gateway",
    "scheduler",
    "webhooks",
    "analytics",
]
LANGUAGES = ["python", "typescript", "go", "java", "kotlin", "swift", "ruby", "php", "scala", "elixir", "csharp", "cpp"]
CLOUD = [
    ("s3-bucket", "an S3 bucket"),
    ("rds-postgres", "an RDS Postgres instance"),
    ("lambda-function", "a Lambda function"),
    ("sqs-queue", "an SQS queue and its dead-letter queue"),
    ("cloudfront", "a CloudFront distribution"),
    ("iam-role", "an IAM role for a service"),
    ("redis-cache", "an ElastiCache Redis cluster"),
    ("kafka-topic", "a Kafka topic"),
    ("gke-nodepool", "a GKE node pool"),
    ("vpc-peering", "a VPC peering connection"),
]


CONNECTORS = [
    "salesforce",
    "hubspot",
    "zendesk",
    "jira",
    "github",
    "slack",
    "notion",
    "stripe",
    "shopify",
    "segment",
    "intercom",
    "google-ads",
]


def family_skills() -> list[tuple[str, str, str]]:
    """Families real monorepos grow: a runbook and an API guide per service, a style guide per
    language, one skill per cloud resource type. Wording varies within a family, as it does."""
    out: list[tuple[str, str, str]] = []
    for i, service in enumerate(SERVICES):
        alerts = ["5xx rate", "p99 latency", "queue depth", "consumer lag", "error budget burn"][i % 5]
        out.append(
            (
                f"{service}-runbook",
                f"Runbook for the {service} service: dashboards, the {alerts} alert and what to check first, "
                f"safe restarts, how to fail over, and who owns it"
                + (
                    f". Use when paged for {service} or when the user mentions {service} errors in prod."
                    if i % 3 == 0
                    else ""
                ),
                "",
            )
        )
        out.append(
            (
                f"{service}-api",
                f"How to call and change the {service} API: auth scopes, pagination, idempotency keys"
                + (", and the contract tests that must pass" if i % 2 else ""),
                "When code calls the " + service + " API or a PR changes its handlers" if i % 4 == 1 else "",
            )
        )
    for i, lang in enumerate(LANGUAGES):
        tools = {
            "python": "ruff and mypy",
            "typescript": "eslint and tsc --strict",
            "go": "golangci-lint",
            "java": "spotless and errorprone",
            "kotlin": "ktlint and detekt",
            "swift": "swiftlint",
            "ruby": "rubocop",
            "php": "phpstan level 8",
            "scala": "scalafmt and scalafix",
            "elixir": "credo and dialyzer",
            "csharp": "dotnet format and analyzers",
            "cpp": "clang-tidy and clang-format",
        }[lang]
        out.append(
            (
                f"{lang}-style",
                f"The {lang} style guide for this repository, enforced by {tools}: naming, "
                "error handling, logging, and what a reviewer rejects",
                "",
            )
        )
        out.append(
            (
                f"{lang}-tests",
                f"Write {lang} tests the way this repo does"
                + (": fixtures, fakes over mocks, no sleeps, one behaviour per test" if i % 2 == 0 else ""),
                "",
            )
        )
    for key, what in CLOUD:
        out.append((f"tf-{key}", f"Add or change {what} with the shared Terraform module, tags and alarms", ""))
        out.append((f"cost-{key}", f"Find waste in {what}s and estimate the monthly saving", ""))
    for i, vendor in enumerate(CONNECTORS):
        out.append(
            (
                f"connector-{vendor}",
                f"Sync data from {vendor.replace('-', ' ').title()} into the warehouse: the connector's config, "
                "rate limits, incremental cursors"
                + (", and how to re-sync one table without a full reload" if i % 2 else ""),
                "",
            )
        )
        out.append(
            (
                f"{vendor}-webhooks",
                f"Receive {vendor.replace('-', ' ').title()} webhooks: signature check, retries, idempotent handling",
                "When a handler for its events is added or fails" if i % 3 == 0 else "",
            )
        )
    for topic, text in [
        (
            "okr-draft",
            "Draft quarterly OKRs from the team's goals doc: 3 objectives, "
            "measurable key results, no tasks disguised as results",
        ),
        (
            "hiring-loop",
            "Write an interview loop for a role: competencies, questions per interviewer, a scoring rubric",
        ),
        ("onboarding-guide", "Write a first-week onboarding guide for a new engineer on a team"),
        ("status-page", "Post and update a status page incident in plain language"),
        (
            "vendor-evaluation",
            "Compare vendors against requirements in a weighted table, with security review and exit costs",
        ),
        ("license-check", "Check dependency licences against the allow list and flag copyleft in distributed code"),
        ("sbom", "Generate an SBOM (CycloneDX) for a build and attach it to the release"),
        (
            "api-deprecation",
            "Deprecate an API version: Sunset headers, the migration guide, usage tracking, the customer emails",
        ),
    ]:
        out.append((topic, text, ""))
    for env in ("dev", "staging", "prod"):
        out.append(
            (
                f"deploy-{env}",
                f"Deploy to {env}: the checks before, the command, and how to roll back"
                + ("; prod needs a change ticket and a second approver" if env == "prod" else ""),
                "",
            )
        )
    return out


def realistic_skills() -> list[tuple[str, str, str]]:
    """200 skills, shuffled once with a fixed seed so 10 and 50 are samples of the whole, not its start."""
    everything = HANDWRITTEN + family_skills()
    random.Random(18).shuffle(everything)
    return everything[:200]


def bench_listing() -> None:
    skills = realistic_skills()
    if len(skills) < 200 or len({name for name, _, _ in skills}) != len(skills):
        raise SystemExit(f"bench_skills: the fixture has {len(skills)} distinct skills, not 200")
    budget = listing_budget(WINDOW)
    lengths = sorted(len(d) + (len(w) + 3 if w else 0) for _, d, w in skills)
    print(
        f"\n(b) The listing in the Skill tool's description, {WINDOW:,}-token window: budget {budget:,} "
        f"characters (descriptions {lengths[0]}-{lengths[-1]} characters, median {lengths[len(lengths) // 2]})"
    )
    print(
        f"  {'skills':>6}  {'unshortened chars':>17}  {'listing chars':>13}  {'description tokens':>18}  "
        f"{'whole tool tokens':>17}  {'shortened to names':>18}"
    )
    with FakeAnthropic() as server:
        empty = {"model": "claude-sonnet-4-6", "messages": [{"role": "user", "content": "hi"}]}
        for n in (10, 50, 200):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                for name, description, when in skills[:n]:
                    write_skill(root, name, description, f"# {name}\n\nSteps for {name}.\n", when)
                catalog = load_catalog(root, root / "home")
                if len(catalog.listed()) != n or catalog.problems:
                    raise SystemExit(f"bench_skills: {len(catalog.listed())} of {n} skills loaded: {catalog.problems}")
                listing = build_listing(catalog.listed(), budget)
                full = sum(len(entry_line(e)) + 1 for e in catalog.listed()) - 1
            tool = {"name": "Skill", "description": describe(listing), "input_schema": {"type": "object"}}
            blank = {**tool, "description": ""}
            whole = count(server, {**empty, "tools": [tool]}) - count(server, empty)
            described = whole - (count(server, {**empty, "tools": [blank]}) - count(server, empty))
            print(
                f"  {n:>6}  {full:>17,}  {listing.chars:>13,}  {described:>18,}  {whole:>17,}  "
                f"{len(listing.shortened):>8} of {n:<3}"
            )


def main() -> int:
    bench_compaction()
    bench_listing()
    return 0


if __name__ == "__main__":
    sys.exit(main())
