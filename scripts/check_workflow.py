#!/usr/bin/env python3
"""Checks a memdiff CI pipeline, or a release pipeline: a GitHub Actions workflow or an Azure
Pipelines file.

    check_workflow.py [--matrix] PIPELINE.yml JITARENA_BINARY

With --matrix, after the checks pass, prints the replay matrix as JSON on stdout (a list of
{"platform", "collection", "shard", and the collection's other values by their last name, e.g.
"programs"}), for a test to replay exactly what the pipeline replays.

Both kinds are read into one shape (jobs with their dependencies, matrix and steps) and checked
the same way:

- the file is valid YAML, with the jobs `build`, `replay` (after build), `memdiff` (after
  replay) and `summarize` (after memdiff);
- build, replay and memdiff each run once per platform (a `platform` in their matrices, at
  least two, the same platforms with the same values in each job); summarize runs once;
- the replay matrix covers, on every platform, the same collections (at least two, each with one
  set of values, e.g. one programs file) with shards 0..SHARDS-1 (SHARDS, the pipeline's
  variable), and gives every entry its own artifact name;
- every `jitarena` subcommand and flag it runs exists (asked of the binary), in the pipeline's
  scripts and in the repository scripts they call;
- every repository path it names exists, once for each matrix entry where the path uses the
  matrix; every matrix reference (`${{ matrix.X }}`, Azure's `$(X)`) is defined;
- the memdiff job merges its own platform's shards (`scripts/merge_shards.sh ... PLATFORM`), runs
  memdiff over collections (--base-root/--diff-root) writing a JSON report, and a later step
  fails on memdiff's exit code;
- the summarize job runs `jitarena summarize` with one `--platform NAME REPORT` for each platform,
  each REPORT the memdiff job's JSON report (its file name, under a directory naming the
  platform), writes the summary (--md) that it publishes, and a later step fails on its exit code;
- every action (`owner/name@vN`) or task (`Name@N`) is pinned to a major version.

A pipeline with a `package` job and no `replay` job is a release pipeline (docs/packaging.md),
checked instead for:

- the jobs `package` and `release` (after package);
- the package job's matrix builds every RID once (linux-x64, linux-x86, linux-arm64, linux-arm,
  win-x64, win-x86, win-arm64, osx-x64, osx-arm64: `rid` or `rid.name`), each on a hosted image
  of its own system (ubuntu, windows, macos), and on GitHub of its own architecture where GitHub
  hosts one (arm64 RIDs on arm64 images, x64 and x86 ones on x64 images); each entry runs
  `scripts/package.sh` for its RID alone and uploads an artifact of its own name;
- the release job checks the archives against their checksums (`sha256sum -c`) and attaches the
  .tar.gz and .zip archives and their SHA-256 checksums (`gh release create/upload`, or
  GitHubRelease@N's assets) in a step that runs on a tag only (its condition names refs/tags/);
- commands, paths, matrix references and pins as above.
"""
import itertools
import json
import os
import re
import shlex
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBCOMMANDS = "memdiff|merge|replay|stats|dump|gen|summarize"
PATH_RE = re.compile(r"(?<![\w/$.-])((?:examples|scripts|docs|include|\.azure|\.github)/[\w./-]*[\w/])")
JOBS = (("build", None), ("replay", "build"), ("memdiff", "replay"), ("summarize", "memdiff"))


def fail(message):
    print(f"check_workflow: {message}", file=sys.stderr)
    sys.exit(1)


class Job:
    def __init__(self, name, needs, matrix, steps, raw=None):
        self.name = name
        self.needs = needs  # set of job names
        self.matrix = matrix  # list of {key: str}, [] without a matrix
        self.steps = steps  # list of Step
        self.raw = raw or {}


class Step:
    def __init__(self, script=None, ref=None, artifact=None, raw=None):
        self.script = script  # shell text, or None
        self.ref = ref  # action or task reference, or None
        self.artifact = artifact  # name of an artifact it uploads, or None
        self.raw = raw or {}


def as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def shell(value):
    """A step's script as text (YAML reads `run: true` as a boolean)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def flatten(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = str(value)
    return out


# ---- GitHub Actions ------------------------------------------------------------------------


def github_matrix(path, name, strategy):
    matrix = (strategy or {}).get("matrix")
    if matrix is None:
        return []
    if not isinstance(matrix, dict):
        fail(f"{path}: job {name}: the matrix is not a mapping")
    if "include" in matrix or "exclude" in matrix:
        fail(f"{path}: job {name}: this check expands plain matrices only (no include/exclude)")
    keys = list(matrix)
    for k in keys:
        if not isinstance(matrix[k], list) or not matrix[k]:
            fail(f"{path}: job {name}: matrix.{k} is not a non-empty list")
    combos = []
    for values in itertools.product(*(matrix[k] for k in keys)):
        combo = {}
        for k, v in zip(keys, values):
            flatten(k, v, combo)
        combos.append(combo)
    return combos


def read_github(path, doc):
    jobs = {}
    for name, job in doc["jobs"].items():
        steps = []
        for step in job.get("steps") or []:
            ref = step.get("uses")
            artifact = None
            if ref and ref.startswith("actions/upload-artifact@"):
                artifact = str((step.get("with") or {}).get("name", ""))
            steps.append(Step(script=shell(step.get("run")), ref=ref, artifact=artifact, raw=step))
        jobs[name] = Job(name, set(as_list(job.get("needs"))), github_matrix(path, name, job.get("strategy")), steps, job)
    variables = {str(k): str(v) for k, v in (doc.get("env") or {}).items()}
    return jobs, variables


def github_expand(text, combo):
    """Replaces ${{ matrix.X }} with the entry's value; an undefined X is left for the caller."""
    return re.sub(
        r"\$\{\{\s*matrix\.([\w.]+)\s*\}\}",
        lambda m: combo.get(m.group(1), m.group(0)),
        text,
    )


def github_undefined(text, combo):
    return [m for m in re.findall(r"\$\{\{\s*matrix\.([\w.]+)\s*\}\}", text) if m not in combo]


# ---- Azure Pipelines -----------------------------------------------------------------------


def read_azure(path, doc):
    raw_jobs = []
    if "stages" in doc:
        for stage in doc["stages"] or []:
            if "template" in stage:
                fail(f"{path}: stage templates are not checked by this script")
            raw_jobs.extend(stage.get("jobs") or [])
    raw_jobs.extend(doc.get("jobs") or [])
    jobs = {}
    for job in raw_jobs:
        if not isinstance(job, dict) or "job" not in job:
            fail(f"{path}: {job!r} is not a job (`- job: NAME`; templates and deployments are not checked)")
        name = job["job"]
        matrix = (job.get("strategy") or {}).get("matrix")
        combos = []
        if matrix is not None:
            if not isinstance(matrix, dict):
                fail(f"{path}: job {name}: the matrix is not a mapping of entries (a runtime matrix cannot be checked)")
            for entry, values in matrix.items():
                if not isinstance(values, dict):
                    fail(f"{path}: job {name}: matrix entry {entry} is not a mapping of variables")
                combos.append({str(k): str(v) for k, v in values.items()})
        steps = []
        for step in job.get("steps") or []:
            script = shell(step.get("script", step.get("bash")))
            ref = step.get("task")
            artifact = None
            inputs = step.get("inputs") or {}
            if ref and ref.split("@")[0] in ("PublishPipelineArtifact", "PublishBuildArtifacts"):
                artifact = str(inputs.get("artifact", inputs.get("artifactName", "")))
            if "publish" in step:
                artifact = str(step.get("artifact", ""))
            steps.append(Step(script=script, ref=ref, artifact=artifact, raw=step))
        jobs[name] = Job(name, set(as_list(job.get("dependsOn"))), combos, steps, job)
    variables = doc.get("variables") or {}
    if isinstance(variables, list):
        variables = {v["name"]: v.get("value", "") for v in variables if isinstance(v, dict) and "name" in v}
    return jobs, {str(k): str(v) for k, v in variables.items()}


MACRO = re.compile(r"\$\((\w+)\)")


def azure_expand(text, combo):
    return MACRO.sub(lambda m: combo.get(m.group(1), m.group(0)), text)


# ---- Checks common to both -----------------------------------------------------------------


class Checker:
    def __init__(self, path, binary):
        self.path = path
        self.binary = binary
        self.checked = 0
        self.help = {}
        top = self.help_of([])
        self.known = set(re.findall(r"^  (\w+)\s", top, re.M))

    def help_of(self, args):
        key = tuple(args)
        if key not in self.help:
            out = subprocess.run([self.binary, *args, "--help"], capture_output=True, text=True)
            if out.returncode != 0:
                fail(f"{self.binary} {' '.join(args)} --help failed: {out.stderr.strip()}")
            self.help[key] = out.stdout
        return self.help[key]

    def commands(self, where, text):
        """Checks every `jitarena SUB --flag` in a shell text; returns [(SUB, rest of the line)]."""
        text = text.replace("\\\n", " ")
        runs = []
        for sub in re.findall(r"\bjitarena (\w[\w-]*)", text):
            if sub not in self.known:
                fail(f"{where} runs `jitarena {sub}`, which is not a jitarena command ({sorted(self.known)})")
            self.checked += 1
        for sub, rest in re.findall(rf"\bjitarena ({SUBCOMMANDS})\b([^\n;|&]*)", text):
            flags = re.findall(r"(?<![\w-])(--[\w-]+)", rest)
            out = self.help_of([sub])
            for flag in flags:
                if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", out):
                    fail(f"{where} passes {flag} to `jitarena {sub}`, which does not take it")
                self.checked += 1
            runs.append((sub, rest))
        return runs

    def paths(self, where, text):
        for ref in PATH_RE.findall(text):
            if not os.path.exists(os.path.join(ROOT, ref)):
                fail(f"{where} refers to {ref}, which this repository does not have")
            self.checked += 1
            full = os.path.join(ROOT, ref)
            if ref.startswith("scripts/") and os.path.isfile(full) and not ref.endswith(".py"):
                with open(full, encoding="utf-8") as f:
                    self.commands(f"{where} (through {ref})", f.read())


def words(text):
    """The words of a shell command line (quotes removed; a line shlex cannot split: its blanks)."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def platform_key(path, job):
    """The matrix key that names a job's platform."""
    key = next((k for k in ("platform.name", "platform") if job.matrix and k in job.matrix[0]), None)
    if key is None:
        fail(f"{path}: job {job.name} does not run once per platform (no platform in its matrix)")
    for combo in job.matrix:
        if key not in combo:
            fail(f"{path}: job {job.name}: a matrix entry has no platform: {combo}")
    return key


def check_platforms(path, jobs):
    """Build, replay and memdiff run on the same platforms, with the same values: returns
    (the platforms in order, the keys that hold a platform's values)."""
    build = jobs["build"]
    if not build.matrix:
        fail(f"{path}: the build job does not run once per platform (no matrix)")
    bkey = platform_key(path, build)
    # A platform's values are what the build matrix says of it (GitHub: platform.*; Azure: the
    # build entry's variables).
    values = {}
    for combo in build.matrix:
        if combo[bkey] in values:
            fail(f"{path}: job build builds platform {combo[bkey]} twice")
        values[combo[bkey]] = combo
    platforms = list(values)
    if len(platforms) < 2:
        fail(f"{path}: the pipeline runs on {len(platforms)} platform; it shows at least two")
    keys = set(build.matrix[0])
    for name in ("replay", "memdiff"):
        job = jobs[name]
        if not job.matrix:
            fail(f"{path}: the {name} job does not run once per platform (no matrix)")
        key = platform_key(path, job)
        if key != bkey:
            fail(f"{path}: job {name} names its platform matrix.{key}, job build matrix.{bkey}")
        seen = set()
        for combo in job.matrix:
            p = combo[key]
            if p not in values:
                fail(f"{path}: job {name} runs on platform {p}, which job build does not build")
            for k in keys & set(combo):
                if combo[k] != values[p][k]:
                    fail(f"{path}: platform {p}'s {k} is {values[p][k]!r} in job build but {combo[k]!r} in job {name}")
            seen.add(p)
        if seen != set(platforms):
            fail(f"{path}: job {name} runs on {sorted(seen)}, job build builds {platforms}")
        if name == "memdiff" and len(job.matrix) != len(platforms):
            fail(f"{path}: job memdiff runs more than once for a platform")
    if jobs["summarize"].matrix:
        fail(f"{path}: the summarize job runs once, over every platform (no matrix)")
    return platforms, keys, bkey


def published(kind, text):
    """The files a step's script publishes as the run's summary."""
    if kind == "github":
        return re.findall(r"cat\s+(\S+)\s*>>\s*\"?\$GITHUB_STEP_SUMMARY", text)
    return [os.path.basename(p) for p in re.findall(r"##vso\[task\.uploadsummary\]([^\"\s]+)", text)]


def gated(path, kind, steps, index, what):
    """Fails unless a step after steps[index] fails on the exit code that step records."""
    script = steps[index].script
    if kind == "github":
        code = re.search(r"echo \"(\w+)=\$\?\" >> \"\$GITHUB_OUTPUT\"", script)
        step_id = steps[index].raw.get("id")
        gate = code and step_id and rf"steps\.{step_id}\.outputs\.{code.group(1)}\b\s*}}}}\"?\s*(=|-eq)\s*0"
    else:
        code = re.search(r"##vso\[task\.setvariable variable=(\w+)\]\$(\?|code)", script)
        gate = code and rf"\$\({code.group(1)}\)\"?\s*(=|-eq)\s*0"
        if code and code.group(2) == "code" and not re.search(r"\bcode=\$\?", script):
            fail(f"{path}: the {what} step records $code without setting it from {what}'s exit code")
    if not gate or not any(s.script and re.search(gate, s.script) for s in steps[index + 1 :]):
        fail(f"{path}: no step after {what} fails on its exit code")


def check(path, binary, matrix=False):
    with open(path, encoding="utf-8") as f:
        try:
            doc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            fail(f"{path}: not valid YAML: {e}")
    if not isinstance(doc, dict):
        fail(f"{path}: not a pipeline (a mapping at the top)")
    if isinstance(doc.get("jobs"), dict):
        kind = "github"
        jobs, variables = read_github(path, doc)
    elif isinstance(doc.get("jobs"), list) or isinstance(doc.get("stages"), list):
        kind = "azure"
        jobs, variables = read_azure(path, doc)
    else:
        fail(f"{path}: neither a GitHub workflow (jobs: a mapping) nor an Azure pipeline (jobs: or stages: a list)")
    expand = github_expand if kind == "github" else azure_expand
    if "package" in jobs and "replay" not in jobs:
        check_release(path, kind, doc, jobs, variables, expand, binary)
        return

    # The jobs and their order.
    for job, _ in JOBS:
        if job not in jobs:
            fail(f"{path}: no job '{job}'")
    for name, needs in JOBS:
        if needs is not None and needs not in jobs[name].needs:
            fail(f"{path}: job {name} does not wait for job {needs}")
    for name, job in jobs.items():
        for dep in job.needs:
            if dep not in jobs:
                fail(f"{path}: job {name} waits for job {dep}, which does not exist")
    platforms, platform_keys, pkey = check_platforms(path, jobs)

    # The replay matrix: on every platform the same collections, every shard, one artifact each.
    replay = jobs["replay"]
    shards = variables.get("SHARDS")
    if shards is None or not shards.isdigit() or int(shards) < 1:
        fail(f"{path}: no SHARDS variable (a positive count of shards per collection)")
    ckey = next((k for k in ("collection.name", "collection") if k in replay.matrix[0]), None)
    if ckey is None or "shard" not in replay.matrix[0]:
        fail(f"{path}: the replay matrix has no collection and shard ({sorted(replay.matrix[0])})")
    collections = {}
    for combo in replay.matrix:
        if ckey not in combo or "shard" not in combo:
            fail(f"{path}: a replay matrix entry has no collection or shard: {combo}")
        rest = {k: v for k, v in combo.items() if k != "shard" and k not in platform_keys}
        have = collections.setdefault(combo[ckey], {"rest": rest, "shards": {}})
        if have["rest"] != rest:
            fail(f"{path}: collection {combo[ckey]} is replayed with different values in different entries: {have['rest']} and {rest}")
        have["shards"].setdefault(combo[pkey], []).append(combo["shard"])
    if len(collections) < 2:
        fail(f"{path}: the replay matrix has {len(collections)} collection; the pipeline shows at least two")
    expected = [str(s) for s in range(int(shards))]
    for name, have in collections.items():
        for platform in platforms:
            got = sorted(have["shards"].get(platform, []), key=int)
            if got != expected:
                fail(f"{path}: collection {name} has shards {got} on {platform}, not 0..{int(shards) - 1} (SHARDS={shards})")
    artifacts = [s.artifact for s in replay.steps if s.artifact is not None]
    if not artifacts:
        fail(f"{path}: the replay job uploads no logs")
    for template in artifacts:
        names = [expand(template, combo) for combo in replay.matrix]
        if len(set(names)) != len(names):
            fail(f"{path}: the replay job's artifact {template!r} does not name a different artifact for every platform, collection and shard")

    # Commands, paths and matrix references.
    checker = Checker(path, binary)
    runs = {"memdiff": [], "summarize": []}
    scripts = 0
    for name, job in jobs.items():
        assigned = set()
        for index, step in enumerate(job.steps):
            where = f"{path}: job {name}"
            if step.script is None:
                continue
            scripts += 1
            text = step.script
            for sub, rest in checker.commands(where, text):
                if sub == name and name in runs:
                    runs[name].append((index, rest))
            if kind == "azure":
                for var in MACRO.findall(text):
                    if var not in variables and var not in assigned and not any(var in c for c in job.matrix):
                        fail(f"{where} uses $({var}), which is neither a variable nor a matrix variable of the job")
                assigned.update(re.findall(r"##vso\[task\.setvariable variable=(\w+)", text))
            else:
                combos = job.matrix or [{}]
                undefined = github_undefined(text, combos[0])
                if undefined:
                    fail(f"{where} uses matrix.{undefined[0]}, which its matrix does not define")
            for combo in job.matrix or [{}]:
                checker.paths(where, expand(text, combo))

    # The memdiff job: its platform's shards merged, memdiff over collections, its exit code the
    # platform's gate.
    job = jobs["memdiff"]
    for combo in job.matrix:
        merges = [
            words(m.group(0))
            for s in job.steps
            if s.script
            for m in re.finditer(r"scripts/merge_shards\.sh\b[^\n;|&]*", expand(s.script.replace("\\\n", " "), combo))
        ]
        if not merges:
            fail(f"{path}: the memdiff job does not merge the shards with scripts/merge_shards.sh")
        for argv in merges:
            if len(argv) != 5 or argv[4] != combo[pkey]:
                fail(
                    f"{path}: the memdiff job on {combo[pkey]} runs `{' '.join(argv)}`, which does not merge "
                    f"that platform's shards alone (merge_shards.sh DIR OUT COUNT PLATFORM)"
                )
    if not runs["memdiff"]:
        fail(f"{path}: the memdiff job does not run `jitarena memdiff`")
    index, args = runs["memdiff"][-1]
    for flag in ("--base-root", "--diff-root", "--json"):
        if not re.search(rf"{flag}(?![\w-])", args):
            fail(f"{path}: the memdiff job's `jitarena memdiff` has no {flag}")
    report = os.path.basename(re.search(r"--json\s+(\S+)", args).group(1))
    gated(path, kind, job.steps, index, "memdiff")

    # The summarize job: every platform's report, the summary published, its exit code the gate.
    job = jobs["summarize"]
    if not runs["summarize"]:
        fail(f"{path}: the summarize job does not run `jitarena summarize`")
    index, args = runs["summarize"][-1]
    argv = words(args)
    given = {}
    for i, word in enumerate(argv):
        if word == "--platform":
            if i + 2 >= len(argv):
                fail(f"{path}: the summarize job's --platform lacks a NAME and a REPORT")
            name, file = argv[i + 1], argv[i + 2]
            if name in given:
                fail(f"{path}: the summarize job gives platform {name} twice")
            given[name] = file
    if sorted(given) != sorted(platforms):
        fail(f"{path}: the summarize job summarizes {sorted(given)}, the pipeline runs on {sorted(platforms)}")
    for name, file in given.items():
        parts = file.replace("\\", "/").split("/")
        if parts[-1] != report or not any(name in part for part in parts[:-1]):
            fail(f"{path}: the summarize job reads {file} for {name}: not the memdiff job's {report} in a directory naming {name}")
    md = re.search(r"--md\s+(\S+)", args)
    if md is None:
        fail(f"{path}: the summarize job's `jitarena summarize` writes no --md summary")
    shown = published(kind, job.steps[index].script)
    if md.group(1) not in shown:
        fail(f"{path}: the summarize job publishes no summary written by summarize (it writes {md.group(1)}, publishes {shown})")
    gated(path, kind, job.steps, index, "summarize")

    # Actions and tasks pinned to a major version.
    pin = r"^[\w-]+/[\w.-]+(/[\w.-]+)*@v\d+$" if kind == "github" else r"^[\w.-]+@\d+$"
    for name, job in jobs.items():
        for step in job.steps:
            if step.ref is not None and not re.match(pin, str(step.ref)):
                fail(f"{path}: job {name} uses {step.ref}, not pinned to a major version")
    print(
        f"check_workflow: {path} ({kind}): {len(jobs)} jobs, {len(platforms)} platforms x {len(collections)} collections x {shards} shards, "
        f"{scripts} scripts, {checker.checked} references checked: ok",
        file=sys.stderr if matrix else sys.stdout,
    )
    if matrix:
        entries = []
        for combo in replay.matrix:
            entry = {k.rsplit(".", 1)[-1]: v for k, v in combo.items() if k not in (ckey, "shard") and k not in platform_keys}
            entry.update(platform=combo[pkey], collection=combo[ckey], shard=int(combo["shard"]))
            entries.append(entry)
        entries.sort(key=lambda e: (platforms.index(e["platform"]), e["collection"], e["shard"]))
        print(json.dumps(entries))


# ---- Release pipelines ---------------------------------------------------------------------

RIDS = ("linux-x64", "linux-x86", "linux-arm64", "linux-arm", "win-x64", "win-x86", "win-arm64", "osx-x64", "osx-arm64")
RID_OS = {"linux": "ubuntu", "win": "windows", "osx": "macos"}


def runner_of(kind, job, combo, variables, expand):
    """The hosted image a job runs on for one matrix entry (GitHub: runs-on; Azure: the job's,
    else the pipeline's, pool vmImage), expanded."""
    if kind == "github":
        label = job.raw.get("runs-on")
        label = label[0] if isinstance(label, list) and label else label
    else:
        pool = job.raw.get("pool") or variables.get("__pool__") or {}
        label = pool.get("vmImage") if isinstance(pool, dict) else None
    if not isinstance(label, str) or not label:
        return None
    return expand(expand(label, combo), variables).lower()


def check_runner(path, kind, rid, label):
    """A RID is built on an image of its own system; on GitHub, of its own architecture where
    GitHub hosts one (arm64 on -arm images and Apple silicon; x64 and x86 on x64 images; arm32,
    which has no runner, cross-built on x64). Azure's Microsoft-hosted images are x64."""
    system, arch = rid.split("-", 1)
    if not label.startswith(RID_OS[system]):
        fail(f"{path}: {rid} is built on {label}, not on a {RID_OS[system]} image")
    if kind != "github":
        return
    if system == "osx":
        arm = not (label.endswith("-intel") or label.endswith("-large") or label in ("macos-12", "macos-13"))
    else:
        arm = "arm" in label
    if arch == "arm64" and not arm:
        fail(f"{path}: {rid} is built on {label}, an x64 image: GitHub hosts arm64 ones")
    if arch in ("x64", "x86") and arm:
        fail(f"{path}: {rid} is built on {label}, an arm64 image")
    if arch == "arm" and arm and system != "linux":
        fail(f"{path}: {rid} is built on {label}")


def check_release(path, kind, doc, jobs, variables, expand, binary):
    """A release pipeline: a package job per RID (all nine, each on its own hosted image, running
    scripts/package.sh for that RID and uploading its own artifact), then a release job (after
    it) that checks the archives' SHA-256 checksums and attaches the archives and the checksums
    to a release, only for a tag; every command, path and reference exists; actions and tasks
    pinned."""
    if kind == "azure":
        variables = dict(variables)
        variables["__pool__"] = doc.get("pool") or {}
    for name in ("package", "release"):
        if name not in jobs:
            fail(f"{path}: no job '{name}'")
    if "package" not in jobs["release"].needs:
        fail(f"{path}: job release does not wait for job package")
    package = jobs["package"]
    if not package.matrix:
        fail(f"{path}: the package job does not run once per RID (no matrix)")
    rkey = next((k for k in ("rid.name", "rid") if k in package.matrix[0]), None)
    if rkey is None:
        fail(f"{path}: the package job's matrix has no rid ({sorted(package.matrix[0])})")
    seen = []
    for combo in package.matrix:
        rid = combo.get(rkey)
        if rid not in RIDS:
            fail(f"{path}: the package job builds {rid!r}, which is not a RID ({', '.join(RIDS)})")
        if rid in seen:
            fail(f"{path}: the package job builds {rid} twice")
        seen.append(rid)
        label = runner_of(kind, package, combo, variables, expand)
        if label is None:
            fail(f"{path}: the package job names no hosted image for {rid}")
        check_runner(path, kind, rid, label)
        runs = [
            words(m.group(0))
            for s in package.steps
            if s.script
            for m in re.finditer(r"scripts/package\.sh\b[^\n;|&]*", expand(s.script.replace("\\\n", " "), combo))
        ]
        if not runs:
            fail(f"{path}: the package job does not run scripts/package.sh")
        for argv in runs:
            rids = [w for w in argv[1:] if not w.startswith("-") and w in RIDS + ("host",)]
            if rids != [rid]:
                fail(f"{path}: the package job for {rid} runs `{' '.join(argv)}`, which does not package {rid} alone")
    missing = [r for r in RIDS if r not in seen]
    if missing:
        fail(f"{path}: the package job does not build {', '.join(missing)}")
    artifacts = [s.artifact for s in package.steps if s.artifact is not None]
    if not artifacts:
        fail(f"{path}: the package job uploads no package")
    for template in artifacts:
        names = [expand(template, combo) for combo in package.matrix]
        if len(set(names)) != len(names):
            fail(f"{path}: the package job's artifact {template!r} does not name a different artifact for every RID")

    # The release job: checksums checked, then archives and checksums attached on a tag only.
    release = jobs["release"]
    scripts = " ".join(s.script for s in release.steps if s.script)
    if not re.search(r"\bsha256sum -c\b|\bshasum -a 256 -c\b", scripts):
        fail(f"{path}: the release job does not check the archives against their SHA-256 checksums")
    attach = []
    for step in release.steps:
        if kind == "github":
            text = step.script or ""
            if not re.search(r"\bgh release (create|upload)\b", text):
                if step.ref and str(step.ref).startswith("softprops/action-gh-release@"):
                    files = (step.raw.get("with") or {}).get("files", "")
                    attach.append((step, str(files)))
                continue
            attach.append((step, text))
        elif step.ref and str(step.ref).split("@")[0] == "GitHubRelease":
            attach.append((step, str((step.raw.get("inputs") or {}).get("assets", ""))))
    if not attach:
        fail(f"{path}: the release job attaches nothing to a release")
    for step, files in attach:
        for what, pattern in (
            ("the .tar.gz archives", r"\*\.tar\.gz|/\*(\s|$)"),
            ("the .zip archives", r"\*\.zip|/\*(\s|$)"),
            ("the SHA-256 checksums", r"\*\.sha256|SHA256SUMS|/\*(\s|$)"),
        ):
            if not re.search(pattern, files):
                fail(f"{path}: the release job's release step does not attach {what}")
        condition = str(step.raw.get("if" if kind == "github" else "condition", ""))
        if "refs/tags/" not in condition:
            fail(f"{path}: the release job's release step runs without a tag (its condition: {condition!r})")

    # Commands, paths and matrix references, as in the memdiff pipelines.
    checker = Checker(path, binary)
    count = 0
    for name, job in jobs.items():
        for step in job.steps:
            if step.script is None:
                continue
            count += 1
            where = f"{path}: job {name}"
            checker.commands(where, step.script)
            if kind == "azure":
                for var in MACRO.findall(step.script):
                    if var not in variables and not any(var in c for c in job.matrix):
                        fail(f"{where} uses $({var}), which is neither a variable nor a matrix variable of the job")
            else:
                undefined = github_undefined(step.script, (job.matrix or [{}])[0])
                if undefined:
                    fail(f"{where} uses matrix.{undefined[0]}, which its matrix does not define")
            for combo in job.matrix or [{}]:
                checker.paths(where, expand(step.script, combo))
    pin = r"^[\w-]+/[\w.-]+(/[\w.-]+)*@v\d+$" if kind == "github" else r"^[\w.-]+@\d+$"
    for name, job in jobs.items():
        for step in job.steps:
            if step.ref is not None and not re.match(pin, str(step.ref)):
                fail(f"{path}: job {name} uses {step.ref}, not pinned to a major version")
    print(
        f"check_workflow: {path} ({kind}, release): {len(jobs)} jobs, {len(seen)} RIDs, {count} scripts, "
        f"{checker.checked} references checked: ok"
    )


def main():
    args = sys.argv[1:]
    matrix = args[:1] == ["--matrix"]
    if matrix:
        args = args[1:]
    if len(args) != 2:
        fail("usage: check_workflow.py [--matrix] PIPELINE.yml JITARENA_BINARY")
    check(args[0], args[1], matrix)


if __name__ == "__main__":
    main()
