#!/usr/bin/env python3
"""Checks a CI workflow file: valid YAML, the jobs the memdiff pipeline needs, and that every
command it runs exists: `jitarena` subcommands (asked of the binary), files of this repository,
and the example's programs.

    check_workflow.py WORKFLOW.yml JITARENA_BINARY
"""
import os
import re
import subprocess
import sys

import yaml


def fail(message):
    print(f"check_workflow: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        fail("usage: check_workflow.py WORKFLOW.yml JITARENA_BINARY")
    path, binary = sys.argv[1], sys.argv[2]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(path, encoding="utf-8") as f:
        try:
            workflow = yaml.safe_load(f)
        except yaml.YAMLError as e:
            fail(f"{path}: not valid YAML: {e}")
    jobs = workflow.get("jobs") or fail(f"{path}: no jobs")
    for job in ("build", "replay", "memdiff"):
        if job not in jobs:
            fail(f"{path}: no job '{job}'")
    if "matrix" not in jobs["replay"].get("strategy", {}):
        fail(f"{path}: the replay job is not sharded over a matrix")
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    known = set(re.findall(r"^  (\w+)\s", help_text, re.M))
    runs, uses = [], []
    for name, job in jobs.items():
        for step in job.get("steps", []):
            if "run" in step:
                runs.append((name, step["run"]))
            if "uses" in step:
                uses.append((name, step["uses"]))
    checked = 0
    for job, script in runs:
        text = script.replace("\\\n", " ")
        for sub in re.findall(r"\bjitarena (\w[\w-]*)", text):
            if sub not in known:
                fail(f"{path}: job {job} runs `jitarena {sub}`, which is not a jitarena command ({sorted(known)})")
            checked += 1
        for sub, flags in re.findall(r"\bjitarena (memdiff|merge|replay|stats|dump|gen)([^\n]*)", text):
            for flag in re.findall(r"(--[\w-]+)", flags):
                out = subprocess.run([binary, sub, "--help"], capture_output=True, text=True, check=True).stdout
                if flag not in out:
                    fail(f"{path}: job {job} passes {flag} to `jitarena {sub}`, which does not take it")
                checked += 1
        for ref in re.findall(r"\b((?:examples|scripts|docs|include)/[\w./-]+)", text):
            if not os.path.exists(os.path.join(root, ref)):
                fail(f"{path}: job {job} refers to {ref}, which this repository does not have")
            checked += 1
    for job, action in uses:
        if not re.match(r"^[\w-]+/[\w-]+@v\d+$", action):
            fail(f"{path}: job {job} uses {action}, not pinned to a major version")
    print(f"check_workflow: {path}: {len(jobs)} jobs, {len(runs)} scripts, {checked} references checked: ok")


if __name__ == "__main__":
    main()
